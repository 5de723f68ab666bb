// Bessel and Airy functions of ember.special: I0 / I1 (plain and exp-scaled), J0 / J1, Y0 / Y1,
// K0 / K1 (plain and exp-scaled), the spherical j0 and Airy Ai. Algorithms and measured errors:
// docs/design/special.md. Every function is evaluated in double (float inputs too) and rounded
// once; the float16 / bfloat16 ones PyTorch supports go through float.
#include <cmath>
#include <limits>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/special_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr double kPi = 3.14159265358979323846264338327950288;
constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Note [Bessel series in double-double]: the power series of J0, J1, Y0, Y1 and Ai alternate,
// and their largest term exceeds the sum by up to ~1e9 in the ranges where they are used (J and
// Y up to x = 25, Ai on [-9, 1.3]). Summed in double-double (a pair hi + lo, ~106 bits) the
// cancellation costs nothing visible in double, which makes the plain series usable where
// Cephes needs a dozen rational fits, and leaves no table of coefficients to trust.
struct DD {
  double hi, lo;
};

inline DD dd_norm(double s, double e) {
  const double h = s + e;
  return {h, e - (h - s)};
}
inline DD dd_add(DD a, DD b) {
  const double s = a.hi + b.hi;
  const double bb = s - a.hi;
  const double err = (a.hi - (s - bb)) + (b.hi - bb);
  return dd_norm(s, err + a.lo + b.lo);
}
inline DD dd_mul(DD a, DD b) {
  const double p = a.hi * b.hi;
  const double e = std::fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi);
  return dd_norm(p, e);
}
inline DD dd_mul(DD a, double b) {
  return dd_mul(a, DD{b, 0.0});
}
inline DD dd_div(DD a, double b) {
  const double q1 = a.hi / b;
  const double p = q1 * b;
  const double pe = std::fma(q1, b, -p);
  const double r = ((a.hi - p) - pe + a.lo) / b;
  return dd_norm(q1, r);
}
inline double dd_value(DD a) {
  return a.hi + a.lo;
}
inline DD dd_square(double x) {  // x * x exactly
  const double p = x * x;
  return {p, std::fma(x, x, -p)};
}

// ---- Modified Bessel functions of the first kind ------------------------------------------

// I_nu(x) for x >= 0 and nu in {0, 1}, times e^-x when `scaled`. Up to x = 30 the power series,
// whose terms are all positive (no cancellation); beyond, Hankel's asymptotic expansion, whose
// smallest term (~e^-2x) is below double's resolution there.
double bessel_i(int nu, double x, bool scaled) {
  if (std::isnan(x)) return x;
  if (x <= 30) {
    const double q = 0.25 * x * x;
    double term = 1, sum = 1;
    for (int k = 1; k < 200; ++k) {
      term *= q / (double(k) * double(k + nu));
      sum += term;
      if (term <= sum * 1e-17) break;
    }
    if (nu == 1) sum *= 0.5 * x;
    return scaled ? sum * std::exp(-x) : sum;
  }
  if (std::isinf(x)) return scaled ? 0.0 : kInf;
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 80; ++k) {
    const double odd = 2.0 * k - 1.0;
    term *= -(mu - odd * odd) / (8.0 * k * x);
    sum += term;
    if (std::abs(term) <= 1e-17 * std::abs(sum)) break;
  }
  const double s = sum / std::sqrt(2.0 * kPi * x);
  if (scaled) return s;
  const double half = std::exp(0.5 * x);  // e^x = half^2: finite results up to x ~ 713
  return half * s * half;
}

double calc_i0(double x, bool scaled) {
  return bessel_i(0, std::abs(x), scaled);
}
double calc_i1(double x, bool scaled) {
  const double r = bessel_i(1, std::abs(x), scaled);
  return x < 0 ? -r : r;
}

// ---- Modified Bessel functions of the second kind -----------------------------------------

// e^x K_nu(x) for x > 0 by the trapezoid rule on int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt.
// The integrand is analytic in the strip |Im t| < pi/2 and decays double-exponentially, so the
// rule converges geometrically in 1/h: h = 1/8 leaves an error far below double's (measured in
// docs/design/special.md). Works for fractional nu (Airy's K_1/3).
double scaled_k_integral(double nu, double x) {
  constexpr double h = 0.125;
  double sum = 0.5;  // the t = 0 node, half weight
  for (int j = 1; j < 100000; ++j) {
    const double t = j * h;
    const double s = std::sinh(0.5 * t);
    const double e = 2.0 * x * s * s;  // x (cosh t - 1) without cancellation
    if (e > 745) break;
    const double f = std::exp(-e) * std::cosh(nu * t);
    sum += f;
    if (f <= 1e-18 * sum) break;
  }
  return sum * h;
}

