// Public linear / convolution ops: convolution, linear, im2col and col2im record their node when
// an input requires grad; conv1d/2d, conv_transpose1d/2d and bilinear are composites of public
// ops (api/nn/conv.cpp); convolution_backward is the native function.
#pragma once
#include <string>

#include "ops/nn/conv.h"

namespace ember {

using native::convolution_backward;

// A convolution's padding argument: explicit values, or the strings 'same' / 'valid'.
struct ConvPadding {
  std::string mode;  // "" (explicit values), "same" or "valid"
  DimVector values;  // explicit: one value or one per spatial dim
};

// aten::convolution (see ops/nn/conv.h).
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups);

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

// torch._C._nn.im2col / col2im (see ops/nn/conv.h).
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

}  // namespace ember
