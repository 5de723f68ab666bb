// The normal distribution and error-function relatives (ndtr, ndtri, log_ndtr, erfcx, entr) and
// the two-argument functions (igamma / igammac, xlog1py, Hurwitz zeta) and mvlgamma of
// ember.special. Algorithms and measured errors: docs/design/special.md. Evaluated in double for
// every dtype and rounded once.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/special_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr double kPi = 3.14159265358979323846264338327950288;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrtPi = 0.56418958354775628695;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kLogSqrt2Pi = 0.91893853320467274178;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = 1.1102230246251565e-16;

double lgamma_threadsafe(double x) {  // no write to glibc's global signgam (parallel_for)
  int sign;
  return ::lgamma_r(x, &sign);
}

// ---- The error-function family -------------------------------------------------------------

// e^(x^2) (sign 1) or e^(-x^2 / 2) (sign -1/2) with x^2 split exactly into hi + lo (fma), so
// that the rounding of x^2 (a relative error of eps x^2 in the result) does not reach it.
double exp_x_squared(double x, double scale = 1.0) {
  const double hi = x * x;
  const double lo = std::fma(x, x, -hi);
  return std::exp(scale * hi) * (1.0 + scale * lo);
}

double calc_erfcx(double x);

// ndtr(x) = erfc(-x / sqrt 2) / 2. In the lower tail, as erfcx(-x / sqrt 2) e^(-x^2/2) / 2: the
// rounding of x / sqrt 2 costs erfc a relative error of ~x^2 eps, erfcx almost nothing, and
// e^(-x^2/2) is formed from x itself.
double calc_ndtr(double x) {
  if (x < -1 && !std::isinf(x)) return 0.5 * calc_erfcx(-x * kSqrtHalf) * exp_x_squared(x, -0.5);
  return 0.5 * std::erfc(-x * kSqrtHalf);
}

// erfcx(x) = e^(x^2) erfc(x). For 0 <= x < 10 the product (glibc's erfc keeps its relative
// accuracy deep in the tail), beyond the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! /
// (2x^2)^k, which reaches double precision in ~15 terms at x = 10; negative x by reflection
// erfcx(x) = 2 e^(x^2) - erfcx(-x).
double calc_erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;  // 2 e^(x^2) overflows
    return 2.0 * exp_x_squared(x) - calc_erfcx(-x);
  }
  if (x < 10) return std::erfc(x) * exp_x_squared(x);
  if (x > 1e8) return kInvSqrtPi / x;  // the next term is below 5e-17 relative
  const double inv_2x2 = 0.5 / (x * x);
  double term = 1, sum = 1;
  for (int k = 1; k < 40; ++k) {
    term *= -(2.0 * k - 1.0) * inv_2x2;
    sum += term;
    if (std::abs(term) < 1e-17) break;
  }
  return kInvSqrtPi / x * sum;
}

// log(ndtr(x)): for x < -1 through erfcx, log(erfcx(-x / sqrt 2) / 2) - x^2 / 2, so that the
// tail neither underflows nor loses its relative accuracy; otherwise log1p(-ndtr(-x)), whose
// ndtr(-x) is relatively accurate in its tail (calc_ndtr).
double calc_log_ndtr(double x) {
  if (std::isnan(x)) return x;
  if (x < -1) {
    if (std::isinf(x)) return -kInf;
    return std::log(0.5 * calc_erfcx(-x * kSqrtHalf)) - 0.5 * x * x;
  }
  return std::log1p(-calc_ndtr(-x));
}

// ndtri(p) for 0 < p <= 1/2: Abramowitz & Stegun 26.2.23 as the first guess (|error| < 4.5e-4),
// then Halley steps on ndtr(x) - p, whose convergence is cubic: two steps reach double precision,
// the third confirms it. ndtr is evaluated through erfc, relatively accurate in the tail.
double ndtri_lower(double p) {
  const double t = std::sqrt(-2.0 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int it = 0; it < 4; ++it) {
    const double density = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    if (density == 0) break;
    const double u = (calc_ndtr(x) - p) / density;
    const double step = u / (1.0 + 0.5 * x * u);
    x -= step;
    if (std::abs(step) <= 2 * kEps * std::abs(x)) break;
  }
  return x;
}

