// Linear layers and convolutions (torch.nn.functional's linear, unfold/fold) and the convolution
// primitives under conv1d/2d and conv_transpose1d/2d (those, and bilinear, are composites in
// api/nn/conv.cpp).
//
// Every convolution ends in `convolution` (PyTorch's aten::convolution): one op, one node
// (ConvolutionBackward0) whose gradients come from one fused op, `convolution_backward`.
// float32 / bfloat16 run on oneDNN's convolution primitives; every other dtype (and any
// geometry oneDNN declines) on im2col + GEMM. See docs/design/nn-conv.md.
#pragma once
#include <array>
#include <tuple>

#include "core/tensor.h"

namespace ember {
namespace native {

// aten::convolution over 1 or 2 spatial dims: input (N, C, *spatial) (batched only), weight
// (C_out, C_in / groups, *k) or, transposed, (C_in, C_out / groups, *k). stride, padding,
// dilation and output_padding hold one value per spatial dim.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups);

// The gradients of `convolution` with respect to (input, weight, bias) for grad_output, each
// computed only when its output_mask entry is set (undefined otherwise). Not recorded: the
// derivative table calls it when no double backward is being built.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output,
                                                        const Tensor& input, const Tensor& weight,
                                                        IntArrayRef stride, IntArrayRef padding,
                                                        IntArrayRef dilation, bool transposed,
                                                        IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask);

// torch._C._nn.im2col / col2im (F.unfold / F.fold): input (N, C, H, W) or unbatched (C, H, W)
// -> (N, C * kh * kw, L); col2im sums the columns back into (N, C, *output_size).
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

}  // namespace native
}  // namespace ember
