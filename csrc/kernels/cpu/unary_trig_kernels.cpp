// Trigonometric and hyperbolic functions (tanh lives with exp/log: it is vectorised). float32
// sin / cos use the vectorisable vmath::sin_fast / cos_fast for |x| <= kTrigFastLimit and libm
// beyond (and for inf / NaN); other functions and dtypes call libm / std::complex.
#include <algorithm>
#include <cmath>
#include <complex>

#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
namespace {

// out = fast(x) where |x| <= kTrigFastLimit, slow(x) elsewhere. Contiguous blocks whose inputs
// are all in range (the usual case) run the fast function alone, so that loop vectorises; the
// range check comes first, so in-place (out == in) is safe.
template <typename Fast, typename Slow>
void guarded_float_kernel(TensorIterator& iter, Fast fast, Slow slow) {
  constexpr float kLimit = vmath::kTrigFastLimit;
  auto one = [&](float x) { return std::fabs(x) <= kLimit ? fast(x) : slow(x); };
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    if (strides[0] == sizeof(float) && strides[1] == sizeof(float)) {
      constexpr int64_t kBlock = 1024;
      float* out = reinterpret_cast<float*>(data[0]);
      const float* in = reinterpret_cast<const float*>(data[1]);
      for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t m = std::min(kBlock, n - b);
        const float* ib = in + b;
        float* ob = out + b;
        int out_of_range = 0;
        for (int64_t k = 0; k < m; ++k) out_of_range |= !(std::fabs(ib[k]) <= kLimit);
        if (!out_of_range) {
          for (int64_t k = 0; k < m; ++k) ob[k] = fast(ib[k]);
        } else {
          for (int64_t k = 0; k < m; ++k) ob[k] = one(ib[k]);
        }
      }
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      *reinterpret_cast<float*>(data[0] + k * strides[0]) =
          one(*reinterpret_cast<const float*>(data[1] + k * strides[1]));
    }
  });
}

template <typename Fast, typename Slow>
void sin_cos_kernel(TensorIterator& iter, const char* name, Fast fast, Slow slow) {
  if (iter.common_dtype() == ScalarType::Float32) {
    guarded_float_kernel(iter, fast, slow);
    return;
  }
  unary_kernel<kFloatingAndComplex>(iter, name, [fast, slow](auto x) {
    using V = decltype(x);
    if constexpr (std::is_same_v<V, float>) {  // Half and BFloat16 compute in float
      return std::fabs(x) <= vmath::kTrigFastLimit ? fast(x) : slow(x);
    } else {
      return slow(x);
    }
  });
}

void sin_kernel(TensorIterator& iter) {
  sin_cos_kernel(
      iter, "sin", [](float x) { return vmath::sin_fast(x); }, [](auto x) { return std::sin(x); });
}

void cos_kernel(TensorIterator& iter) {
  sin_cos_kernel(
      iter, "cos", [](float x) { return vmath::cos_fast(x); }, [](auto x) { return std::cos(x); });
}

#define EMBER_STD_UNARY_KERNEL(name)                                                     \
  void name##_kernel(TensorIterator& iter) {                                             \
    unary_kernel<kFloatingAndComplex>(iter, #name, [](auto x) { return std::name(x); }); \
  }
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

}  // namespace native
}  // namespace ember
