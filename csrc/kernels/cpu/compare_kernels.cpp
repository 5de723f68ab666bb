// Comparisons (bool results), minimum / maximum / fmin / fmax, clamp and isclose.
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <type_traits>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/elementwise_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename V>
constexpr bool has_nan_v = std::is_floating_point_v<V>;

#define EMBER_COMPARE_KERNEL(name, Set, expr)                                      \
  void name##_kernel(TensorIterator& iter) {                                       \
    compare_kernel<Set>(iter, #name, [](auto a, auto b) -> bool { return expr; }); \
  }
EMBER_COMPARE_KERNEL(eq, kAllTypes, a == b)
EMBER_COMPARE_KERNEL(ne, kAllTypes, a != b)
EMBER_COMPARE_KERNEL(lt, kRealAndBool, a < b)
EMBER_COMPARE_KERNEL(le, kRealAndBool, a <= b)
EMBER_COMPARE_KERNEL(gt, kRealAndBool, a > b)
EMBER_COMPARE_KERNEL(ge, kRealAndBool, a >= b)
#undef EMBER_COMPARE_KERNEL

// minimum / maximum propagate NaN from either side; fmin / fmax ignore a NaN when the other
// operand is a number. Written as selects so the contiguous loop vectorises.
void minimum_kernel(TensorIterator& iter) {
  binary_kernel<kRealAndBool>(iter, "minimum", [](auto a, auto b) {
    using V = decltype(a);
    if constexpr (has_nan_v<V>)
      return a != a ? a : (b != b ? b : (b < a ? b : a));
    else
      return b < a ? b : a;
  });
}

void maximum_kernel(TensorIterator& iter) {
  binary_kernel<kRealAndBool>(iter, "maximum", [](auto a, auto b) {
    using V = decltype(a);
    if constexpr (has_nan_v<V>)
      return a != a ? a : (b != b ? b : (a < b ? b : a));
    else
      return a < b ? b : a;
  });
}

void fmin_kernel(TensorIterator& iter) {
  binary_kernel<kRealAndBool>(iter, "fmin", [](auto a, auto b) {
    using V = decltype(a);
    if constexpr (has_nan_v<V>)
      return a != a ? b : (b != b ? a : (b < a ? b : a));
    else
      return b < a ? b : a;
  });
}

void fmax_kernel(TensorIterator& iter) {
  binary_kernel<kRealAndBool>(iter, "fmax", [](auto a, auto b) {
    using V = decltype(a);
    if constexpr (has_nan_v<V>)
      return a != a ? b : (b != b ? a : (a < b ? b : a));
    else
      return a < b ? b : a;
  });
}

// A clamp bound in the element type. An integer bound beyond the type's range saturates (a
// bound above int8's maximum clamps nothing), where a plain conversion would wrap around.
template <typename A>
A clamp_bound(const Scalar& s) {
  if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<A>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<A>::max());
    if (s.is_integral()) {
      const int64_t v = s.to_int64();
      if (v < static_cast<int64_t>(std::numeric_limits<A>::min())) {
        return std::numeric_limits<A>::min();
      }
      if (v > 0 &&
          static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<A>::max())) {
        return std::numeric_limits<A>::max();
      }
      return static_cast<A>(v);
    }
    const double d = s.to_double();
    return d <= lo   ? std::numeric_limits<A>::min()
           : d >= hi ? std::numeric_limits<A>::max()
                     : static_cast<A>(d);
  } else {
    return s.to<A>();
  }
}

