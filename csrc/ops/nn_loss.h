// Loss functions (PyTorch's torch._C._nn.* / torch.* loss ops): one C++ op each, with a fused
// backward (autograd/derivatives/nn_loss*.cpp). `reduction` is PyTorch's enum:
// 0 = 'none', 1 = 'mean', 2 = 'sum'.
//
// - Pointwise losses (mse, l1, smooth_l1, huber, binary_cross_entropy[_with_logits]) run over a
//   TensorIterator (broadcasting, any strides) and reduce in fixed blocks (deterministic).
// - nll_loss reads the input through its strides (no copy); cross_entropy is one fused op
//   (log_softmax + nll, with label smoothing, class weights, ignore_index and probability
//   targets) over rows of classes.
// - ctc_loss: the alpha recursion in log space and its beta-recursion backward (nn_loss_ctc.cpp).
#pragma once
#include "dispatch/tensor_iterator.h"
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {


enum class LossReduction : int64_t { None = 0, Mean = 1, Sum = 2 };

enum class PointwiseLoss : int { MSE, L1, SmoothL1, Huber, BCE, BCEWithLogits };

// ---- kernels ---------------------------------------------------------------------------------
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

// x, lsm: (N, C, S) contiguous (S = the product of the dims after the class dim; 1 for 2-D
// inputs); target: (N * S) int64 class indices, or (N, C, S) probabilities when prob_target.
// Writes lsm = log_softmax(x) over C and the per-sample loss (N * S); returns the total weight of
// the non-ignored samples (index targets).
struct ClassGeometry {
  int64_t N, C, S;
};
using CrossEntropyFn = void (*)(const Tensor& lsm, const Tensor& loss, double* weight_sum,
                                const Tensor& x, const Tensor& target, const Tensor& weight,
                                const ClassGeometry& geo, double label_smoothing,
                                int64_t ignore_index, bool prob_target);
EMBER_DECLARE_STUB(cross_entropy_stub, CrossEntropyFn);
// gi and, for probability targets, gt (N, C, S) (either may be undefined); grad has N * S
// elements or one, multiplied by scale.
using CrossEntropyBackwardFn = void (*)(const Tensor& gi, const Tensor& gt, const Tensor& grad,
                                        double scale, const Tensor& lsm, const Tensor& target,
                                        const Tensor& weight, const ClassGeometry& geo,
                                        double label_smoothing, int64_t ignore_index,
                                        bool prob_target);
EMBER_DECLARE_STUB(cross_entropy_backward_stub, CrossEntropyBackwardFn);

// ---- public ops ------------------------------------------------------------------------------
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1,
                      double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1,
                  double delta = 1.0);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            int64_t reduction = 1);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        int64_t reduction = 1);
// input (C), (N, C) or (N, C, d1, ...); target of class indices (int64 / uint8).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                int64_t reduction = 1, int64_t ignore_index = -100);
// target: class indices, or class probabilities of input's shape.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     int64_t reduction = 1, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

// ---- pieces the derivatives use (not recorded) -----------------------------------------------
Tensor pointwise_loss_forward(PointwiseLoss kind, const Tensor& x, const Tensor& t, const Tensor& w,
                              const Tensor& pw, int64_t reduction, double param);
// Gradients for x and t in the broadcast shape (the engine sums them to the inputs' shapes).
std::pair<Tensor, Tensor> pointwise_loss_backward(PointwiseLoss kind, const Tensor& g,
                                                  const Tensor& x, const Tensor& t, const Tensor& w,
                                                  const Tensor& pw, int64_t reduction, double param,
                                                  bool need_x, bool need_t);
const char* pointwise_loss_name(PointwiseLoss kind);

// nll_loss: the loss and the total weight (a number, for the backward of 'mean').
struct NllResult {
  Tensor loss;
  double total_weight;
};
NllResult nll_loss_forward(const Tensor& input, const Tensor& target, const Tensor& weight,
                           int64_t reduction, int64_t ignore_index);
Tensor nll_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                         const Tensor& weight, int64_t reduction, int64_t ignore_index,
                         double total_weight);

// cross_entropy: the loss plus what the backward needs.
struct CrossEntropyResult {
  Tensor loss;
  Tensor lsm;           // log_softmax (N, C, S) in the compute dtype
  Tensor target_rows;   // the target as the kernels read it: (N * S) int64 or (N, C, S)
  Tensor weight;        // (C) in the compute dtype, or undefined
  double total_weight;  // index targets: sum of the weights of the non-ignored rows
};
CrossEntropyResult cross_entropy_forward(const Tensor& input, const Tensor& target,
                                         const Tensor& weight, int64_t reduction,
                                         int64_t ignore_index, double label_smoothing);
// Gradients for input and (probability targets) target, in their shapes.
std::pair<Tensor, Tensor> cross_entropy_backward(const Tensor& grad, const Tensor& input,
                                                 const Tensor& target,
                                                 const CrossEntropyResult& saved, int64_t reduction,
                                                 int64_t ignore_index, double label_smoothing,
                                                 bool need_input, bool need_target);

// Validation shared by nll_loss and cross_entropy with class-index targets.
void check_nll_args(const Tensor& input, const Tensor& target, const Tensor& weight,
                    const char* op);
bool is_probability_target(const Tensor& input, const Tensor& target);

}  // namespace native
}  // namespace ember
