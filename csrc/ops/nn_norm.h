// Normalisation layers: layer_norm, rms_norm, group_norm, batch_norm, instance_norm (PyTorch's
// torch.layer_norm, ... and torch.nn.functional.*). Each public op is one kernel call forward and
// one fused kernel call backward (the derivative in autograd/derivatives/nn_norm*.cpp).
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

namespace ember {
namespace native {

// ---- kernels ---------------------------------------------------------------------------------
// x (M, N): out = (x - mean) * rstd * w + b per row (rms: out = x * rstd * w, mean undefined).
// w / b may be undefined.
using LayerNormFn = void (*)(const Tensor& out, const Tensor& mean, const Tensor& rstd,
                             const Tensor& x, const Tensor& w, const Tensor& b, int64_t M,
                             int64_t N, double eps, bool rms);
EMBER_DECLARE_STUB(layer_norm_stub, LayerNormFn);
// Gradients of layer_norm / rms_norm; an undefined dx / dw / db is not computed.
using LayerNormBackwardFn = void (*)(const Tensor& dx, const Tensor& dw, const Tensor& db,
                                     const Tensor& g, const Tensor& x, const Tensor& mean,
                                     const Tensor& rstd, const Tensor& w, int64_t M, int64_t N,
                                     bool rms);
EMBER_DECLARE_STUB(layer_norm_backward_stub, LayerNormBackwardFn);

// x (N, C, HW), G groups of C / G channels; mean / rstd (N, G).
using GroupNormFn = void (*)(const Tensor& out, const Tensor& mean, const Tensor& rstd,
                             const Tensor& x, const Tensor& w, const Tensor& b, int64_t N,
                             int64_t C, int64_t HW, int64_t G, double eps);
EMBER_DECLARE_STUB(group_norm_stub, GroupNormFn);
using GroupNormBackwardFn = void (*)(const Tensor& dx, const Tensor& dw, const Tensor& db,
                                     const Tensor& g, const Tensor& x, const Tensor& mean,
                                     const Tensor& rstd, const Tensor& w, int64_t N, int64_t C,
                                     int64_t HW, int64_t G);
EMBER_DECLARE_STUB(group_norm_backward_stub, GroupNormBackwardFn);

// x (N, C, S): per-channel mean and biased variance.
using BatchNormStatsFn = void (*)(const Tensor& mean, const Tensor& var, const Tensor& x, int64_t N,
                                  int64_t C, int64_t S);
EMBER_DECLARE_STUB(batch_norm_stats_stub, BatchNormStatsFn);
// out = (x - mean[c]) * invstd[c] * w[c] + b[c].
using BatchNormApplyFn = void (*)(const Tensor& out, const Tensor& x, const Tensor& mean,
                                  const Tensor& invstd, const Tensor& w, const Tensor& b, int64_t N,
                                  int64_t C, int64_t S);
EMBER_DECLARE_STUB(batch_norm_apply_stub, BatchNormApplyFn);
// Gradients; `train`: mean / invstd are the batch's own statistics (they depend on x).
using BatchNormBackwardFn = void (*)(const Tensor& dx, const Tensor& dw, const Tensor& db,
                                     const Tensor& g, const Tensor& x, const Tensor& mean,
                                     const Tensor& invstd, const Tensor& w, int64_t N, int64_t C,
                                     int64_t S, bool train);
EMBER_DECLARE_STUB(batch_norm_backward_stub, BatchNormBackwardFn);

// ---- public ops ------------------------------------------------------------------------------
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// eps = nullopt: the machine epsilon of x's dtype (torch.finfo(x.dtype).eps), as PyTorch.
Tensor rms_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Training: normalises with the batch statistics and updates running_mean / running_var (when
// defined) in place: r = (1 - momentum) * r + momentum * stat, with the unbiased variance.
// Evaluation: normalises with running_mean / running_var.
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps);
// batch_norm of x viewed as (1, N * C, ...), as PyTorch's instance_norm; running statistics are
// averaged over the batch.
Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps);

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
