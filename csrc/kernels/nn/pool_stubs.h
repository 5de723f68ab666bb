// Kernel interface of the pooling ops (internal to ops/nn/pool*.cpp and their CPU kernels).
// Tensors are contiguous planes: input (planes, in[0], in[1]), output (planes, out[0], out[1]).
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

struct PoolGeometry {
  int64_t planes = 0;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
  // average pooling only
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
};

// indices (int64, flat index into the input plane) may be undefined: values only. NaN wins.
using MaxPoolFn = void (*)(const PoolGeometry& g, const Tensor& input, const Tensor& out,
                           const Tensor& indices);
// grad_input (planes, L_in) <- sum of grad_output (planes, L_out) at indices (planes, L_out).
using MaxPoolBackwardFn = void (*)(const Tensor& grad_output, const Tensor& indices,
                                   const Tensor& grad_input);
using AvgPoolFn = void (*)(const PoolGeometry& g, const Tensor& input, const Tensor& out);
using AvgPoolBackwardFn = void (*)(const PoolGeometry& g, const Tensor& grad_output,
                                   const Tensor& grad_input);
// Adaptive pooling uses in / out only: window o covers [floor(o * in / out),
// ceil((o + 1) * in / out)).
using AdaptiveAvgPoolFn = void (*)(const PoolGeometry& g, const Tensor& input, const Tensor& out);
using AdaptiveAvgPoolBackwardFn = void (*)(const PoolGeometry& g, const Tensor& grad_output,
                                           const Tensor& grad_input);
using AdaptiveMaxPoolFn = void (*)(const PoolGeometry& g, const Tensor& input, const Tensor& out,
                                   const Tensor& indices);

EMBER_DECLARE_STUB(max_pool2d_stub, MaxPoolFn);
EMBER_DECLARE_STUB(max_pool_backward_stub, MaxPoolBackwardFn);
EMBER_DECLARE_STUB(avg_pool2d_stub, AvgPoolFn);
EMBER_DECLARE_STUB(avg_pool2d_backward_stub, AvgPoolBackwardFn);
EMBER_DECLARE_STUB(adaptive_avg_pool2d_stub, AdaptiveAvgPoolFn);
EMBER_DECLARE_STUB(adaptive_avg_pool2d_backward_stub, AdaptiveAvgPoolBackwardFn);
EMBER_DECLARE_STUB(adaptive_max_pool2d_stub, AdaptiveMaxPoolFn);

}  // namespace native
}  // namespace ember
