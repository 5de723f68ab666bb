// Public ops of ops/compare_ops.h that have no node of their own (the native functions).
#pragma once
#include "ops/compare_ops.h"

namespace ember {

using native::eq;
using native::ne;
using native::lt;
using native::le;
using native::gt;
using native::ge;
using native::logical_and;
using native::logical_or;
using native::logical_xor;
using native::bitwise_and;
using native::bitwise_or;
using native::bitwise_xor;
using native::bitwise_left_shift;
using native::bitwise_right_shift;
using native::invert;
using native::isclose;
using native::allclose;
using native::equal;
using native::where;

}  // namespace ember
