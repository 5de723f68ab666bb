// Derivatives of views, copies and conversions (api/views.cpp, api/creation.cpp).
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (api/*.cpp) calls its wrapper when recording is on (autograd::should_record); the
// wrapper runs the native op once with recording off, or takes the view the public op computed,
// and attaches the op's node, whose formula uses public ops only, so create_graph=True gives
// higher-order gradients.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace autograd {
class FunctionNode;
}  // namespace autograd

namespace derivatives {

// ---- views and copies (views_copies.cpp) ----
// Attach a view op's node (named `name`) to `result`, the native view of `t`.
Tensor view_like_reshape(const char* name, const Tensor& t, const Tensor& result);
Tensor view_generic(const char* name, const Tensor& t, const Tensor& result);
Tensor view_permuted(const char* name, const Tensor& t, const Tensor& result,
                     const std::vector<int64_t>& perm);
Tensor view_expanded(const Tensor& t, const Tensor& result);
// Attaches a view op's node to its result (and marks views of multi-output views).
Tensor record_view_result(const std::shared_ptr<autograd::FunctionNode>& node, const Tensor& input,
                          const Tensor& result);
Tensor clone(const Tensor& t);
Tensor contiguous(const Tensor& t);  // CloneBackward0, as PyTorch
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy);
Tensor& fill_(Tensor& t, const Scalar& value);
Tensor& zero_(Tensor& t);

// ---- views with their own gradient (views_shape.cpp) ----
// `result` is the native view; dims and indices are already wrapped.
Tensor alias(const Tensor& t, const Tensor& result);
Tensor select(const Tensor& t, int64_t dim, int64_t index, const Tensor& result);
// result = t[start : start + result.size(dim) * step : step] along dim.
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t step, const Tensor& result);
Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2, const Tensor& result);
Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length, const Tensor& out);
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step, const Tensor& result);
Tensor matrix_t(const Tensor& t, const Tensor& result);  // Tensor.t(): TBackward0
Tensor& matrix_t_(Tensor& t);                            // Tensor.t_(): TBackward1
// A conjugating copy (H / mH / adjoint of a complex tensor): ConjBackward0. The forward is the
// native conjugate; `conj_fn` is the formula (a public, recording conjugate).
Tensor conj_copy(const Tensor& t, const std::function<Tensor(const Tensor&)>& conj_fn);
// Multi-output views: one node for all pieces, each piece marked so that modifying it in place
// raises (PyTorch's rule). split_views: pieces are consecutive slices along dim.
std::vector<Tensor> split_views(const char* name, const Tensor& t, int64_t dim,
                                std::vector<Tensor> pieces);
std::vector<Tensor> unbind(const Tensor& t, int64_t dim, std::vector<Tensor> pieces);

// See Note [Gradient of a strided view] (views_shape.cpp): zeros of `sizes` (g's dtype and
// device) with g copied into view_of(zeros). Differentiable with respect to g. With
// dense_strides (see dense_strides_of), the zeros take those strides.
Tensor embed_into_zeros(IntArrayRef sizes, const Tensor& g,
                        const std::function<Tensor(const Tensor&)>& view_of,
                        IntArrayRef dense_strides = {});
// t's strides when t is a permutation of a contiguous layout other than the contiguous one
// (a permuted view), else none: the gradient of a view of t then keeps t's layout.
DimVector dense_strides_of(const Tensor& t);
// A view of a multi-output view is one too (its in-place modification raises as well).
void propagate_view_creation(const Tensor& input, const Tensor& view);

}  // namespace derivatives
}  // namespace ember
