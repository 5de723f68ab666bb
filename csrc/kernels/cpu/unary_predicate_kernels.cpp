// Predicates with bool results (isnan, isinf, ..., logical_not) and nan_to_num.
#include <cmath>
#include <complex>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename V>
constexpr bool has_nan_v = std::is_floating_point_v<V>;

void isnan_kernel(TensorIterator& iter) {
  predicate_kernel<kAllTypes>(iter, "isnan", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return x.real() != x.real() || x.imag() != x.imag();
    else if constexpr (has_nan_v<V>)
      return x != x;
    else
      return false;
  });
}

void isinf_kernel(TensorIterator& iter) {
  predicate_kernel<kAllTypes>(iter, "isinf", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>)
      return std::isinf(x.real()) || std::isinf(x.imag());
    else if constexpr (has_nan_v<V>)
      return std::fabs(x) == std::numeric_limits<V>::infinity();
    else
      return false;
  });
}

void isfinite_kernel(TensorIterator& iter) {
  predicate_kernel<kAllTypes>(iter, "isfinite", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>) return std::isfinite(x.real()) && std::isfinite(x.imag());
    // x - x is 0 for finite x and NaN for inf / NaN: one compare, vectorisable.
    else if constexpr (has_nan_v<V>)
      return x - x == V(0);
    else
      return true;
  });
}

void isposinf_kernel(TensorIterator& iter) {
  predicate_kernel<kRealAndBool>(iter, "isposinf", [](auto x) {
    using V = decltype(x);
    if constexpr (has_nan_v<V>)
      return x == std::numeric_limits<V>::infinity();
    else
      return false;
  });
}

void isneginf_kernel(TensorIterator& iter) {
  predicate_kernel<kRealAndBool>(iter, "isneginf", [](auto x) {
    using V = decltype(x);
    if constexpr (has_nan_v<V>)
      return x == -std::numeric_limits<V>::infinity();
    else
      return false;
  });
}

void signbit_kernel(TensorIterator& iter) {
  predicate_kernel<kRealAndBool>(iter, "signbit", [](auto x) {
    using V = decltype(x);
    // The sign bit read directly: GCC 12 ICEs vectorising std::signbit with AVX-512.
    if constexpr (std::is_same_v<V, float>)
      return (vmath::bits::u32(x) >> 31) != 0;
    else if constexpr (std::is_same_v<V, double>)
      return (vmath::bits::u64(x) >> 63) != 0;
    else if constexpr (std::is_signed_v<V>)
      return x < 0;
    else
      return false;
  });
}

void logical_not_kernel(TensorIterator& iter) {
  predicate_kernel<kAllTypes>(iter, "logical_not", [](auto x) { return x == decltype(x)(0); });
}

void isreal_kernel(TensorIterator& iter) {
  predicate_kernel<kAllTypes>(iter, "isreal", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return x.imag() == 0;
    else
      return true;
  });
}

template <typename V>
inline V replace_non_finite(V x, V nan, V posinf, V neginf) {
  V r = x == std::numeric_limits<V>::infinity() ? posinf : x;
  r = x == -std::numeric_limits<V>::infinity() ? neginf : r;
  return x != x ? nan : r;
}

void nan_to_num_kernel(TensorIterator& iter, double nan, double posinf, double neginf) {
  unary_kernel<kFloatingAndComplex>(iter, "nan_to_num", [=](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>) {
      using R = typename V::value_type;
      return V(replace_non_finite(x.real(), R(nan), R(posinf), R(neginf)),
               replace_non_finite(x.imag(), R(nan), R(posinf), R(neginf)));
    } else {
      return replace_non_finite(x, V(nan), V(posinf), V(neginf));
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(isnan_stub, CPU, isnan_kernel);
EMBER_REGISTER_KERNEL(isinf_stub, CPU, isinf_kernel);
EMBER_REGISTER_KERNEL(isfinite_stub, CPU, isfinite_kernel);
EMBER_REGISTER_KERNEL(isposinf_stub, CPU, isposinf_kernel);
EMBER_REGISTER_KERNEL(isneginf_stub, CPU, isneginf_kernel);
EMBER_REGISTER_KERNEL(signbit_stub, CPU, signbit_kernel);
EMBER_REGISTER_KERNEL(logical_not_stub, CPU, logical_not_kernel);
EMBER_REGISTER_KERNEL(isreal_stub, CPU, isreal_kernel);
EMBER_REGISTER_KERNEL(nan_to_num_stub, CPU, nan_to_num_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
