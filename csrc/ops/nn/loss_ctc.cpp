// ctc_loss's raw forward and backward: validation (PyTorch's messages) and target layout. See
// nn_loss_ctc.h; the reduction is in api/nn/loss_ctc.cpp.
#include "ops/nn/loss_ctc.h"

#include <algorithm>

#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(ctc_loss_stub, CtcFn);
EMBER_DEFINE_STUB(ctc_loss_backward_stub, CtcBackwardFn);

namespace {

constexpr const char* kOp = "ctc_loss";

CtcTargets layout_targets(const Tensor& targets, const std::vector<int64_t>& tl, int64_t N) {
  CtcTargets r;
  EMBER_CHECK(!targets.is_complex() && targets.dtype() != ScalarType::Bool, "[", kOp,
              "] targets must be an integer or floating tensor, got ", dtype_name(targets.dtype()));
  r.data = contiguous(to_dtype(targets, ScalarType::Int64));
  r.offsets.resize(N);
  if (targets.dim() == 1) {
    // Concatenated targets.
    int64_t pos = 0;
    for (int64_t b = 0; b < N; ++b) {
      r.offsets[b] = pos;
      pos += tl[b];
      r.max_length = std::max(r.max_length, tl[b]);
    }
    EMBER_CHECK(targets.size(0) == pos, "[", kOp, "] Expected tensor to have size ", pos,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'");
  } else {
    EMBER_CHECK(targets.dim() == 2, "[", kOp, "] targets must be 1-D (concatenated) or 2-D ",
                "(padded), got ", targets.dim(), "-D");
    EMBER_CHECK(targets.size(0) == N, "[", kOp, "] Expected tensor to have size ", N,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'");
    const int64_t padded = targets.size(1);
    for (int64_t b = 0; b < N; ++b) {
      r.offsets[b] = b * padded;
      r.max_length = std::max(r.max_length, tl[b]);
      EMBER_CHECK(tl[b] <= padded, "[", kOp, "] Expected tensor to have size at least ", tl[b],
                  " at dimension 1, but got size ", padded, " for argument #2 'targets'");
    }
  }
  return r;
}

}  // namespace

CtcResult ctc_loss_forward(const Tensor& log_probs, const Tensor& targets,
                           IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank) {
  EMBER_CHECK(log_probs.dim() == 3, "[", kOp, "] Expected 3-dimensional tensor, but got ",
              log_probs.dim(), "-dimensional tensor for argument #1 'log_probs'");
  EMBER_CHECK_T(
      NotImplementedError,
      log_probs.dtype() == ScalarType::Float32 || log_probs.dtype() == ScalarType::Float64, "[",
      kOp, "] not implemented for dtype ", dtype_name(log_probs.dtype()));
  const int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  EMBER_CHECK(blank >= 0 && blank < C, "[", kOp, "] blank must be in label range");
  EMBER_CHECK(static_cast<int64_t>(input_lengths.size()) == N, "[", kOp,
              "] input_lengths must be of size batch_size");
  EMBER_CHECK(static_cast<int64_t>(target_lengths.size()) == N, "[", kOp,
              "] target_lengths must be of size batch_size");
  std::vector<int64_t> il = input_lengths.vec(), tl = target_lengths.vec();
  for (int64_t b = 0; b < N; ++b) {
    EMBER_CHECK(il[b] >= 0, "[", kOp,
                "] Expected input_lengths to have value at least 0, but got "
                "value ",
                il[b]);
    EMBER_CHECK(il[b] <= T, "[", kOp, "] Expected input_lengths to have value at most ", T,
                ", but got value ", il[b]);
    EMBER_CHECK(tl[b] >= 0, "[", kOp,
                "] Expected target_lengths to have value at least 0, but "
                "got value ",
                tl[b]);
  }
  CtcResult r;
  r.targets = layout_targets(targets, tl, N);
  // Every label a sample uses must be a class (PyTorch reads out of bounds here).
  const int64_t* td = r.targets.data.data<int64_t>();
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t k = 0; k < tl[b]; ++k) {
      const int64_t v = td[r.targets.offsets[b] + k];
      EMBER_CHECK_T(IndexError, v >= 0 && v < C, "[", kOp, "] target ", v, " is out of bounds for ",
                    C, " classes");
    }
  }
  Tensor lp = contiguous(log_probs);
  r.nll = empty({N}, TensorOptions(lp.dtype()));
  r.log_alpha = empty({N, T, 2 * r.targets.max_length + 1}, TensorOptions(lp.dtype()));
  ctc_loss_stub(lp.device(), r.nll, r.log_alpha, lp, r.targets, il, tl, blank);
  return r;
}

Tensor ctc_loss_backward(const Tensor& grad_out, const Tensor& log_probs, const CtcResult& saved,
                         IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank,
                         bool zero_infinity) {
  Tensor lp = contiguous(log_probs);
  Tensor g = contiguous(grad_out.dtype() == lp.dtype() ? grad_out : to_dtype(grad_out, lp.dtype()));
  Tensor grad = empty(lp.sizes(), TensorOptions(lp.dtype()));
  ctc_loss_backward_stub(lp.device(), grad, g, lp, saved.targets, input_lengths.vec(),
                         target_lengths.vec(), saved.nll, saved.log_alpha, blank, zero_infinity);
  return grad;
}

}  // namespace native
}  // namespace ember
