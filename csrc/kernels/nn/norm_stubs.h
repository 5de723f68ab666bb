// Kernel stubs of the normalisation layers (ops/nn/norm.h includes this header; the ops are
// ops/nn/norm*.cpp, the kernels kernels/cpu/nn/norm_kernels.cpp and nn_batch_norm_kernels.cpp).
// Kernels see float32 / float64 contiguous data; statistics (mean, rstd) are kept in that dtype.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

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

}  // namespace native
}  // namespace ember
