// Elementary functions of Vec<float> / Vec<double> (vec.h) at this file's CPU capability level.
//
// Most come from SLEEF (libsleef), called at the level's own entry point (sse4 at `default`,
// avx2, avx512f): one call per vector, with SLEEF's documented error bound in ulp, which the
// name's suffix gives (u10: 1.0 ulp, u15, u35: 3.5 ulp). float32 uses the 3.5-ulp versions where
// SLEEF has them, because they are about twice as fast and float32 users do not see the
// difference; float64 always uses 1.0 ulp. exp, tanh and sigmoid are written here, inline, on
// the vectors themselves: they sit inside the activations and softmax, where a call per vector
// and SLEEF's 1-ulp exp cost more than the whole rest of the loop (docs/design/cpu-dispatch.md,
// "Vector math"). tests/cpp/test_vec_math_levels.cpp holds every function to its bound on every
// level the machine supports.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <sleef.h>

#include "kernels/cpu/vec/erf_tables.h"
#include "kernels/cpu/vec/vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace vec {

#if EMBER_CPU_LEVEL >= 2
#define EMBER_SLEEF_F(fn, acc) Sleef_##fn##f16_##acc##avx512f
#define EMBER_SLEEF_D(fn, acc) Sleef_##fn##d8_##acc##avx512f
#elif EMBER_CPU_LEVEL == 1
#define EMBER_SLEEF_F(fn, acc) Sleef_##fn##f8_##acc##avx2
#define EMBER_SLEEF_D(fn, acc) Sleef_##fn##d4_##acc##avx2
#else
#define EMBER_SLEEF_F(fn, acc) Sleef_##fn##f4_##acc##sse4
#define EMBER_SLEEF_D(fn, acc) Sleef_##fn##d2_##acc##sse4
#endif

#define EMBER_VEC_SLEEF1(name, sleef_name, float_acc, double_acc)   \
  inline Vec<float> name(Vec<float> x) {                            \
    return from_reg(EMBER_SLEEF_F(sleef_name, float_acc)(reg(x)));  \
  }                                                                 \
  inline Vec<double> name(Vec<double> x) {                          \
    return from_reg(EMBER_SLEEF_D(sleef_name, double_acc)(reg(x))); \
  }
#define EMBER_VEC_SLEEF2(name, sleef_name, float_acc, double_acc)           \
  inline Vec<float> name(Vec<float> x, Vec<float> y) {                      \
    return from_reg(EMBER_SLEEF_F(sleef_name, float_acc)(reg(x), reg(y)));  \
  }                                                                         \
  inline Vec<double> name(Vec<double> x, Vec<double> y) {                   \
    return from_reg(EMBER_SLEEF_D(sleef_name, double_acc)(reg(x), reg(y))); \
  }

EMBER_VEC_SLEEF1(exp2, exp2, u10, u10)
EMBER_VEC_SLEEF1(sleef_expm1, expm1, u10, u10)
EMBER_VEC_SLEEF1(log, log, u35, u10)
EMBER_VEC_SLEEF1(log2, log2, u35, u10)
EMBER_VEC_SLEEF1(sleef_log10, log10, u10, u10)
EMBER_VEC_SLEEF1(sleef_log1p, log1p, u10, u10)
EMBER_VEC_SLEEF1(sin, sin, u35, u10)
EMBER_VEC_SLEEF1(cos, cos, u35, u10)
EMBER_VEC_SLEEF1(tan, tan, u35, u10)
EMBER_VEC_SLEEF1(asin, asin, u35, u10)
EMBER_VEC_SLEEF1(acos, acos, u35, u10)
EMBER_VEC_SLEEF1(atan, atan, u35, u10)
EMBER_VEC_SLEEF1(sleef_sinh, sinh, u35, u10)
EMBER_VEC_SLEEF1(sleef_cosh, cosh, u35, u10)
EMBER_VEC_SLEEF1(sleef_asinh, asinh, u10, u10)
EMBER_VEC_SLEEF1(sleef_acosh, acosh, u10, u10)
EMBER_VEC_SLEEF1(atanh, atanh, u10, u10)
EMBER_VEC_SLEEF1(sleef_erf, erf, u10, u10)
EMBER_VEC_SLEEF1(sleef_erfc, erfc, u15, u15)
EMBER_VEC_SLEEF2(atan2, atan2, u35, u10)
EMBER_VEC_SLEEF2(pow, pow, u10, u10)

#undef EMBER_VEC_SLEEF1
#undef EMBER_VEC_SLEEF2

