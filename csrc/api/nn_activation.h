// Public ops of ops/nn_activation.h that have no node of their own (the native functions).
#pragma once
#include "ops/nn_activation.h"

namespace ember {

using native::Activation;
using native::ActivationArgs;
using native::activation_name;
using native::is_piecewise_linear;
using native::ActivationFn;
using native::activation;
using native::activation_backward;
using native::relu;
using native::relu6;
using native::threshold;
using native::hardtanh;
using native::leaky_relu;
using native::elu;
using native::selu;
using native::celu;
using native::gelu;
using native::silu;
using native::mish;
using native::hardsigmoid;
using native::hardswish;
using native::softplus;
using native::log_sigmoid;
using native::softshrink;
using native::hardshrink;
using native::glu;
using native::glu_backward;
using native::prelu;
using native::prelu_weight_view;
using native::prelu_backward;
using native::IterFn2;

}  // namespace ember
