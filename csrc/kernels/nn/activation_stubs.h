// Kernel stubs of the activation ops (ops/nn/activation.h includes this header; the ops are
// ops/nn/activation.cpp, the kernels kernels/cpu/nn/activation*_kernels.cpp and
// nn_glu_prelu_kernels.cpp): one fused forward and one fused backward kernel for every
// pointwise activation, selected by `Activation`, and the glu / prelu kernels.
#pragma once
#include <cstdint>

#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

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

// The op name of an activation in messages (PyTorch's function name).
inline const char* activation_name(Activation act) {
  switch (act) {
    case Activation::Relu:
      return "relu";
    case Activation::Threshold:
      return "threshold";
    case Activation::Hardtanh:
      return "hardtanh";
    case Activation::LeakyRelu:
      return "leaky_relu";
    case Activation::Elu:
      return "elu";
    case Activation::Celu:
      return "celu";
    case Activation::Gelu:
      return "gelu";
    case Activation::GeluTanh:
      return "gelu";
    case Activation::Silu:
      return "silu";
    case Activation::Mish:
      return "mish";
    case Activation::Hardsigmoid:
      return "hardsigmoid";
    case Activation::Hardswish:
      return "hardswish";
    case Activation::Softplus:
      return "softplus";
    case Activation::LogSigmoid:
      return "log_sigmoid";
    case Activation::Softshrink:
      return "softshrink";
    case Activation::Hardshrink:
      return "hardshrink";
  }
  return "activation";
}

// iter operands: out, x (forward) or out, grad, x (backward: out = grad * f'(x)).
using ActivationFn = void (*)(TensorIterator& iter, Activation act, const ActivationArgs& args);
EMBER_DECLARE_STUB(activation_stub, ActivationFn);
EMBER_DECLARE_STUB(activation_backward_stub, ActivationFn);

// glu kernels: operands out, a, b (forward); out_a, out_b, grad, a, b (backward).
using IterFn2 = void (*)(TensorIterator& iter);
EMBER_DECLARE_STUB(glu_stub, IterFn2);
EMBER_DECLARE_STUB(glu_backward_stub, IterFn2);
// prelu kernels: operands out, x, w (forward); grad_x, grad_w_elementwise, grad, x, w (backward).
EMBER_DECLARE_STUB(prelu_stub, IterFn2);
EMBER_DECLARE_STUB(prelu_backward_stub, IterFn2);

}  // namespace native
}  // namespace ember
