// Trigonometric and hyperbolic functions (tanh lives with exp/log: it is vectorised).
#include <complex>

#include "kernels/cpu/elementwise_helpers.h"
#include "ops/elementwise_stubs.h"

namespace ember {
namespace {

#define EMBER_STD_UNARY_KERNEL(name)                                                        \
  void name##_kernel(TensorIterator& iter) {                                                \
    unary_kernel<kFloatingAndComplex>(iter, #name, [](auto x) { return std::name(x); });    \
  }
EMBER_STD_UNARY_KERNEL(sin)
EMBER_STD_UNARY_KERNEL(cos)
EMBER_STD_UNARY_KERNEL(tan)
EMBER_STD_UNARY_KERNEL(asin)
EMBER_STD_UNARY_KERNEL(acos)
EMBER_STD_UNARY_KERNEL(atan)
EMBER_STD_UNARY_KERNEL(sinh)
EMBER_STD_UNARY_KERNEL(cosh)
EMBER_STD_UNARY_KERNEL(asinh)
EMBER_STD_UNARY_KERNEL(acosh)
EMBER_STD_UNARY_KERNEL(atanh)
#undef EMBER_STD_UNARY_KERNEL

}  // namespace

EMBER_REGISTER_KERNEL(sin_stub, CPU, sin_kernel);
EMBER_REGISTER_KERNEL(cos_stub, CPU, cos_kernel);
EMBER_REGISTER_KERNEL(tan_stub, CPU, tan_kernel);
EMBER_REGISTER_KERNEL(asin_stub, CPU, asin_kernel);
EMBER_REGISTER_KERNEL(acos_stub, CPU, acos_kernel);
EMBER_REGISTER_KERNEL(atan_stub, CPU, atan_kernel);
EMBER_REGISTER_KERNEL(sinh_stub, CPU, sinh_kernel);
EMBER_REGISTER_KERNEL(cosh_stub, CPU, cosh_kernel);
EMBER_REGISTER_KERNEL(asinh_stub, CPU, asinh_kernel);
EMBER_REGISTER_KERNEL(acosh_stub, CPU, acosh_kernel);
EMBER_REGISTER_KERNEL(atanh_stub, CPU, atanh_kernel);

}  // namespace ember
