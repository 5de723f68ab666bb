// Vec<T>: one SIMD register of float or double at this translation unit's CPU capability level
// (16 bytes at `default`, 32 at `avx2`, 64 at the AVX-512 levels), for kernels written with
// explicit vectors instead of scalar loops left to the auto-vectoriser
// (docs/design/cpu-dispatch.md).
//
//   Vec<float> x = Vec<float>::load(p);
//   Vec<float> y = select(x > 0.0f, x, x * 0.01f);   // leaky relu, 4 to 16 lanes at once
//   y.store(q);
//
// The lanes are GCC vector-extension types, so arithmetic, comparisons (lane masks of all ones)
// and `mask ? a : b` are vector instructions by construction; the few operations the extension
// lacks (fused multiply-add, sqrt, min/max) use the level's intrinsics.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace vec {

#if EMBER_CPU_LEVEL >= 2
constexpr int kVecBytes = 64;
#elif EMBER_CPU_LEVEL == 1
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

// The lane types, spelled out per element type: GCC does not tell a vector_size type that depends
// on a template parameter apart from its element type when overloading.
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
  using Int = int32_t;
  using UInt = uint32_t;
  typedef float Raw __attribute__((vector_size(kVecBytes)));
  typedef int32_t Mask __attribute__((vector_size(kVecBytes)));
  typedef uint32_t Bits __attribute__((vector_size(kVecBytes)));
};
template <>
struct Lanes<double> {
  using Int = int64_t;
  using UInt = uint64_t;
  typedef double Raw __attribute__((vector_size(kVecBytes)));
  typedef int64_t Mask __attribute__((vector_size(kVecBytes)));
  typedef uint64_t Bits __attribute__((vector_size(kVecBytes)));
};

template <typename T>
struct Vec {
  using Int = typename Lanes<T>::Int;
  using UInt = typename Lanes<T>::UInt;
  using Raw = typename Lanes<T>::Raw;
  // A comparison's result: every bit set in the lanes where it holds.
  using Mask = typename Lanes<T>::Mask;
  using Bits = typename Lanes<T>::Bits;
  static constexpr int size = kVecBytes / int(sizeof(T));

  Raw v;

  Vec() = default;
  Vec(Raw r) : v(r) {}  // NOLINT(google-explicit-constructor): lanes convert both ways
  // s - 0 rather than 0 + s: x - (+0) is x for every x (also -0), so the compiler folds it into
  // a plain broadcast; 0 + s is +0 for s = -0 and cost a scalar add before every broadcast.
  Vec(T s) : v(s - Raw{}) {}  // NOLINT(google-explicit-constructor): broadcast

  static Vec load(const T* p) {
    Raw r;
    std::memcpy(&r, p, sizeof r);
    return r;
  }
  // The first n lanes from p, the others zero (n < size).
  static Vec load_partial(const T* p, int64_t n) {
    Raw r{};
    std::memcpy(&r, p, size_t(n) * sizeof(T));
    return r;
  }
  // The first n lanes from p, the others `fill`.
  static Vec load_partial(const T* p, int64_t n, T fill) {
    T lanes[size];
    for (int i = 0; i < size; ++i) lanes[i] = fill;
    std::memcpy(lanes, p, size_t(n) * sizeof(T));
    return load(lanes);
  }
  // n <= size lanes: a whole vector when n == size, else as load_partial / store_partial.
  static Vec load_n(const T* p, int64_t n) { return n == size ? load(p) : load_partial(p, n); }
  void store_n(T* p, int64_t n) const {
    if (n == size) {
      store(p);
    } else {
      store_partial(p, n);
    }
  }
  void store(T* p) const { std::memcpy(p, &v, sizeof v); }
  void store_partial(T* p, int64_t n) const { std::memcpy(p, &v, size_t(n) * sizeof(T)); }

  // Vector casts between types of one size reinterpret the bits (GCC's vector extension).
  Bits bits() const { return (Bits)v; }            // NOLINT(google-readability-casting)
  static Vec from_bits(Bits b) { return (Raw)b; }  // NOLINT(google-readability-casting)

  friend Vec operator+(Vec a, Vec b) { return a.v + b.v; }
  friend Vec operator-(Vec a, Vec b) { return a.v - b.v; }
  friend Vec operator*(Vec a, Vec b) { return a.v * b.v; }
  friend Vec operator/(Vec a, Vec b) { return a.v / b.v; }
  friend Vec operator-(Vec a) { return -a.v; }
  friend Mask operator<(Vec a, Vec b) { return a.v < b.v; }
  friend Mask operator<=(Vec a, Vec b) { return a.v <= b.v; }
  friend Mask operator>(Vec a, Vec b) { return a.v > b.v; }
  friend Mask operator>=(Vec a, Vec b) { return a.v >= b.v; }
  friend Mask operator==(Vec a, Vec b) { return a.v == b.v; }
  friend Mask operator!=(Vec a, Vec b) { return a.v != b.v; }
};

