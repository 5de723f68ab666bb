// Elementwise loops over explicit vectors (vec.h): the op is a generic lambda called with
// Vec<float> or Vec<double> for real floating dtypes, and with a complex scalar for complex ones.
//
//   unary_vec_kernel<kFloatingAndComplex>(iter, "exp", [](auto x) {
//     if constexpr (is_complex_v<decltype(x)>) return std::exp(x);
//     else return vec::exp(x);
//   });
//
// Contiguous operands run vector by vector, the tail as one zero-padded vector, so every element
// goes through the same instructions whatever its position. Strided operands are gathered into a
// small buffer a block at a time, mapped, and scattered: the same vector code and the same
// results as the contiguous path. float16 and bfloat16 are converted to float a block at a time.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec/vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace vec {

constexpr int64_t kVecBlock = 256;  // elements per gathered block (1-2 KiB: stays in L1)

// out[k] = f(in[k]) for k < n, contiguous.
template <typename T, typename F>
inline void map_contiguous(const T* in, T* out, int64_t n, const F& f) {
  using V = Vec<T>;
  int64_t k = 0;
  for (; k + V::size <= n; k += V::size) V(f(V::load(in + k))).store(out + k);
  if (k < n) V(f(V::load_partial(in + k, n - k))).store_partial(out + k, n - k);
}

// As map_contiguous, with non-temporal stores for the aligned middle (loops.h, Note [Streaming
// Stores]).
template <typename T, typename F>
inline void map_contiguous_streaming(const T* in, T* out, int64_t n, const F& f) {
  using V = Vec<T>;
  const auto addr = reinterpret_cast<uintptr_t>(out);
  if (addr % sizeof(T) != 0) {
    map_contiguous(in, out, n, f);
    return;
  }
  const int64_t head =
      std::min<int64_t>(n, int64_t((kVecBytes - addr % kVecBytes) % kVecBytes / sizeof(T)));
  map_contiguous(in, out, head, f);
  int64_t k = head;
  for (; k + V::size <= n; k += V::size) stream(out + k, V(f(V::load(in + k))));
  // No fence: TensorIterator::serial_for_each fences at the end of its range.
  map_contiguous(in + k, out + k, n - k, f);
}

template <typename T, typename F>
void unary_loop(char** data, const int64_t* strides, int64_t n, bool streaming, const F& f) {
  constexpr int64_t kSize = sizeof(T);
  if (strides[0] == kSize && strides[1] == kSize) {
    const T* in = reinterpret_cast<const T*>(data[1]);
    T* out = reinterpret_cast<T*>(data[0]);
    if (streaming) {
      map_contiguous_streaming(in, out, n, f);
    } else {
      map_contiguous(in, out, n, f);
    }
    return;
  }
  alignas(64) T buf[kVecBlock];
  alignas(64) T res[kVecBlock];
  for (int64_t b = 0; b < n; b += kVecBlock) {
    const int64_t m = std::min(kVecBlock, n - b);
    const char* in = data[1] + b * strides[1];
    char* out = data[0] + b * strides[0];
    for (int64_t k = 0; k < m; ++k) buf[k] = *reinterpret_cast<const T*>(in + k * strides[1]);
    map_contiguous(buf, res, m, f);
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<T*>(out + k * strides[0]) = res[k];
  }
}

template <typename T, typename F>
void unary_reduced_float_loop(char** data, const int64_t* strides, int64_t n, const F& f) {
  alignas(64) float buf[kVecBlock];
  alignas(64) float res[kVecBlock];
  for (int64_t b = 0; b < n; b += kVecBlock) {
    const int64_t m = std::min(kVecBlock, n - b);
    reduced::load<T>(buf, data[1] + b * strides[1], strides[1], m);
    map_contiguous(buf, res, m, f);
    reduced::store<T>(data[0] + b * strides[0], strides[0], res, m);
  }
}

