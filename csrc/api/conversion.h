// Public ops of ops/conversion.h: tensor_to (Tensor.to() and the dtype shorthands), which records
// ToCopyBackward0 (api/conversion.cpp), and the native functions that have no node of their own.
#pragma once
#include "ops/conversion.h"

namespace ember {

using native::contains;
using native::ContainsFn;
using native::detach;
using native::empty_like;
using native::is_non_overlapping_and_dense;
using native::item;

// Tensor.to(dtype / device / other), .double(), .half(), .type(dtype), .type_as(), .cpu(), ...:
// native::to that records ToCopyBackward0 when it converts a tensor that requires grad (PyTorch's
// _to_copy; the gradient goes back in the input's dtype and device). Returns t itself, with no
// node, when dtype and device already match and copy is false, as PyTorch's to() returns self.
Tensor tensor_to(const Tensor& t, ScalarType dtype, Device device, bool copy = false,
                 bool preserve_strides = true);

// The conversion without a node: the copy constructors (ember.tensor(t), Tensor.new_tensor(t))
// use it, whose results are new leaves, as PyTorch's detach. Differentiable paths call
// tensor_to (or to_dtype, api/views.h).
using native::to;

}  // namespace ember
