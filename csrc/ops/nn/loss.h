// Loss functions (PyTorch's torch._C._nn.* / torch.* loss ops): one C++ op each, with a fused
// backward (derivatives/nn/loss*.cpp). `reduction` is PyTorch's enum:
// 0 = 'none', 1 = 'mean', 2 = 'sum'.
//
// - Pointwise losses (mse, l1, smooth_l1, huber, binary_cross_entropy[_with_logits]) run over a
//   TensorIterator (broadcasting, any strides) and reduce in fixed blocks (deterministic).
// - nll_loss reads the input through its strides (no copy); cross_entropy is one fused op
//   (log_softmax + nll, with label smoothing, class weights, ignore_index and probability
//   targets) over rows of classes.
// - ctc_loss: the alpha recursion in log space and its beta-recursion backward (nn_loss_ctc.cpp).
#pragma once
#include <cstdint>
#include <vector>
#include "dispatch/tensor_iterator.h"

#include "core/tensor.h"
#include "dispatch/stub.h"
#include "kernels/nn/loss_stubs.h"

namespace ember {
namespace native {

enum class LossReduction : int64_t { None = 0, Mean = 1, Sum = 2 };

// PointwiseLoss, pointwise_loss_name and the kernel stubs are in kernels/nn/loss_stubs.h.

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
  Tensor lse;           // each sample's logsumexp over the classes (N * S): log_softmax = x - lse
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
