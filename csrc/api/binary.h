// Public binary (and ternary) elementwise ops of ops/binary.h: the differentiable ones record
// their autograd node, then run the native op once.
#pragma once
#include "api/elementwise.h"  // div(a, b, out): true division
#include "ops/binary.h"

namespace ember {

using native::floor_divide;  // no autograd node
using native::parse_rounding_mode;
using native::RoundingMode;

// div with rounding: integer division by zero raises RuntimeError("ZeroDivisionError").
Tensor div(const Tensor& a, const Tensor& b, RoundingMode mode, const Tensor& out = {});
Tensor remainder(const Tensor& a, const Tensor& b, const Tensor& out = {});  // sign of b
Tensor fmod(const Tensor& a, const Tensor& b, const Tensor& out = {});       // sign of a

Tensor pow(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor pow(const Tensor& a, const Scalar& exponent, const Tensor& out = {});
Tensor pow(const Scalar& base, const Tensor& b, const Tensor& out = {});
Tensor float_power(const Tensor& a, const Tensor& b, const Tensor& out = {});

Tensor atan2(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor minimum(const Tensor& a, const Tensor& b, const Tensor& out = {});  // NaN propagates
Tensor maximum(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor fmin(const Tensor& a, const Tensor& b, const Tensor& out = {});  // NaN ignored
Tensor fmax(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor hypot(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logaddexp(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor logaddexp2(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor xlogy(const Tensor& a, const Tensor& b, const Tensor& out = {});
Tensor copysign(const Tensor& a, const Tensor& b, const Tensor& out = {});
// start + weight * (end - start); start, end (and a tensor weight) must share a dtype.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out = {});
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight, const Tensor& out = {});

}  // namespace ember
