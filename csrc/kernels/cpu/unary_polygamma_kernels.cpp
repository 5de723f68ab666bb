// polygamma(n, x) = d^n/dx^n digamma(x) for n >= 1 (n = 0 is digamma's kernel).
//
//   psi_n(x) = (-1)^(n+1) n! zeta(n+1, x),   zeta(s, x) = sum_{k>=0} (x + k)^-s  (Hurwitz)
//
// zeta is summed directly until x + k reaches s + 10, and the rest by the Euler-Maclaurin
// formula (from there each of its terms is at most about 1/8 of the previous one, so twelve of
// them reach double precision). Every term is scaled by m^s, m = the smallest |x + k|, so that
// neither n! nor the powers overflow on the way: the result only overflows when psi_n(x) itself
// does (PyTorch computes n! separately and gives inf for polygamma(200, 30), which is finite).
// Negative x uses the reflection formula psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) cot^(n)(pi x),
// with the n-th derivative of cot as a polynomial in cot (its coefficients are computed once per
// call). Computation is in double for every dtype.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
namespace {

constexpr double kPi = 3.14159265358979323846264338327950288;
constexpr double kEps = 1e-17;

// B_2j / (2j)! for j = 1..12: the Euler-Maclaurin coefficients.
constexpr double kEulerMaclaurin[12] = {
    8.3333333333333333e-02,  -1.3888888888888889e-03, 3.3068783068783069e-05,
    -8.2671957671957672e-07, 2.0876756987868099e-08,  -5.2841901386874932e-10,
    1.3382536530684679e-11,  -3.3896802963225827e-13, 8.5860620562778446e-15,
    -2.1748686985580618e-16, 5.5090028283602295e-18,  -1.3954464685812522e-19};

// The reflection polynomial: pi^(n+1) * d^n/dy^n cot(y) = sum_i coef[i] c^i with c = cot(y).
// Built from Q_0 = c, Q_{k+1} = -(1 + c^2) Q_k'(c); empty when n is too large for the
// coefficients to stay finite (those n use direct summation, which is short for large n).
std::vector<double> cot_derivative_polynomial(int64_t n) {
  if (n > 200) return {};
  std::vector<double> q{0.0, kPi};  // pi * c
  for (int64_t k = 0; k < n; ++k) {
    std::vector<double> next(q.size() + 1, 0.0);
    for (size_t i = 1; i < q.size(); ++i) {
      const double d = static_cast<double>(i) * q[i] * kPi;  // pi * derivative of q[i] c^i
      next[i - 1] -= d;
      next[i + 1] -= d;
    }
    for (double c : next) {
      if (!std::isfinite(c)) return {};
    }
    q.swap(next);
  }
  return q;
}

// r^s for an integral s >= 1, by squaring: a few multiplications instead of std::pow (most
// orders are small), within log2(s) roundings.
double integral_power(double r, double s) {
  if (s > 1024) return std::pow(r, s);
  auto e = static_cast<uint32_t>(s);
  double result = 1;
  while (e) {
    if (e & 1) result *= r;
    r *= r;
    e >>= 1;
  }
  return result;
}

// sum_{k>=0} sign(x + k)^s (m / |x + k|)^s for integer s >= 2, x not a non-positive integer, and
// m = min_k |x + k|; i.e. zeta(s, x) * m^s.
double scaled_zeta(double s, double x, double* m_out) {
  const bool odd = std::fmod(s, 2.0) != 0.0;
  // Negative x: start at the term nearest zero (the largest) and walk both ways.
  const double start = x > 0 ? 0.0 : std::nearbyint(-x);
  const double m = std::fabs(x + start);
  *m_out = m;
  auto term = [&](double base) {
    const double t = integral_power(m / std::fabs(base), s);
    return base < 0 && odd ? -t : t;
  };
  // A bound of the sum of the terms after one of magnitude |t| at |base| (terms decrease).
  auto rest = [&](double t, double base) { return std::fabs(t) * (std::fabs(base) / (s - 1) + 1); };
  double sum = 0;
  // Done when the rest is negligible against the sum, or is nothing at all: after an exact
  // cancellation (x = -1/2 with odd s) the sum is 0 and only the first test would never hold.
  auto done = [&](double t, double base) {
    const double r = rest(t, base);
    return r < kEps * std::fabs(sum) || r < std::numeric_limits<double>::min();
  };
  for (double k = start - 1; k >= 0; --k) {  // bases below the nearest: more negative
    const double t = term(x + k);
    sum += t;
    if (done(t, x + k)) break;
  }
  const double threshold = s + 10;
  double a = x + start;
  for (;; a += 1) {
    if (a >= threshold) break;
    const double t = term(a);
    sum += t;
    if (a > 0 && done(t, a)) return sum;
  }
  // Euler-Maclaurin tail from a: a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1) a^(1-s-2j),
  // all times m^s.
  const double scale = integral_power(m / a, s);
  if (scale == 0) return sum;
  double tail = a / (s - 1) + 0.5;
  double fac = s / a;  // (s)_(2j-1) a^(1-2j)
  for (int j = 0; j < 12; ++j) {
    const double t = kEulerMaclaurin[j] * fac;
    tail += t;
    if (std::fabs(t) < kEps * std::fabs(tail)) break;
    const double p = s + 2 * j + 1;  // next rising factors: (s + 2j + 1)(s + 2j + 2) / a^2
    fac *= p * (p + 1) / (a * a);
  }
  return sum + scale * tail;
}

// n! * m^-s; in log space when n! or the power alone is out of double range.
double factorial_over_power(int64_t n, double m, double s) {
  if (n <= 170) {
    double f = 1;
    for (int64_t i = 2; i <= n; ++i) f *= static_cast<double>(i);
    const double p = std::pow(m, -s);
    if (std::isfinite(p) && p > std::numeric_limits<double>::min()) return f * p;
  }
  return std::exp(std::lgamma(static_cast<double>(n) + 1) - s * std::log(m));
}

// psi_n(x) without reflection.
double polygamma_series(int64_t n, double x) {
  const double s = static_cast<double>(n) + 1;
  double m = 0;
  const double z = scaled_zeta(s, x, &m);
  const double v = factorial_over_power(n, m, s) * z;
  return n % 2 == 1 ? v : -v;
}

double calc_polygamma(int64_t n, double x, const std::vector<double>& reflection) {
  const bool odd_n = n % 2 == 1;
  if (std::isnan(x)) return x;
  if (x == std::numeric_limits<double>::infinity()) return odd_n ? 0.0 : -0.0;
  if (x == -std::numeric_limits<double>::infinity())
    return std::numeric_limits<double>::quiet_NaN();
  if (x <= 0 && x == std::floor(x)) {  // a pole: the sign of the (n+1)-fold pole's n! / x^(n+1)
    return odd_n ? std::numeric_limits<double>::infinity()
                 : -std::numeric_limits<double>::infinity();
  }
  if (x > 0 || reflection.empty()) return polygamma_series(n, x);
  // cot(pi x) from x minus the nearest integer (exact, and at most 1/2 in magnitude, so that
  // sin(pi r) is accurate) rather than from pi * x.
  const double r = x - std::nearbyint(x);
  const double c = std::cos(kPi * r) / std::sin(kPi * r);
  double p = 0;
  for (size_t i = reflection.size(); i-- > 0;) p = p * c + reflection[i];
  const double mirrored = polygamma_series(n, 1 - x);
  return (odd_n ? -mirrored : mirrored) - p;
}

void polygamma_kernel(TensorIterator& iter, int64_t n) {
  const std::vector<double> reflection = cot_derivative_polynomial(n);
  unary_kernel<kFloatingTypes>(iter, "polygamma", [n, &reflection](auto x) {
    using V = decltype(x);
    return V(calc_polygamma(n, static_cast<double>(x), reflection));
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(polygamma_stub, CPU, polygamma_kernel);

}  // namespace native
}  // namespace ember
