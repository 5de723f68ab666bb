// Dropout ops (ops/nn_dropout.h). The kernel is in kernels/cpu/nn_dropout_kernels.cpp.
#include "ops/nn_dropout.h"

#include <cmath>

#include "autograd/derivatives/nn_dropout.h"
#include "autograd/variable.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/elementwise_common.h"
#include "ops/random.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(dropout_stub, DropoutFn);
EMBER_DEFINE_STUB(dropout_backward_stub, DropoutBackwardFn);

namespace {

void check_probability(double p) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0,
              "[dropout] dropout probability has to be between 0 and 1, "
              "but got ",
              p);
}

void check_floating(const Tensor& t, const char* op) {
  EMBER_CHECK_T(NotImplementedError, t.is_floating_point(), "[", op, "] not implemented for dtype ",
                dtype_name(t.dtype()), " (dropout needs a floating point input)");
}

}  // namespace

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out, Generator* gen) {
  const char* op = "native_dropout";
  check_probability(p);
  check_floating(input, op);
  if (autograd::should_record(input)) return derivatives::native_dropout(input, p, train, out, gen);
  const bool inplace = out.defined();
  EMBER_CHECK(!inplace || out.is_same(input), "[", op, "] out must be the input (in-place form)");
  const TensorOptions bool_opts(ScalarType::Bool, input.device());
  if (train.has_value() && !*train) {
    Tensor mask = ones(input.sizes(), bool_opts);
    return {inplace ? input : clone(input), mask};
  }
  Tensor mask = empty(input.sizes(), bool_opts);
  if (input.numel() == 0) return {inplace ? input : clone(input), mask};
  const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  const uint64_t nblocks =
      (static_cast<uint64_t>(input.numel()) + kDropoutValuesPerBlock - 1) / kDropoutValuesPerBlock;
  const PhiloxState st = generator_or_default(gen).reserve(nblocks);
  const Tensor x = contiguous(input);
  if (inplace && input.is_contiguous()) {
    dropout_stub(input.device(), input, mask, x, p, scale, st);
    input.bump_version();
    return {input, mask};
  }
  Tensor result = empty(input.sizes(), TensorOptions(input.dtype(), input.device()));
  dropout_stub(input.device(), result, mask, x, p, scale, st);
  if (inplace) {
    copy_into(input, result, op);
    return {input, mask};
  }
  return {result, mask};
}

Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  if (autograd::should_record(grad)) return derivatives::native_dropout_backward(grad, mask, scale);
  EMBER_CHECK(mask.dtype() == ScalarType::Bool,
              "[native_dropout_backward] Mask should be Bool "
              "Scalar Type ",
              dtype_name(mask.dtype()));
  auto iter =
      build_elementwise_typed("native_dropout_backward", grad.dtype(), Tensor(), {grad, mask});
  dropout_backward_stub(iter.device(), iter, scale);
  return finish_elementwise(iter, Tensor());
}

namespace {

// PyTorch's _dropout_impl for the composite forms.
Tensor dropout_impl(const Tensor& input, double p, bool train, bool feature, bool alpha,
                    bool inplace) {
  check_probability(p);
  if (p == 0.0 || !train || input.numel() == 0) return input;
  const char* op = alpha ? (feature ? "feature_alpha_dropout" : "alpha_dropout")
                         : (feature ? "feature_dropout" : "dropout");
  check_floating(input, op);
  const TensorOptions opts(input.dtype(), input.device());
  const Tensor self_out = inplace ? input : Tensor();
  if (p == 1.0) return mul(input, zeros({}, opts), self_out);
  Tensor noise;
  if (feature) {
    EMBER_CHECK(input.dim() >= 2, "[", op,
                "] Feature dropout requires at least 2 dimensions in the input");
    DimVector shape(input.dim(), 1);
    shape[0] = input.size(0);
    shape[1] = input.size(1);
    noise = empty(shape, opts);
  } else {
    noise = empty(input.sizes(), opts);
  }
  bernoulli_(noise, 1.0 - p);
  if (!alpha) {
    noise = mul(noise, wrap_scalar(Scalar(1.0 / (1.0 - p))), noise);
    return mul(input, noise, self_out);
  }
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  // b = (noise - 1) * alpha * a + alpha * a * p: the value a dropped element ends at.
  Tensor b = add(mul(add(noise, wrap_scalar(Scalar(-1.0))), wrap_scalar(Scalar(kAlpha * a))),
                 wrap_scalar(Scalar(kAlpha * a * p)));
  noise = mul(noise, wrap_scalar(Scalar(a)), noise);
  Tensor r = mul(input, noise, self_out);
  return add(r, b, 1, inplace ? r : Tensor());
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train, bool inplace) {
  check_probability(p);
  if (train && p > 0.0 && p < 1.0 && input.numel() > 0) {
    return std::get<0>(native_dropout(input, p, train, inplace ? input : Tensor()));
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

}  // namespace native
}  // namespace ember
