// Kernel stubs of the loss functions (ops/nn/loss.h includes this header; the ops are
// ops/nn/loss.cpp and nn_loss_nll.cpp, the kernels kernels/cpu/nn/loss_pointwise_kernels.cpp and
// nn_loss_nll_kernels.cpp), with the geometry structs they take.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

enum class PointwiseLoss : int { MSE, L1, SmoothL1, Huber, BCE, BCEWithLogits };

// The op name of a pointwise loss in messages (PyTorch's function name).
inline const char* pointwise_loss_name(PointwiseLoss kind) {
  switch (kind) {
    case PointwiseLoss::MSE:
      return "mse_loss";
    case PointwiseLoss::L1:
      return "l1_loss";
    case PointwiseLoss::SmoothL1:
      return "smooth_l1_loss";
    case PointwiseLoss::Huber:
      return "huber_loss";
    case PointwiseLoss::BCE:
      return "binary_cross_entropy";
    case PointwiseLoss::BCEWithLogits:
      return "binary_cross_entropy_with_logits";
  }
  return "loss";
}

// Forward over iter (inputs x, t, [w], [pw], float32 / float64): with an output, writes the
// elementwise loss; without one, returns the sum of all elements (fixed-block order).
// has_w / has_pw say whether w / pw are among the inputs.
using PointwiseLossFn = double (*)(TensorIterator& iter, PointwiseLoss kind, double param,
                                   bool has_w, bool has_pw);
EMBER_DECLARE_STUB(pointwise_loss_stub, PointwiseLossFn);
// Backward over iter (outputs [gx] [gt] as need_x / need_t say; inputs x, t, g, [w], [pw]):
// gx = g * dloss/dx, gt = g * dloss/dt.
using PointwiseLossBackwardFn = void (*)(TensorIterator& iter, PointwiseLoss kind, double param,
                                         bool has_w, bool has_pw, bool need_x, bool need_t);
EMBER_DECLARE_STUB(pointwise_loss_backward_stub, PointwiseLossBackwardFn);

// Element (n, c, s) of the input is at n * sN + c * sC + s * sS (strides in elements).
struct NllGeometry {
  int64_t N, C, S, sN, sC, sS;
};
// Rows r = n * S + s. loss (R) may be undefined (reduced forms). Returns the sum of the losses
// and the sum of the weights of the non-ignored targets. Raises IndexError for a target out of
// [0, C) that is not ignore_index.
using NllFn = void (*)(const Tensor& loss, double* loss_sum, double* weight_sum, const Tensor& x,
                       const NllGeometry& geo, const Tensor& target, const Tensor& weight,
                       int64_t ignore_index);
EMBER_DECLARE_STUB(nll_loss_stub, NllFn);
// grad_input (N, C, S) contiguous and zeroed: gi[n, t, s] = -w[t] * grad[r] * scale; grad has
// R elements or one.
using NllBackwardFn = void (*)(const Tensor& grad_input, const Tensor& grad, double scale,
                               const Tensor& target, const Tensor& weight, int64_t N, int64_t C,
                               int64_t S, int64_t ignore_index);
EMBER_DECLARE_STUB(nll_loss_backward_stub, NllBackwardFn);

// x: (N, C, S) contiguous (S = the product of the dims after the class dim; 1 for 2-D inputs);
// target: (N * S) int64 class indices, or (N, C, S) probabilities when prob_target. Writes lse
// (N * S), each sample's logsumexp over C (its log_softmax is x - lse, never stored), and the
// per-sample loss (N * S); returns the total weight of the non-ignored samples (index targets).
struct ClassGeometry {
  int64_t N, C, S;
};
using CrossEntropyFn = void (*)(const Tensor& lse, const Tensor& loss, double* weight_sum,
                                const Tensor& x, const Tensor& target, const Tensor& weight,
                                const ClassGeometry& geo, double label_smoothing,
                                int64_t ignore_index, bool prob_target);
EMBER_DECLARE_STUB(cross_entropy_stub, CrossEntropyFn);
// gi and, for probability targets, gt (N, C, S) (either may be undefined), from the forward's x
// and lse; grad has N * S elements or one, multiplied by scale.
using CrossEntropyBackwardFn = void (*)(const Tensor& gi, const Tensor& gt, const Tensor& grad,
                                        double scale, const Tensor& x, const Tensor& lse,
                                        const Tensor& target, const Tensor& weight,
                                        const ClassGeometry& geo, double label_smoothing,
                                        int64_t ignore_index, bool prob_target);
EMBER_DECLARE_STUB(cross_entropy_backward_stub, CrossEntropyBackwardFn);

}  // namespace native
}  // namespace ember
