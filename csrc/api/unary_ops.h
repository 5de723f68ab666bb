// Public ops of ops/unary_ops.h that have no node of their own (the native functions).
#pragma once
#include "ops/unary_ops.h"

namespace ember {

using native::abs;
using native::angle;
using native::square;
using native::positive;
using native::round;
using native::logit;
using native::nan_to_num;
using native::clamp;
using native::clamp_min;
using native::clamp_max;
using native::polygamma;
#define EMBER_USING_NATIVE(name) using native::name;
EMBER_FLOAT_UNARY_OPS(EMBER_USING_NATIVE)
EMBER_SAME_DTYPE_UNARY_OPS(EMBER_USING_NATIVE)
EMBER_PREDICATE_OPS(EMBER_USING_NATIVE)
#undef EMBER_USING_NATIVE

}  // namespace ember
