// View ops: each returns a tensor sharing the input's storage and version counter; none copies.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace ember {
namespace native {

Tensor alias(const Tensor& t);  // same geometry, new TensorImpl (detach uses this)
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
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
// narrow() as a new contiguous tensor (or written into out=, resized).
Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length,
                   const Tensor& out = {});
// Basic slicing t[start:end:step] along dim (step > 0); start/end are clamped like Python.
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step = 1);

// --- More views (views_shape.cpp): none of these copy, except mH/adjoint on complex inputs,
// which materialise the conjugate (Ember has no lazy conjugate bit). Tensor.T, Tensor.H,
// broadcast_to and broadcast_tensors are composites, public ops only (api/views.h).
Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);  // one -1 allowed
Tensor matrix_t(const Tensor& t);                                   // Tensor.t(): <= 2-D only
Tensor& matrix_t_(Tensor& t);  // Tensor.t_(): transposes t's own geometry
Tensor mT(const Tensor& t);    // Tensor.mT: swaps the last two dims (>= 2-D)
Tensor mH(const Tensor& t);    // Tensor.mH / adjoint(): conjugate of mT
Tensor adjoint(const Tensor& t);
// conj(t) of a complex t as a new tensor (what mH / adjoint / Tensor.H materialise).
Tensor conj_copy(const Tensor& t);
Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination);
// movedim's checks and its permutation: result dim i is input dim [i] (empty for a 0-d t).
DimVector movedim_permutation(const Tensor& t, IntArrayRef source, IntArrayRef destination);
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Sliding windows of `size` every `step` along `dimension`, as a new last dim.
Tensor unfold(const Tensor& t, int64_t dimension, int64_t size, int64_t step);

// --- Splitting into views (views_split.cpp); chunk, tensor_split and hsplit / vsplit / dsplit
// are composites, public ops only (api/views.h) ---
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim = 0);

// Strides for viewing (sizes, strides) as `shape`, or nullopt when no view exists (then
// `bad_dim` receives the input dim that breaks contiguity).
std::optional<DimVector> compute_view_strides(IntArrayRef sizes, IntArrayRef strides,
                                              IntArrayRef shape, int64_t* bad_dim = nullptr);

// Copies: contiguous() returns t itself when already contiguous.
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);  // preserves strides when t is dense, like PyTorch
// Converts dtype (returns t itself when nothing changes and copy is false).
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);
// dst.copy_(src): broadcasts src, converts dtype, bumps dst's version.
Tensor& copy_(Tensor& dst, const Tensor& src);

}  // namespace native
}  // namespace ember
