// Shape arithmetic: overflow-checked element counts, contiguous strides, broadcasting and
// negative-dim wrapping. All errors name the op.
#pragma once
#include <cstdint>

#include "core/small_vector.h"

namespace ember {

// Product of sizes; throws RuntimeError on a negative size or on overflow of int64.
int64_t checked_numel(IntArrayRef sizes, const char* op);
// a * b, or RuntimeError naming op when it overflows int64.
int64_t checked_mul(int64_t a, int64_t b, const char* op);
// numel * itemsize as bytes, checked.
size_t checked_nbytes(int64_t numel, size_t itemsize, const char* op);

DimVector contiguous_strides(IntArrayRef sizes);
// Dense strides in the dim order of `strides` (torch.preserve_format for a tensor that is not
// dense): dims are ranked outermost-first by stride, a larger size first among equal strides,
// and a dim of stride 0 (broadcast) keeps its place relative to the others.
DimVector dense_strides_like(IntArrayRef sizes, IntArrayRef strides);
// Whether the layout covers a block of storage exactly once in some dim order (a permutation of
// a contiguous layout, size-1 dims ignored).
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);
// torch.preserve_format's strides for a copy: the layout's own when it is non-overlapping and
// dense, else dense_strides_like.
DimVector preserved_strides(IntArrayRef sizes, IntArrayRef strides);
// Whether strides describe a C-contiguous layout (size-1 dims may have any stride).
bool compute_is_contiguous(IntArrayRef sizes, IntArrayRef strides);

// Wraps a possibly negative dim into [0, ndim); ndim 0 accepts -1 and 0 (as PyTorch).
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// The broadcast shape of a and b, or RuntimeError naming both shapes.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);

// "(2, 3)" as Python prints a shape tuple; "()" for 0-d.
std::string shape_str(IntArrayRef sizes);

// Infers one -1 entry of a view/reshape target shape from numel.
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op);

}  // namespace ember
