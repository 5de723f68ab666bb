// Sign, magnitude and rounding kernels: neg, abs, sign, sgn, floor, ceil, round, trunc, frac,
// bitwise_not, conj_physical and angle.
//
// floor / ceil / trunc are written with std::nearbyint and a select because GCC only vectorises
// std::floor under -fno-trapping-math, while nearbyint (ties-to-even) always vectorises.
#include <cmath>
#include <complex>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

constexpr double kPi = 3.14159265358979323846264338327950288;

template <typename T>
inline T floor_fast(T x) {
  T r = std::nearbyint(x);
  return r > x ? r - T(1) : r;  // NaN: the comparison fails and NaN passes through
}
template <typename T>
inline T ceil_fast(T x) {
  T r = std::nearbyint(x);
  return r < x ? r + T(1) : r;
}
template <typename T>
inline T trunc_fast(T x) {
  // Rounding |x| down keeps the sign of x (trunc(-0.5) is -0.0).
  return std::copysign(floor_fast(std::fabs(x)), x);
}

void neg_kernel(TensorIterator& iter) {
  unary_kernel<kNumericTypes>(iter, "neg", [](auto x) { return wrapping_neg(x); });
}

void abs_kernel(TensorIterator& iter) {
  const ScalarType t = iter.common_dtype();
  if (is_complex(t)) {  // complex input, real output
    dispatch_dtype<kComplexTypes>(t, "abs", [&](auto tag) {
      using C = typename decltype(tag)::type;
      cpu_kernel(iter, [](C z) -> typename C::value_type { return std::abs(z); });
    });
    return;
  }
  unary_kernel<kRealTypes>(iter, "abs", [](auto x) {
    using V = decltype(x);
    if constexpr (std::is_floating_point_v<V>)
      return std::fabs(x);
    else if constexpr (std::is_unsigned_v<V>)
      return x;
    else
      return x < 0 ? wrapping_neg(x) : x;
  });
}

void angle_kernel(TensorIterator& iter) {
  const ScalarType t = iter.common_dtype();
  if (is_complex(t)) {
    dispatch_dtype<kComplexTypes>(t, "angle", [&](auto tag) {
      using C = typename decltype(tag)::type;
      cpu_kernel(iter, [](C z) -> typename C::value_type { return std::arg(z); });
    });
    return;
  }
  unary_kernel<kFloatingTypes>(iter, "angle", [](auto x) {
    using V = decltype(x);
    return x != x ? x : (x < 0 ? V(kPi) : V(0));
  });
}

// Real sign: NaN gives 0 (as PyTorch), -0.0 gives +0.0.
template <typename V>
inline V real_sign(V x) {
  if constexpr (std::is_same_v<V, bool>)
    return x;
  else if constexpr (std::is_unsigned_v<V>)
    return V(x > 0);
  else
    return V(int(V(0) < x) - int(x < V(0)));
}

void sign_kernel(TensorIterator& iter) {
  unary_kernel<kRealAndBool>(iter, "sign", [](auto x) { return real_sign(x); });
}

void sgn_kernel(TensorIterator& iter) {
  unary_kernel<kAllTypes>(iter, "sgn", [](auto x) {
    using V = decltype(x);
    if constexpr (is_complex_v<V>) {
      return x == V(0) ? V(0) : x / std::abs(x);
    } else {
      return real_sign(x);
    }
  });
}

// Integer inputs are their own floor / ceil / round / trunc: a copy.
#define EMBER_ROUNDING_KERNEL(name, fn)                    \
  void name##_kernel(TensorIterator& iter) {               \
    unary_kernel<kRealTypes>(iter, #name, [](auto x) {     \
      if constexpr (std::is_floating_point_v<decltype(x)>) \
        return fn(x);                                      \
      else                                                 \
        return x;                                          \
    });                                                    \
  }
EMBER_ROUNDING_KERNEL(floor, floor_fast)
EMBER_ROUNDING_KERNEL(ceil, ceil_fast)
EMBER_ROUNDING_KERNEL(trunc, trunc_fast)
EMBER_ROUNDING_KERNEL(round, std::nearbyint)  // half to even, as PyTorch
#undef EMBER_ROUNDING_KERNEL

void round_decimals_kernel(TensorIterator& iter, int64_t decimals) {
  const bool negative = decimals < 0;
  const double scale = std::pow(10.0, static_cast<double>(negative ? -decimals : decimals));
  unary_kernel<kFloatingTypes>(iter, "round", [negative, scale](auto x) {
    using V = decltype(x);
    const V s = V(scale);
    return negative ? std::nearbyint(x / s) * s : std::nearbyint(x * s) / s;
  });
}

void frac_kernel(TensorIterator& iter) {
  unary_kernel<kFloatingTypes>(iter, "frac", [](auto x) { return x - trunc_fast(x); });
}

void bitwise_not_kernel(TensorIterator& iter) {
  unary_kernel<kIntegralAndBool>(iter, "bitwise_not", [](auto x) {
    using V = decltype(x);
    if constexpr (std::is_same_v<V, bool>)
      return !x;
    else
      return V(~x);
  });
}

void conj_physical_kernel(TensorIterator& iter) {
  unary_kernel<kAllTypes>(iter, "conj_physical", [](auto x) {
    if constexpr (is_complex_v<decltype(x)>)
      return std::conj(x);
    else
      return x;
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(neg_stub, CPU, neg_kernel);
EMBER_REGISTER_KERNEL(abs_stub, CPU, abs_kernel);
EMBER_REGISTER_KERNEL(angle_stub, CPU, angle_kernel);
EMBER_REGISTER_KERNEL(sign_stub, CPU, sign_kernel);
EMBER_REGISTER_KERNEL(sgn_stub, CPU, sgn_kernel);
EMBER_REGISTER_KERNEL(floor_stub, CPU, floor_kernel);
EMBER_REGISTER_KERNEL(ceil_stub, CPU, ceil_kernel);
EMBER_REGISTER_KERNEL(trunc_stub, CPU, trunc_kernel);
EMBER_REGISTER_KERNEL(round_stub, CPU, round_kernel);
EMBER_REGISTER_KERNEL(round_decimals_stub, CPU, round_decimals_kernel);
EMBER_REGISTER_KERNEL(frac_stub, CPU, frac_kernel);
EMBER_REGISTER_KERNEL(bitwise_not_stub, CPU, bitwise_not_kernel);
EMBER_REGISTER_KERNEL(conj_physical_stub, CPU, conj_physical_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
