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
#include "kernels/nn/loss_ctc_stubs.h"

namespace ember {
namespace native {

// CtcTargets and the kernel stubs are in kernels/nn/loss_ctc_stubs.h.

// ctc_loss itself (unbatched inputs, zero_infinity and the reduction around the raw loss below)
// is a composite in api/nn/loss_ctc.cpp.

// The per-sample negative log-likelihoods (N) and log_alpha of batched log_probs (T, N, C),
// unreduced (not recorded).
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
