// Derivatives of views, copies and conversions (views.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (ops/*.cpp) calls its wrapper when recording is on (autograd::should_record); the
// wrapper re-runs the op with recording off and attaches the op's node, whose formula uses
// public ops only, so create_graph=True gives higher-order gradients.
#pragma once
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// ---- views and copies (views.cpp) ----
// Records a view op: `forward` (run with recording off) returns a view of `t`.
Tensor view_like_reshape(const char* name, const Tensor& t, const Tensor& result);
Tensor view_generic(const char* name, const Tensor& t, const Tensor& result);
Tensor view_permuted(const char* name, const Tensor& t, const Tensor& result,
                     const std::vector<int64_t>& perm);
Tensor view_expanded(const Tensor& t, const Tensor& result);
Tensor clone(const Tensor& t);
Tensor contiguous(const Tensor& t);  // CloneBackward0, as PyTorch
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy);
Tensor& fill_(Tensor& t, const Scalar& value);
Tensor& zero_(Tensor& t);

}  // namespace derivatives
}  // namespace ember
