// Shared plumbing for reductions over a set of dims.
//
// make_reduction() allocates the result with keepdim shape and returns an iterator whose output
// operand is that result viewed with zero strides over the reduced dims, so that a kernel sees
// "out[i] op= in[i]" and TensorIterator::for_each_reduction_safe never lets two threads write
// one output element. finish_reduction() squeezes the reduced dims when keepdim is false.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "dispatch/tensor_iterator.h"

namespace ember {

// Which dims a reduction covers: empty `dims` with all=true means every dim.
struct ReduceDims {
  std::vector<bool> mask;  // mask[d]: dim d is reduced
  bool all = false;
};
// Wraps and de-duplicates dims (RuntimeError on a repeat); nullopt or an empty list reduces
// all dims, as PyTorch's sum(dim=None) / sum(dim=[]).
ReduceDims make_reduce_dims(const Tensor& t, const std::optional<std::vector<int64_t>>& dims,
                            const char* op);

struct Reduction {
  TensorIterator iter;
  Tensor result;  // keepdim shape
};

// `in` is the (already converted) input; `out_dtype` the dtype of the result; `out` an optional
// out= tensor (resized to the result shape).
Reduction make_reduction(const Tensor& in, const ReduceDims& dims, bool keepdim,
                         ScalarType out_dtype, const char* op, const Tensor& out = {});
Tensor finish_reduction(const Reduction& r, const ReduceDims& dims, bool keepdim,
                        const Tensor& out = {});

// The result shape of reducing `sizes` over dims.
DimVector reduced_shape(IntArrayRef sizes, const ReduceDims& dims, bool keepdim);

}  // namespace ember
