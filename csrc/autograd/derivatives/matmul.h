// Derivatives of the matmul family and the products built on it (ops/matmul*.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (api/matmul.cpp) calls its wrapper when recording is on (autograd::should_record);
// the wrapper runs the native op once with recording off and attaches the op's node, whose
// formula uses public ops only, so create_graph=True gives higher-order gradients.
//
// Composites need no node of their own: matmul (dot/mv/mm/bmm and views, as PyTorch's), inner,
// outer/ger, tensordot, kron, einsum (views, sum, mul, bmm and a recorded diagonal).
#pragma once
#include <optional>
#include <string>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

Tensor mm(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor bmm(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor mv(const Tensor& mat, const Tensor& vec, const Tensor& out);
Tensor dot(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor vdot(const Tensor& a, const Tensor& b, const Tensor& out);
// matmul recorded as the composite of dot/mv/mm/bmm and views PyTorch records (every broadcast
// case), so each piece's node shows in the graph.
Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& out);

// `out` may be `input` (the in-place forms addmm_, ...).
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha, const Tensor& out);
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha, const Tensor& out);
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha, const Tensor& out);
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha, const Tensor& out);

// dim: the wrapped dim of the broadcast shape.
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim, const Tensor& out);
Tensor cdist(const Tensor& x1, const Tensor& x2, double p,
             const std::optional<std::string>& compute_mode);

// Raises PyTorch's error for out= on an op whose inputs require grad (a composite op calls it
// before computing into `out`).
void refuse_out(const Tensor& out, const Tensor& a, const Tensor& b, const char* op);

}  // namespace derivatives
}  // namespace ember