// ---------------------------------------------------------------------------------------------
// exp: Cody-Waite reduction x = n ln2 + r (|r| <= ln2 / 2), a polynomial for e^r, and the scaling
// by 2^n: vscalefps at AVX-512 (subnormal results and overflow rounded by the instruction), else
// the exponent bits of 2^n, or 2^n built in two halves for a vector with a lane whose 2^n is
// not a normal number. Within 1 ulp with FMA (2 at `default`, which rounds each step twice).
// ---------------------------------------------------------------------------------------------

template <typename T>
struct ExpConstants;
template <>
struct ExpConstants<float> {
  static constexpr float kLog2e = 1.44269504088896341f;
  static constexpr float kLn2Hi = 0.693359375f;  // few mantissa bits: n * kLn2Hi is exact
  static constexpr float kLn2Lo = -2.12194440e-4f;
  static constexpr float kMax = 89.0f;          // exp(x) = inf above 88.72
  static constexpr float kMin = -104.0f;        // exp(x) rounds to 0 below -103.97
  static constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: x + kMagic rounds x to an integer
  static constexpr float kNormalMin = -126.0f;  // 2^n is a normal float for n in [-126, 127]
  static constexpr float kNormalMax = 127.0f;
  static constexpr int kMantBits = 23;
  static constexpr uint32_t kBias = 127;
};
template <>
struct ExpConstants<double> {
  static constexpr double kLog2e = 1.4426950408889634074;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01;
  static constexpr double kLn2Lo = 1.90821492927058770002e-10;
  static constexpr double kMax = 710.0;
  static constexpr double kMin = -746.0;
  static constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double kNormalMin = -1022.0;
  static constexpr double kNormalMax = 1023.0;
  static constexpr int kMantBits = 52;
  static constexpr uint64_t kBias = 1023;
};

// e^r - 1 for |r| <= ln2 / 2 (double).
inline Vec<double> expm1_poly(Vec<double> r) {
  // Taylor series to degree 13: the remainder r^14 / 14! < 2^-60 for |r| <= ln2 / 2.
  Vec<double> p = 1.0 / 6227020800.0;
  p = fma(p, r, 1.0 / 479001600.0);
  p = fma(p, r, 1.0 / 39916800.0);
  p = fma(p, r, 1.0 / 3628800.0);
  p = fma(p, r, 1.0 / 362880.0);
  p = fma(p, r, 1.0 / 40320.0);
  p = fma(p, r, 1.0 / 5040.0);
  p = fma(p, r, 1.0 / 720.0);
  p = fma(p, r, 1.0 / 120.0);
  p = fma(p, r, 1.0 / 24.0);
  p = fma(p, r, 1.0 / 6.0);
  p = fma(p, r, 0.5);
  return fma(p, r * r, r);
}

// e^r for |r| <= ln2 / 2. float: a degree-6 polynomial with e^r's first two Taylor coefficients
// kept exact, fitted for relative error (3e-9, below float32's rounding) by weighted least
// squares towards minimax, as scripts/fit_erf_tables.py fits erf.
inline Vec<float> exp_poly(Vec<float> r) {
  Vec<float> p = 0.00138145348f;
  p = fma(p, r, Vec<float>(0.00836874545f));
  p = fma(p, r, Vec<float>(0.0416683927f));
  p = fma(p, r, Vec<float>(0.166665211f));
  p = fma(p, r, Vec<float>(0.49999994f));
  p = fma(p, r, Vec<float>(1.0f));
  return fma(p, r, Vec<float>(1.0f));
}
inline Vec<double> exp_poly(Vec<double> r) {
  return expm1_poly(r) + 1.0;
}

// 2^n for integral-valued n within the normal exponent range.
template <typename T>
inline Vec<T> pow2_int(Vec<T> n) {
  using C = ExpConstants<T>;
  const Vec<T> t = n + C::kMagic;
  // The low bits of t hold n + 2^(mant - 1) (the magic's own mantissa): subtracting the magic's
  // bits gives n in two's complement, in unsigned arithmetic.
  const typename Vec<T>::Bits ni = t.bits() - Vec<T>(C::kMagic).bits();
  return Vec<T>::from_bits((ni + C::kBias) << C::kMantBits);
}

template <typename T>
inline Vec<T> round_to_int(Vec<T> x) {  // ties to even, for |x| < 2^22 (float) / 2^51
  using C = ExpConstants<T>;
  return (x + C::kMagic) - C::kMagic;
}

