// Definitions of the elementwise kernel stubs declared in kernels/elementwise_stubs.h and
// kernels/unary_stubs.h (the float unary ones from the op table, tables/unary.def).
#include "kernels/elementwise_stubs.h"
#include "kernels/unary_stubs.h"

namespace ember {
namespace native {

#define EMBER_UNARY_OP(name, ...) EMBER_DEFINE_STUB(name##_stub, IterFn);
#include "tables/unary.def"
#undef EMBER_UNARY_OP

#define EMBER_DEFINE_ITER_STUB(name) EMBER_DEFINE_STUB(name##_stub, IterFn);
EMBER_SAME_DTYPE_UNARY_OPS(EMBER_DEFINE_ITER_STUB)
EMBER_PREDICATE_OPS(EMBER_DEFINE_ITER_STUB)
EMBER_BINARY_OPS(EMBER_DEFINE_ITER_STUB)
#undef EMBER_DEFINE_ITER_STUB

EMBER_DEFINE_STUB(abs_stub, IterFn);
EMBER_DEFINE_STUB(angle_stub, IterFn);
EMBER_DEFINE_STUB(where_stub, IterFn);
EMBER_DEFINE_STUB(lerp_stub, IterFn);
EMBER_DEFINE_STUB(lerp_scalar_stub, IterScalarFn);
EMBER_DEFINE_STUB(pow_scalar_stub, IterScalarFn);
EMBER_DEFINE_STUB(round_decimals_stub, RoundDecimalsFn);
EMBER_DEFINE_STUB(polygamma_stub, PolygammaFn);
EMBER_DEFINE_STUB(logit_stub, LogitFn);
EMBER_DEFINE_STUB(nan_to_num_stub, NanToNumFn);
EMBER_DEFINE_STUB(clamp_scalar_stub, ClampScalarFn);
EMBER_DEFINE_STUB(clamp_stub, IterFn);
EMBER_DEFINE_STUB(isclose_stub, IsCloseFn);

}  // namespace native
}  // namespace ember
