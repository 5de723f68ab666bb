// Kernel stubs of softmax and log_softmax (ops/nn/softmax.h includes this header; the ops are
// ops/nn/softmax.cpp, the kernels kernels/cpu/nn/softmax_kernels.cpp). The kernels see a
// contiguous tensor as (outer, dim_size, inner): rows of the reduced dim are `inner` elements
// apart.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// out = softmax(in) or log_softmax(in) along the middle dim; float32/float64, contiguous.
using SoftmaxFn = void (*)(const Tensor& out, const Tensor& in, int64_t outer, int64_t dim_size,
                           int64_t inner, bool log);
EMBER_DECLARE_STUB(softmax_stub, SoftmaxFn);
// grad_in = out * (grad - sum(grad * out))  (softmax)
// grad_in = grad - exp(out) * sum(grad)     (log_softmax), sums along the middle dim.
using SoftmaxBackwardFn = void (*)(const Tensor& grad_in, const Tensor& grad, const Tensor& out,
                                   int64_t outer, int64_t dim_size, int64_t inner, bool log);
EMBER_DECLARE_STUB(softmax_backward_stub, SoftmaxBackwardFn);

}  // namespace native
}  // namespace ember
