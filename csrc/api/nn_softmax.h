// Public ops of ops/nn_softmax.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_softmax.h"

namespace ember {

using native::SoftmaxFn;
using native::SoftmaxBackwardFn;
using native::softmax;
using native::log_softmax;
using native::softmax_backward_data;

}  // namespace ember
