// Normalisation layers: layer_norm, rms_norm, group_norm, batch_norm, instance_norm (PyTorch's
// torch.layer_norm, ... and torch.nn.functional.*). Each public op is one kernel call forward and
// one fused kernel call backward (the derivative in derivatives/nn/norm*.cpp; the api
// layer records the node).
//
// Kernels see float32 / float64 contiguous data (float16 / bfloat16 compute in float32, as
// PyTorch's CPU kernels do); weight / bias are converted to that dtype by the op (they are
// small); statistics (mean, rstd) are kept in that dtype.
#pragma once
#include <optional>
#include <tuple>

#include "core/small_vector.h"
#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/norm_stubs.h"

namespace ember {
namespace native {

// The kernel stubs are in kernels/nn/norm_stubs.h.

// ---- public ops ------------------------------------------------------------------------------
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// eps = nullopt: the machine epsilon of x's dtype (torch.finfo(x.dtype).eps), as PyTorch.
Tensor rms_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
// The eps rms_norm uses: the given one, else the machine epsilon of x's dtype.
double rms_norm_eps(const Tensor& x, std::optional<double> eps);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Training: normalises with the batch statistics and updates running_mean / running_var (when
// defined) in place: r = (1 - momentum) * r + momentum * stat, with the unbiased variance.
// Evaluation: normalises with running_mean / running_var.
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps);
// instance_norm (batch_norm of x viewed as (1, N * C, ...)) is a composite in api/nn/norm.cpp.

// ---- forward / backward pieces the derivatives use (not recorded) ----------------------------
struct NormResult {
  Tensor out, mean, rstd;  // mean undefined for rms_norm; shapes: (M,), (N, G) or (C,)
};
NormResult layer_norm_forward(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                              const Tensor& bias, double eps, bool rms);
NormResult group_norm_forward(const Tensor& x, int64_t num_groups, const Tensor& weight,
                              const Tensor& bias, double eps);
// mean / rstd: the statistics used (the batch's when training, the running ones otherwise).
NormResult batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias,
                              const Tensor& running_mean, const Tensor& running_var, bool training,
                              double momentum, double eps);

using NormGrads = std::tuple<Tensor, Tensor, Tensor>;  // dx, dweight, dbias
// `need`: which of the three to compute.
NormGrads layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, int64_t normalized_dims,
                              bool rms, const bool need[3]);
NormGrads group_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, int64_t num_groups,
                              const bool need[3]);
NormGrads batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& invstd, const Tensor& weight, bool training,
                              const bool need[3]);

}  // namespace native
}  // namespace ember
