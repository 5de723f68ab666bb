// Kernel stubs under the convolution ops and the geometry structs they take: ops/nn/conv*.cpp
// and ops/nn/fold.cpp call them, kernels/cpu/nn/conv_onednn.cpp and nn_im2col_kernels.cpp
// register them.
//
// Every convolution is described in the geometry of a *regular* 2-D convolution (1-D ones have
// a height-1 kernel); a transposed convolution is the backward-data pass of the regular
// convolution mapping its output space back to its input space (see ops/nn/conv_impl.cpp).
#pragma once
#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// input (batch, in_channels, in[0], in[1]) -> output (batch, out_channels, out[0], out[1]) with
// weight (out_channels, in_channels / groups, kernel[0], kernel[1]). Padding is pad[d] on both
// sides; out[d] never reaches past in[d] + pad[d] (PyTorch's floor), so the far side may use
// less. Dilation is PyTorch's (1 = dense).
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
};

// Fast convolution kernels (oneDNN on CPU). All tensors are contiguous with the geometry's
// shapes and one dtype; bias / grad_bias may be undefined. Each returns false, having written
// nothing, when it does not handle the dtype or geometry: the caller then runs the im2col +
// GEMM implementation (ops/nn/conv_gemm.h).
using ConvForwardFn = bool (*)(const ConvGeometry& g, const Tensor& input, const Tensor& weight,
                               const Tensor& bias, const Tensor& output);
using ConvBackwardDataFn = bool (*)(const ConvGeometry& g, const Tensor& grad_output,
                                    const Tensor& weight, const Tensor& grad_input);
// grad_bias (out_channels), when defined, receives the sum of grad_output over all but dim 1.
using ConvBackwardWeightsFn = bool (*)(const ConvGeometry& g, const Tensor& grad_output,
                                       const Tensor& input, const Tensor& grad_weight,
                                       const Tensor& grad_bias);
// Both backward passes at once (grad_input and grad_weight defined; grad_bias optional), so a
// kernel can share work between them.
using ConvBackwardFn = bool (*)(const ConvGeometry& g, const Tensor& grad_output,
                                const Tensor& input, const Tensor& weight, const Tensor& grad_input,
                                const Tensor& grad_weight, const Tensor& grad_bias);
EMBER_DECLARE_STUB(conv_fast_forward_stub, ConvForwardFn);
EMBER_DECLARE_STUB(conv_fast_backward_stub, ConvBackwardFn);
EMBER_DECLARE_STUB(conv_fast_backward_data_stub, ConvBackwardDataFn);
EMBER_DECLARE_STUB(conv_fast_backward_weights_stub, ConvBackwardWeightsFn);

// im2col / col2im over 2 spatial dims. Row (c * k0 + i) * k1 + j of the columns holds, for each
// output position (o0, o1), input[c, o0 * stride0 - pad0 + i * dil0, o1 * stride1 - pad1 +
// j * dil1] (0 outside the input).
struct Im2ColGeometry {
  int64_t channels = 0;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
};
// cols (B, channels * k0 * k1, out0 * out1) <- input (B, channels, in0, in1); both contiguous.
using Im2ColFn = void (*)(const Im2ColGeometry& g, const Tensor& input, const Tensor& cols);
// input (B, channels, in0, in1) <- the sum of the columns' entries over each input position
// (positions no column covers become 0); both contiguous.
using Col2ImFn = void (*)(const Im2ColGeometry& g, const Tensor& cols, const Tensor& input);
EMBER_DECLARE_STUB(im2col_stub, Im2ColFn);
EMBER_DECLARE_STUB(col2im_stub, Col2ImFn);

// out (N, C, L) contiguous += bias (C) broadcast over N and L (bias contiguous, same dtype).
using AddChannelBiasFn = void (*)(const Tensor& out, const Tensor& bias);
EMBER_DECLARE_STUB(add_channel_bias_stub, AddChannelBiasFn);

}  // namespace native
}  // namespace ember
