// Public ops of ops/nn_loss.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_loss.h"

namespace ember {

using native::LossReduction;
using native::PointwiseLoss;
using native::PointwiseLossFn;
using native::PointwiseLossBackwardFn;
using native::NllGeometry;
using native::NllFn;
using native::NllBackwardFn;
using native::ClassGeometry;
using native::CrossEntropyFn;
using native::CrossEntropyBackwardFn;
using native::mse_loss;
using native::l1_loss;
using native::smooth_l1_loss;
using native::huber_loss;
using native::binary_cross_entropy;
using native::binary_cross_entropy_with_logits;
using native::nll_loss;
using native::cross_entropy;
using native::pointwise_loss_forward;
using native::pointwise_loss_backward;
using native::pointwise_loss_name;
using native::NllResult;
using native::nll_loss_forward;
using native::nll_loss_backward;
using native::CrossEntropyResult;
using native::cross_entropy_forward;
using native::cross_entropy_backward;
using native::check_nll_args;
using native::is_probability_target;

}  // namespace ember
