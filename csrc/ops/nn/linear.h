// Native F.linear (nn_linear.cpp): the fused GEMM form and its argument checks.
#pragma once
#include "core/tensor.h"

namespace ember {
namespace native {

// F.linear's fused form: input (*, in) @ weight (out, in)^T + bias (out), weight 2-D and bias
// undefined or 1-D (the api layer writes the other forms with matmul and add).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias);
// The checks F.linear makes before choosing a form.
void check_linear_args(const Tensor& input, const Tensor& weight);

}  // namespace native
}  // namespace ember
