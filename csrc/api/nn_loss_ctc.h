// Public ops of ops/nn_loss_ctc.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_loss_ctc.h"

namespace ember {

using native::CtcTargets;
using native::CtcFn;
using native::CtcBackwardFn;
using native::ctc_loss;
using native::CtcResult;
using native::ctc_loss_forward;
using native::ctc_loss_backward;

}  // namespace ember
