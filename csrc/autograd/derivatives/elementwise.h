// Derivatives of elementwise ops (arith.cpp, unary.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (ops/*.cpp) calls its wrapper when recording is on (autograd::should_record); the
// wrapper re-runs the op with recording off and attaches the op's node, whose formula uses
// public ops only, so create_graph=True gives higher-order gradients.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// ---- elementwise (arith.cpp, unary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor div(const Tensor& a, const Tensor& b, const Tensor& out);

// The float unary ops (ops/elementwise_stubs.h) that have a derivative here; digamma waits for
// polygamma.
#define EMBER_DIFFERENTIABLE_FLOAT_UNARY_OPS(_)                                                    \
  _(exp)                                                                                           \
  _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p) _(sqrt) _(rsqrt) _(reciprocal) _(sin) _(cos)   \
      _(tan) _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh) _(asinh) _(acosh) _(atanh) _(sigmoid) \
          _(erf) _(erfc) _(erfinv) _(lgamma)
#define EMBER_DECLARE_DERIVATIVE_UNARY(name) Tensor name(const Tensor& a, const Tensor& out);
EMBER_DIFFERENTIABLE_FLOAT_UNARY_OPS(EMBER_DECLARE_DERIVATIVE_UNARY)
Tensor neg(const Tensor& a, const Tensor& out);
#undef EMBER_DECLARE_DERIVATIVE_UNARY
Tensor abs(const Tensor& a, const Tensor& out);

}  // namespace derivatives
}  // namespace ember
