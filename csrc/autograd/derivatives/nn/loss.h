// Derivatives of the loss ops (ops/nn/loss*.cpp). As for the normalisation layers (Note [Fused
// backward, composite double backward] in nn_norm.cpp): a fused kernel computes the usual
// backward; with create_graph=True the same gradient is formed from public ops.
#pragma once
#include "api/nn/loss.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// RuntimeError (as PyTorch) when `t` requires grad: `fn` is not differentiable for `arg`.
void refuse_grad(const Tensor& t, const char* fn, const char* arg);

Tensor pointwise_loss(PointwiseLoss kind, const Tensor& x, const Tensor& t, const Tensor& w,
                      const Tensor& pw, int64_t reduction, double param);
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index);
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t reduction, int64_t ignore_index, double label_smoothing);
// The raw CTC loss (per-sample negative log-likelihoods) and its backward.
Tensor ctc_loss_raw(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                    IntArrayRef target_lengths, int64_t blank, bool zero_infinity);

}  // namespace derivatives
}  // namespace ember