// K0 or K1 for 0 < x <= 1 by their series around 0 (I-series times a logarithm plus harmonic
// sums; the terms are positive and the logarithmic part does not cancel them below x = 1).
double k_series(int nu, double x) {
  const double q = 0.25 * x * x;
  const double log_part = std::log(0.5 * x) + kEulerGamma;
  double term = 1, harmonic = 0, i_sum = 1;
  // nu = 0: sum_{k>=1} H_k q^k / k!^2; nu = 1: sum_{k>=0} (H_k + H_{k+1}) q^k / (k! (k+1)!).
  double h_sum = nu == 0 ? 0.0 : 1.0;
  for (int k = 1; k < 100; ++k) {
    term *= q / (double(k) * double(k + nu));
    harmonic += 1.0 / k;
    i_sum += term;
    const double weight = nu == 0 ? harmonic : 2.0 * harmonic + 1.0 / (k + 1);
    h_sum += weight * term;
    if (term * weight <= 1e-17 * h_sum) break;
  }
  if (nu == 0) return -log_part * i_sum + h_sum;
  return 1.0 / x + log_part * (0.5 * x * i_sum) - 0.25 * x * h_sum;
}

// e^x K_nu(x) for x >= 25 by Hankel's asymptotic expansion, sqrt(pi / 2x) sum_k a_k(nu) / x^k
// (its smallest term, ~e^-2x, is below double's resolution there; the trapezoid rule above
// would need a step below the integrand's width 1/sqrt(x)).
double scaled_k_asymptotic(double nu, double x) {
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 80; ++k) {
    const double odd = 2.0 * k - 1.0;
    const double next = term * (mu - odd * odd) / (8.0 * k * x);
    if (std::abs(next) > std::abs(term)) break;
    term = next;
    sum += term;
    if (std::abs(term) <= 1e-17 * std::abs(sum)) break;
  }
  return std::sqrt(kPi / (2.0 * x)) * sum;
}

double scaled_k(double nu, double x) {
  return x >= 25 ? scaled_k_asymptotic(nu, x) : scaled_k_integral(nu, x);
}

double calc_k(int nu, double x, bool scaled) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0.0;
  if (x <= 1) {
    const double k = k_series(nu, x);
    return scaled ? k * std::exp(x) : k;
  }
  const double s = scaled_k(nu, x);
  return scaled ? s : s * std::exp(-x);
}

// ---- Bessel functions of the first and second kind -----------------------------------------

// Hankel's asymptotic expansion of J_nu and Y_nu (nu = 0, 1) for x >= 25, where its smallest
// term (~e^-2x) is below double's resolution. The phase x - (2 nu + 1) pi / 4 is formed from
// sin x and cos x, which carry the exact argument reduction of a large x.
void hankel_jy(int nu, double x, double* j, double* y) {
  const double mu = 4.0 * nu * nu;
  double b = 1, p = 1, q = 0;
  for (int k = 1; k < 80; ++k) {
    const double odd = 2.0 * k - 1.0;
    b *= (mu - odd * odd) / (8.0 * k * x);
    switch (k % 4) {  // P = b0 - b2 + b4 - ..., Q = b1 - b3 + b5 - ...
      case 1:
        q += b;
        break;
      case 2:
        p -= b;
        break;
      case 3:
        q -= b;
        break;
      default:
        p += b;
    }
    if (std::abs(b) <= 1e-18) break;
  }
  const double s = std::sin(x), c = std::cos(x);
  const double cos_chi = nu == 0 ? (c + s) * kSqrtHalf : (s - c) * kSqrtHalf;
  const double sin_chi = nu == 0 ? (s - c) * kSqrtHalf : -(s + c) * kSqrtHalf;
  const double amplitude = std::sqrt(2.0 / (kPi * x));
  *j = amplitude * (p * cos_chi - q * sin_chi);
  *y = amplitude * (p * sin_chi + q * cos_chi);
}