// p * 2^n for integral-valued n with |n| up to about twice the exponent range (the callers clamp
// their arguments so): a result below the normal range rounds to a subnormal or 0, one above it
// overflows to inf. With `kNonPositive` the caller promises n <= 0 (or NaN), which halves the
// range test.
template <typename T, bool kNonPositive = false>
inline Vec<T> scale_by_pow2(Vec<T> p, Vec<T> n) {
#if EMBER_CPU_LEVEL >= 2
  // vscalefps does it in one instruction.
  if constexpr (sizeof(T) == 4) {
    return from_reg(_mm512_scalef_ps(reg(p), reg(n)));
  } else {
    return from_reg(_mm512_scalef_pd(reg(p), reg(n)));
  }
#else
  using C = ExpConstants<T>;
  // 2^n from its exponent bits; past the normal range, in two halves.
  const auto outside = kNonPositive ? n < Vec<T>(C::kNormalMin)
                                    : (n < Vec<T>(C::kNormalMin)) | (n > Vec<T>(C::kNormalMax));
  if (!any(outside)) return p * pow2_int(n);
  const Vec<T> n1 = round_to_int(n * T(0.5));
  return p * pow2_int(n1) * pow2_int(n - n1);
#endif
}

// e^x; with `kNonPositive` the caller promises x <= 0 or NaN (sigmoid's e^-|x|), which saves
// the upper clamp and half the range test.
template <typename T, bool kNonPositive = false>
inline Vec<T> exp(Vec<T> x) {
  using C = ExpConstants<T>;
  // Clamping keeps n in range (and inf out of the reduction); NaN flows through as NaN.
  const Vec<T> xc = max_with(Vec<T>(C::kMin), kNonPositive ? x : min_with(Vec<T>(C::kMax), x));
  const Vec<T> n = round_nearest(xc * C::kLog2e);
  Vec<T> r = fma(-n, Vec<T>(C::kLn2Hi), xc);
  r = fma(-n, Vec<T>(C::kLn2Lo), r);
  return scale_by_pow2<T, kNonPositive>(exp_poly(r), n);
}

// ---------------------------------------------------------------------------------------------
// expm1. float64: SLEEF. float32: our own, on exp's reduction (SLEEF's expm1f costs twice our
// exp): x = n ln2 + r, e^x - 1 = 2^n (e^r - 1) + (2^n - 1) as one multiply-add, where 2^n - 1 is
// exact for the n that matter (|x| <= 80) and e^r - 1 keeps its relative accuracy near 0 through
// Cephes' expm1 polynomial. |x| > 80 (and +-inf) take e^x - 1 in a branch; there the subtraction
// loses nothing.
// ---------------------------------------------------------------------------------------------

inline Vec<double> expm1(Vec<double> x) {
  return sleef_expm1(x);
}

inline Vec<float> expm1(Vec<float> x) {
  using C = ExpConstants<float>;
  const Vec<float> n = round_nearest(x * C::kLog2e);
  Vec<float> r = fma(-n, Vec<float>(C::kLn2Hi), x);
  r = fma(-n, Vec<float>(C::kLn2Lo), r);
  Vec<float> p = 1.9875691500e-4f;  // Cephes expf minimax coefficients: e^r - 1 = r + r^2 p(r)
  p = fma(p, r, Vec<float>(1.3981999507e-3f));
  p = fma(p, r, Vec<float>(8.3334519073e-3f));
  p = fma(p, r, Vec<float>(4.1665795894e-2f));
  p = fma(p, r, Vec<float>(1.6666665459e-1f));
  p = fma(p, r, Vec<float>(5.0000001201e-1f));
  const Vec<float> u = fma(p, r * r, r);
  const Vec<float> scale = pow2_int(n);
  Vec<float> result = fma(scale, u, scale - 1.0f);
  // Below half an ulp of 1, expm1(x) = x (this also keeps -0, which the reduction turns to +0).
  result = select(abs(x) < Vec<float>(2.98023224e-8f), x, result);
  const auto big = abs(x) > Vec<float>(80.0f);
  return any(big) ? select(big, exp(x) - 1.0f, result) : result;
}

// ---------------------------------------------------------------------------------------------
// log10. float64: SLEEF. float32: our own (SLEEF's log10f is a third slower than the memory
// traffic around it at AVX2). x = 2^k m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact),
// s = f / (2 + f): log(m) = f - f^2/2 + s (f^2/2 + R(s^2)) with fdlibm's logf polynomial R. The
// sum is split into hi (f - f^2/2 with its low 12 bits cleared) and lo, and each part is scaled
// by 1/ln10 and k by log10(2) in two pieces, so that the result rounds once at the end (within
// 1 ulp).
// ---------------------------------------------------------------------------------------------

inline Vec<double> log10(Vec<double> x) {
  return sleef_log10(x);
}