// out = f(a, b), contiguous.
template <typename T, typename F>
inline void map2_contiguous(const T* a, const T* b, T* out, int64_t n, const F& f) {
  using V = Vec<T>;
  int64_t k = 0;
  for (; k + V::size <= n; k += V::size) V(f(V::load(a + k), V::load(b + k))).store(out + k);
  if (k < n) {
    V(f(V::load_partial(a + k, n - k), V::load_partial(b + k, n - k)))
        .store_partial(out + k, n - k);
  }
}

// Loads n elements of T at byte stride `stride` (0: a broadcast scalar) into dst.
template <typename T>
inline void gather(T* dst, const char* src, int64_t stride, int64_t n) {
  for (int64_t k = 0; k < n; ++k) dst[k] = *reinterpret_cast<const T*>(src + k * stride);
}

template <typename T, typename F>
void binary_loop(char** data, const int64_t* strides, int64_t n, const F& f) {
  constexpr int64_t kSize = sizeof(T);
  if (strides[0] == kSize && strides[1] == kSize && strides[2] == kSize) {
    map2_contiguous(reinterpret_cast<const T*>(data[1]), reinterpret_cast<const T*>(data[2]),
                    reinterpret_cast<T*>(data[0]), n, f);
    return;
  }
  alignas(64) T a[kVecBlock];
  alignas(64) T b[kVecBlock];
  alignas(64) T res[kVecBlock];
  for (int64_t k0 = 0; k0 < n; k0 += kVecBlock) {
    const int64_t m = std::min(kVecBlock, n - k0);
    gather(a, data[1] + k0 * strides[1], strides[1], m);
    gather(b, data[2] + k0 * strides[2], strides[2], m);
    map2_contiguous(a, b, res, m, f);
    char* out = data[0] + k0 * strides[0];
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<T*>(out + k * strides[0]) = res[k];
  }
}

template <typename T, typename F>
void binary_reduced_float_loop(char** data, const int64_t* strides, int64_t n, const F& f) {
  alignas(64) float a[kVecBlock];
  alignas(64) float b[kVecBlock];
  alignas(64) float res[kVecBlock];
  for (int64_t k0 = 0; k0 < n; k0 += kVecBlock) {
    const int64_t m = std::min(kVecBlock, n - k0);
    reduced::load<T>(a, data[1] + k0 * strides[1], strides[1], m);
    reduced::load<T>(b, data[2] + k0 * strides[2], strides[2], m);
    map2_contiguous(a, b, res, m, f);
    reduced::store<T>(data[0] + k0 * strides[0], strides[0], res, m);
  }
}

}  // namespace vec

// out (dtype T) = f(a, b) for real floating T in Set, f called with Vec<float> / Vec<double>
// (float16 / bfloat16 computed in float).
template <uint32_t Set, typename F>
void binary_vec_kernel(TensorIterator& iter, const char* name, const F& f) {
  dispatch_dtype<Set>(iter.common_dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_reduced_float_v<T>) {
      iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
        vec::binary_reduced_float_loop<T>(data, strides, n, f);
      });
    } else {
      static_assert(std::is_floating_point_v<T>, "binary_vec_kernel: float dtypes only");
      iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
        vec::binary_loop<T>(data, strides, n, f);
      });
    }
  });
}

// out (dtype T) = f(x) for the iterator's common dtype T in Set; f as described above.
template <uint32_t Set, typename F>
void unary_vec_kernel(TensorIterator& iter, const char* name, const F& f) {
  dispatch_dtype<Set>(iter.common_dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>) {
      cpu_kernel(iter, [f](T x) -> T { return f(x); });
    } else if constexpr (is_reduced_float_v<T>) {
      iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
        vec::unary_reduced_float_loop<T>(data, strides, n, f);
      });
    } else {
      static_assert(std::is_floating_point_v<T>, "unary_vec_kernel: float dtypes only");
      const bool streaming = iter.numel() * int64_t(sizeof(T)) >= detail::kStreamingStoreBytes;
      iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
        vec::unary_loop<T>(data, strides, n, streaming, f);
      });
    }
  });
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
