// Public CTC loss: ctc_loss is a composite of the recorded raw loss and public ops
// (api/nn/loss_ctc.cpp); the raw forward / backward are the native functions.
#pragma once
#include <cstdint>

#include "ops/nn/loss_ctc.h"

namespace ember {

using native::ctc_loss_backward;
using native::ctc_loss_forward;
using native::CtcBackwardFn;
using native::CtcFn;
using native::CtcResult;
using native::CtcTargets;

// log_probs (T, N, C) or unbatched (T, C); targets padded (N, S) or concatenated (sum of
// target_lengths), or (S) unbatched. reduction: 0 none, 1 mean (each loss divided by its target
// length, then the batch mean), 2 sum.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank = 0, int64_t reduction = 1,
                bool zero_infinity = false);

}  // namespace ember
