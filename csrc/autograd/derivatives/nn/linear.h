// Derivative of F.linear's fused form (ops/nn/linear.cpp): one LinearBackward0 node whose
// gradients are GEMMs written with public ops, so every order of derivative is available.
// bilinear and linear's uncommon forms are composites of recorded ops (api/nn/linear.cpp).
#pragma once
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// weight 2-D; bias undefined or 1-D.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias);

}  // namespace derivatives
}  // namespace ember