inline Vec<float> log10(Vec<float> x) {
  using B = Vec<float>::Bits;
  // Subnormals: scale into the normal range first (2^25), and take 25 off the exponent.
  const auto tiny = x < Vec<float>(1.17549435e-38f);
  const Vec<float> xs = select(tiny, x * 33554432.0f, x);
  const Vec<float> k_bias = select(tiny, Vec<float>(-25.0f), Vec<float>(0.0f));
  // m in [sqrt(1/2), sqrt(2)): add the bits of 1 - sqrt(1/2) to carry into the exponent at the
  // right place (fdlibm's trick), then rebuild m from the mantissa.
  const B bits = xs.bits() + (B{} + (0x3f800000u - 0x3f3504f3u));
  const Vec<float> k =
      Vec<float>(__builtin_convertvector((Vec<float>::Mask)(bits >> 23) - 127, Vec<float>::Raw)) +
      k_bias;
  const Vec<float> m = Vec<float>::from_bits((bits & 0x007fffffu) + 0x3f3504f3u);
  const Vec<float> f = m - 1.0f;
  const Vec<float> s = f / (f + 2.0f);
  const Vec<float> z = s * s, w = z * z;
  const Vec<float> t1 = w * fma(w, Vec<float>(0.24279078841f), Vec<float>(0.40000972152f));
  const Vec<float> t2 = z * fma(w, Vec<float>(0.28498786688f), Vec<float>(0.66666662693f));
  const Vec<float> hfsq = 0.5f * f * f;
  const Vec<float> r = s * (hfsq + (t1 + t2));
  const Vec<float> hi = Vec<float>::from_bits((f - hfsq).bits() & 0xfffff000u);
  const Vec<float> lo = ((f - hi) - hfsq) + r;
  constexpr float kInvLn10Hi = 4.3432617188e-01f, kInvLn10Lo = -3.1689971365e-05f;
  constexpr float kLog10Of2Hi = 3.0102920532e-01f, kLog10Of2Lo = 7.9034151668e-07f;
  Vec<float> y = fma(k, Vec<float>(kLog10Of2Lo), (lo + hi) * kInvLn10Lo);
  y = fma(lo, Vec<float>(kInvLn10Hi), y);
  y = fma(hi, Vec<float>(kInvLn10Hi), y);
  y = fma(k, Vec<float>(kLog10Of2Hi), y);
  // x = 0: -inf; x < 0 or NaN: NaN; x = inf: inf.
  y = select(x == Vec<float>(0.0f), Vec<float>(-__builtin_inff()), y);
  y = select(x == Vec<float>(__builtin_inff()), x, y);
  return select((x < Vec<float>(0.0f)) | isnan(x), Vec<float>(__builtin_nanf("")), y);
}

// ---------------------------------------------------------------------------------------------
// tanh and sigmoid, from exp.
// ---------------------------------------------------------------------------------------------

// |x| < 0.625: an odd polynomial (Cephes); beyond, 1 - 2 / (e^{2|x|} + 1) with x's sign.
inline Vec<float> tanh(Vec<float> x) {
  const Vec<float> ax = abs(x);
  const Vec<float> z = x * x;
  Vec<float> p = -5.70498872745e-3f;
  p = fma(p, z, 2.06390887954e-2f);
  p = fma(p, z, -5.37397155531e-2f);
  p = fma(p, z, 1.33314422036e-1f);
  p = fma(p, z, -3.33332819422e-1f);
  const Vec<float> small = fma(p * z, x, x);
  const Vec<float> big = 1.0f - 2.0f / (exp(ax + ax) + 1.0f);
  return copysign(select(ax < Vec<float>(0.625f), small, big), x);
}
inline Vec<double> tanh(Vec<double> x) {
  const Vec<double> ax = abs(x);
  const Vec<double> s = x * x;
  const Vec<double> p =
      fma(fma(Vec<double>(-9.64399179425052238628e-1), s, Vec<double>(-9.92877231001918586564e1)),
          s, Vec<double>(-1.61468768441708447952e3));
  const Vec<double> q =
      fma(fma(s + 1.12811678491632931402e2, s, Vec<double>(2.23548839060100448583e3)), s,
          Vec<double>(4.84406305325125486048e3));
  const Vec<double> small = fma(x * s, p / q, x);
  const Vec<double> big = 1.0 - 2.0 / (exp(ax + ax) + 1.0);
  return copysign(select(ax < Vec<double>(0.625), small, big), x);
}

