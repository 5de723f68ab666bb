// View ops: each returns a tensor sharing the input's storage and version counter; none copies.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ember {

Tensor alias(const Tensor& t);  // same geometry, new TensorImpl (detach uses this)
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor view(const Tensor& t, IntArrayRef shape);      // -1 allowed once
Tensor reshape(const Tensor& t, IntArrayRef shape);   // a view when strides allow, else a copy
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor expand(const Tensor& t, IntArrayRef sizes);  // -1 keeps a dim
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, IntArrayRef dims);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
// Basic slicing t[start:end:step] along dim (step > 0); start/end are clamped like Python.
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step = 1);

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

}  // namespace ember
