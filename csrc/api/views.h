// Public view, split and copy ops (ops/views.h): each records its node here (api/views.cpp) and
// runs the native op once; Tensor.T / H / mT / mH / adjoint, movedim, broadcast_to,
// broadcast_tensors, chunk, tensor_split and hsplit / vsplit / dsplit are composites of them.
#pragma once
#include <optional>
#include <vector>

#include "ops/views.h"

namespace ember {

Tensor alias(const Tensor& t);  // same geometry, new TensorImpl (AliasBackward0)
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor view(const Tensor& t, IntArrayRef shape);     // -1 allowed once
Tensor reshape(const Tensor& t, IntArrayRef shape);  // a view when strides allow, else a copy
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor expand(const Tensor& t, IntArrayRef sizes);  // -1 keeps a dim
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, IntArrayRef dims);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);  // SliceBackward0
// narrow() as a new contiguous tensor (or written into out=, resized).
Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length,
                   const Tensor& out = {});
// Basic slicing t[start:end:step] along dim (step > 0); start/end are clamped like Python.
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step = 1);

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);  // one -1 allowed
Tensor matrix_t(const Tensor& t);                                   // Tensor.t(): <= 2-D only
Tensor& matrix_t_(Tensor& t);      // Tensor.t_(): transposes t's own geometry
Tensor numpy_T(const Tensor& t);   // Tensor.T: reverses all dims
Tensor mT(const Tensor& t);        // Tensor.mT: swaps the last two dims (>= 2-D)
Tensor matrix_H(const Tensor& t);  // Tensor.H: conjugate transpose of a 0-D or 2-D tensor
Tensor mH(const Tensor& t);        // Tensor.mH / adjoint(): conjugate of mT
Tensor adjoint(const Tensor& t);
Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination);
Tensor broadcast_to(const Tensor& t, IntArrayRef shape);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Sliding windows of `size` every `step` along `dimension`, as a new last dim.
Tensor unfold(const Tensor& t, int64_t dimension, int64_t size, int64_t step);

// ---- splitting into views ----
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split_indices(const Tensor& t, IntArrayRef indices, int64_t dim = 0);
// A 0-d int64 tensor means sections, a 1-d one indices (torch's tensor_indices_or_sections).
std::vector<Tensor> tensor_split(const Tensor& t, const Tensor& indices_or_sections,
                                 int64_t dim = 0);
// hsplit / vsplit / dsplit: `which` is 'h', 'v' or 'd'.
std::vector<Tensor> directional_split(const Tensor& t, char which, int64_t sections);
std::vector<Tensor> directional_split_indices(const Tensor& t, char which, IntArrayRef indices);

using native::compute_view_strides;

// ---- copies ----
Tensor contiguous(const Tensor& t);  // t itself when already contiguous
Tensor clone(const Tensor& t);       // preserves strides when t is dense, like PyTorch
// Converts dtype (returns t itself when nothing changes and copy is false).
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);
// dst.copy_(src): broadcasts src, converts dtype, bumps dst's version.
Tensor& copy_(Tensor& dst, const Tensor& src);

}  // namespace ember