// With e = e^-|x| (never overflows): 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, so that
// tiny results keep their relative accuracy instead of flushing to 0.
template <typename T>
inline Vec<T> sigmoid(Vec<T> x) {
  const Vec<T> e = exp<T, true>(-abs(x));
  return select(x < Vec<T>(T(0)), e, Vec<T>(T(1))) / (e + T(1));
}

// ---------------------------------------------------------------------------------------------
// SLEEF's functions whose documented range stops short of the format's: beyond it they return
// inf or NaN where the result is finite. The tests found each of these at the largest inputs.
// ---------------------------------------------------------------------------------------------

template <typename T>
struct RangeLimits;
template <>
struct RangeLimits<float> {
  static constexpr float kLog1pMax = 1e37f;    // sleef log1pf: |x| <= 1e38
  static constexpr float kSinhMax = 88.0f;     // sleef sinhf / coshf: |x| <= 88
  static constexpr float kAsinhMax = 1.8e19f;  // sleef asinhf / acoshf: |x| <= 1.84e19
};
template <>
struct RangeLimits<double> {
  static constexpr double kLog1pMax = 1e306;
  static constexpr double kSinhMax = 709.0;
  static constexpr double kAsinhMax = 1.3e154;
};

// log1p(x) = log(x) to within rounding once x > 2^53.
inline Vec<double> log1p(Vec<double> x) {
  return select(x > Vec<double>(RangeLimits<double>::kLog1pMax), log(x), sleef_log1p(x));
}
// float: log(u) with u = 1 + x rounded, corrected by the rounding error of u (Goldberg's
// log1p): log1p(x) = log(u) + (x - (u - 1)) / u, exact to first order in that error. Within the
// log's bound plus one rounding; about three times as fast as SLEEF's log1pf.
inline Vec<float> log1p(Vec<float> x) {
  const Vec<float> u = x + 1.0f;
  const Vec<float> correction = (x - (u - 1.0f)) / u;  // NaN at u = 0 or inf: dropped there
  const Vec<float> r = log(u) + select(isnan(correction), Vec<float>(0.0f), correction);
  // u == 1: x is below half an ulp of 1, and log1p(x) = x (sign of zero kept); u == inf and NaN
  // pass through log.
  return select(u == Vec<float>(1.0f), x, r);
}

// Where e^|x| overflows but sinh / cosh do not: (e^(|x|/2) / 2) * e^(|x|/2), three roundings.
template <typename T>
inline Vec<T> half_exp_squared(Vec<T> ax) {
  const Vec<T> e = exp(ax * T(0.5));
  return (e * T(0.5)) * e;
}
template <typename T>
inline Vec<T> sinh(Vec<T> x) {
  const Vec<T> ax = abs(x);
  return select(ax > Vec<T>(RangeLimits<T>::kSinhMax), copysign(half_exp_squared(ax), x),
                sleef_sinh(x));
}
template <typename T>
inline Vec<T> cosh(Vec<T> x) {
  const Vec<T> ax = abs(x);
  return select(ax > Vec<T>(RangeLimits<T>::kSinhMax), half_exp_squared(ax), sleef_cosh(x));
}

// asinh(x) = sign(x) (log|x| + ln 2) and acosh(x) = log x + ln 2 to within rounding for huge x.
template <typename T>
inline Vec<T> asinh(Vec<T> x) {
  const Vec<T> ax = abs(x);
  const Vec<T> big = copysign(log(ax) + T(0.69314718055994530942), x);
  return select(ax > Vec<T>(RangeLimits<T>::kAsinhMax), big, sleef_asinh(x));
}
template <typename T>
inline Vec<T> acosh(Vec<T> x) {
  const Vec<T> big = log(x) + T(0.69314718055994530942);
  return select(x > Vec<T>(RangeLimits<T>::kAsinhMax), big, sleef_acosh(x));
}

// ---------------------------------------------------------------------------------------------
// erf and erfc. float64: SLEEF (1 ulp / 1.5 ulp). float32: our own, because SLEEF's erff is
// slower than the exp / log around it (gelu spent 80% of its time there). From `avx2` up, 16
// piecewise polynomials on [0, 4) chosen per lane by register permutes (below). At `default`,
// and for erfc past 4 at every level:
// - |x| < 0.8: the Maclaurin series of erf to x^21 (the next term is below 2^-32 relative);
// - beyond: erfc(|x|) = t exp(-x^2 + P(t)), t = 1 / (1 + |x| / 2), Numerical Recipes' Chebyshev
//   fit, relative error below 1.2e-7 over the whole range (erf = 1 - erfc there, with
//   erfc(0.8) = 0.26 keeping the cancellation small), evaluated in float with our exp.
// ---------------------------------------------------------------------------------------------

