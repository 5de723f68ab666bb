// softmax and log_softmax (PyTorch's torch.softmax / torch.log_softmax) and their fused
// backward. The kernels see a contiguous tensor as (outer, dim_size, inner): rows of the reduced
// dim are `inner` elements apart.
#pragma once
#include "core/dtype.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/softmax_stubs.h"

namespace ember {
namespace native {

// The kernel stubs (softmax_stub, softmax_backward_stub) are in kernels/nn/softmax_stubs.h.

// `dtype` (optional): the input is cast to it first, as PyTorch's dtype= argument. Not recorded
// (the api layer records them).
Tensor softmax(const Tensor& x, int64_t dim, ScalarType dtype = ScalarType::Undefined);
Tensor log_softmax(const Tensor& x, int64_t dim, ScalarType dtype = ScalarType::Undefined);
// The gradient of softmax (log = false) or log_softmax (log = true) given the forward's output:
// one fused pass (PyTorch's _softmax_backward_data). Not recorded; the derivative
// uses it when no double-backward graph is being built.
Tensor softmax_backward_data(const Tensor& grad, const Tensor& output, int64_t dim, bool log);

namespace nn_detail {
// (outer, dim_size, inner) of a contiguous tensor of `sizes` split at `dim` (already wrapped;
// a 0-d tensor is one row of one element).
struct SplitSizes {
  int64_t outer, dim_size, inner;
};
SplitSizes split_at(IntArrayRef sizes, int64_t dim);
// A float32 / float64 tensor for the kernels: float16 / bfloat16 compute in float32.
Tensor to_compute_dtype(const Tensor& t);
}  // namespace nn_detail

}  // namespace native
}  // namespace ember
