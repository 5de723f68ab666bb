// Public normalisation ops: layer_norm, rms_norm, group_norm and batch_norm record their node
// when an input requires grad, instance_norm is a composite of public ops (api/nn/norm.cpp); the
// forward / backward pieces the derivatives use are the native functions.
#pragma once
#include <optional>

#include "ops/nn/norm.h"

namespace ember {

using native::batch_norm_backward;
using native::batch_norm_forward;
using native::BatchNormApplyFn;
using native::BatchNormBackwardFn;
using native::BatchNormStatsFn;
using native::group_norm_backward;
using native::group_norm_forward;
using native::GroupNormBackwardFn;
using native::GroupNormFn;
using native::layer_norm_backward;
using native::layer_norm_forward;
using native::LayerNormBackwardFn;
using native::LayerNormFn;
using native::NormGrads;
using native::NormResult;
using native::rms_norm_eps;

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// eps = nullopt: the machine epsilon of x's dtype (torch.finfo(x.dtype).eps), as PyTorch.
Tensor rms_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Training: normalises with the batch statistics and updates running_mean / running_var (when
// defined) in place; evaluation: normalises with them (see ops/nn/norm.h).
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps);
// batch_norm of x viewed as (1, N * C, ...), as PyTorch's instance_norm; running statistics are
// averaged over the batch.
Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps);

}  // namespace ember