inline Vec<float> erf_series(Vec<float> x) {
  const Vec<float> z = x * x;
  // 2/sqrt(pi) * sum (-1)^k x^(2k+1) / (k! (2k+1))
  Vec<float> p = 1.48071928e-08f;  // k = 10 (2/sqrt(pi) folded in)
  p = fma(p, z, -1.63658447e-07f);
  p = fma(p, z, 1.64621144e-06f);
  p = fma(p, z, -1.49256504e-05f);
  p = fma(p, z, 1.20553330e-04f);
  p = fma(p, z, -8.54832702e-04f);
  p = fma(p, z, 5.22397763e-03f);
  p = fma(p, z, -2.68661706e-02f);
  p = fma(p, z, 1.12837917e-01f);
  p = fma(p, z, -3.76126389e-01f);
  p = fma(p, z, 1.12837917e+00f);
  return p * x;
}

// Numerical Recipes' Chebyshev fit: erfc(a) = t exp(-a^2 + P(t)), t = 1 / (1 + a / 2).
inline Vec<float> erfc_fit_poly(Vec<float> t) {
  Vec<float> p = 0.17087277f;
  p = fma(p, t, -0.82215223f);
  p = fma(p, t, 1.48851587f);
  p = fma(p, t, -1.13520398f);
  p = fma(p, t, 0.27886807f);
  p = fma(p, t, -0.18628806f);
  p = fma(p, t, 0.09678418f);
  p = fma(p, t, 0.37409196f);
  p = fma(p, t, 1.00002368f);
  return fma(p, t, Vec<float>(-1.26551223f));
}

// erfc(a) for a >= 0. With `exact_square`, e^(-a^2) is formed as e^(-hi) e^(-lo) from a^2 split
// exactly (hi = a * a rounded, lo = fma(a, a, -hi)): for erfc itself, whose value at a = 9 is
// 1e-36, rounding a^2 would cost its last 6 bits; erf (1 - erfc) does not need it.
template <bool exact_square = false>
inline Vec<float> erfc_positive(Vec<float> a) {
  a = select(a > Vec<float>(11.0f), Vec<float>(11.0f), a);  // erfc(11) is 0 in float; inf too
  const Vec<float> t = 1.0f / fma(a, Vec<float>(0.5f), Vec<float>(1.0f));
  const Vec<float> p = erfc_fit_poly(t);
  if constexpr (exact_square) {
    const Vec<float> hi = a * a;
#if EMBER_CPU_LEVEL >= 1
    const Vec<float> lo = fma(a, a, -hi);
#else  // no FMA: Dekker's split of a into halves whose products are exact
    const Vec<float> c = a * 4097.0f;
    const Vec<float> ah = c - (c - a), al = a - ah;
    const Vec<float> lo = ((ah * ah - hi) + 2.0f * ah * al) + al * al;
#endif
    return t * exp(-hi) * exp(p - lo);
  } else {
    return t * exp(p - a * a);
  }
}

// erfc(z) for z = |x| / sqrt 2 rounded, with e^(-z^2) formed from x^2 / 2 split exactly: the
// rounding of z would cost the result 2 z^2 times its relative size (a hundred ulp at x = -13,
// where gelu's result is near the bottom of float's range). For gelu's tail.
inline Vec<float> erfc_of_half_square(Vec<float> z, Vec<float> x) {
  const Vec<float> a = select(z > Vec<float>(11.0f), Vec<float>(11.0f), z);
  const Vec<float> xc = select(abs(x) > Vec<float>(15.5f), copysign(Vec<float>(15.5f), x), x);
  const Vec<float> t = 1.0f / fma(a, Vec<float>(0.5f), Vec<float>(1.0f));
  const Vec<float> p = erfc_fit_poly(t);
  const Vec<float> hi = xc * xc;
#if EMBER_CPU_LEVEL >= 1
  const Vec<float> lo = fma(xc, xc, -hi);
#else
  const Vec<float> c = xc * 4097.0f;
  const Vec<float> xh = c - (c - xc), xl = xc - xh;
  const Vec<float> lo = ((xh * xh - hi) + 2.0f * xh * xl) + xl * xl;
#endif
  return t * exp(-0.5f * hi) * exp(p - 0.5f * lo);
}

inline Vec<double> erf(Vec<double> x) {
  return sleef_erf(x);
}
inline Vec<double> erfc(Vec<double> x) {
  return sleef_erfc(x);
}

