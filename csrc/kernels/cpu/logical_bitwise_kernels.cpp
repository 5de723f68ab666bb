// Logical and bitwise binary ops, shifts, and where.
#include <complex>
#include <limits>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/elementwise_helpers.h"
#include "kernels/elementwise_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename V>
inline bool truthy(V x) {
  return x != V(0);
}

void logical_and_kernel(TensorIterator& iter) {
  compare_kernel<kAllTypes>(iter, "logical_and",
                            [](auto a, auto b) -> bool { return truthy(a) && truthy(b); });
}

void logical_or_kernel(TensorIterator& iter) {
  compare_kernel<kAllTypes>(iter, "logical_or",
                            [](auto a, auto b) -> bool { return truthy(a) || truthy(b); });
}

void logical_xor_kernel(TensorIterator& iter) {
  compare_kernel<kAllTypes>(iter, "logical_xor",
                            [](auto a, auto b) -> bool { return truthy(a) != truthy(b); });
}

void bitwise_and_kernel(TensorIterator& iter) {
  binary_kernel<kIntegralAndBool>(iter, "bitwise_and",
                                  [](auto a, auto b) { return decltype(a)(a & b); });
}

void bitwise_or_kernel(TensorIterator& iter) {
  binary_kernel<kIntegralAndBool>(iter, "bitwise_or",
                                  [](auto a, auto b) { return decltype(a)(a | b); });
}

void bitwise_xor_kernel(TensorIterator& iter) {
  binary_kernel<kIntegralAndBool>(iter, "bitwise_xor",
                                  [](auto a, auto b) { return decltype(a)(a ^ b); });
}

template <typename V>
inline bool shift_out_of_range(V b) {
  constexpr V kBits = V(sizeof(V) * 8);
  if constexpr (std::is_signed_v<V>)
    return b < 0 || b >= kBits;
  else
    return b >= kBits;
}

// a << b in the unsigned type (no UB for negative a); shifts outside [0, bits) give 0.
void lshift_kernel(TensorIterator& iter) {
  binary_kernel<kIntegralTypes>(iter, "bitwise_left_shift", [](auto a, auto b) {
    using V = decltype(a);
    using U = std::make_unsigned_t<V>;
    if (shift_out_of_range(b)) return V(0);
    return V(static_cast<U>(static_cast<U>(a) << b));
  });
}

// a >> b: shifts outside [0, bits) give the sign fill (0 or -1 for signed, 0 for unsigned).
void rshift_kernel(TensorIterator& iter) {
  binary_kernel<kIntegralTypes>(iter, "bitwise_right_shift", [](auto a, auto b) {
    using V = decltype(a);
    if (shift_out_of_range(b)) {
      if constexpr (std::is_signed_v<V>)
        return V(a < 0 ? -1 : 0);
      else
        return V(0);
    }
    return V(a >> b);
  });
}

// Operands: out, x, y, cond.
void where_kernel(TensorIterator& iter) {
  dispatch_dtype<kAllTypes>(iter.common_dtype(), "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](T x, T y, bool c) -> T { return c ? x : y; });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(logical_and_stub, CPU, logical_and_kernel);
EMBER_REGISTER_KERNEL(logical_or_stub, CPU, logical_or_kernel);
EMBER_REGISTER_KERNEL(logical_xor_stub, CPU, logical_xor_kernel);
EMBER_REGISTER_KERNEL(bitwise_and_stub, CPU, bitwise_and_kernel);
EMBER_REGISTER_KERNEL(bitwise_or_stub, CPU, bitwise_or_kernel);
EMBER_REGISTER_KERNEL(bitwise_xor_stub, CPU, bitwise_xor_kernel);
EMBER_REGISTER_KERNEL(lshift_stub, CPU, lshift_kernel);
EMBER_REGISTER_KERNEL(rshift_stub, CPU, rshift_kernel);
EMBER_REGISTER_KERNEL(where_stub, CPU, where_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
