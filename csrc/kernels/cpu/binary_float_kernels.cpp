// Floating binary functions: atan2, hypot, logaddexp(2), xlogy, copysign and lerp.
#include <cmath>
#include <complex>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/cpu/vec/vec_loops.h"
#include "kernels/cpu/vec/vec_math.h"
#include "kernels/cpu/vec_math.h"
#include "kernels/elementwise_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr double kLn2 = 0.693147180559945309417232121458;

void atan2_kernel(TensorIterator& iter) {
  binary_vec_kernel<kFloatingTypes>(iter, "atan2", [](auto a, auto b) { return vec::atan2(a, b); });
}

void hypot_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingTypes>(iter, "hypot", [](auto a, auto b) { return std::hypot(a, b); });
}

// log(e^a + e^b) = max + log1p(e^-|a - b|); equal infinities return themselves (inf - inf would
// be NaN).
void logaddexp_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingAndComplex>(iter, "logaddexp", [](auto a, auto b) {
    using V = decltype(a);
    if constexpr (is_complex_v<V>) {
      using R = typename V::value_type;
      const V mx = a.real() < b.real() ? b : a;
      const V mn = a.real() < b.real() ? a : b;
      if (std::isinf(mx.real()) && mx.real() > 0) return V(mx.real(), mx.imag());
      if (std::isinf(mn.real()) && mn.real() < 0) return mx;
      return mx + std::log(V(R(1)) + std::exp(mn - mx));
    } else {
      const V mx = a < b ? b : a;
      const V r = mx + vmath::log1p(vmath::exp(-std::fabs(a - b)));
      return (std::isinf(a) && a == b) ? a : r;
    }
  });
}

void logaddexp2_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingTypes>(iter, "logaddexp2", [](auto a, auto b) {
    using V = decltype(a);
    const V mx = a < b ? b : a;
    const V r = mx + vmath::log1p(vmath::exp2(-std::fabs(a - b))) / V(kLn2);
    return (std::isinf(a) && a == b) ? a : r;
  });
}

// x * log(y) with 0 * log(y) = 0 unless y is NaN.
void xlogy_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingTypes>(iter, "xlogy", [](auto x, auto y) {
    using V = decltype(x);
    if (y != y) return y;
    if (x == V(0)) return V(0);
    return x * vmath::log(y);
  });
}

void copysign_kernel(TensorIterator& iter) {
  binary_kernel<kFloatingTypes>(iter, "copysign",
                                [](auto a, auto b) { return std::copysign(a, b); });
}

// PyTorch's lerp: from the nearer end point, so that weight 0 gives start and weight 1 gives end
// exactly.
template <typename V, typename W>
inline V lerp_value(V start, V end, W weight) {
  using R = real_type_t<V>;
  return std::abs(weight) < R(0.5) ? start + weight * (end - start)
                                   : end - (end - start) * (V(1) - weight);
}

void lerp_kernel(TensorIterator& iter) {
  dispatch_dtype<kFloatingAndComplex>(iter.common_dtype(), "lerp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    cpu_kernel(iter, [](T s, T e, T w) -> T { return T(lerp_value(A(s), A(e), A(w))); });
  });
}

void lerp_scalar_kernel(TensorIterator& iter, const Scalar& weight) {
  dispatch_dtype<kFloatingAndComplex>(iter.common_dtype(), "lerp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    const A w = weight.to<A>();
    cpu_kernel(iter, [w](T s, T e) -> T { return T(lerp_value(A(s), A(e), w)); });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(atan2_stub, CPU, atan2_kernel);
EMBER_REGISTER_KERNEL(hypot_stub, CPU, hypot_kernel);
EMBER_REGISTER_KERNEL(logaddexp_stub, CPU, logaddexp_kernel);
EMBER_REGISTER_KERNEL(logaddexp2_stub, CPU, logaddexp2_kernel);
EMBER_REGISTER_KERNEL(xlogy_stub, CPU, xlogy_kernel);
EMBER_REGISTER_KERNEL(copysign_stub, CPU, copysign_kernel);
EMBER_REGISTER_KERNEL(lerp_stub, CPU, lerp_kernel);
EMBER_REGISTER_KERNEL(lerp_scalar_stub, CPU, lerp_scalar_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
