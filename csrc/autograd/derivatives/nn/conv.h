// Derivatives of the convolution ops (ops/nn/conv*.cpp).
//
// ConvolutionBackward0 computes its three gradients with one fused op (convolution_backward:
// oneDNN's backward primitives or col2im + GEMM). When a double backward is being built
// (create_graph=True), it uses the same gradients written as convolutions instead (public,
// recorded ops), so every order of derivative is available.
#pragma once
#include "core/tensor.h"

namespace ember {
namespace derivatives {

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups);
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

}  // namespace derivatives
}  // namespace ember
