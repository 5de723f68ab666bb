// Public comparison, logical and bitwise ops of ops/compare.h (the native functions: bool or
// integer results, no autograd node) and where, which records its node.
#pragma once
#include "ops/compare.h"

namespace ember {

using native::allclose;
using native::bitwise_and;
using native::bitwise_left_shift;
using native::bitwise_or;
using native::bitwise_right_shift;
using native::bitwise_xor;
using native::eq;
using native::equal;
using native::ge;
using native::gt;
using native::invert;
using native::isclose;
using native::le;
using native::logical_and;
using native::logical_or;
using native::logical_xor;
using native::lt;
using native::ne;

// cond ? x : y with broadcasting; x and y promote as result_type(x, y). cond must be bool
// (uint8 is accepted, as PyTorch does with a deprecation warning).
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const Tensor& out = {});

}  // namespace ember
