// Conversions between tensors and between tensors and scalars: to(dtype/device), empty_like with
// PyTorch's preserve_format rule, item(), membership (__contains__) and detach().
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/conversion_stubs.h"
#include "ops/creation.h"

namespace ember {
namespace native {

// contains' kernel stub is in kernels/conversion_stubs.h.

// Whether t's elements fill a block of storage exactly once in some dim order (a permutation of
// a contiguous layout, size-1 dims ignored).
bool is_non_overlapping_and_dense(const Tensor& t);

// An uninitialised tensor shaped like t. With preserve_strides, as torch.preserve_format: a t
// whose elements are dense and non-overlapping (any permutation of a contiguous layout) passes
// its strides on; any other t gets dense strides in its dim order (dense_strides_like).
Tensor empty_like(const Tensor& t, TensorOptions opts, bool preserve_strides = true);

// Tensor.to(): returns t itself when dtype and device already match and copy is false;
// otherwise a converted copy with t's layout preserved (see empty_like).
Tensor to(const Tensor& t, ScalarType dtype, Device device, bool copy = false,
          bool preserve_strides = true);

// The single element of a one-element tensor as a Python-style number: bool for bool tensors,
// int64 for integers, double for floats, complex<double> for complex.
Scalar item(const Tensor& t, const char* op = "item");

// `element in t`: whether any element of t equals element (broadcast, promoted).
bool contains(const Tensor& t, const Tensor& element);

// A new tensor sharing t's storage, geometry and version counter, outside every graph.
Tensor detach(const Tensor& t);

}  // namespace native
}  // namespace ember
