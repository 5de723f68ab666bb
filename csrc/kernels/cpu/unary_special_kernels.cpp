// Special functions: erf, erfc, erfinv, lgamma, digamma and logit (real arguments) and sinc.
#include <cmath>
#include <limits>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
namespace {

constexpr double kPi = 3.14159265358979323846264338327950288;

// Inverse error function: a rational approximation refined by two Newton steps (the algorithm
// PyTorch uses, after Gary L. Pavlis' MATLAB erfinv).
template <typename T>
T calc_erfinv(T y) {
  constexpr T a[4] = {T(0.886226899), T(-1.645349621), T(0.914624893), T(-0.140543331)};
  constexpr T b[4] = {T(-2.118377725), T(1.442710462), T(-0.329097515), T(0.012229801)};
  constexpr T c[4] = {T(-1.970840454), T(-1.624906493), T(3.429567803), T(1.641345311)};
  constexpr T d[2] = {T(3.543889200), T(1.637067800)};
  const T y_abs = std::abs(y);
  if (y_abs > T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (y_abs == T(1)) return std::copysign(std::numeric_limits<T>::infinity(), y);
  T x;
  if (y_abs <= T(0.7)) {
    const T z = y * y;
    const T num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];
    const T dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + T(1);
    x = y * num / dem;
  } else {
    const T z = std::sqrt(-std::log((T(1) - y_abs) / T(2)));
    const T num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];
    const T dem = (d[1] * z + d[0]) * z + T(1);
    x = std::copysign(num, y) / dem;
  }
  const T k = T(2) / T(std::sqrt(kPi));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  return x;
}

// Digamma (psi): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series
// (Cephes psi, as PyTorch's calc_digamma).
template <typename T>
T calc_digamma(T x) {
  constexpr T kPsi10 = T(2.25175258906672110764);
  if (x == 0) return std::copysign(std::numeric_limits<T>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<T>::quiet_NaN();
    T q;
    const T r = std::modf(x, &q);
    // tan(pi * r) of the fractional part is more accurate than tan(pi * x).
    return calc_digamma(T(1) - x) - T(kPi) / std::tan(T(kPi) * r);
  }
  T result = 0;
  while (x < 10) {
    result -= T(1) / x;
    x += 1;
  }
  if (x == 10) return result + kPsi10;
  constexpr T A[] = {T(8.33333333333333333333E-2), T(-2.10927960927960927961E-2),
                     T(7.57575757575757575758E-3), T(-4.16666666666666666667E-3),
                     T(3.96825396825396825397E-3), T(-8.33333333333333333333E-3),
                     T(8.33333333333333333333E-2)};
  T y = 0;
  if (x < T(1.0e17)) {
    const T z = T(1) / (x * x);
    T p = A[0];
    for (int i = 1; i < 7; ++i) p = p * z + A[i];
    y = z * p;
  }
  return result + std::log(x) - (T(0.5) / x) - y;
}

// lgamma without glibc's global `signgam` write (a data race under parallel_for).
inline float lgamma_threadsafe(float x) {
  int sign;
  return ::lgammaf_r(x, &sign);
}
inline double lgamma_threadsafe(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

void erf_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingTypes>(iter, "erf", [](auto x) { return std::erf(x); });
}

void erfc_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingTypes>(iter, "erfc", [](auto x) { return std::erfc(x); });
}

void erfinv_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingTypes>(iter, "erfinv", [](auto x) { return calc_erfinv(x); });
}

void lgamma_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingTypes>(iter, "lgamma", [](auto x) { return lgamma_threadsafe(x); });
}

void digamma_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingTypes>(iter, "digamma", [](auto x) { return calc_digamma(x); });
}

// sin(pi x) / (pi x), 1 at 0 (PyTorch's sinc, real and complex). The product is formed once so
// that numerator and denominator see the same rounding.
void sinc_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingAndComplex>(iter, "sinc", [](auto x) {
    using V = decltype(x);
    if (x == V(0)) return V(1);
    const V product = V(kPi) * x;
    return V(std::sin(product) / product);
  });
}

void logit_kernel(TensorIterator& iter, double eps) {
  if (eps < 0) {
    unary_kernel<kFloatingTypes>(iter, "logit", [](auto x) { return std::log(x / (1 - x)); });
    return;
  }
  unary_kernel<kFloatingTypes>(iter, "logit", [eps](auto x) {
    using V = decltype(x);
    const V lo = V(eps), hi = V(1 - eps);
    const V z = x < lo ? lo : (x > hi ? hi : x);  // NaN stays NaN
    return std::log(z / (1 - z));
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(erf_stub, CPU, erf_kernel);
EMBER_REGISTER_KERNEL(erfc_stub, CPU, erfc_kernel);
EMBER_REGISTER_KERNEL(erfinv_stub, CPU, erfinv_kernel);
EMBER_REGISTER_KERNEL(lgamma_stub, CPU, lgamma_kernel);
EMBER_REGISTER_KERNEL(digamma_stub, CPU, digamma_kernel);
EMBER_REGISTER_KERNEL(logit_stub, CPU, logit_kernel);
EMBER_REGISTER_KERNEL(sinc_stub, CPU, sinc_kernel);

}  // namespace native
}  // namespace ember
