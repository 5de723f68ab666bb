// Trigonometric and hyperbolic functions (tanh lives with exp/log). Real dtypes run on explicit
// vectors with SLEEF's functions (vec/vec_math.h); complex dtypes use std::complex.
#include <cmath>
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

#define EMBER_VEC_UNARY_KERNEL(name)                                \
  void name##_kernel(TensorIterator& iter) {                        \
    unary_vec_kernel<kFloatingAndComplex>(iter, #name, [](auto x) { \
      if constexpr (is_complex_v<decltype(x)>)                      \
        return std::name(x);                                        \
      else                                                          \
        return vec::name(x);                                        \
    });                                                             \
  }
EMBER_VEC_UNARY_KERNEL(sin)
EMBER_VEC_UNARY_KERNEL(cos)
EMBER_VEC_UNARY_KERNEL(tan)
EMBER_VEC_UNARY_KERNEL(asin)
EMBER_VEC_UNARY_KERNEL(acos)
EMBER_VEC_UNARY_KERNEL(atan)
EMBER_VEC_UNARY_KERNEL(sinh)
EMBER_VEC_UNARY_KERNEL(cosh)
EMBER_VEC_UNARY_KERNEL(asinh)
EMBER_VEC_UNARY_KERNEL(acosh)
EMBER_VEC_UNARY_KERNEL(atanh)
#undef EMBER_VEC_UNARY_KERNEL

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

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