// ndtri(p) for 1/4 <= p <= 3/4: Halley steps on erf(x / sqrt 2) / 2 - (p - 1/2), whose residual
// keeps its relative accuracy near x = 0 (p - 1/2 is exact there, erf is relatively accurate
// near 0), where ndtr(x) - p would leave an absolute error of eps / 2.
double ndtri_central(double p) {
  const double y = p - 0.5;
  double x = y < 0 ? ndtri_lower(p) : -ndtri_lower(1.0 - p);
  for (int it = 0; it < 4; ++it) {
    const double density = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    const double u = (0.5 * std::erf(x * kSqrtHalf) - y) / density;
    const double step = u / (1.0 + 0.5 * x * u);
    x -= step;
    if (std::abs(step) <= 2 * kEps * std::abs(x)) break;
  }
  return x;
}

double calc_ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0.0;
  if (p >= 0.25 && p <= 0.75) return ndtri_central(p);
  // 1 - p is exact for p >= 1/2 (Sterbenz), so the upper half mirrors the lower one.
  return p < 0.5 ? ndtri_lower(p) : -ndtri_lower(1.0 - p);
}

// -x log(x), 0 at 0, -inf for x < 0 (PyTorch's entr).
double calc_entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -kInf;
}

// ---- Regularised incomplete gamma ----------------------------------------------------------

// log(x^a e^-x / Gamma(a)), the prefactor of both the series and the continued fraction. For
// large a the direct difference a log x - x - lgamma(a) cancels to a small number; written with
// Stirling's series for lgamma it becomes -a (r - 1 - log r) + log(a / 2 pi) / 2 - corr(a),
// r = x / a, whose first term is formed with log1p near r = 1.
double log_gamma_prefactor(double a, double x) {
  if (a < 20) return a * std::log(x) - x - lgamma_threadsafe(a);
  const double d = (x - a) / a;
  const double phi = std::abs(d) < 0.5 ? -(std::log1p(d) - d) : d - std::log(x / a);
  const double inv = 1.0 / a, inv2 = inv * inv;
  // lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2): Stirling's series, 6 terms for a >= 20.
  const double corr =
      inv * (1.0 / 12 -
             inv2 * (1.0 / 360 -
                     inv2 * (1.0 / 1260 -
                             inv2 * (1.0 / 1680 - inv2 * (1.0 / 1188 - inv2 * 691.0 / 360360)))));
  return -a * phi + 0.5 * std::log(a) - kLogSqrt2Pi - corr;
}

// P(a, x) by its power series, x < a + 1.
double igamma_series(double a, double x) {
  double term = 1.0 / a, sum = term, ap = a;
  for (int n = 0; n < 100000; ++n) {
    ap += 1;
    term *= x / ap;
    sum += term;
    if (term <= sum * kEps) break;
  }
  return sum * std::exp(log_gamma_prefactor(a, x));
}

// Q(a, x) by its continued fraction (modified Lentz), x >= a + 1.
double igammac_fraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) <= kEps) break;
  }
  return h * std::exp(log_gamma_prefactor(a, x));
}

// P(a, x) (upper = false) or Q(a, x), with PyTorch's conventions at the edges.
double calc_igamma(double a, double x, bool upper) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) {
    if (x > 0) return upper ? 0.0 : 1.0;
    return kNaN;
  }
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) {
    if (std::isinf(x)) return kNaN;
    return upper ? 1.0 : 0.0;
  }
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  if (x < a + 1) {
    const double p = igamma_series(a, x);
    return upper ? 1.0 - p : p;
  }
  const double q = igammac_fraction(a, x);
  return upper ? q : 1.0 - q;
}

// ---- xlog1py and the Hurwitz zeta function --------------------------------------------------

double calc_xlog1py(double x, double y) {
  if (std::isnan(y)) return kNaN;
  if (x == 0) return 0.0;
  return x * std::log1p(y);
}

// B_2j / (2j)! for j = 1..13: the Euler-Maclaurin coefficients.
constexpr double kBernoulliOverFactorial[13] = {
    8.333333333333333e-02, -1.388888888888889e-03, 3.306878306878307e-05,  -8.267195767195768e-07,
    2.08767569878681e-08,  -5.284190138687493e-10, 1.3382536530684679e-11, -3.3896802963225827e-13,
    8.586062056277845e-15, -2.174868698558062e-16, 5.5090028283602295e-18, -1.3954464685812522e-19,
    3.534707039629467e-21};

