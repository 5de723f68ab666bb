// Public ops of ops/nn_norm.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_norm.h"

namespace ember {

using native::LayerNormFn;
using native::LayerNormBackwardFn;
using native::GroupNormFn;
using native::GroupNormBackwardFn;
using native::BatchNormStatsFn;
using native::BatchNormApplyFn;
using native::BatchNormBackwardFn;
using native::layer_norm;
using native::rms_norm;
using native::group_norm;
using native::batch_norm;
using native::instance_norm;
using native::NormResult;
using native::layer_norm_forward;
using native::group_norm_forward;
using native::batch_norm_forward;
using native::NormGrads;
using native::layer_norm_backward;
using native::group_norm_backward;
using native::batch_norm_backward;

}  // namespace ember
