// exp / log family, sqrt, rsqrt, reciprocal, tanh and sigmoid. Real dtypes run on explicit vectors
// (vec/vec_loops.h, vec/vec_math.h); complex dtypes use std::complex element by element.
#include <complex>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec/vec_loops.h"
#include "kernels/cpu/vec/vec_math.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename C>
using real_of = typename C::value_type;

constexpr double kLn2 = 0.693147180559945309417232121458;
constexpr double kLog2e = 1.44269504088896340735992468100189214;
constexpr double kLog10e = 0.434294481903251827651128918916605082;

// expm1(x + iy) = expm1(x) cos(y) - 2 sin^2(y/2) + i e^x sin(y): accurate near 0.
template <typename C>
C complex_expm1(C z) {
  using R = real_of<C>;
  R x = z.real(), y = z.imag();
  R s = std::sin(y / 2);
  return C(std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y));
}

// log1p(z) with |1 + z| computed as log1p(x (x + 2) + y^2) / 2 for small |z| (as PyTorch).
template <typename C>
C complex_log1p(C z) {
  using R = real_of<C>;
  R x = z.real(), y = z.imag();
  R theta = std::atan2(y, x + R(1));
  if (std::abs(z) < R(0.5)) {
    R r = x * (R(2) + x) + y * y;
    if (r == 0) return C(x, theta);
    return C(R(0.5) * std::log1p(r), theta);
  }
  return C(std::log(std::hypot(x + R(1), y)), theta);
}

void exp_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "exp", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return std::exp(x);
    else
      return vec::exp(x);
  });
}

void exp2_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "exp2", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return std::exp(x * real_of<V>(kLn2));
    else
      return vec::exp2(x);
  });
}

void expm1_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "expm1", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return complex_expm1(x);
    else
      return vec::expm1(x);
  });
}

void log_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "log", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return std::log(x);
    else
      return vec::log(x);
  });
}

void log2_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "log2", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return V(std::log(complex128(x)) * kLog2e);  // rounded once
    else
      return vec::log2(x);
  });
}

void log10_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "log10", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return V(std::log(complex128(x)) * kLog10e);
    else
      return vec::log10(x);
  });
}

void log1p_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "log1p", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return complex_log1p(x);
    else
      return vec::log1p(x);
  });
}

void sqrt_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "sqrt", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return std::sqrt(x);
    else
      return vec::sqrt(x);
  });
}

void rsqrt_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "rsqrt", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return complex_div(V(1), std::sqrt(x));
    else
      return V(1) / vec::sqrt(x);
  });
}

void reciprocal_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "reciprocal", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return complex_div(V(1), x);
    else
      return V(1) / x;
  });
}

void tanh_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "tanh", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return std::tanh(x);
    else
      return vec::tanh(x);
  });
}

void sigmoid_kernel(TensorIterator& iter) {
  unary_vec_kernel<kFloatingAndComplex>(iter, "sigmoid", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return complex_div(V(1), V(1) + std::exp(-x));
    else
      return vec::sigmoid(x);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(exp_stub, CPU, exp_kernel);
EMBER_REGISTER_KERNEL(exp2_stub, CPU, exp2_kernel);
EMBER_REGISTER_KERNEL(expm1_stub, CPU, expm1_kernel);
EMBER_REGISTER_KERNEL(log_stub, CPU, log_kernel);
EMBER_REGISTER_KERNEL(log2_stub, CPU, log2_kernel);
EMBER_REGISTER_KERNEL(log10_stub, CPU, log10_kernel);
EMBER_REGISTER_KERNEL(log1p_stub, CPU, log1p_kernel);
EMBER_REGISTER_KERNEL(sqrt_stub, CPU, sqrt_kernel);
EMBER_REGISTER_KERNEL(rsqrt_stub, CPU, rsqrt_kernel);
EMBER_REGISTER_KERNEL(reciprocal_stub, CPU, reciprocal_kernel);
EMBER_REGISTER_KERNEL(tanh_stub, CPU, tanh_kernel);
EMBER_REGISTER_KERNEL(sigmoid_stub, CPU, sigmoid_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