#if EMBER_CPU_LEVEL >= 1
// Piecewise polynomials on [0, 4) (vec/erf_tables.h): each lane picks its interval's
// coefficients with a register permute, so erf costs a handful of multiply-adds and no exp or
// division; erfc and gelu take the exp-based fit above only for a vector with a lane past 4,
// which is rare (|x| > 5.7 for gelu).
// The same at t = 4 z - 1/2: interval k = round(t), v = t - k in [-1/2, 1/2]. Lanes with z >= 4
// get some interval's polynomial (the index wraps), or NaN for z = inf: callers replace them
// (erf: 1; erfc and gelu: the tail). NaN stays NaN through v.
template <int kTerms>
inline Vec<float> erf_piecewise_at(const float (&coef)[kTerms][16], Vec<float> t) {
#if EMBER_CPU_LEVEL >= 2
  const Vec<float> v = from_reg(_mm512_reduce_ps(reg(t), _MM_FROUND_TO_NEAREST_INT));
  const auto index = (Vec<float>::Bits)_mm512_cvtps_epi32(reg(t));  // NOLINT: vector cast
#else
  const Vec<float> k = round_nearest(t);
  const Vec<float> v = t - k;
  const auto index = (Vec<float>::Bits)_mm256_cvtps_epi32(reg(k));  // NOLINT: vector cast
  if (!any(t >= Vec<float>(7.5f))) {
    // Every lane in the first 8 intervals (z < 2: most inputs, and |x| < 2.8 for gelu): one
    // permute of each coefficient's low half instead of two and a blend. (t = 7.5, z = 2, rounds
    // to interval 8.)
    const __m256i i = (__m256i)index;  // NOLINT: vector cast
    Vec<float> p = from_reg(_mm256_permutevar8x32_ps(_mm256_load_ps(coef[kTerms - 1]), i));
    for (int j = kTerms - 2; j >= 0; --j)
      p = fma(p, v, from_reg(_mm256_permutevar8x32_ps(_mm256_load_ps(coef[j]), i)));
    return p;
  }
#endif
  Vec<float> p = lookup16(coef[kTerms - 1], index);
  for (int j = kTerms - 2; j >= 0; --j) p = fma(p, v, lookup16(coef[j], index));
  return p;
}

template <int kTerms>
inline Vec<float> erf_piecewise(const float (&coef)[kTerms][16], Vec<float> z) {
  return erf_piecewise_at(coef, fma(z, Vec<float>(4.0f), Vec<float>(-0.5f)));
}

inline Vec<float> erf(Vec<float> x) {
  const Vec<float> ax = abs(x);
  const Vec<float> r = ax * erf_piecewise(kErfOverZCoef, ax);
  // erf rounds to 1 in float from 3.92 on; NaN fails the comparison and stays NaN.
  return copysign(select(ax >= Vec<float>(4.0f), Vec<float>(1.0f), r), x);
}

// erfc(a) for a >= 0 (NaN passes through).
inline Vec<float> erfc_nonnegative(Vec<float> a) {
  const Vec<float> c = erf_piecewise(kErfcCoef, a);
  const auto tail = a >= Vec<float>(4.0f);
  return any(tail) ? select(tail, erfc_positive<true>(a), c) : c;
}

inline Vec<float> erfc(Vec<float> x) {
  const Vec<float> c = erfc_nonnegative(abs(x));
  return select(x < Vec<float>(0.0f), 2.0f - c, c);
}

// gelu(x) = x Phi(x) = max(x, 0) - |x| Phi(-|x|) (as gelu(x) - gelu(-x) = x), with
// Phi(-|x|) = erfc(z) / 2, z = |x| / sqrt 2: one erfc, which keeps the relative accuracy of the
// small negative results, and one multiply-add after it. The table's t = 4 z - 1/2 comes straight
// from |x| (one rounding, as z's own would be).
inline Vec<float> gelu_erf(Vec<float> x) {
  const Vec<float> ax = abs(x);
  Vec<float> c =
      erf_piecewise_at(kErfcGeluCoef, fma(ax, Vec<float>(2.82842712474619010f), Vec<float>(-0.5f)));
  Vec<float> half_ax = ax * 0.5f;
  const auto tail = ax >= Vec<float>(5.65685415f);  // z >= 4
  if (any(tail)) {
    c = select(tail, erfc_of_half_square(ax * 0.70710678118654752f, x), c);
    half_ax = select(ax == Vec<float>(__builtin_inff()), Vec<float>(0.0f), half_ax);  // inf * 0
  }
  return fma(-half_ax, c, max_with(Vec<float>(0.0f), x));
}
#else  // `default` (no register permutes): the series and the exp-based fit
inline Vec<float> gelu_erf(Vec<float> x) {
  const Vec<float> ax = abs(x), z = ax * 0.70710678118654752f;
  // Past |x| = 4 the rounding of z^2 starts to show (2 z^2 times its relative size).
  const Vec<float> c = any(ax > Vec<float>(4.0f)) ? erfc_of_half_square(z, x) : erfc_positive(z);
  const Vec<float> r =
      x * select(x < Vec<float>(0.0f), 0.5f * c, fma(Vec<float>(-0.5f), c, Vec<float>(1.0f)));
  return select(ax == Vec<float>(__builtin_inff()), max_with(Vec<float>(0.0f), x), r);
}

