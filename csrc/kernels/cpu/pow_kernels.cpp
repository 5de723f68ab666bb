// pow (tensor ** tensor, tensor ** number, number ** tensor) and float_power. Floating pow with
// a general exponent runs SLEEF's pow on explicit vectors (vec/vec_math.h).
#include <cmath>
#include <complex>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec/vec_loops.h"
#include "kernels/cpu/vec/vec_math.h"
#include "kernels/elementwise_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

// Integer power by squaring, wrapping on overflow. Negative exponents follow PyTorch: 1 ** -n is
// 1, (-1) ** -n is +-1, anything else truncates to 0.
template <typename V>
inline V int_pow(V base, V exp) {
  if constexpr (std::is_signed_v<V>) {
    if (exp < 0) {
      if (base == 1) return V(1);
      if (base == -1) return (exp % 2 == 0) ? V(1) : V(-1);
      return V(0);
    }
  }
  V result = 1;
  while (exp) {
    if (exp & 1) result = wrapping_mul(result, base);
    exp = V(exp >> 1);
    base = wrapping_mul(base, base);
  }
  return result;
}

void pow_kernel(TensorIterator& iter) {
  if (is_floating(iter.common_dtype())) {  // SLEEF's pow on explicit vectors
    binary_vec_kernel<kFloatingTypes>(iter, "pow", [](auto a, auto b) { return vec::pow(a, b); });
    return;
  }
  binary_kernel<kNumericTypes>(iter, "pow", [](auto a, auto b) {
    using V = decltype(a);
    if constexpr (std::is_integral_v<V>)
      return int_pow(a, b);
    else
      return std::pow(a, b);
  });
}

void pow_scalar_kernel(TensorIterator& iter, const Scalar& exponent) {
  dispatch_dtype<kNumericTypes>(iter.common_dtype(), "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const A e = exponent.to<A>();
    if constexpr (std::is_integral_v<A>) {
      if (e == 2) {
        cpu_kernel(iter, [](T x) -> T { return wrapping_mul(x, x); });
      } else {
        cpu_kernel(iter, [e](T x) -> T { return int_pow(x, e); });
      }
    } else if constexpr (is_complex_v<A>) {
      if (e == A(2)) {
        cpu_kernel(iter, [](T x) -> T { return complex_mul(x, x); });
      } else {
        cpu_kernel(iter, [e](T x) -> T { return std::pow(x, e); });
      }
    } else {
      // Common exponents as multiplications / sqrt: exact where std::pow is, and vectorised.
      if (e == A(2)) {
        cpu_kernel(iter, [](T x) -> T { return T(A(x) * A(x)); });
      } else if (e == A(3)) {
        cpu_kernel(iter, [](T x) -> T { return T(A(x) * A(x) * A(x)); });
      } else if (e == A(0.5)) {
        cpu_kernel(iter, [](T x) -> T { return T(std::sqrt(A(x))); });
      } else if (e == A(-0.5)) {
        cpu_kernel(iter, [](T x) -> T { return T(A(1) / std::sqrt(A(x))); });
      } else if (e == A(-1)) {
        cpu_kernel(iter, [](T x) -> T { return T(A(1) / A(x)); });
      } else if (e == A(-2)) {
        cpu_kernel(iter, [](T x) -> T { return T(A(1) / (A(x) * A(x))); });
      } else {
        unary_vec_kernel<kFloatingTypes>(iter, "pow", [e](auto x) {
          using V = decltype(x);
          return vec::pow(x, V(e));
        });
      }
    }
  });
}

void float_power_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloat64 | kComplex128>(iter.common_dtype(), "float_power", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](T a, T b) -> T { return std::pow(a, b); });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(pow_stub, CPU, pow_kernel);
EMBER_REGISTER_KERNEL(pow_scalar_stub, CPU, pow_scalar_kernel);
EMBER_REGISTER_KERNEL(float_power_stub, CPU, float_power_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
