// Division with rounding and the two remainders. Integer division by zero raises
// RuntimeError("ZeroDivisionError") like PyTorch; x / -1 and x % -1 are special-cased because
// INT_MIN / -1 overflows (and traps on x86).
#include <cmath>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/elementwise_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename V>
inline void check_nonzero(V b, const char* op) {
  EMBER_CHECK(b != V(0), "[", op, "] ZeroDivisionError");
}

template <typename V>
inline V int_div_trunc(V a, V b, const char* op) {
  check_nonzero(b, op);
  if constexpr (std::is_signed_v<V>) {
    if (b == V(-1)) return wrapping_neg(a);
  }
  return V(a / b);
}

template <typename V>
inline V int_div_floor(V a, V b, const char* op) {
  check_nonzero(b, op);
  if constexpr (std::is_signed_v<V>) {
    if (b == V(-1)) return wrapping_neg(a);
    V q = V(a / b), r = V(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? V(q - 1) : q;
  } else {
    return V(a / b);
  }
}

template <typename V>
inline V int_remainder(V a, V b, const char* op) {
  check_nonzero(b, op);
  if constexpr (std::is_signed_v<V>) {
    if (b == V(-1)) return V(0);
    V r = V(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? V(r + b) : r;
  } else {
    return V(a % b);
  }
}

template <typename V>
inline V int_fmod(V a, V b, const char* op) {
  check_nonzero(b, op);
  if constexpr (std::is_signed_v<V>) {
    if (b == V(-1)) return V(0);
  }
  return V(a % b);
}

// Python's floor division for floats (PyTorch's div_floor): exact via fmod, with the quotient
// nudged to the nearest integer and the sign of zero kept.
template <typename V>
inline V float_div_floor(V a, V b) {
  if (b == 0) return a / b;
  V mod = std::fmod(a, b);
  V div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= V(1);
  if (div == 0) return std::copysign(V(0), a / b);
  V floordiv = std::floor(div);
  if (div - floordiv > V(0.5)) floordiv += V(1);
  return floordiv;
}

template <typename V>
inline V float_remainder(V a, V b) {
  V mod = std::fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
  return mod;
}

void div_trunc_kernel(TensorIterator& iter) {
  const char* op = iter.name();
  binary_kernel<kRealTypes>(iter, "div", [op](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return int_div_trunc(a, b, op);
    else
      return std::trunc(a / b);
  });
}

void div_floor_kernel(TensorIterator& iter) {
  const char* op = iter.name();
  binary_kernel<kRealTypes>(iter, op, [op](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return int_div_floor(a, b, op);
    else
      return float_div_floor(a, b);
  });
}

void remainder_kernel(TensorIterator& iter) {
  binary_kernel<kRealTypes>(iter, "remainder", [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return int_remainder(a, b, "remainder");
    else
      return float_remainder(a, b);
  });
}

void fmod_kernel(TensorIterator& iter) {
  binary_kernel<kRealTypes>(iter, "fmod", [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return int_fmod(a, b, "fmod");
    else
      return std::fmod(a, b);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(div_trunc_stub, CPU, div_trunc_kernel);
EMBER_REGISTER_KERNEL(div_floor_stub, CPU, div_floor_kernel);
EMBER_REGISTER_KERNEL(remainder_stub, CPU, remainder_kernel);
EMBER_REGISTER_KERNEL(fmod_stub, CPU, fmod_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
