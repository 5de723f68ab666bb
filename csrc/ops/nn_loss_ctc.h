// The Connectionist Temporal Classification loss (Graves et al. 2006), as PyTorch's ctc_loss:
// the forward (alpha) recursion in log space per sample, and the backward with the beta
// recursion. The gradient with respect to log_probs is PyTorch's: exp(log_probs) * g minus the
// alpha-beta term, i.e. the gradient of the loss through a log_softmax that produced log_probs
// (the exp term vanishes after log_softmax's backward); gradcheck it through log_softmax.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// The targets as the kernels read them: contiguous int64, sample b's labels at
// data[offsets[b] + k], k < target_lengths[b].
struct CtcTargets {
  Tensor data;
  std::vector<int64_t> offsets;
  int64_t max_length = 0;
};

// log_probs (T, N, C) contiguous float32 / float64; nll (N); log_alpha (N, T, 2 * S + 1).
using CtcFn = void (*)(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs,
                       const CtcTargets& targets, const std::vector<int64_t>& input_lengths,
                       const std::vector<int64_t>& target_lengths, int64_t blank);
EMBER_DECLARE_STUB(ctc_loss_stub, CtcFn);
// grad (T, N, C) from grad_out (N).
using CtcBackwardFn = void (*)(const Tensor& grad, const Tensor& grad_out, const Tensor& log_probs,
                               const CtcTargets& targets, const std::vector<int64_t>& input_lengths,
                               const std::vector<int64_t>& target_lengths, const Tensor& nll,
                               const Tensor& log_alpha, int64_t blank, bool zero_infinity);
EMBER_DECLARE_STUB(ctc_loss_backward_stub, CtcBackwardFn);

// log_probs (T, N, C) or unbatched (T, C); targets padded (N, S) or concatenated (sum of
// target_lengths), or (S) unbatched. reduction: 0 none, 1 mean (each loss divided by its target
// length, then the batch mean), 2 sum.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank = 0, int64_t reduction = 1,
                bool zero_infinity = false);

// The per-sample negative log-likelihoods (N) and log_alpha, unreduced (not recorded).
struct CtcResult {
  Tensor nll, log_alpha;
  CtcTargets targets;
};
CtcResult ctc_loss_forward(const Tensor& log_probs, const Tensor& targets,
                           IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank);
Tensor ctc_loss_backward(const Tensor& grad_out, const Tensor& log_probs, const CtcResult& saved,
                         IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank,
                         bool zero_infinity);

}  // namespace native
}  // namespace ember
