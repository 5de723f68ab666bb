// Kernel stubs of the elementwise ops other than the unary ones (kernels/unary_stubs.h): the
// arithmetic, binary, comparison, where / lerp / clamp / isclose stubs, one per op (see
// dispatch/stub.h). ops/*.cpp define them; kernels/cpu/*.cpp register their kernels.
#pragma once
#include <optional>

#include "core/scalar.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

using IterFn = void (*)(TensorIterator& iter);
using IterScalarFn = void (*)(TensorIterator& iter, const Scalar& s);

EMBER_DECLARE_STUB(add_stub, IterScalarFn);  // out = a + alpha * b
EMBER_DECLARE_STUB(mul_stub, IterFn);
EMBER_DECLARE_STUB(div_true_stub, IterFn);

// clang-format off
// out = f(a, b), inputs promoted to one dtype (outputs bool for comparisons and logical ops).
#define EMBER_BINARY_OPS(_)                                                                 \
  _(div_trunc) _(div_floor) _(remainder) _(fmod) _(pow) _(atan2) _(minimum) _(maximum)    \
  _(fmin) _(fmax) _(hypot) _(logaddexp) _(logaddexp2) _(xlogy) _(copysign) _(eq) _(ne)    \
  _(lt) _(le) _(gt) _(ge) _(logical_and) _(logical_or) _(logical_xor) _(bitwise_and)      \
  _(bitwise_or) _(bitwise_xor) _(lshift) _(rshift) _(float_power)
// clang-format on

#define EMBER_DECLARE_ITER_STUB(name) EMBER_DECLARE_STUB(name##_stub, IterFn);
EMBER_BINARY_OPS(EMBER_DECLARE_ITER_STUB)
#undef EMBER_DECLARE_ITER_STUB

// where(cond, x, y): operands out, x, y, cond (bool); x and y share the output's dtype.
EMBER_DECLARE_STUB(where_stub, IterFn);
// lerp: operands out, start, end, weight (all one dtype).
EMBER_DECLARE_STUB(lerp_stub, IterFn);
EMBER_DECLARE_STUB(lerp_scalar_stub, IterScalarFn);
// pow with a Python-number exponent (fast paths for 2, 0.5, -1, ...).
EMBER_DECLARE_STUB(pow_scalar_stub, IterScalarFn);
// clamp with Python-number bounds (either may be absent).
using ClampScalarFn = void (*)(TensorIterator& iter, const std::optional<Scalar>& min,
                               const std::optional<Scalar>& max);
EMBER_DECLARE_STUB(clamp_scalar_stub, ClampScalarFn);
// clamp with tensor bounds: operands out, x, min, max (all one dtype).
EMBER_DECLARE_STUB(clamp_stub, IterFn);
// isclose: operands out (bool), a, b.
using IsCloseFn = void (*)(TensorIterator& iter, double rtol, double atol, bool equal_nan);
EMBER_DECLARE_STUB(isclose_stub, IsCloseFn);

}  // namespace native
}  // namespace ember
