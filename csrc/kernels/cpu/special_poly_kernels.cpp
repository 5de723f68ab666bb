// The orthogonal polynomials of ember.special: Chebyshev T, U, V, W (plain and shifted to
// [0, 1]), Hermite H and He, Laguerre L and Legendre P, as p_n(x) with n a tensor.
//
// PyTorch's conventions, kept exactly: n is truncated to an integer (NaN and out-of-range n act
// as negative), p_n(x) = 0 for n < 0, the endpoint values at |x| = 1 (x = 0 and 1 when shifted)
// are exact, and for |x| < 1 the Chebyshev families above n = 6 (T) or 8 (U, V, W) use their
// trigonometric forms (T_n(cos t) = cos(n t), ...), which are accurate for any n; everything else
// runs the three-term recurrence in double. A recurrence whose two last values are both
// non-finite can only produce NaN from then on, so it stops there (PyTorch loops on).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/special_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// n as PyTorch's kernels see it (static_cast<int64_t>): NaN and |n| >= 2^63 become INT64_MIN.
int64_t degree(double n) {
  if (!(std::abs(n) < 9.2233720368547758e18)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(n);
}

// Runs p_{k+1} = step(k, p_{k-1}, p_k) from p_0 = p, p_1 = q up to p_n (n >= 2).
template <typename Step>
double recurrence(int64_t n, double p, double q, const Step& step) {
  for (int64_t k = 1; k < n; ++k) {
    if (!std::isfinite(p) && !std::isfinite(q)) return kNaN;
    const double r = step(k, p, q);
    p = q;
    q = r;
  }
  return q;
}

double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n > 6 && std::abs(x) < 1) return std::cos(double(n) * std::acos(x));
  if (n == 0) return 1;
  if (n == 1) return x;
  return recurrence(n, 1.0, x, [x](int64_t, double p, double q) { return (x + x) * q - p; });
}

double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return (x > 0 || n % 2 == 0) ? double(n + 1) : -double(n + 1);
  if (n > 8 && std::abs(x) < 1) {
    const double t = std::acos(x);
    if (std::sin(t) != 0) return std::sin(double(n + 1) * t) / std::sin(t);
    return double(n + 1) * std::cos(double(n + 1) * t) / x;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x;
  return recurrence(n, 1.0, x + x, [x](int64_t, double p, double q) { return (x + x) * q - p; });
}

double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) {
    if (x > 0) return 1;
    return n % 2 == 0 ? double(n + n + 1) : -double(n + n + 1);
  }
  if (n > 8 && std::abs(x) < 1) {
    const double t = std::acos(x);
    if (std::sin(t / 2) != 1) return std::cos((double(n) + 0.5) * t) / std::cos(t / 2);
    return n % 2 == 0 ? double(n + n + 1) : -double(n + n + 1);
  }
  if (n == 0) return 1;
  if (n == 1) return x + x - 1;
  return recurrence(n, 1.0, x + x - 1,
                    [x](int64_t, double p, double q) { return (x + x) * q - p; });
}

double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) {
    if (x > 0) return double(n + n + 1);
    return n % 2 == 0 ? 1.0 : -1.0;
  }
  if (n > 8 && std::abs(x) < 1) {
    const double t = std::acos(x);
    if (std::cos(t / 2) != 1) return std::sin((double(n) + 0.5) * t) / std::sin(t / 2);
    if (x > 0) return double(n + n + 1);
    return n % 2 == 0 ? 1.0 : -1.0;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x + 1;
  return recurrence(n, 1.0, x + x + 1,
                    [x](int64_t, double p, double q) { return (x + x) * q - p; });
}

double hermite_h(double x, int64_t n) {
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x + x;
  return recurrence(n, 1.0, x + x, [x](int64_t k, double p, double q) {
    return (x + x) * q - 2.0 * double(k) * p;
  });
}

double hermite_he(double x, int64_t n) {
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x;
  return recurrence(n, 1.0, x,
                    [x](int64_t k, double p, double q) { return x * q - double(k) * p; });
}

// Above this degree Legendre's three-term recurrence (n steps, seconds per element near 2^31;
// a fuzzer found the hang) gives way to Hilb's formula, whose absolute error is O(n^-3/2),
// about 1e-11 here.
constexpr int64_t kAsymptoticDegree = int64_t(1) << 24;

