// Public ops of ops/nn_dropout.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_dropout.h"

namespace ember {

using native::DropoutFn;
using native::DropoutBackwardFn;
using native::native_dropout;
using native::native_dropout_backward;
using native::dropout;
using native::feature_dropout;
using native::alpha_dropout;
using native::feature_alpha_dropout;

}  // namespace ember
