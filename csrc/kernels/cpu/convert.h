// Element conversion between any two dtypes, as PyTorch's static casts: complex -> real keeps
// the real part, anything -> bool tests != 0, 16-bit floats go through float.
#pragma once
#include <type_traits>
#include "kernels/cpu/cpu_level.h"

#include "core/dtype.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_v<From>)
      return v.real() != 0 || v.imag() != 0;
    else
      return static_cast<acc_type<From>>(v) != 0;
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>)
      return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    else
      return To(static_cast<R>(static_cast<acc_type<From>>(v)), R(0));
  } else if constexpr (is_complex_v<From>) {
    return convert<To>(v.real());
  } else if constexpr (is_reduced_float_v<To>) {
    return To(static_cast<float>(static_cast<acc_type<From>>(v)));
  } else if constexpr (std::is_integral_v<To> && is_floating_v<From>) {
    // Float -> int outside the target range is undefined in C++; go through int64 like x86 does.
    auto f = static_cast<acc_type<From>>(v);
    if (!(f > -9.2233720368547758e18 && f < 9.2233720368547758e18)) return To(0);
    return static_cast<To>(static_cast<int64_t>(f));
  } else {
    return static_cast<To>(static_cast<acc_type<From>>(v));
  }
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
