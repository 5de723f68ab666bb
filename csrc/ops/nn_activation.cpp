// Activation ops: argument checks and the iterator; kernels in kernels/cpu/nn_activation*.cpp,
// derivatives in autograd/derivatives/nn_activation.cpp.
#include "ops/nn_activation.h"

#include <cmath>
#include <limits>

#include "autograd/derivatives/nn_activation.h"
#include "autograd/variable.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/elementwise_common.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(activation_stub, ActivationFn);
EMBER_DEFINE_STUB(activation_backward_stub, ActivationFn);
EMBER_DEFINE_STUB(glu_stub, IterFn2);
EMBER_DEFINE_STUB(glu_backward_stub, IterFn2);
EMBER_DEFINE_STUB(prelu_stub, IterFn2);
EMBER_DEFINE_STUB(prelu_backward_stub, IterFn2);

const char* activation_name(Activation act) {
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

bool is_piecewise_linear(Activation act) {
  switch (act) {
    case Activation::Relu:
    case Activation::Threshold:
    case Activation::Hardtanh:
    case Activation::LeakyRelu:
    case Activation::Hardsigmoid:
    case Activation::Softshrink:
    case Activation::Hardshrink:
      return true;
    default:
      return false;
  }
}

Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args, const Tensor& out) {
  if (autograd::should_record(x)) return derivatives::activation(act, x, args, out);
  const char* name = activation_name(act);
  EMBER_CHECK_T(NotImplementedError, x.dtype() != ScalarType::Bool, "[", name,
                "] Boolean inputs not supported for ", name);
  auto iter = build_elementwise(name, ResultKind::Promote, out, {x});
  activation_stub(iter.device(), iter, act, args);
  return finish_elementwise(iter, out);
}

Tensor activation_backward(Activation act, const Tensor& grad, const Tensor& x,
                           const ActivationArgs& args) {
  auto iter = build_elementwise(activation_name(act), ResultKind::Promote, Tensor(), {grad, x});
  activation_backward_stub(iter.device(), iter, act, args);
  return finish_elementwise(iter, Tensor());
}

Tensor relu(const Tensor& x, const Tensor& out) {
  return activation(Activation::Relu, x, {}, out);
}

Tensor relu6(const Tensor& x, const Tensor& out) {
  return activation(Activation::Hardtanh, x, {0.0, 6.0}, out);
}

Tensor threshold(const Tensor& x, double threshold, double value, const Tensor& out) {
  return activation(Activation::Threshold, x, {threshold, value}, out);
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val, const Tensor& out) {
  EMBER_CHECK_T(ValueError, min_val <= max_val,
                "[hardtanh] min_val cannot be greater than max_val");
  return activation(Activation::Hardtanh, x, {min_val, max_val}, out);
}

Tensor leaky_relu(const Tensor& x, double negative_slope, const Tensor& out) {
  return activation(Activation::LeakyRelu, x, {negative_slope}, out);
}

Tensor elu(const Tensor& x, double alpha, double scale, double input_scale, const Tensor& out) {
  return activation(Activation::Elu, x, {alpha, scale, input_scale}, out);
}

Tensor selu(const Tensor& x, const Tensor& out) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return activation(Activation::Elu, x, {kAlpha, kScale, 1.0}, out);
}

Tensor celu(const Tensor& x, double alpha, const Tensor& out) {
  EMBER_CHECK(alpha != 0.0, "[celu] ZeroDivisionError: alpha cannot be 0 for CELU");
  return activation(Activation::Celu, x, {alpha, 1.0, 1.0 / alpha}, out);
}

Tensor gelu(const Tensor& x, const std::string& approximate, const Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh",
              "[gelu] approximate argument must be either none or tanh.");
  return activation(approximate == "tanh" ? Activation::GeluTanh : Activation::Gelu, x, {}, out);
}

Tensor silu(const Tensor& x, const Tensor& out) {
  return activation(Activation::Silu, x, {}, out);
}

Tensor mish(const Tensor& x, const Tensor& out) {
  return activation(Activation::Mish, x, {}, out);
}

Tensor hardsigmoid(const Tensor& x, const Tensor& out) {
  return activation(Activation::Hardsigmoid, x, {}, out);
}

Tensor hardswish(const Tensor& x, const Tensor& out) {
  return activation(Activation::Hardswish, x, {}, out);
}

Tensor softplus(const Tensor& x, double beta, double threshold, const Tensor& out) {
  return activation(Activation::Softplus, x, {beta, threshold}, out);
}

