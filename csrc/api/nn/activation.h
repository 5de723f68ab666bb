// Public activation ops: activation, the named activations, glu and prelu record their node when
// an input requires grad (api/nn/activation.cpp); the rest are the native functions.
#pragma once
#include <cstdint>
#include <string>

#include "ops/nn/activation.h"

namespace ember {

using native::Activation;
using native::activation_backward;
using native::activation_name;
using native::ActivationArgs;
using native::ActivationFn;
using native::glu_backward;
using native::is_piecewise_linear;
using native::IterFn2;
using native::prelu_backward;

Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args,
                  const Tensor& out = {});

Tensor relu(const Tensor& x, const Tensor& out = {});
Tensor relu6(const Tensor& x, const Tensor& out = {});
Tensor threshold(const Tensor& x, double threshold, double value, const Tensor& out = {});
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0,
                const Tensor& out = {});
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01, const Tensor& out = {});
Tensor elu(const Tensor& x, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0,
           const Tensor& out = {});
Tensor selu(const Tensor& x, const Tensor& out = {});
Tensor celu(const Tensor& x, double alpha = 1.0, const Tensor& out = {});
// approximate: "none" or "tanh" (ValueError-free: RuntimeError as PyTorch otherwise).
Tensor gelu(const Tensor& x, const std::string& approximate = "none", const Tensor& out = {});
Tensor silu(const Tensor& x, const Tensor& out = {});
Tensor mish(const Tensor& x, const Tensor& out = {});
Tensor hardsigmoid(const Tensor& x, const Tensor& out = {});
Tensor hardswish(const Tensor& x, const Tensor& out = {});
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0,
                const Tensor& out = {});
Tensor log_sigmoid(const Tensor& x, const Tensor& out = {});
Tensor softshrink(const Tensor& x, double lambd = 0.5, const Tensor& out = {});
Tensor hardshrink(const Tensor& x, double lambd = 0.5, const Tensor& out = {});

Tensor glu(const Tensor& x, int64_t dim = -1, const Tensor& out = {});

Tensor prelu(const Tensor& x, const Tensor& weight);
// The weight reshaped to broadcast against x by a public reshape (differentiable in weight, for
// prelu's double backward).
Tensor prelu_weight_view(const Tensor& x, const Tensor& weight);

}  // namespace ember
