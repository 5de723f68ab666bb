// Kernel stubs of the unary elementwise ops, one per op (see dispatch/stub.h). The float ones
// come from the op table (tables/unary.def); ops/unary.cpp defines them all, and
// kernels/cpu/unary_*_kernels.cpp register their kernels.
#pragma once
#include "dispatch/stub.h"
#include "kernels/elementwise_stubs.h"  // IterFn

namespace ember {
namespace native {

// clang-format off
// out = f(x) in the input's dtype (no promotion), or a bool result for the predicates.
#define EMBER_SAME_DTYPE_UNARY_OPS(_)                                                       \
  _(neg) _(sign) _(sgn) _(floor) _(ceil) _(round) _(trunc) _(frac) _(bitwise_not)        \
  _(conj_physical)
#define EMBER_PREDICATE_OPS(_)                                                              \
  _(isnan) _(isinf) _(isfinite) _(isposinf) _(isneginf) _(signbit) _(logical_not) _(isreal)
// clang-format on

#define EMBER_UNARY_OP(name, ...) EMBER_DECLARE_STUB(name##_stub, IterFn);
#include "tables/unary.def"
#undef EMBER_UNARY_OP

#define EMBER_DECLARE_ITER_STUB(name) EMBER_DECLARE_STUB(name##_stub, IterFn);
EMBER_SAME_DTYPE_UNARY_OPS(EMBER_DECLARE_ITER_STUB)
EMBER_PREDICATE_OPS(EMBER_DECLARE_ITER_STUB)
#undef EMBER_DECLARE_ITER_STUB

// abs and angle: complex inputs give a real output (output dtype = to_real(input)).
EMBER_DECLARE_STUB(abs_stub, IterFn);
EMBER_DECLARE_STUB(angle_stub, IterFn);
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

}  // namespace native
}  // namespace ember
