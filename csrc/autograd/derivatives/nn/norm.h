// Derivatives of the normalisation layers (ops/nn/norm*.cpp). First-order backward is one
// fused kernel (layer_norm_backward, ...); when a graph of the backward is being built
// (create_graph=True), the same formulas are evaluated with public ops so that they are
// differentiable again.
#pragma once
#include "core/dtype.h"
#include "core/small_vector.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// layer_norm, or rms_norm when `rms` (bias undefined).
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, bool rms);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps);
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps);

}  // namespace derivatives
}  // namespace ember
