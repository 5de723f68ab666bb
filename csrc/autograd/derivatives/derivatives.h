// The derivative table: for each differentiable op, a wrapper that records the op's node and
// holds its backward formula. The public op (ops/*.cpp) calls its wrapper when recording is on
// (autograd::should_record); the wrapper runs the op again with recording off. Formulas use
// public ops only, so create_graph=True gives higher-order gradients.
// See docs/design/autograd.md.
#pragma once
#include <optional>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/reduce.h"

namespace ember {
namespace derivatives {

// ---- elementwise (arith.cpp, unary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor div(const Tensor& a, const Tensor& b, const Tensor& out);

// The float unary ops (ops/elementwise_stubs.h) that have a derivative here; digamma waits for
// polygamma.
#define EMBER_DIFFERENTIABLE_FLOAT_UNARY_OPS(_)                                                  \
  _(exp) _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p) _(sqrt) _(rsqrt) _(reciprocal) _(sin) \
  _(cos) _(tan) _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh) _(asinh) _(acosh) _(atanh)       \
  _(sigmoid) _(erf) _(erfc) _(erfinv) _(lgamma)
#define EMBER_DECLARE_DERIVATIVE_UNARY(name) Tensor name(const Tensor& a, const Tensor& out);
EMBER_DIFFERENTIABLE_FLOAT_UNARY_OPS(EMBER_DECLARE_DERIVATIVE_UNARY)
Tensor neg(const Tensor& a, const Tensor& out);
#undef EMBER_DECLARE_DERIVATIVE_UNARY
Tensor abs(const Tensor& a, const Tensor& out);

// ---- reductions (reduce.cpp) ----
Tensor sum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype, const Tensor& out);
Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out);

// ---- views and copies (views.cpp) ----
// Records a view op: `forward` (run with recording off) returns a view of `t`.
Tensor view_like_reshape(const char* name, const Tensor& t, const Tensor& result);
Tensor view_generic(const char* name, const Tensor& t, const Tensor& result);
Tensor view_permuted(const char* name, const Tensor& t, const Tensor& result,
                     const std::vector<int64_t>& perm);
Tensor view_expanded(const Tensor& t, const Tensor& result);
Tensor clone(const Tensor& t);
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy);
Tensor& fill_(Tensor& t, const Scalar& value);
Tensor& zero_(Tensor& t);

}  // namespace derivatives
}  // namespace ember
