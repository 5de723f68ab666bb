// Activation ops: argument checks and the iterator; kernels in kernels/cpu/nn/activation*.cpp,
// derivatives in derivatives/nn/activation.cpp, the named activations in
// api/nn/activation.cpp.
#include "ops/nn/activation.h"

#include "core/shape.h"
#include "ops/creation.h"
#include "ops/elementwise_common.h"
#include "ops/quantized/quantize.h"
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
  const char* name = activation_name(act);
  if (is_quantized(x.dtype())) {  // the input's parameters kept, as PyTorch's quantized kernels
    return quantized_via_float(
        x, name, [&](const Tensor& real) { return activation(act, real, args, Tensor()); }, out);
  }
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

// ---- glu ----------------------------------------------------------------------------------------

int64_t glu_dim(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.dim() > 0, "[glu] glu does not support scalars because halving size must be even");
  const int64_t d = wrap_dim(dim, x.dim(), "glu");
  EMBER_CHECK(x.size(d) % 2 == 0, "[glu] Halving dimension must be even, but dimension ", d,
              " is size ", x.size(d));
  return d;
}

Tensor glu(const Tensor& x, int64_t dim, const Tensor& out) {
  const int64_t d = glu_dim(x, dim);
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
  auto iter =
      build_elementwise("prelu", ResultKind::Promote, Tensor(), {x, prelu_weight_view(x, weight)});
  prelu_stub(iter.device(), iter);
  return finish_elementwise(iter, Tensor());
}

DimVector prelu_weight_shape(const Tensor& x, const Tensor& weight) {
  DimVector shape(x.dim(), 1);
  if (x.dim() >= 2) shape[1] = weight.numel();
  return shape;
}

Tensor prelu_weight_view(const Tensor& x, const Tensor& weight) {
  return reshape(weight, prelu_weight_shape(x, weight));
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