Tensor log_sigmoid(const Tensor& x, const Tensor& out) {
  return activation(Activation::LogSigmoid, x, {}, out);
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
  return activation(Activation::Softshrink, x, {lambd}, out);
}

Tensor hardshrink(const Tensor& x, double lambd, const Tensor& out) {
  return activation(Activation::Hardshrink, x, {lambd}, out);
}

// ---- glu ----------------------------------------------------------------------------------------

namespace {
int64_t glu_dim(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, "[glu] glu does not support scalars because halving size must be even");
  const int64_t d = wrap_dim(dim, x.dim(), "glu");
  EMBER_CHECK(x.size(d) % 2 == 0, "[glu] Halving dimension must be even, but dimension ", d,
              " is size ", x.size(d));
  return d;
}
}  // namespace

Tensor glu(const Tensor& x, int64_t dim, const Tensor& out) {
  const int64_t d = glu_dim(x, dim);
  if (autograd::should_record(x)) return derivatives::glu(x, d, out);
  const int64_t half = x.size(d) / 2;
  auto iter = build_elementwise("glu", ResultKind::Promote, out,
                                {narrow(x, d, 0, half), narrow(x, d, half, half)});
  glu_stub(iter.device(), iter);
  return finish_elementwise(iter, out);
}

Tensor glu_backward(const Tensor& grad, const Tensor& x, int64_t dim) {
  const int64_t d = glu_dim(x, dim);
  const int64_t half = x.size(d) / 2;
  Tensor gx = empty(x.sizes(), TensorOptions(x.dtype(), x.device()));
  auto iter = TensorIteratorConfig()
                  .name("glu_backward")
                  .add_output(narrow(gx, d, 0, half))
                  .add_output(narrow(gx, d, half, half))
                  .add_input(grad)
                  .add_input(narrow(x, d, 0, half))
                  .add_input(narrow(x, d, half, half))
                  .build();
  glu_backward_stub(iter.device(), iter);
  return gx;
}

// ---- prelu --------------------------------------------------------------------------------------

Tensor prelu(const Tensor& x, const Tensor& weight) {
  const int64_t nw = weight.numel();
  if (nw != 1) {
    EMBER_CHECK(x.dim() > 0, "[prelu] Not allow zero-dim input tensor.");
    const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
    EMBER_CHECK(channels == nw,
                "[prelu] Mismatch of parameter numbers and input channel size. "
                "Found parameter numbers = ",
                nw, " and channel size = ", channels, ".");
  }
  EMBER_CHECK(weight.dim() <= 1,
              "[prelu] Expected `weight` to be a scalar or 1D tensor, but got: "
              "ndim = ",
              weight.dim());
  if (autograd::should_record(x, weight)) return derivatives::prelu(x, weight);
  auto iter =
      build_elementwise("prelu", ResultKind::Promote, Tensor(), {x, prelu_weight_view(x, weight)});
  prelu_stub(iter.device(), iter);
  return finish_elementwise(iter, Tensor());
}

Tensor prelu_weight_view(const Tensor& x, const Tensor& weight) {
  DimVector shape(x.dim(), 1);
  if (x.dim() >= 2) shape[1] = weight.numel();
  return reshape(weight, shape);
}

std::tuple<Tensor, Tensor> prelu_backward(const Tensor& grad, const Tensor& x,
                                          const Tensor& weight) {
  const Tensor w = prelu_weight_view(x, weight);
  const ScalarType t = promote_types(x.dtype(), weight.dtype());
  Tensor gx = empty(x.sizes(), TensorOptions(t, x.device()));
  Tensor gw_elem = empty(x.sizes(), TensorOptions(t, x.device()));
  auto iter = TensorIteratorConfig()
                  .name("prelu_backward")
                  .add_output(gx)
                  .add_output(gw_elem)
                  .add_input(grad)
                  .add_input(x)
                  .add_input(w)
                  .promote_inputs_to_common_dtype(true)
                  .build();
  prelu_backward_stub(iter.device(), iter);
  // The weight's gradient: summed over every dim but the channel dim.
  Tensor gw;
  if (weight.numel() == 1 || x.dim() < 2) {
    gw = reshape(sum(gw_elem), weight.sizes());
  } else {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (d != 1) dims.push_back(d);
    }
    gw = reshape(sum(gw_elem, dims), weight.sizes());
  }
  return {gx, gw};
}

}  // namespace native
}  // namespace ember