// J_nu(x) and (x > 0) Y_nu(x) for 0 <= x <= 25 by the power series in double-double (Note
// [Bessel series in double-double]). With t_k = (-q)^k / (k! (k + nu)!), q = x^2 / 4:
//   J0 = sum t_k                      Y0 = 2/pi ((log(x/2) + gamma) J0 - sum H_k t_k)
//   J1 = x/2 sum t_k                  Y1 = -2/(pi x) + 2/pi (log(x/2) + gamma) J1
//                                          - x/(2 pi) sum (H_k + H_{k+1}) t_k
void series_jy(int nu, double x, bool want_y, double* j, double* y) {
  DD q = dd_square(x);
  q.hi *= 0.25;
  q.lo *= 0.25;
  DD t{1, 0}, sum{1, 0}, harmonic{0, 0};
  DD h_sum{nu == 0 ? 0.0 : 1.0, 0};
  for (int k = 1; k < 200; ++k) {
    t = dd_div(dd_mul(t, q), -double(k) * double(k + nu));
    sum = dd_add(sum, t);
    if (want_y) {
      harmonic = dd_add(harmonic, dd_div(DD{1, 0}, double(k)));
      DD weight = harmonic;
      if (nu == 1) weight = dd_add(dd_add(harmonic, harmonic), dd_div(DD{1, 0}, double(k + 1)));
      h_sum = dd_add(h_sum, dd_mul(t, weight));
    }
    if (k > q.hi && std::abs(t.hi) < 1e-36) break;
  }
  const double jv = nu == 0 ? dd_value(sum) : 0.5 * x * dd_value(sum);
  *j = jv;
  if (!want_y) return;
  const double log_part = std::log(0.5 * x) + kEulerGamma;
  if (nu == 0) {
    *y = (2.0 / kPi) * (log_part * jv - dd_value(h_sum));
  } else {
    *y = -2.0 / (kPi * x) + (2.0 / kPi) * log_part * jv - x / (2.0 * kPi) * dd_value(h_sum);
  }
}

double calc_j(int nu, double x) {
  if (std::isnan(x)) return x;
  const double ax = std::abs(x);
  if (std::isinf(ax)) return 0.0;
  double j, y;
  if (ax <= 25) {
    series_jy(nu, ax, false, &j, &y);
  } else {
    hankel_jy(nu, ax, &j, &y);
  }
  return (nu == 1 && std::signbit(x)) ? -j : j;  // J1 is odd: J1(-0) = -0
}

double calc_y(int nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return 0.0;
  double j, y;
  if (x <= 25) {
    series_jy(nu, x, true, &j, &y);
  } else {
    hankel_jy(nu, x, &j, &y);
  }
  return y;
}

// sin(x) / x, and its Taylor polynomial near 0 (where sin(x) / x is exact anyway but 0 / 0 is
// not).
double calc_spherical_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (std::abs(x) < 0.1) {
    const double x2 = x * x;
    return 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0)));
  }
  return std::sin(x) / x;
}

// ---- Airy function Ai ------------------------------------------------------------------------

// Ai(0) and -Ai'(0) to double-double precision (1 / (3^(2/3) Gamma(2/3)), 1 / (3^(1/3)
// Gamma(1/3))): the series below cancels them against each other.
constexpr DD kAiryC1{0.3550280538878172, 2.05233632436212e-17};
constexpr DD kAiryC2{0.2588194037928068, -2.522243111610832e-17};

// Ai(x) = c1 f(x) - c2 g(x), f = sum 3^k (1/3)_k x^3k / (3k)!, g = sum 3^k (2/3)_k x^(3k+1) /
// (3k+1)!, in double-double.
double airy_series(double x) {
  const DD x3 = dd_mul(dd_square(x), x);
  DD f{1, 0}, g{x, 0}, fs{1, 0}, gs{x, 0};
  for (int k = 1; k < 100; ++k) {
    f = dd_div(dd_mul(f, x3), double(3 * k - 1) * double(3 * k));
    g = dd_div(dd_mul(g, x3), double(3 * k) * double(3 * k + 1));
    fs = dd_add(fs, f);
    gs = dd_add(gs, g);
    if (std::abs(f.hi) + std::abs(g.hi) < 1e-36) break;
  }
  const DD minus_c2{-kAiryC2.hi, -kAiryC2.lo};
  return dd_value(dd_add(dd_mul(kAiryC1, fs), dd_mul(minus_c2, gs)));
}

// zeta = 2/3 z^(3/2) in double-double: its rounding error (eps zeta) would otherwise become a
// phase error (z < 0) or a relative error (z > 0, through e^-zeta) of the result at large |z|.
DD airy_zeta(double z) {
  const double root = std::sqrt(z);
  const double root_lo = std::fma(-root, root, z) / (2.0 * root);
  const double prod = z * root;
  return dd_div(DD{2.0 * prod, 2.0 * (std::fma(z, root, -prod) + z * root_lo)}, 3.0);
}