inline Vec<float> erf(Vec<float> x) {
  const Vec<float> ax = abs(x);
  const Vec<float> big = copysign(1.0f - erfc_positive(ax), x);
  // NaN fails `ax < 0.8` and goes to `big`, where it propagates.
  return select(ax < Vec<float>(0.8f), erf_series(x), big);
}

inline Vec<float> erfc(Vec<float> x) {
  const Vec<float> c = erfc_positive<true>(abs(x));
  const Vec<float> tail = select(x < Vec<float>(0.0f), 2.0f - c, c);
  return select(abs(x) < Vec<float>(0.8f), 1.0f - erf_series(x), tail);
}
#endif

// ---------------------------------------------------------------------------------------------
// erfinv: Giles' single-precision approximation ("Approximating the erfinv function", 2010).
// In float it is the result: erf of it gives x back to within a quarter of the test's bound
// (tests/cpp/test_vec_math_levels.cpp), so a Newton step (an erf and an exp) would buy nothing
// visible. In double it is the start of two Newton steps. |x| = 1 gives +-inf and |x| > 1 or NaN
// gives NaN, as torch.erfinv.
// ---------------------------------------------------------------------------------------------

template <typename T>
inline Vec<T> erfinv(Vec<T> x) {
  const Vec<T> w = -log((T(1) - x) * (T(1) + x));
  // Central region, w < 5; the tails' polynomial in sqrt(w) only for a vector that needs it.
  const Vec<T> wc = w - T(2.5);
  Vec<T> pc = T(2.81022636e-08);
  pc = fma(pc, wc, Vec<T>(T(3.43273939e-07)));
  pc = fma(pc, wc, Vec<T>(T(-3.5233877e-06)));
  pc = fma(pc, wc, Vec<T>(T(-4.39150654e-06)));
  pc = fma(pc, wc, Vec<T>(T(0.00021858087)));
  pc = fma(pc, wc, Vec<T>(T(-0.00125372503)));
  pc = fma(pc, wc, Vec<T>(T(-0.00417768164)));
  pc = fma(pc, wc, Vec<T>(T(0.246640727)));
  pc = fma(pc, wc, Vec<T>(T(1.50140941)));
  Vec<T> y = pc;
  const auto tails = !(w < Vec<T>(T(5)));  // |x| > 0.9966, and NaN: rare, so a branch
  if (any(tails)) {
    const Vec<T> wt = sqrt(w) - T(3);
    Vec<T> pt = T(-0.000200214257);
    pt = fma(pt, wt, Vec<T>(T(0.000100950558)));
    pt = fma(pt, wt, Vec<T>(T(0.00134934322)));
    pt = fma(pt, wt, Vec<T>(T(-0.00367342844)));
    pt = fma(pt, wt, Vec<T>(T(0.00573950773)));
    pt = fma(pt, wt, Vec<T>(T(-0.0076224613)));
    pt = fma(pt, wt, Vec<T>(T(0.00943887047)));
    pt = fma(pt, wt, Vec<T>(T(1.00167406)));
    pt = fma(pt, wt, Vec<T>(T(2.83297682)));
    y = select(tails, pt, y);
  }
  y = y * x;
  if constexpr (sizeof(T) == 8) {
    // The start has single precision: two Newton steps on erf(y) = x, y -= (erf(y) - x) /
    // erf'(y), with 1 / erf'(y) = sqrt(pi) / 2 e^(y^2) (no division; y stays below 6 for
    // |x| < 1, so e^(y^2) is finite).
    y = y - (erf(y) - x) * (T(0.88622692545275801) * exp(y * y));
    y = y - (erf(y) - x) * (T(0.88622692545275801) * exp(y * y));
  }
  const Vec<T> ax = abs(x);
  y = select(ax == Vec<T>(T(1)), copysign(Vec<T>(__builtin_inf()), x), y);
  return select((ax > Vec<T>(T(1))) | isnan(x), Vec<T>(T(__builtin_nan(""))), y);
}

}  // namespace vec
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
