// Public add / sub / mul / div (true division): they record their autograd node, then run the
// native op of ops/elementwise.h once.
#pragma once
#include "ops/elementwise.h"

namespace ember {

using native::IterFn;
using native::IterScalarFn;

// `out` undefined: a new tensor is returned. Defined: the result goes there (out= / in-place).
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1, const Tensor& out = {});
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1, const Tensor& out = {});
Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor div(const Tensor& a, const Tensor& b, const Tensor& out = {});  // true division

}  // namespace ember
