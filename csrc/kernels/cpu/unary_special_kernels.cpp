// Special functions: erf, erfc, erfinv, lgamma, digamma and logit (real arguments) and sinc.
#include <cmath>
#include <limits>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec/vec_loops.h"
#include "kernels/cpu/vec/vec_math.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr double kPi = 3.14159265358979323846264338327950288;

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
  unary_vec_kernel<kFloatingTypes>(iter, "erf", [](auto x) { return vec::erf(x); });
}

void erfc_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingTypes>(iter, "erfc", [](auto x) { return vec::erfc(x); });
}

void erfinv_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingTypes>(iter, "erfinv", [](auto x) { return vec::erfinv(x); });
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

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