double laguerre_l(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 0) return 1;
  if (n == 0) return 1;
  if (n == 1) return 1 - x;
  // For 0 < x < 4n, L_n(x) oscillates within e^{x/2}: the recurrence neither overflows nor
  // stops early, so it would take n steps (seconds per element near 2^31; the fuzzer found the
  // hang). No asymptotic form reaches double precision there (Szego's is O(n^-3/4)), so these
  // degrees are refused. Negative x grows and overflows within a few hundred steps.
  if (n > kAsymptoticDegree && x > 0 && std::isfinite(x)) {
    EMBER_THROW(Error, "[laguerre_polynomial_l] degree n = ", n,
                " is above 2**24 at x > 0, where the three-term recurrence would take n steps "
                "per element and no asymptotic form is accurate to double precision; use a "
                "degree of at most 2**24");
  }
  return recurrence(n, 1.0, 1 - x, [x](int64_t k, double p, double q) {
    return ((double(k + k + 1) - x) * q - double(k) * p) / double(k + 1);
  });
}

double legendre_p(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n == 0) return 1;
  if (n == 1) return x;
  if (n > kAsymptoticDegree && std::abs(x) < 1) {
    // P_n(cos t) = sqrt(t / sin t) J0((n + 1/2) t) + O(n^-3/2), uniformly for t in [0, pi/2];
    // P_n(-x) = (-1)^n P_n(x) covers the other half.
    const double t = std::acos(std::abs(x));
    const double ratio = t == 0 ? 1.0 : t / std::sin(t);
    const double value = std::sqrt(ratio) * std::cyl_bessel_j(0.0, (double(n) + 0.5) * t);
    return (x < 0 && n % 2 == 1) ? -value : value;
  }
  return recurrence(n, 1.0, x, [x](int64_t k, double p, double q) {
    return (double(k + k + 1) * x * q - double(k) * p) / double(k + 1);
  });
}

double eval_poly(SpecialOp op, double x, double n_value) {
  const int64_t n = degree(n_value);
  switch (op) {
    case SpecialOp::chebyshev_polynomial_t:
      return chebyshev_t(x, n);
    case SpecialOp::chebyshev_polynomial_u:
      return chebyshev_u(x, n);
    case SpecialOp::chebyshev_polynomial_v:
      return chebyshev_v(x, n);
    case SpecialOp::chebyshev_polynomial_w:
      return chebyshev_w(x, n);
    // The shifted families are the plain ones at 2x - 1, with their endpoints exact at x = 0
    // and x = 1.
    case SpecialOp::shifted_chebyshev_polynomial_t:
      return chebyshev_t(x == 1 ? 1.0 : (x == 0 ? -1.0 : x + x - 1), n);
    case SpecialOp::shifted_chebyshev_polynomial_u:
      return chebyshev_u(x == 1 ? 1.0 : (x == 0 ? -1.0 : x + x - 1), n);
    case SpecialOp::shifted_chebyshev_polynomial_v:
      return chebyshev_v(x == 1 ? 1.0 : (x == 0 ? -1.0 : x + x - 1), n);
    case SpecialOp::shifted_chebyshev_polynomial_w:
      return chebyshev_w(x == 1 ? 1.0 : (x == 0 ? -1.0 : x + x - 1), n);
    case SpecialOp::hermite_polynomial_h:
      return hermite_h(x, n);
    case SpecialOp::hermite_polynomial_he:
      return hermite_he(x, n);
    case SpecialOp::laguerre_polynomial_l:
      return laguerre_l(x, n);
    default:
      return legendre_p(x, n);
  }
}

template <SpecialOp Op>
void run_poly(TensorIterator& iter, const char* name) {
  binary_kernel<kFloat32 | kFloat64>(iter, name, [](auto x, auto n) {
    using V = decltype(x);
    return V(eval_poly(Op, double(x), double(n)));
  });
}

void poly_kernel(TensorIterator& iter, SpecialOp op, const char* name) {
  switch (op) {
#define EMBER_POLY_CASE(OP)              \
  case SpecialOp::OP:                    \
    run_poly<SpecialOp::OP>(iter, name); \
    break;
    EMBER_POLY_CASE(chebyshev_polynomial_t)
    EMBER_POLY_CASE(chebyshev_polynomial_u)
    EMBER_POLY_CASE(chebyshev_polynomial_v)
    EMBER_POLY_CASE(chebyshev_polynomial_w)
    EMBER_POLY_CASE(shifted_chebyshev_polynomial_t)
    EMBER_POLY_CASE(shifted_chebyshev_polynomial_u)
    EMBER_POLY_CASE(shifted_chebyshev_polynomial_v)
    EMBER_POLY_CASE(shifted_chebyshev_polynomial_w)
    EMBER_POLY_CASE(hermite_polynomial_h)
    EMBER_POLY_CASE(hermite_polynomial_he)
    EMBER_POLY_CASE(laguerre_polynomial_l)
    EMBER_POLY_CASE(legendre_polynomial_p)
#undef EMBER_POLY_CASE
    default:
      EMBER_THROW(Error, "[", name, "] not a polynomial op");
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(special_poly_stub, CPU, poly_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
