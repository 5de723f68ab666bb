// Elementwise loops for float16 / bfloat16 that compute in float32 a block at a time:
// convert up to kBlock inputs to float on explicit vectors (vec/vec_convert.h), run the float
// lambda over the block, convert back.
// Element-by-element Half conversion is a chain of branches, which made float16 ops 10-50x
// slower than float32 ones.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include "kernels/cpu/cpu_level.h"

#include "core/half.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/cpu/vec/vec_convert.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace reduced {

constexpr int64_t kBlock = 256;

inline void to_float_contiguous(float* dst, const Half* src, int64_t n) {
  int64_t k = 0;
  if constexpr (vec::kHasVectorHalf) {
    constexpr int kLanes = vec::Vec<float>::size;
    for (; k + kLanes <= n; k += kLanes) {
      vec::load_f16(reinterpret_cast<const uint16_t*>(src + k)).store(dst + k);
    }
  }
  for (; k < n; ++k) dst[k] = static_cast<float>(src[k]);
}

inline void from_float_contiguous(Half* dst, const float* src, int64_t n) {
  int64_t k = 0;
  if constexpr (vec::kHasVectorHalf) {
    constexpr int kLanes = vec::Vec<float>::size;
    for (; k + kLanes <= n; k += kLanes) {
      vec::store_f16(reinterpret_cast<uint16_t*>(dst + k), vec::Vec<float>::load(src + k));
    }
  }
  for (; k < n; ++k) dst[k] = Half(src[k]);
}

inline void to_float_contiguous(float* dst, const BFloat16* src, int64_t n) {
  constexpr int kLanes = vec::Vec<float>::size;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    vec::load_bf16(reinterpret_cast<const uint16_t*>(src + k)).store(dst + k);
  }
  for (; k < n; ++k) {
    uint32_t u = static_cast<uint32_t>(src[k].bits) << 16;
    std::memcpy(dst + k, &u, sizeof u);
  }
}

// Round to nearest even; NaN stays a (quiet) NaN.
inline void from_float_contiguous(BFloat16* dst, const float* src, int64_t n) {
  constexpr int kLanes = vec::Vec<float>::size;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    vec::store_bf16(reinterpret_cast<uint16_t*>(dst + k), vec::Vec<float>::load(src + k));
  }
  for (; k < n; ++k) dst[k] = BFloat16(src[k]);
}

// Loads n elements of T at byte stride `stride` (0: a broadcast scalar) as floats.
template <typename T>
inline void load(float* dst, const char* src, int64_t stride, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(T))) {
    to_float_contiguous(dst, reinterpret_cast<const T*>(src), n);
  } else if (stride == 0) {
    std::fill(dst, dst + n, static_cast<float>(*reinterpret_cast<const T*>(src)));
  } else {
    for (int64_t k = 0; k < n; ++k) {
      dst[k] = static_cast<float>(*reinterpret_cast<const T*>(src + k * stride));
    }
  }
}

template <typename T>
inline void store(char* dst, int64_t stride, const float* src, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(T))) {
    from_float_contiguous(reinterpret_cast<T*>(dst), src, n);
  } else {
    for (int64_t k = 0; k < n; ++k) *reinterpret_cast<T*>(dst + k * stride) = T(src[k]);
  }
}

template <typename T, typename R, typename F, size_t... I>
void block_loop(char** data, const int64_t* strides, int64_t n, const F& f,
                std::index_sequence<I...>) {
  constexpr size_t N = sizeof...(I);
  alignas(64) float in[N][kBlock];
  alignas(64) float res[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    (load<T>(in[I], data[I + 1] + b * strides[I + 1], strides[I + 1], m), ...);
    if constexpr (std::is_same_v<R, bool>) {
      char* out = data[0] + b * strides[0];
      if (strides[0] == 1) {
        bool* o = reinterpret_cast<bool*>(out);
        for (int64_t k = 0; k < m; ++k) o[k] = f(in[I][k]...);
      } else {
        for (int64_t k = 0; k < m; ++k) {
          *reinterpret_cast<bool*>(out + k * strides[0]) = f(in[I][k]...);
        }
      }
    } else {
      for (int64_t k = 0; k < m; ++k) res[k] = static_cast<float>(f(in[I][k]...));
      store<T>(data[0] + b * strides[0], strides[0], res, m);
    }
  }
}

}  // namespace reduced

// out = f(in_0, ..., in_{N-1}) over operands of dtype T (Half or BFloat16), with f taking
// floats; R (T or bool) is the output element type.
template <typename T, typename R, int N, typename F>
void reduced_float_kernel(const TensorIterator& iter, const F& f, int64_t grain = kGrainSize) {
  static_assert(std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>);
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        reduced::block_loop<T, R>(data, strides, n, f, std::make_index_sequence<N>{});
      },
      grain);
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
