// Branch-free float32 / float64 elementary functions that GCC auto-vectorises inside the
// contiguous loop of cpu_kernel (see Note [Vectorisable math] below), each with a plain scalar
// reference twin in namespace `ref` (the std:: function) used as the test oracle
// (tests/cpp/test_vec_math.cpp checks them over millions of values and the edge cases).
//
// Note [Vectorisable math]
// libm's exp/log/tanh are opaque calls, so a loop calling them runs one element at a time, and
// PyTorch (which uses SLEEF) is several times faster. The functions here are written so that
// every step is a vector instruction: range reduction with the "magic number" rounding trick
// (x + 1.5 * 2^23 rounds to an integer in the low mantissa bits, no float->int conversion),
// polynomials evaluated with std::fma, scaling by 2^n built from exponent bits, and every special
// case (inf, nan, overflow, underflow, subnormals, negative log arguments) handled by selects
// (`cond ? a : b` on values, which GCC turns into blend instructions) instead of branches.
// Bit casts go through std::memcpy, which GCC treats as a register reinterpretation.
// Accuracy: within 2 ulp of the correctly rounded result over the whole domain (the tests
// measure the maximum ulp error against the std:: twins computed in higher precision).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include "kernels/cpu/cpu_level.h"

namespace ember::native {
inline namespace EMBER_CPU_NS {
namespace vmath {

namespace bits {
inline uint32_t u32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint64_t u64(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
inline double f64(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}
}  // namespace bits

// Type-generic constants and helpers so that each function below is written once.
template <typename T>
struct Traits;

template <>
struct Traits<float> {
  using UInt = uint32_t;
  static constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: x + kMagic rounds x to an int
  static constexpr int kMantBits = 23;
  static constexpr UInt kBias = 127;
  static UInt to_bits(float f) { return bits::u32(f); }
  static float from_bits(UInt u) { return bits::f32(u); }
};

template <>
struct Traits<double> {
  using UInt = uint64_t;
  static constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr int kMantBits = 52;
  static constexpr UInt kBias = 1023;
  static UInt to_bits(double d) { return bits::u64(d); }
  static double from_bits(UInt u) { return bits::f64(u); }
};

// Round to nearest integer (ties to even) for |x| < 2^22 (float) / 2^51 (double). Returns the
// rounded value; `t` receives x + kMagic whose low mantissa bits hold the integer.
template <typename T>
inline T round_magic(T x, T& t) {
  t = x + Traits<T>::kMagic;
  return t - Traits<T>::kMagic;
}

// 2^n for an integral-valued n within the normal exponent range, from exponent bits.
template <typename T>
inline T pow2i(T n) {
  using Tr = Traits<T>;
  T t = n + Tr::kMagic;
  // The low bits of t are n + 2^(mant-1) (the magic's own mantissa); subtracting the magic's
  // bits gives n as a two's-complement integer, computed in unsigned arithmetic (no UB).
  typename Tr::UInt ni = Tr::to_bits(t) - Tr::to_bits(Tr::kMagic);
  return Tr::from_bits((ni + Tr::kBias) << Tr::kMantBits);
}

// 2^n for integral-valued n in [-2 * (bias - 1), 2 * bias]: the product of two halves, so that
// results that are subnormal or overflow come out correctly rounded (or inf) after `y * s1 * s2`.
template <typename T>
inline void pow2i_split(T n, T& s1, T& s2) {
  T t;
  T n1 = round_magic(n * T(0.5), t);
  s1 = pow2i(n1);
  s2 = pow2i(n - n1);
}

// ---------------------------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------------------------

// e^r - 1 for |r| <= ln2/2 (the polynomial core shared by exp, exp2 and expm1).
inline float expm1_core(float r) {
  // Cephes expf minimax coefficients.
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  return std::fma(p, r * r, r);
}

inline double expm1_core(double r) {
  // Taylor series to degree 13: the remainder r^14/14! < 2^-60 for |r| <= ln2/2.
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = std::fma(p, r, 1.0 / 479001600.0);
  p = std::fma(p, r, 1.0 / 39916800.0);
  p = std::fma(p, r, 1.0 / 3628800.0);
  p = std::fma(p, r, 1.0 / 362880.0);
  p = std::fma(p, r, 1.0 / 40320.0);
  p = std::fma(p, r, 1.0 / 5040.0);
  p = std::fma(p, r, 1.0 / 720.0);
  p = std::fma(p, r, 1.0 / 120.0);
  p = std::fma(p, r, 1.0 / 24.0);
  p = std::fma(p, r, 1.0 / 6.0);
  p = std::fma(p, r, 0.5);
  return std::fma(p, r * r, r);
}

template <typename T>
struct ExpConst;
template <>
struct ExpConst<float> {
  static constexpr float kLog2e = 1.44269504088896341f;
  static constexpr float kLn2Hi = 0.693359375f;  // few mantissa bits: n * kLn2Hi is exact
  static constexpr float kLn2Lo = -2.12194440e-4f;
  static constexpr float kMax = 89.0f;        // exp(x) = inf above 88.72
  static constexpr float kMin = -104.0f;      // exp(x) rounds to 0 below -103.97
  static constexpr float kExpm1Max = 20.0f;   // expm1 = exp beyond this (float)
  static constexpr float kExpm1Min = -20.0f;  // expm1 = -1 below this
};
template <>
struct ExpConst<double> {
  static constexpr double kLog2e = 1.4426950408889634074;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm split of ln 2
  static constexpr double kLn2Lo = 1.90821492927058770002e-10;
  static constexpr double kMax = 710.0;   // exp(x) = inf above 709.78
  static constexpr double kMin = -746.0;  // exp(x) rounds to 0 below -745.13
  static constexpr double kExpm1Max = 40.0;
  static constexpr double kExpm1Min = -40.0;
};

template <typename T>
inline T exp_impl(T x) {
  using C = ExpConst<T>;
  // Clamping keeps n in range; NaN fails both comparisons and flows through as NaN.
  T xc = x > C::kMax ? C::kMax : x;
  xc = xc < C::kMin ? C::kMin : xc;
  T t;
  T n = round_magic(xc * C::kLog2e, t);
  T r = std::fma(-n, C::kLn2Hi, xc);
  r = std::fma(-n, C::kLn2Lo, r);
  T p = expm1_core(r) + T(1);
  T s1, s2;
  pow2i_split(n, s1, s2);
  return p * s1 * s2;
}

inline float exp(float x) {
  return exp_impl(x);
}
inline double exp(double x) {
  return exp_impl(x);
}

// 2^x: the reduction x = n + f is exact, so only f * ln2 is rounded.
template <typename T>
inline T exp2_impl(T x) {
  constexpr T kMax = sizeof(T) == 4 ? T(129) : T(1025);
  constexpr T kMin = sizeof(T) == 4 ? T(-151) : T(-1076);
  T xc = x > kMax ? kMax : x;
  xc = xc < kMin ? kMin : xc;
  T t;
  T n = round_magic(xc, t);
  T r = (xc - n) * T(0.693147180559945309417232121458);
  T p = expm1_core(r) + T(1);
  T s1, s2;
  pow2i_split(n, s1, s2);
  return p * s1 * s2;
}

inline float exp2(float x) {
  return exp2_impl(x);
}
inline double exp2(double x) {
  return exp2_impl(x);
}

// e^x - 1, accurate near 0: with x = n ln2 + r, expm1(x) = 2^n expm1(r) + (2^n - 1). Beyond
// kExpm1Max the -1 is below half an ulp and the exp form (e^r) 2^n is used (it cannot overflow
// in the intermediate 2^n).
template <typename T>
inline T expm1_impl(T x) {
  using C = ExpConst<T>;
  T xc = x > C::kMax ? C::kMax : x;
  xc = xc < C::kExpm1Min ? C::kExpm1Min : xc;
  T t;
  T n = round_magic(xc * C::kLog2e, t);
  T r = std::fma(-n, C::kLn2Hi, xc);
  r = std::fma(-n, C::kLn2Lo, r);
  T em = expm1_core(r);
  T s1, s2;
  pow2i_split(n, s1, s2);
  T s = s1 * s2;
  T small = std::fma(s, em, s - T(1));
  T big = (em + T(1)) * s1 * s2;
  T res = x > C::kExpm1Max ? big : small;
  return x == T(0) ? x : res;  // keeps the sign of zero
}

inline float expm1(float x) {
  return expm1_impl(x);
}
inline double expm1(double x) {
  return expm1_impl(x);
}

// ---------------------------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------------------------

// Splits x > 0 (finite, possibly subnormal) as x = 2^e * (1 + f) with 1 + f in [sqrt(1/2),
// sqrt(2)), and returns e; `f` is exact.
template <typename T>
inline T log_reduce(T x, T& f) {
  using Tr = Traits<T>;
  using UInt = typename Tr::UInt;
  constexpr T kMinNormal = std::numeric_limits<T>::min();
  constexpr int kMb = Tr::kMantBits;
  // Subnormals are scaled into the normal range first.
  const bool sub = x < kMinNormal;
  const T scale = sizeof(T) == 4 ? T(8388608.0) : T(18014398509481984.0);  // 2^23 / 2^54
  const T scale_exp = sizeof(T) == 4 ? T(23) : T(54);
  const T xs = sub ? x * scale : x;
  const UInt u = Tr::to_bits(xs);
  const UInt exp_field = (u >> kMb) & (2 * Tr::kBias + 1);
  // Mantissa with the exponent of 0.5: m in [0.5, 1).
  const UInt mant_mask = (UInt(1) << kMb) - 1;
  const T m = Tr::from_bits((u & mant_mask) | ((Tr::kBias - 1) << kMb));
  // exp_field as a float without an int->float conversion: OR it into the mantissa of 2^mb.
  const T kTwoMb = sizeof(T) == 4 ? T(8388608.0) : T(4503599627370496.0);
  const T ef = Tr::from_bits(Tr::to_bits(kTwoMb) | exp_field) - kTwoMb;
  T e = ef - T(Tr::kBias - 1) - (sub ? scale_exp : T(0));
  const bool small = m < T(0.707106781186547524400844362104849);
  e = small ? e - T(1) : e;
  f = small ? (m + m) - T(1) : m - T(1);
  return e;
}

// log(1 + f) for 1 + f in [sqrt(1/2), sqrt(2)), returned as f + y with y a small correction.
inline float log1p_reduced(float f) {
  // Cephes logf minimax coefficients.
  float z = f * f;
  float y = 7.0376836292e-2f;
  y = std::fma(y, f, -1.1514610310e-1f);
  y = std::fma(y, f, 1.1676998740e-1f);
  y = std::fma(y, f, -1.2420140846e-1f);
  y = std::fma(y, f, 1.4249322787e-1f);
  y = std::fma(y, f, -1.6668057665e-1f);
  y = std::fma(y, f, 2.0000714765e-1f);
  y = std::fma(y, f, -2.4999993993e-1f);
  y = std::fma(y, f, 3.3333331174e-1f);
  y = y * f * z;
  return std::fma(-0.5f, z, y);  // y: log(1+f) - f
}

inline double log1p_reduced(double f) {
  // fdlibm __ieee754_log: log(1+f) = f - hfsq + s*(hfsq+R), s = f/(2+f).
  constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                   Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                   Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                   Lg7 = 1.479819860511658591e-01;
  double s = f / (2.0 + f);
  double z = s * s;
  double w = z * z;
  double t1 = w * std::fma(w, std::fma(w, Lg6, Lg4), Lg2);
  double t2 = z * std::fma(w, std::fma(w, std::fma(w, Lg7, Lg5), Lg3), Lg1);
  double r = t2 + t1;
  double hfsq = 0.5 * f * f;
  return s * (hfsq + r) - hfsq;  // y: log(1+f) - f
}

template <typename T>
struct LogConst;
template <>
struct LogConst<float> {
  static constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
};
template <>
struct LogConst<double> {
  static constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
};

// Special values shared by the log family: log(+inf) = +inf, log(0) = -inf, log(<0) = nan.
template <typename T>
inline T log_specials(T x, T r) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  constexpr T kNan = std::numeric_limits<T>::quiet_NaN();
  r = x == kInf ? kInf : r;
  r = x < T(0) ? kNan : r;
  r = x == T(0) ? -kInf : r;
  return x != x ? x : r;
}

template <typename T>
inline T log_impl(T x) {
  using C = LogConst<T>;
  T f;
  T e = log_reduce(x, f);
  T y = log1p_reduced(f);
  T r = std::fma(e, C::kLn2Lo, y) + f;
  r = std::fma(e, C::kLn2Hi, r);
  return log_specials(x, r);
}

inline float log(float x) {
  return log_impl(x);
}
inline double log(double x) {
  return log_impl(x);
}

template <typename T>
inline T log2_impl(T x) {
  constexpr T kLog2e = T(1.44269504088896340735992468100189214);
  T f;
  T e = log_reduce(x, f);
  T y = log1p_reduced(f);
  // Exact powers of two give f = y = 0 and hence exactly e.
  T r = e + std::fma(f, kLog2e, y * kLog2e);
  return log_specials(x, r);
}

inline float log2(float x) {
  return log2_impl(x);
}
inline double log2(double x) {
  return log2_impl(x);
}

template <typename T>
inline T log10_impl(T x) {
  constexpr T kLog10e = T(0.434294481903251827651128918916605082);
  constexpr T kLog10_2 = T(0.301029995663981195213738894724493027);
  T f;
  T e = log_reduce(x, f);
  T y = log1p_reduced(f);
  T r = std::fma(e, kLog10_2, std::fma(f, kLog10e, y * kLog10e));
  return log_specials(x, r);
}

inline float log10(float x) {
  return log10_impl(x);
}
inline double log10(double x) {
  return log10_impl(x);
}

// log(1 + x), accurate near 0: u = 1 + x rounds, and the rounding error (u - 1) - x is put back
// to first order: log1p(x) = log(u) - ((u - 1) - x) / u.
template <typename T>
inline T log1p_impl(T x) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  constexpr T kNan = std::numeric_limits<T>::quiet_NaN();
  T u = T(1) + x;
  T c = (u - T(1)) - x;
  T r = log_impl(u) - c / u;
  r = x == kInf ? kInf : r;
  r = u == T(0) ? -kInf : r;
  r = x < T(-1) ? kNan : r;
  r = x == T(0) ? x : r;  // keeps the sign of zero
  return x != x ? x : r;
}

inline float log1p(float x) {
  return log1p_impl(x);
}
inline double log1p(double x) {
  return log1p_impl(x);
}

// ---------------------------------------------------------------------------------------------
// tanh and sigmoid
// ---------------------------------------------------------------------------------------------

// |x| < 0.625: odd polynomial / rational (Cephes); otherwise 1 - 2 / (e^{2|x|} + 1) with the sign.
inline float tanh(float x) {
  float ax = std::fabs(x);
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = std::fma(p, z, 2.06390887954e-2f);
  p = std::fma(p, z, -5.37397155531e-2f);
  p = std::fma(p, z, 1.33314422036e-1f);
  p = std::fma(p, z, -3.33332819422e-1f);
  float small = std::fma(p * z, x, x);
  float big = 1.0f - 2.0f / (exp_impl(2.0f * ax) + 1.0f);
  // tanh is odd: the sign of x also fixes the sign of zero.
  return std::copysign(ax < 0.625f ? small : big, x);
}

inline double tanh(double x) {
  double ax = std::fabs(x);
  double s = x * x;
  double p = std::fma(std::fma(-9.64399179425052238628e-1, s, -9.92877231001918586564e1), s,
                      -1.61468768441708447952e3);
  double q =
      std::fma(std::fma(std::fma(1.0, s, 1.12811678491632931402e2), s, 2.23548839060100448583e3), s,
               4.84406305325125486048e3);
  double small = std::fma(x * s, p / q, x);
  double big = 1.0 - 2.0 / (exp_impl(2.0 * ax) + 1.0);
  return std::copysign(ax < 0.625 ? small : big, x);
}

// With e = e^-|x| (never overflows): 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, so that
// tiny results (x near -88 in float) keep their relative accuracy instead of flushing to 0.
template <typename T>
inline T sigmoid_impl(T x) {
  T e = exp_impl(-std::fabs(x));
  return (x < T(0) ? e : T(1)) / (T(1) + e);
}
inline float sigmoid(float x) {
  return sigmoid_impl(x);
}
inline double sigmoid(double x) {
  return sigmoid_impl(x);
}

// ---------------------------------------------------------------------------------------------
// sin and cos (float32), for |x| <= kTrigFastLimit
// ---------------------------------------------------------------------------------------------
// The reduction x = q (pi/2) + r runs in double with a two-part pi/2 (the first part has 33
// significant bits, so q * kPio2Hi is exact for |q| < 2^20): r is then accurate far beyond float
// precision even for x next to a multiple of pi/2, and the Taylor polynomials in double on
// |r| <= pi/4 are good to ~1e-10. Callers route |x| > kTrigFastLimit, inf and NaN to std::sin /
// std::cos (see unary_trig_kernels.cpp).
constexpr float kTrigFastLimit = 1.0e5f;

inline void sincos_reduce(float xf, double& r, uint64_t& quadrant) {
  constexpr double k2OverPi = 0.636619772367581343075535053490057448;
  constexpr double kPio2Hi = 1.57079632673412561417e+00;  // fdlibm pio2_1
  constexpr double kPio2Lo = 6.07710050650619224932e-11;  // fdlibm pio2_1t
  const double x = xf;
  double t;
  const double q = round_magic(x * k2OverPi, t);
  quadrant = Traits<double>::to_bits(t) - Traits<double>::to_bits(Traits<double>::kMagic);
  r = std::fma(-q, kPio2Hi, x);
  r = std::fma(-q, kPio2Lo, r);
}

inline double sin_poly(double r) {
  const double z = r * r;
  double p = -1.0 / 39916800.0;
  p = std::fma(p, z, 1.0 / 362880.0);
  p = std::fma(p, z, -1.0 / 5040.0);
  p = std::fma(p, z, 1.0 / 120.0);
  p = std::fma(p, z, -1.0 / 6.0);
  // r (1 + z p) rather than r + r z p: the product keeps the sign of r = -0.
  return r * std::fma(z, p, 1.0);
}

inline double cos_poly(double r) {
  const double z = r * r;
  double p = 1.0 / 479001600.0;
  p = std::fma(p, z, -1.0 / 3628800.0);
  p = std::fma(p, z, 1.0 / 40320.0);
  p = std::fma(p, z, -1.0 / 720.0);
  p = std::fma(p, z, 1.0 / 24.0);
  p = std::fma(p, z, -0.5);
  return std::fma(z, p, 1.0);
}

// sin(x) for quadrant q: q mod 4 = 0: sin r, 1: cos r, 2: -sin r, 3: -cos r.
inline float sin_fast(float x) {
  double r;
  uint64_t q;
  sincos_reduce(x, r, q);
  const double s = sin_poly(r), c = cos_poly(r);
  double v = (q & 1) ? c : s;
  v = (q & 2) ? -v : v;
  return static_cast<float>(v);
}

// cos(x) = sin(x + pi/2): the quadrant shifts by one.
inline float cos_fast(float x) {
  double r;
  uint64_t q;
  sincos_reduce(x, r, q);
  q += 1;
  const double s = sin_poly(r), c = cos_poly(r);
  double v = (q & 1) ? c : s;
  v = (q & 2) ? -v : v;
  return static_cast<float>(v);
}

// ---------------------------------------------------------------------------------------------
// Scalar reference twins: libm, one call per element (the test oracles).
// ---------------------------------------------------------------------------------------------
namespace ref {
template <typename T>
inline T exp(T x) {
  return std::exp(x);
}
template <typename T>
inline T exp2(T x) {
  return std::exp2(x);
}
template <typename T>
inline T expm1(T x) {
  return std::expm1(x);
}
template <typename T>
inline T log(T x) {
  return std::log(x);
}
template <typename T>
inline T log2(T x) {
  return std::log2(x);
}
template <typename T>
inline T log10(T x) {
  return std::log10(x);
}
template <typename T>
inline T log1p(T x) {
  return std::log1p(x);
}
template <typename T>
inline T tanh(T x) {
  return std::tanh(x);
}
template <typename T>
inline T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}
template <typename T>
inline T sin(T x) {
  return std::sin(x);
}
template <typename T>
inline T cos(T x) {
  return std::cos(x);
}
}  // namespace ref

}  // namespace vmath
}  // namespace EMBER_CPU_NS
}  // namespace ember::native
