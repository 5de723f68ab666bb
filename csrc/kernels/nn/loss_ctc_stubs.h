// Kernel stubs of the CTC loss (ops/nn/loss_ctc.h includes this header; the op is
// ops/nn/loss_ctc.cpp, the kernels kernels/cpu/nn/loss_ctc_kernels.cpp).
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

}  // namespace native
}  // namespace ember
