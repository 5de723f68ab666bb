// Native F.linear (nn_linear.cpp): the fused GEMM form and its argument checks.
#pragma once
#include "core/tensor.h"
#include "kernels/gemm_stubs.h"

namespace ember {
namespace native {

// F.linear's fused form: input (*, in) @ weight (out, in)^T + bias (out), weight 2-D and bias
// undefined or 1-D (the api layer writes the other forms with matmul and add).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias);
// The checks F.linear makes before choosing a form.
void check_linear_args(const Tensor& input, const Tensor& weight);
// out (rows, out) = x (rows, in) @ w (out, in)^T with `epilogue` (bias, activation, residual)
// fused, as one GEMM (gemm_epilogue_stub). x and w need unit column strides, out contiguous.
void linear_epilogue_into(const Tensor& out, const Tensor& x, const Tensor& w,
                          const GemmEpilogue& epilogue);

}  // namespace native
}  // namespace ember
