// Public linear layers: F.linear (one LinearBackward0 node, or matmul + add for a weight vector
// or a broadcast bias) and F.bilinear (a composite of recorded ops).
#pragma once
#include "core/tensor.h"
#include "ops/nn/linear.h"

namespace ember {

// F.linear: input (*, in) @ weight (out, in)^T + bias (out); one op with one node
// (LinearBackward0), except for a weight vector or a broadcast bias (matmul + add).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias);
// F.bilinear: y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias);

}  // namespace ember