// zeta(s, q) = sum_{k>=0} (q + k)^-s: the first terms directly until q + k >= 9 (and at least
// nine of them), the rest by the Euler-Maclaurin formula
//   w^(1-s) / (s-1) + w^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1),
// whose terms shrink by ~(s + 2j)^2 / (2 pi w)^2 each from w >= 9.
double calc_zeta(double s, double q) {
  if (std::isnan(s) || std::isnan(q)) return kNaN;
  if (s == 1) return kInf;
  if (s < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;  // a pole: some q + k is 0
    if (s != std::floor(s)) return kNaN;  // a negative base to a fractional power
  }
  if (std::isinf(s)) return q == 1 ? 1.0 : (q > 1 ? 0.0 : kInf);
  double sum = 0, w = q, b = 0;
  int k = 0;
  while (k < 9 || w < 9) {
    b = std::pow(w, -s);
    sum += b;
    w += 1;
    ++k;
    if (std::abs(b) <= kEps * std::abs(sum) && w > 0) return sum;
  }
  b = std::pow(w, -s);
  sum += w * b / (s - 1) + 0.5 * b;
  double rising = 1, wpow = b / w;  // rising = s (s+1) ... (s+2j-2); wpow = w^(-s-2j+1)
  for (int j = 0; j < 13; ++j) {
    rising *= s + 2 * j;
    const double t = kBernoulliOverFactorial[j] * rising * wpow;
    sum += t;
    if (std::abs(t) <= kEps * std::abs(sum)) break;
    rising *= s + 2 * j + 1;
    wpow /= w * w;
  }
  return sum;
}

void erf_family_kernel(TensorIterator& iter, SpecialOp op, const char* name) {
  constexpr uint32_t kFloat32And64 = kFloat32 | kFloat64;
  switch (op) {
    case SpecialOp::ndtr:  // float16 / bfloat16 too, as PyTorch
      unary_kernel<kFloatingTypes>(iter, name, [](auto x) {
        using V = decltype(x);
        return V(calc_ndtr(double(x)));
      });
      break;
    case SpecialOp::entr:
      unary_kernel<kFloatingTypes>(iter, name, [](auto x) {
        using V = decltype(x);
        return V(calc_entr(double(x)));
      });
      break;
    case SpecialOp::ndtri:
      unary_kernel<kFloat32And64>(iter, name, [](auto x) {
        using V = decltype(x);
        return V(calc_ndtri(double(x)));
      });
      break;
    case SpecialOp::log_ndtr:
      unary_kernel<kFloat32And64>(iter, name, [](auto x) {
        using V = decltype(x);
        return V(calc_log_ndtr(double(x)));
      });
      break;
    case SpecialOp::erfcx:
      unary_kernel<kFloat32And64>(iter, name, [](auto x) {
        using V = decltype(x);
        return V(calc_erfcx(double(x)));
      });
      break;
    default:
      EMBER_THROW(Error, "[", name, "] not an error-function-family op");
  }
}

void binary_special_kernel(TensorIterator& iter, SpecialOp op, const char* name) {
  switch (op) {
    case SpecialOp::igamma:
    case SpecialOp::igammac: {
      const bool upper = op == SpecialOp::igammac;
      binary_kernel<kFloatingTypes>(iter, name, [upper](auto a, auto x) {
        using V = decltype(a);
        return V(calc_igamma(double(a), double(x), upper));
      });
      break;
    }
    case SpecialOp::xlog1py:
      binary_kernel<kFloatingTypes>(iter, name, [](auto x, auto y) {
        using V = decltype(x);
        return V(calc_xlog1py(double(x), double(y)));
      });
      break;
    case SpecialOp::zeta:
      binary_kernel<kFloat32 | kFloat64>(iter, name, [](auto s, auto q) {
        using V = decltype(s);
        return V(calc_zeta(double(s), double(q)));
      });
      break;
    default:
      EMBER_THROW(Error, "[", name, "] not a binary special op");
  }
}

void mvlgamma_kernel(TensorIterator& iter, int64_t p) {
  const double constant = double(p) * double(p - 1) / 4.0 * std::log(kPi);
  unary_kernel<kFloatingTypes>(iter, "mvlgamma", [p, constant](auto x) {
    using V = decltype(x);
    double sum = constant;
    for (int64_t j = 0; j < p; ++j) sum += lgamma_threadsafe(double(x) - 0.5 * double(j));
    return V(sum);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(special_erf_stub, CPU, erf_family_kernel);
EMBER_REGISTER_KERNEL(special_binary_stub, CPU, binary_special_kernel);
EMBER_REGISTER_KERNEL(mvlgamma_stub, CPU, mvlgamma_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