// Ai(-z) for z >= 9 by its oscillatory asymptotic expansion (DLMF 9.7.9): terms u_k / zeta^k,
// u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!), zeta = 2/3 z^(3/2).
double airy_negative_asymptotic(double z) {
  const DD zeta_dd = airy_zeta(z);
  const double zeta = zeta_dd.hi;
  double v = 1, p = 1, q = 0;
  for (int k = 1; k < 80; ++k) {
    const double next = v * (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) /
                        ((2.0 * k - 1.0) * 216.0 * k * zeta);
    if (std::abs(next) > std::abs(v)) break;  // the expansion's smallest term is reached
    v = next;
    switch (k % 4) {
      case 1:
        q += v;
        break;
      case 2:
        p -= v;
        break;
      case 3:
        q -= v;
        break;
      default:
        p += v;
    }
    if (std::abs(v) <= 1e-18) break;
  }
  // sin and cos of zeta_hi + zeta_lo (|zeta_lo| <= ulp(zeta) / 2, so first order is exact).
  const double s0 = std::sin(zeta), c0 = std::cos(zeta);
  const double s = s0 + c0 * zeta_dd.lo, c = c0 - s0 * zeta_dd.lo;
  const double cos_phase = (c + s) * kSqrtHalf;  // cos(zeta - pi/4)
  const double sin_phase = (s - c) * kSqrtHalf;  // sin(zeta - pi/4)
  return (cos_phase * p + sin_phase * q) / (std::sqrt(kPi) * std::sqrt(std::sqrt(z)));
}

double calc_airy_ai(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0.0;
  if (x <= -9) return airy_negative_asymptotic(-x);
  if (x < 1.3) return airy_series(x);
  // Ai(x) = sqrt(x / 3) / pi K_1/3(zeta) for x > 0.
  const DD zeta = airy_zeta(x);
  if (zeta.hi > 745) return 0.0;
  return std::sqrt(x / 3.0) / kPi * (std::exp(-zeta.hi) * (1.0 - zeta.lo)) *
         scaled_k(1.0 / 3.0, zeta.hi);
}

double eval_bessel(SpecialOp op, double x) {
  switch (op) {
    case SpecialOp::i0:
      return calc_i0(x, false);
    case SpecialOp::i0e:
      return calc_i0(x, true);
    case SpecialOp::i1:
      return calc_i1(x, false);
    case SpecialOp::i1e:
      return calc_i1(x, true);
    case SpecialOp::bessel_j0:
      return calc_j(0, x);
    case SpecialOp::bessel_j1:
      return calc_j(1, x);
    case SpecialOp::bessel_y0:
      return calc_y(0, x);
    case SpecialOp::bessel_y1:
      return calc_y(1, x);
    case SpecialOp::modified_bessel_k0:
      return calc_k(0, x, false);
    case SpecialOp::modified_bessel_k1:
      return calc_k(1, x, false);
    case SpecialOp::scaled_modified_bessel_k0:
      return calc_k(0, x, true);
    case SpecialOp::scaled_modified_bessel_k1:
      return calc_k(1, x, true);
    case SpecialOp::spherical_bessel_j0:
      return calc_spherical_j0(x);
    default:
      return calc_airy_ai(x);
  }
}

template <uint32_t Set, SpecialOp Op>
void run_bessel(TensorIterator& iter, const char* name) {
  unary_kernel<Set>(iter, name, [](auto x) {
    using V = decltype(x);
    return V(eval_bessel(Op, double(x)));
  });
}

// PyTorch computes i0, i0e, i1 and i1e in float16 / bfloat16 (through float); the others are
// float32 / float64 only.
constexpr uint32_t kFloat32And64 = kFloat32 | kFloat64;

void bessel_kernel(TensorIterator& iter, SpecialOp op, const char* name) {
  switch (op) {
#define EMBER_BESSEL_CASE(OP, SET)              \
  case SpecialOp::OP:                           \
    run_bessel<SET, SpecialOp::OP>(iter, name); \
    break;
    EMBER_BESSEL_CASE(i0, kFloatingTypes)
    EMBER_BESSEL_CASE(i0e, kFloatingTypes)
    EMBER_BESSEL_CASE(i1, kFloatingTypes)
    EMBER_BESSEL_CASE(i1e, kFloatingTypes)
    EMBER_BESSEL_CASE(bessel_j0, kFloat32And64)
    EMBER_BESSEL_CASE(bessel_j1, kFloat32And64)
    EMBER_BESSEL_CASE(bessel_y0, kFloat32And64)
    EMBER_BESSEL_CASE(bessel_y1, kFloat32And64)
    EMBER_BESSEL_CASE(modified_bessel_k0, kFloat32And64)
    EMBER_BESSEL_CASE(modified_bessel_k1, kFloat32And64)
    EMBER_BESSEL_CASE(scaled_modified_bessel_k0, kFloat32And64)
    EMBER_BESSEL_CASE(scaled_modified_bessel_k1, kFloat32And64)
    EMBER_BESSEL_CASE(spherical_bessel_j0, kFloat32And64)
    EMBER_BESSEL_CASE(airy_ai, kFloat32And64)
#undef EMBER_BESSEL_CASE
    default:
      EMBER_THROW(Error, "[", name, "] not a Bessel-family op");
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(special_bessel_stub, CPU, bessel_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
