// Public dropout ops: the recording of native_dropout and its backward, and dropout with its
// feature and alpha forms as composites (PyTorch's _dropout_impl) of public ops.
#include "api/nn/dropout.h"

#include <cmath>

#include "api/creation.h"
#include "api/elementwise.h"
#include "api/random.h"
#include "autograd/derivatives/nn/dropout.h"
#include "autograd/variable.h"

namespace ember {

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out, Generator* gen) {
  if (autograd::should_record(input)) {
    // The argument errors come before the in-place checks of the recording, as without it.
    native::check_dropout_probability(p);
    native::check_dropout_input(input, "native_dropout");
    return derivatives::native_dropout(input, p, train, out, gen);
  }
  return native::native_dropout(input, p, train, out, gen);
}

Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  if (autograd::should_record(grad)) return derivatives::native_dropout_backward(grad, mask, scale);
  return native::native_dropout_backward(grad, mask, scale);
}

namespace {

// PyTorch's _dropout_impl for the composite forms.
Tensor dropout_impl(const Tensor& input, double p, bool train, bool feature, bool alpha,
                    bool inplace) {
  native::check_dropout_probability(p);
  if (p == 0.0 || !train || input.numel() == 0) return input;
  const char* op = alpha ? (feature ? "feature_alpha_dropout" : "alpha_dropout")
                         : (feature ? "feature_dropout" : "dropout");
  native::check_dropout_input(input, op);
  const TensorOptions opts(input.dtype(), input.device());
  const Tensor self_out = inplace ? input : Tensor();
  if (p == 1.0) return ember::mul(input, ember::zeros({}, opts), self_out);
  Tensor noise;
  if (feature) {
    EMBER_CHECK(input.dim() >= 2, "[", op,
                "] Feature dropout requires at least 2 dimensions in the input");
    DimVector shape(input.dim(), 1);
    shape[0] = input.size(0);
    shape[1] = input.size(1);
    noise = ember::empty(shape, opts);
  } else {
    noise = ember::empty(input.sizes(), opts);
  }
  ember::bernoulli_(noise, 1.0 - p);
  if (!alpha) {
    noise = ember::mul(noise, wrap_scalar(Scalar(1.0 / (1.0 - p))), noise);
    return ember::mul(input, noise, self_out);
  }
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  // b = (noise - 1) * alpha * a + alpha * a * p: the value a dropped element ends at.
  Tensor b = ember::add(
      ember::mul(ember::add(noise, wrap_scalar(Scalar(-1.0))), wrap_scalar(Scalar(kAlpha * a))),
      wrap_scalar(Scalar(kAlpha * a * p)));
  noise = ember::mul(noise, wrap_scalar(Scalar(a)), noise);
  Tensor r = ember::mul(input, noise, self_out);
  return ember::add(r, b, 1, inplace ? r : Tensor());
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train, bool inplace) {
  native::check_dropout_probability(p);
  if (train && p > 0.0 && p < 1.0 && input.numel() > 0) {
    return std::get<0>(ember::native_dropout(input, p, train, inplace ? input : Tensor()));
  }
  return dropout_impl(input, p, train, false, false, inplace);
}

Tensor feature_dropout(const Tensor& input, double p, bool train, bool inplace) {
  return dropout_impl(input, p, train, true, false, inplace);
}

Tensor alpha_dropout(const Tensor& input, double p, bool train, bool inplace) {
  return dropout_impl(input, p, train, false, true, inplace);
}

Tensor feature_alpha_dropout(const Tensor& input, double p, bool train, bool inplace) {
  return dropout_impl(input, p, train, true, true, inplace);
}

}  // namespace ember
