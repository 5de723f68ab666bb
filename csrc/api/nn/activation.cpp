// Public activation ops: the named activations as forms of `activation` (with their argument
// checks), and the recording of activation, glu and prelu.
#include "api/nn/activation.h"

#include <limits>

#include "api/autocast.h"
#include "api/views.h"
#include "autograd/derivatives/nn/activation.h"
#include "autograd/variable.h"

namespace ember {

Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args, const Tensor& out) {
  if (autograd::should_record(x)) return derivatives::activation(act, x, args, out);
  return native::activation(act, x, args, out);
}

Tensor relu(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::Relu, x, {}, out);
}

Tensor relu6(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::Hardtanh, x, {0.0, 6.0}, out);
}

Tensor threshold(const Tensor& x, double threshold, double value, const Tensor& out) {
  return ember::activation(Activation::Threshold, x, {threshold, value}, out);
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val, const Tensor& out) {
  EMBER_CHECK_T(ValueError, min_val <= max_val,
                "[hardtanh] min_val cannot be greater than max_val");
  return ember::activation(Activation::Hardtanh, x, {min_val, max_val}, out);
}

Tensor leaky_relu(const Tensor& x, double negative_slope, const Tensor& out) {
  return ember::activation(Activation::LeakyRelu, x, {negative_slope}, out);
}

Tensor elu(const Tensor& x, double alpha, double scale, double input_scale, const Tensor& out) {
  return ember::activation(Activation::Elu, x, {alpha, scale, input_scale}, out);
}

Tensor selu(const Tensor& x, const Tensor& out) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return ember::activation(Activation::Elu, x, {kAlpha, kScale, 1.0}, out);
}

Tensor celu(const Tensor& x, double alpha, const Tensor& out) {
  EMBER_CHECK(alpha != 0.0, "[celu] ZeroDivisionError: alpha cannot be 0 for CELU");
  return ember::activation(Activation::Celu, x, {alpha, 1.0, 1.0 / alpha}, out);
}

Tensor gelu(const Tensor& x, const std::string& approximate, const Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh",
              "[gelu] approximate argument must be either none or tanh.");
  return ember::activation(approximate == "tanh" ? Activation::GeluTanh : Activation::Gelu, x, {},
                           out);
}

Tensor silu(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::Silu, x, {}, out);
}

Tensor mish(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::Mish, x, {}, out);
}

Tensor hardsigmoid(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::Hardsigmoid, x, {}, out);
}

Tensor hardswish(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::Hardswish, x, {}, out);
}

Tensor softplus(const Tensor& x, double beta, double threshold, const Tensor& out) {
  return ember::activation(Activation::Softplus, x, {beta, threshold}, out);
}

Tensor log_sigmoid(const Tensor& x, const Tensor& out) {
  return ember::activation(Activation::LogSigmoid, x, {}, out);
}

namespace {
void check_lambda(const char* op, const Tensor& x, double lambd) {
  const double hi = x.dtype() == ScalarType::Float64   ? std::numeric_limits<double>::max()
                    : x.dtype() == ScalarType::Float16 ? 65504.0
                                                       : std::numeric_limits<float>::max();
  EMBER_CHECK(lambd >= 0 && lambd <= hi, "[", op, "] lambda must be in range [0, ", hi,
              "] for input dtype ", dtype_name(x.dtype()), ", but found ", lambd);
}
}  // namespace

Tensor softshrink(const Tensor& x, double lambd, const Tensor& out) {
  check_lambda("softshrink", x, lambd);
  return ember::activation(Activation::Softshrink, x, {lambd}, out);
}

Tensor hardshrink(const Tensor& x, double lambd, const Tensor& out) {
  return ember::activation(Activation::Hardshrink, x, {lambd}, out);
}

Tensor glu(const Tensor& x, int64_t dim, const Tensor& out) {
  // The node keeps the wrapped dim; a bad dim raises before the in-place / out= checks.
  if (autograd::should_record(x)) return derivatives::glu(x, native::glu_dim(x, dim), out);
  return native::glu(x, dim, out);
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  if (autocast::active()) {  // autocast: lower precision
    const Tensor x2 = autocast::lower(x), w2 = autocast::lower(weight);
    autocast::ExcludeGuard no_autocast;
    return ember::prelu(x2, w2);
  }
  if (autograd::should_record(x, weight)) return derivatives::prelu(x, weight);
  return native::prelu(x, weight);
}

Tensor prelu_weight_view(const Tensor& x, const Tensor& weight) {
  return ember::reshape(weight, native::prelu_weight_shape(x, weight));
}

}  // namespace ember
