// Linear layers and convolutions (torch.nn.functional's linear, bilinear, conv1d/2d,
// conv_transpose1d/2d, unfold/fold) and the convolution primitives under them.
//
// Every convolution ends in `convolution` (PyTorch's aten::convolution): one op, one node
// (ConvolutionBackward0) whose gradients come from one fused op, `convolution_backward`.
// float32 / bfloat16 run on oneDNN's convolution primitives; every other dtype (and any
// geometry oneDNN declines) on im2col + GEMM. See docs/design/nn-conv.md.
#pragma once
#include <array>
#include <string>
#include <tuple>

#include "core/tensor.h"

namespace ember {
namespace native {

// A convolution's padding argument: explicit values, or the strings 'same' / 'valid'.
struct ConvPadding {
  std::string mode;  // "" (explicit values), "same" or "valid"
  DimVector values;  // explicit: one value or one per spatial dim
};

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

// torch.conv1d / conv2d: batched (N, C, *) or unbatched (C, *) input; ints broadcast over the
// spatial dims (the binding expands them).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation);

// F.linear: input (*, in) @ weight (out, in)^T + bias (out); one op with one node.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias);
// F.bilinear: y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias);

// torch._C._nn.im2col / col2im (F.unfold / F.fold): input (N, C, H, W) or unbatched (C, H, W)
// -> (N, C * kh * kw, L); col2im sums the columns back into (N, C, *output_size).
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

}  // namespace native
}  // namespace ember
