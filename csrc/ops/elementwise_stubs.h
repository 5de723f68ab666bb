// Kernel stubs of the elementwise family (one per op, see dispatch/stub.h). The X-macro lists
// keep the declarations (here), the definitions (ops/elementwise_stubs.cpp) and the
// registrations (kernels/cpu/*.cpp) in step.
#pragma once
#include <optional>

#include "core/scalar.h"
#include "dispatch/stub.h"
#include "ops/elementwise.h"  // IterFn, IterScalarFn, add/mul/div stubs

namespace ember {
namespace native {

// clang-format off
// out = f(x) computed in a floating (or complex) dtype; integer inputs arrive promoted.
#define EMBER_FLOAT_UNARY_OPS(_)                                                            \
  _(exp) _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p) _(sqrt) _(rsqrt) _(reciprocal) \
  _(sin) _(cos) _(tan) _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh) _(asinh) _(acosh)  \
  _(atanh) _(sigmoid) _(erf) _(erfc) _(erfinv) _(lgamma) _(digamma)

// out = f(x) in the input's dtype (no promotion), or a bool result for the predicates.
#define EMBER_SAME_DTYPE_UNARY_OPS(_)                                                       \
  _(neg) _(sign) _(sgn) _(floor) _(ceil) _(round) _(trunc) _(frac) _(bitwise_not)        \
  _(conj_physical)
#define EMBER_PREDICATE_OPS(_)                                                              \
  _(isnan) _(isinf) _(isfinite) _(isposinf) _(isneginf) _(signbit) _(logical_not) _(isreal)

// out = f(a, b), inputs promoted to one dtype (outputs bool for comparisons and logical ops).
#define EMBER_BINARY_OPS(_)                                                                 \
  _(div_trunc) _(div_floor) _(remainder) _(fmod) _(pow) _(atan2) _(minimum) _(maximum)    \
  _(fmin) _(fmax) _(hypot) _(logaddexp) _(logaddexp2) _(xlogy) _(copysign) _(eq) _(ne)    \
  _(lt) _(le) _(gt) _(ge) _(logical_and) _(logical_or) _(logical_xor) _(bitwise_and)      \
  _(bitwise_or) _(bitwise_xor) _(lshift) _(rshift) _(float_power)
// clang-format on

#define EMBER_DECLARE_ITER_STUB(name) EMBER_DECLARE_STUB(name##_stub, IterFn);
EMBER_FLOAT_UNARY_OPS(EMBER_DECLARE_ITER_STUB)
EMBER_SAME_DTYPE_UNARY_OPS(EMBER_DECLARE_ITER_STUB)
EMBER_PREDICATE_OPS(EMBER_DECLARE_ITER_STUB)
EMBER_BINARY_OPS(EMBER_DECLARE_ITER_STUB)
#undef EMBER_DECLARE_ITER_STUB

// abs and angle: complex inputs give a real output (output dtype = to_real(input)).
EMBER_DECLARE_STUB(abs_stub, IterFn);
EMBER_DECLARE_STUB(angle_stub, IterFn);
// where(cond, x, y): operands out, x, y, cond (bool); x and y share the output's dtype.
EMBER_DECLARE_STUB(where_stub, IterFn);
// lerp: operands out, start, end, weight (all one dtype).
EMBER_DECLARE_STUB(lerp_stub, IterFn);
EMBER_DECLARE_STUB(lerp_scalar_stub, IterScalarFn);
// pow with a Python-number exponent (fast paths for 2, 0.5, -1, ...).
EMBER_DECLARE_STUB(pow_scalar_stub, IterScalarFn);
// round(x, decimals).
using RoundDecimalsFn = void (*)(TensorIterator& iter, int64_t decimals);
EMBER_DECLARE_STUB(round_decimals_stub, RoundDecimalsFn);
// polygamma(n, x) for n >= 1 (n = 0 is digamma).
using PolygammaFn = void (*)(TensorIterator& iter, int64_t n);
EMBER_DECLARE_STUB(polygamma_stub, PolygammaFn);
// logit(x, eps): eps < 0 means no clamping.
using LogitFn = void (*)(TensorIterator& iter, double eps);
EMBER_DECLARE_STUB(logit_stub, LogitFn);
// nan_to_num: replacements already resolved to finite values of the dtype by the op.
using NanToNumFn = void (*)(TensorIterator& iter, double nan, double posinf, double neginf);
EMBER_DECLARE_STUB(nan_to_num_stub, NanToNumFn);
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
