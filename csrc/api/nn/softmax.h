// Public softmax ops: softmax and log_softmax record their node when the input requires grad
// (api/nn/softmax.cpp); softmax_backward_data is the native function.
#pragma once
#include <cstdint>

#include "ops/nn/softmax.h"

namespace ember {

using native::softmax_backward_data;
using native::SoftmaxBackwardFn;
using native::SoftmaxFn;

// `dtype` (optional): the input is cast to it first, as PyTorch's dtype= argument.
Tensor softmax(const Tensor& x, int64_t dim, ScalarType dtype = ScalarType::Undefined);
Tensor log_softmax(const Tensor& x, int64_t dim, ScalarType dtype = ScalarType::Undefined);

}  // namespace ember
