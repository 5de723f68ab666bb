// Elementwise loops for float16 / bfloat16 that compute in float32 a block at a time:
// convert up to kBlock inputs to float (F16C instructions for float16, a shift for bfloat16),
// run the float lambda over the block (a loop GCC vectorises, see vec_math.h), convert back.
// Element-by-element Half conversion is a chain of branches, which made float16 ops 10-50x
// slower than float32 ones.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "core/half.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {
namespace reduced {

constexpr int64_t kBlock = 256;

inline void to_float_contiguous(float* dst, const Half* src, int64_t n) {
  int64_t k = 0;
#if defined(__F16C__)
  for (; k + 8 <= n; k += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k));
    _mm256_storeu_ps(dst + k, _mm256_cvtph_ps(h));
  }
#endif
  for (; k < n; ++k) dst[k] = static_cast<float>(src[k]);
}

inline void from_float_contiguous(Half* dst, const float* src, int64_t n) {
  int64_t k = 0;
#if defined(__F16C__)
  for (; k + 8 <= n; k += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + k), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + k), h);
  }
#endif
  for (; k < n; ++k) dst[k] = Half(src[k]);
}

inline void to_float_contiguous(float* dst, const BFloat16* src, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    uint32_t u = static_cast<uint32_t>(src[k].bits) << 16;
    std::memcpy(dst + k, &u, sizeof u);
  }
}

// Round to nearest even; NaN stays a (quiet) NaN. Branch-free, so the loop vectorises.
inline void from_float_contiguous(BFloat16* dst, const float* src, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    uint32_t x;
    std::memcpy(&x, src + k, sizeof x);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t nan = (x >> 16) | 0x40u;
    dst[k].bits = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
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

}  // namespace native
}  // namespace ember
