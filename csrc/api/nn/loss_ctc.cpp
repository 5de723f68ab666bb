// Public CTC loss: unbatched inputs, zero_infinity and the reduction around the raw per-sample
// loss (recorded when log_probs requires grad), with public ops.
#include "api/nn/loss_ctc.h"

#include <algorithm>
#include <limits>

#include "api/autocast.h"
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/nn/loss.h"
#include "autograd/variable.h"
#include "core/scalar.h"

namespace ember {

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  if (autocast::active()) {  // autocast: float32 (targets are class indices: not cast)
    const Tensor lp = autocast::to_fp32(log_probs);
    autocast::ExcludeGuard no_autocast;
    return ember::ctc_loss(lp, targets, input_lengths, target_lengths, blank, reduction,
                           zero_infinity);
  }
  EMBER_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, "[ctc_loss] ", reduction,
                " is not a valid value for reduction");
  const bool unbatched = log_probs.dim() == 2;
  const Tensor lp = unbatched ? ember::unsqueeze(log_probs, 1) : log_probs;
  const Tensor tg = unbatched ? ember::unsqueeze(targets, 0) : targets;
  Tensor nll;
  if (autograd::should_record(lp)) {
    nll = derivatives::ctc_loss_raw(lp, tg, input_lengths, target_lengths, blank, zero_infinity);
  } else {
    nll = native::ctc_loss_forward(lp, tg, input_lengths, target_lengths, blank).nll;
  }
  if (zero_infinity) {
    const Tensor inf = scalar_tensor(Scalar(std::numeric_limits<double>::infinity()), nll.dtype());
    nll = ember::where(ember::eq(nll, inf), scalar_tensor(Scalar(0.0), nll.dtype()), nll);
  }
  if (reduction == 1) {
    // Each loss is divided by its target length (at least 1).
    Tensor lengths = ember::empty({static_cast<int64_t>(target_lengths.size())},
                                  TensorOptions(ScalarType::Int64));
    int64_t* len = lengths.data<int64_t>();
    for (size_t b = 0; b < target_lengths.size(); ++b) {
      len[b] = std::max<int64_t>(target_lengths[b], 1);
    }
    return ember::mean(ember::div(nll, lengths));
  }
  if (reduction == 2) return ember::sum(nll);
  return unbatched ? ember::squeeze(nll, {0}) : nll;
}

}  // namespace ember
