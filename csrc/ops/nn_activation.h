// Pointwise activation functions of torch.nn.functional (relu, gelu, elu, softplus, ...), glu
// and prelu. Each pointwise activation is one fused kernel forward and one fused kernel backward
// (grad * f'(x)), selected by `Activation` so that a single stub pair serves the whole family.
//
// Every op takes an optional `out`: undefined returns a new tensor, the input itself is the
// in-place form (relu_, elu_, ...), any other tensor is out=.
#pragma once
#include "dispatch/tensor_iterator.h"
#include <cstdint>
#include <string>
#include <tuple>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {


enum class Activation : uint8_t {
  Relu,         // max(x, 0)
  Threshold,    // x > a ? x : b                              (a = threshold, b = value)
  Hardtanh,     // clamp(x, a, b)                             (relu6 is hardtanh(x, 0, 6))
  LeakyRelu,    // x > 0 ? x : a * x
  Elu,          // x > 0 ? b * x : a * b * (exp(c * x) - 1)   (a alpha, b scale, c input_scale)
  Celu,         // elu with (alpha, 1, 1 / alpha): its own op and node name in PyTorch
  Gelu,         // x * Phi(x)
  GeluTanh,     // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  Silu,         // x * sigmoid(x)
  Mish,         // x * tanh(softplus(x))
  Hardsigmoid,  // clamp(x / 6 + 1/2, 0, 1)
  Hardswish,    // x * hardsigmoid(x)
  Softplus,     // x * a > b ? x : log1p(exp(a x)) / a        (a beta, b threshold)
  LogSigmoid,   // -softplus(-x)
  Softshrink,   // x > a ? x - a : x < -a ? x + a : 0
  Hardshrink,   // |x| > a ? x : 0
};

// The scalar parameters of an activation (meaning per Activation above).
struct ActivationArgs {
  double a = 0, b = 0, c = 0;
};

const char* activation_name(Activation act);
// Whether f' is piecewise constant (relu, hardtanh, ...): the second derivative is zero, so the
// backward needs no graph of its own through x.
bool is_piecewise_linear(Activation act);

// iter operands: out, x (forward) or out, grad, x (backward: out = grad * f'(x)).
using ActivationFn = void (*)(TensorIterator& iter, Activation act, const ActivationArgs& args);
EMBER_DECLARE_STUB(activation_stub, ActivationFn);
EMBER_DECLARE_STUB(activation_backward_stub, ActivationFn);

// The generic forms (records its node when x requires grad).
Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args,
                  const Tensor& out = {});
// grad * f'(x) by the fused backward kernel; not recorded (see Note [Activation double backward]
// in autograd/derivatives/nn_activation.cpp). relu is given its result instead of x.
Tensor activation_backward(Activation act, const Tensor& grad, const Tensor& x,
                           const ActivationArgs& args);

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

// glu(x, dim) = a * sigmoid(b) with (a, b) the two halves of x along dim.
Tensor glu(const Tensor& x, int64_t dim = -1, const Tensor& out = {});
// grad of glu with respect to x (one fused kernel), not recorded.
Tensor glu_backward(const Tensor& grad, const Tensor& x, int64_t dim);

// prelu(x, weight): x > 0 ? x : w * x, weight of one element or one per channel (dim 1).
Tensor prelu(const Tensor& x, const Tensor& weight);
// The weight reshaped to broadcast against x: (1, C, 1, ..., 1) for inputs of 2 or more dims.
Tensor prelu_weight_view(const Tensor& x, const Tensor& weight);
// (grad_x, grad_weight) by one fused kernel and a sum; not recorded.
std::tuple<Tensor, Tensor> prelu_backward(const Tensor& grad, const Tensor& x,
                                          const Tensor& weight);

// glu kernels: operands out, a, b (forward); out_a, out_b, grad, a, b (backward).
using IterFn2 = void (*)(TensorIterator& iter);
EMBER_DECLARE_STUB(glu_stub, IterFn2);
EMBER_DECLARE_STUB(glu_backward_stub, IterFn2);
// prelu kernels: operands out, x, w (forward); grad_x, grad_w_elementwise, grad, x, w (backward).
EMBER_DECLARE_STUB(prelu_stub, IterFn2);
EMBER_DECLARE_STUB(prelu_backward_stub, IterFn2);

}  // namespace native
}  // namespace ember
