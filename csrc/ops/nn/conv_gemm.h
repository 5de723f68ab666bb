// The im2col + GEMM convolutions (ops/nn/conv_gemm.cpp), internal to the convolution op files:
// the fallback for every dtype and geometry the fast kernels of kernels/nn/conv_stubs.h decline.
#pragma once
#include "core/tensor.h"
#include "kernels/nn/conv_stubs.h"

namespace ember {
namespace native {

// Any dtype the GEMM takes; same contracts as the fast kernels (kernels/nn/conv_stubs.h) except
// that they always run. grad_weight is overwritten.
void conv_forward_gemm(const ConvGeometry& g, const Tensor& input, const Tensor& weight,
                       const Tensor& bias, const Tensor& output);
void conv_backward_data_gemm(const ConvGeometry& g, const Tensor& grad_output, const Tensor& weight,
                             const Tensor& grad_input);
void conv_backward_weights_gemm(const ConvGeometry& g, const Tensor& grad_output,
                                const Tensor& input, const Tensor& grad_weight);

}  // namespace native
}  // namespace ember