// clamp(x, lo, hi) = min(max(x, lo), hi): when lo > hi every element becomes hi (as PyTorch);
// a NaN input stays NaN, and a NaN bound makes every element NaN (as the tensor-bound form).
void clamp_scalar_kernel(TensorIterator& iter, const std::optional<Scalar>& min,
                         const std::optional<Scalar>& max) {
  dispatch_dtype<kRealTypes>(iter.common_dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    if constexpr (has_nan_v<A>) {
      const bool nan_bound =
          (min && std::isnan(min->to_double())) || (max && std::isnan(max->to_double()));
      if (nan_bound) {
        const T nan = T(std::numeric_limits<A>::quiet_NaN());
        cpu_kernel(iter, [nan](T) -> T { return nan; });
        return;
      }
    }
    if (min && max) {
      const A lo = clamp_bound<A>(*min), hi = clamp_bound<A>(*max);
      cpu_kernel(iter, [lo, hi](T v) -> T {
        A x = A(v);
        A r = x < lo ? lo : x;
        r = r > hi ? hi : r;
        return T(x != x ? x : r);
      });
    } else if (min) {
      const A lo = clamp_bound<A>(*min);
      cpu_kernel(iter, [lo](T v) -> T {
        A x = A(v);
        return T(x < lo ? lo : x);  // NaN fails the comparison and is kept
      });
    } else {
      const A hi = clamp_bound<A>(*max);
      cpu_kernel(iter, [hi](T v) -> T {
        A x = A(v);
        return T(x > hi ? hi : x);
      });
    }
  });
}

// Tensor bounds: a NaN in x, lo or hi gives NaN.
void clamp_kernel(TensorIterator& iter) {
  dispatch_dtype<kRealTypes>(iter.common_dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    cpu_kernel(iter, [](T xv, T lov, T hiv) -> T {
      A x = A(xv), lo = A(lov), hi = A(hiv);
      A r = x < lo ? lo : x;
      r = r > hi ? hi : r;
      if constexpr (has_nan_v<A>) {
        r = lo != lo ? lo : r;
        r = hi != hi ? hi : r;
        r = x != x ? x : r;
      }
      return T(r);
    });
  });
}

void isclose_kernel(TensorIterator& iter, double rtol, double atol, bool equal_nan) {
  dispatch_dtype<kAllTypes>(iter.common_dtype(), "isclose", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_type<T>;
    // Integers and bool compare their difference in double (no overflow in a - b).
    using V = std::conditional_t<std::is_integral_v<A>, double, A>;
    using R = real_type_t<V>;
    const R rt = R(rtol), at = R(atol);
    const bool exact_only = rtol == 0 && atol == 0;
    cpu_kernel(iter, [=](T av, T bv) -> bool {
      V a = V(A(av)), b = V(A(bv));
      bool close = a == b;
      if constexpr (is_complex_v<V> || has_nan_v<V>) {
        const bool a_nan = a != a, b_nan = b != b;
        close = close || (equal_nan && a_nan && b_nan);
      }
      if (exact_only) return close;
      R diff = std::abs(a - b);
      R allowed = at + rt * std::abs(b);
      return close || (diff - diff == R(0) && diff <= allowed);
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(eq_stub, CPU, eq_kernel);
EMBER_REGISTER_KERNEL(ne_stub, CPU, ne_kernel);
EMBER_REGISTER_KERNEL(lt_stub, CPU, lt_kernel);
EMBER_REGISTER_KERNEL(le_stub, CPU, le_kernel);
EMBER_REGISTER_KERNEL(gt_stub, CPU, gt_kernel);
EMBER_REGISTER_KERNEL(ge_stub, CPU, ge_kernel);
EMBER_REGISTER_KERNEL(minimum_stub, CPU, minimum_kernel);
EMBER_REGISTER_KERNEL(maximum_stub, CPU, maximum_kernel);
EMBER_REGISTER_KERNEL(fmin_stub, CPU, fmin_kernel);
EMBER_REGISTER_KERNEL(fmax_stub, CPU, fmax_kernel);
EMBER_REGISTER_KERNEL(clamp_scalar_stub, CPU, clamp_scalar_kernel);
EMBER_REGISTER_KERNEL(clamp_stub, CPU, clamp_kernel);
EMBER_REGISTER_KERNEL(isclose_stub, CPU, isclose_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