// mask ? a : b, lane by lane.
template <typename T>
inline Vec<T> select(typename Vec<T>::Mask m, Vec<T> a, Vec<T> b) {
  return m ? a.v : b.v;
}
template <typename T>
inline Vec<T> select(typename Vec<T>::Mask m, Vec<T> a, T b) {
  return select(m, a, Vec<T>(b));
}
template <typename T>
inline Vec<T> select(typename Vec<T>::Mask m, T a, Vec<T> b) {
  return select(m, Vec<T>(a), b);
}

template <typename T>
inline typename Vec<T>::Mask isnan(Vec<T> x) {
  return x != x;
}

template <typename T>
inline Vec<T> abs(Vec<T> x) {
  using B = typename Vec<T>::Bits;
  return Vec<T>::from_bits(x.bits() & (B{} + (~typename Vec<T>::UInt(0) >> 1)));
}

// The sign bit of `sign` on the magnitude of `mag`.
template <typename T>
inline Vec<T> copysign(Vec<T> mag, Vec<T> sign) {
  using U = typename Vec<T>::UInt;
  const U sign_bit = U(1) << (sizeof(T) * 8 - 1);
  return Vec<T>::from_bits((mag.bits() & ~sign_bit) | (sign.bits() & sign_bit));
}

// Raw intrinsic register types of the level.
#if EMBER_CPU_LEVEL >= 2
using RegF = __m512;
using RegD = __m512d;
#elif EMBER_CPU_LEVEL == 1
using RegF = __m256;
using RegD = __m256d;
#else
using RegF = __m128;
using RegD = __m128d;
#endif

// NOLINTBEGIN(google-readability-casting): vector casts, bit reinterpretations
inline RegF reg(Vec<float> x) {
  return (RegF)x.v;
}
inline RegD reg(Vec<double> x) {
  return (RegD)x.v;
}
inline Vec<float> from_reg(RegF r) {
  return (Vec<float>::Raw)r;
}
inline Vec<double> from_reg(RegD r) {
  return (Vec<double>::Raw)r;
}
// NOLINTEND(google-readability-casting)

// Sum of the lanes as a pairwise tree (halves added lane by lane until one is left): a fixed
// order, so a result depends on the level only through its lane count, and log2(lanes) adds of
// register halves instead of a serial chain.
inline float reduce_add(Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  const __m512 v = reg(x);
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
#elif EMBER_CPU_LEVEL == 1
  const __m256 a = reg(x);
#endif
#if EMBER_CPU_LEVEL >= 1
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
#else
  __m128 b = reg(x);
#endif
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));  // lanes 0, 1 += lanes 2, 3
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}
inline double reduce_add(Vec<double> x) {
#if EMBER_CPU_LEVEL >= 2
  const __m512d v = reg(x);
  const __m256d a = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
#elif EMBER_CPU_LEVEL == 1
  const __m256d a = reg(x);
#endif
#if EMBER_CPU_LEVEL >= 1
  const __m128d b = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
#else
  const __m128d b = reg(x);
#endif
  return _mm_cvtsd_f64(_mm_add_sd(b, _mm_unpackhi_pd(b, b)));
}

// Largest lane, in the same tree (callers keep NaN out of the lanes; see nn_rows::max). maxps
// returns its first operand where it is greater, else the second: the upper half wins only
// where it is strictly greater.
inline float reduce_max(Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  const __m512 v = reg(x);
  const __m256 a = _mm256_max_ps(_mm512_extractf32x8_ps(v, 1), _mm512_castps512_ps256(v));
#elif EMBER_CPU_LEVEL == 1
  const __m256 a = reg(x);
#endif
#if EMBER_CPU_LEVEL >= 1
  __m128 b = _mm_max_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
#else
  __m128 b = reg(x);
#endif
  b = _mm_max_ps(_mm_movehl_ps(b, b), b);
  return _mm_cvtss_f32(_mm_max_ss(_mm_movehdup_ps(b), b));
}
inline double reduce_max(Vec<double> x) {
#if EMBER_CPU_LEVEL >= 2
  const __m512d v = reg(x);
  const __m256d a = _mm256_max_pd(_mm512_extractf64x4_pd(v, 1), _mm512_castpd512_pd256(v));
#elif EMBER_CPU_LEVEL == 1
  const __m256d a = reg(x);
#endif
#if EMBER_CPU_LEVEL >= 1
  const __m128d b = _mm_max_pd(_mm256_extractf128_pd(a, 1), _mm256_castpd256_pd128(a));
#else
  const __m128d b = reg(x);
#endif
  return _mm_cvtsd_f64(_mm_max_sd(_mm_unpackhi_pd(b, b), b));
}

// a * b + c, rounded once where the level has FMA (twice at `default`).
inline Vec<float> fma(Vec<float> a, Vec<float> b, Vec<float> c) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_fmadd_ps(reg(a), reg(b), reg(c)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_fmadd_ps(reg(a), reg(b), reg(c)));
#else
  return a * b + c;
#endif
}
inline Vec<double> fma(Vec<double> a, Vec<double> b, Vec<double> c) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_fmadd_pd(reg(a), reg(b), reg(c)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_fmadd_pd(reg(a), reg(b), reg(c)));
#else
  return a * b + c;
