// Raw tensor construction used by every layer (ops add argument handling on top).
#pragma once
#include "core/tensor.h"

namespace ember {

// Uninitialised tensor with the given geometry; strides empty means contiguous.
// Sizes are overflow-checked and the error names `op`.
Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device, const char* op);
Tensor empty_strided_tensor(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device,
                            const char* op);
// A view of t's storage with new geometry, sharing its version counter.
Tensor make_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);

}  // namespace ember
