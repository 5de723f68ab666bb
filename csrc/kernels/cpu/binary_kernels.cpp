// Arithmetic binary kernels: add (with alpha), mul and true division. Bool add is logical or and
// bool mul logical and, as in PyTorch; integer arithmetic wraps (computed in unsigned, no UB).
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/elementwise_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

void add_kernel(TensorIterator& iter, const Scalar& alpha) {
  dispatch_dtype<kAllTypes>(iter.common_dtype(), "add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      const bool a = alpha.to_bool();
      cpu_kernel(iter, [a](bool x, bool y) -> bool { return x || (a && y); });
    } else if constexpr (is_reduced_float_v<T>) {
      const float a = alpha.to<float>();
      reduced_float_kernel<T, T, 2>(iter, [a](float x, float y) { return x + a * y; });
    } else {
      using A = acc_type<T>;
      const A a = alpha.to<A>();
      if (a == A(1)) {
        cpu_kernel(iter, [](T x, T y) -> T { return T(wrapping_add(A(x), A(y))); });
      } else if (a == A(-1)) {  // sub
        cpu_kernel(iter, [](T x, T y) -> T { return T(wrapping_sub(A(x), A(y))); });
      } else {
        cpu_kernel(iter,
                   [a](T x, T y) -> T { return T(wrapping_add(A(x), wrapping_mul(a, A(y)))); });
      }
    }
  });
}

void mul_kernel(TensorIterator& iter) {
  dispatch_dtype<kAllTypes>(iter.common_dtype(), "mul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](bool x, bool y) -> bool { return x && y; });
    } else if constexpr (is_reduced_float_v<T>) {
      reduced_float_kernel<T, T, 2>(iter, [](float x, float y) { return x * y; });
    } else {
      using A = acc_type<T>;
      cpu_kernel(iter, [](T x, T y) -> T { return T(wrapping_mul(A(x), A(y))); });
    }
  });
}

void div_true_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingAndComplex>(iter, "div", [](auto x, auto y) {
    if constexpr (is_complex_v<decltype(x)>)
      return complex_div(x, y);
    else
      return x / y;
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(add_stub, CPU, add_kernel);
EMBER_REGISTER_KERNEL(mul_stub, CPU, mul_kernel);
EMBER_REGISTER_KERNEL(div_true_stub, CPU, div_true_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