#endif
}

inline Vec<float> sqrt(Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_sqrt_ps(reg(x)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_sqrt_ps(reg(x)));
#else
  return from_reg(_mm_sqrt_ps(reg(x)));
#endif
}
inline Vec<double> sqrt(Vec<double> x) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_sqrt_pd(reg(x)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_sqrt_pd(reg(x)));
#else
  return from_reg(_mm_sqrt_pd(reg(x)));
#endif
}

// Nearest integer, ties to even (one rounding instruction at every level: SSE4.1 and up).
inline Vec<float> round_nearest(Vec<float> x) {
  constexpr int kMode = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_roundscale_ps(reg(x), kMode));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_round_ps(reg(x), kMode));
#else
  return from_reg(_mm_round_ps(reg(x), kMode));
#endif
}
inline Vec<double> round_nearest(Vec<double> x) {
  constexpr int kMode = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_roundscale_pd(reg(x), kMode));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_round_pd(reg(x), kMode));
#else
  return from_reg(_mm_round_pd(reg(x), kMode));
#endif
}

// min(bound, x) and max(bound, x) in one instruction each, x's NaN kept (the min/max
// instructions return their second operand when either is NaN).
inline Vec<float> min_with(Vec<float> bound, Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_min_ps(reg(bound), reg(x)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_min_ps(reg(bound), reg(x)));
#else
  return from_reg(_mm_min_ps(reg(bound), reg(x)));
#endif
}
inline Vec<float> max_with(Vec<float> bound, Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_max_ps(reg(bound), reg(x)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_max_ps(reg(bound), reg(x)));
#else
  return from_reg(_mm_max_ps(reg(bound), reg(x)));
#endif
}
inline Vec<double> min_with(Vec<double> bound, Vec<double> x) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_min_pd(reg(bound), reg(x)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_min_pd(reg(bound), reg(x)));
#else
  return from_reg(_mm_min_pd(reg(bound), reg(x)));
#endif
}
inline Vec<double> max_with(Vec<double> bound, Vec<double> x) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_max_pd(reg(bound), reg(x)));
#elif EMBER_CPU_LEVEL == 1
  return from_reg(_mm256_max_pd(reg(bound), reg(x)));
#else
  return from_reg(_mm_max_pd(reg(bound), reg(x)));
#endif
}

// Smaller / larger of a and b; NaN in either gives NaN (as torch.minimum / maximum).
template <typename T>
inline Vec<T> minimum(Vec<T> a, Vec<T> b) {
  return select(isnan(a) | isnan(b), a + b, select(a < b, a, b));
}
template <typename T>
inline Vec<T> maximum(Vec<T> a, Vec<T> b) {
  return select(isnan(a) | isnan(b), a + b, select(a > b, a, b));
}

// Whether any lane of a comparison's result is set (a branch for the rare lanes of a vector).
template <typename M>
inline bool any(M m) {
#if EMBER_CPU_LEVEL >= 2
  return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0;  // NOLINT: vector cast
#elif EMBER_CPU_LEVEL == 1
  return !_mm256_testz_si256((__m256i)m, (__m256i)m);  // NOLINT: vector cast
#else
  return !_mm_testz_si128((__m128i)m, (__m128i)m);  // NOLINT: vector cast
#endif
}

#if EMBER_CPU_LEVEL >= 1
// Lane i gets table[index[i] % 16]: a 16-entry float table as one AVX-512 register permute, or
// two AVX2 permutes of its halves blended on bit 3 of the index (piecewise polynomials pick
// each lane's coefficients this way; vec/erf_tables.h).
inline Vec<float> lookup16(const float* table, Vec<float>::Bits index) {
#if EMBER_CPU_LEVEL >= 2
  return from_reg(_mm512_permutexvar_ps((__m512i)index, _mm512_load_ps(table)));  // NOLINT
#else
  const __m256i i = (__m256i)index;  // NOLINT: vector cast
  const __m256 lo = _mm256_permutevar8x32_ps(_mm256_load_ps(table), i);
  const __m256 hi = _mm256_permutevar8x32_ps(_mm256_load_ps(table + 8), i);
  return from_reg(_mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(i, 28))));
#endif
}
#endif

// Non-temporal store of a whole vector to a kVecBytes-aligned address (see loops.h, Note
// [Streaming Stores]).
inline void stream(float* p, Vec<float> x) {
#if EMBER_CPU_LEVEL >= 2
  _mm512_stream_ps(p, reg(x));
#elif EMBER_CPU_LEVEL == 1
  _mm256_stream_ps(p, reg(x));
#else
  _mm_stream_ps(p, reg(x));
#endif
}
inline void stream(double* p, Vec<double> x) {
#if EMBER_CPU_LEVEL >= 2
  _mm512_stream_pd(p, reg(x));
#elif EMBER_CPU_LEVEL == 1
  _mm256_stream_pd(p, reg(x));
#else
  _mm_stream_pd(p, reg(x));
#endif
}

}  // namespace vec
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
