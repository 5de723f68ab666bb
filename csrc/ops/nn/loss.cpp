// Pointwise losses: mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
// binary_cross_entropy_with_logits. See nn_loss.h.
#include "ops/nn/loss.h"

#include "core/scalar.h"
#include "core/shape.h"
#include "dispatch/tensor_iterator.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(pointwise_loss_stub, PointwiseLossFn);
EMBER_DEFINE_STUB(pointwise_loss_backward_stub, PointwiseLossBackwardFn);

namespace {

void check_reduction(int64_t reduction, const char* op) {
  EMBER_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, "[", op, "] ", reduction,
                " is not a valid value for reduction");
}

// The dtype the kernels compute in: the inputs' common dtype, float32 for 16-bit floats.
ScalarType compute_dtype(PointwiseLoss kind, const Tensor& x, const Tensor& t, const Tensor& w,
                         const Tensor& pw, ScalarType* result) {
  const char* op = pointwise_loss_name(kind);
  ScalarType common;
  if (kind == PointwiseLoss::BCE) {
    // PyTorch requires one dtype here.
    EMBER_CHECK(t.dtype() == x.dtype(), "[", op, "] Found dtype ", dtype_name(t.dtype()),
                " but expected ", dtype_name(x.dtype()));
    EMBER_CHECK(!w.defined() || w.dtype() == x.dtype(), "[", op, "] Found dtype ",
                dtype_name(w.dtype()), " but expected ", dtype_name(x.dtype()));
    common = x.dtype();
  } else {
    common = result_type({x, t, w, pw});
  }
  EMBER_CHECK_T(NotImplementedError, is_floating(common), "[", op, "] not implemented for dtype ",
                dtype_name(common));
  *result = common;
  return common == ScalarType::Float16 || common == ScalarType::BFloat16 ? ScalarType::Float32
                                                                         : common;
}

Tensor as_dtype(const Tensor& t, ScalarType d) {
  return !t.defined() || t.dtype() == d ? t : to_dtype(t, d);
}

void check_param(PointwiseLoss kind, double param) {
  if (kind == PointwiseLoss::SmoothL1) {
    EMBER_CHECK(param >= 0,
                "[smooth_l1_loss] smooth_l1_loss does not support negative values "
                "for beta.");
  } else if (kind == PointwiseLoss::Huber) {
    EMBER_CHECK(param > 0,
                "[huber_loss] huber_loss does not support non-positive values for "
                "delta.");
  }
}

}  // namespace

Tensor pointwise_loss_forward(PointwiseLoss kind, const Tensor& x, const Tensor& t, const Tensor& w,
                              const Tensor& pw, int64_t reduction, double param) {
  const char* op = pointwise_loss_name(kind);
  check_reduction(reduction, op);
  check_param(kind, param);
  ScalarType result;
  const ScalarType ct = compute_dtype(kind, x, t, w, pw, &result);
  TensorIteratorConfig cfg;
  cfg.name(op).promote_inputs_to_common_dtype(true);
  const bool reduce = reduction != static_cast<int64_t>(LossReduction::None);
  if (!reduce) cfg.add_output(Tensor());
  cfg.add_input(as_dtype(x, ct)).add_input(as_dtype(t, ct));
  if (w.defined()) cfg.add_input(as_dtype(w, ct));
  if (pw.defined()) cfg.add_input(as_dtype(pw, ct));
  TensorIterator iter = cfg.build();
  const double sum = pointwise_loss_stub(x.device(), iter, kind, param, w.defined(), pw.defined());
  Tensor out;
  if (!reduce) {
    out = iter.output(0);
  } else {
    const double n = static_cast<double>(iter.numel());
    const bool mean = reduction == static_cast<int64_t>(LossReduction::Mean);
    out = scalar_tensor(Scalar(mean ? sum / n : sum), ct);
  }
  return as_dtype(out, result);
}

std::pair<Tensor, Tensor> pointwise_loss_backward(PointwiseLoss kind, const Tensor& g,
                                                  const Tensor& x, const Tensor& t, const Tensor& w,
                                                  const Tensor& pw, int64_t reduction, double param,
                                                  bool need_x, bool need_t) {
  if (!need_x && !need_t) return {};
  const char* op = pointwise_loss_name(kind);
  ScalarType result;
  const ScalarType ct = compute_dtype(kind, x, t, w, pw, &result);
  Tensor grad = as_dtype(g, ct);
  if (reduction == static_cast<int64_t>(LossReduction::Mean)) {
    int64_t n = 1;
    for (int64_t s : broadcast_shapes(x.sizes(), t.sizes(), op)) n *= s;
    grad = native::div(grad, wrap_scalar(Scalar(static_cast<double>(n))));
  }
  TensorIteratorConfig cfg;
  cfg.name(op).promote_inputs_to_common_dtype(true);
  if (need_x) cfg.add_output(Tensor());
  if (need_t) cfg.add_output(Tensor());
  cfg.add_input(as_dtype(x, ct)).add_input(as_dtype(t, ct)).add_input(grad);
  if (w.defined()) cfg.add_input(as_dtype(w, ct));
  if (pw.defined()) cfg.add_input(as_dtype(pw, ct));
  TensorIterator iter = cfg.build();
  pointwise_loss_backward_stub(x.device(), iter, kind, param, w.defined(), pw.defined(), need_x,
                               need_t);
  std::pair<Tensor, Tensor> r;
  int k = 0;
  if (need_x) r.first = as_dtype(iter.output(k++), x.dtype());
  if (need_t) r.second = as_dtype(iter.output(k), t.dtype());
  return r;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return pointwise_loss_forward(PointwiseLoss::MSE, input, target, {}, {}, reduction, 0.0);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  return pointwise_loss_forward(PointwiseLoss::L1, input, target, {}, {}, reduction, 0.0);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  // beta = 0 is the l1 loss (the quadratic piece vanishes), as PyTorch.
  if (beta == 0.0) return l1_loss(input, target, reduction);
  return pointwise_loss_forward(PointwiseLoss::SmoothL1, input, target, {}, {}, reduction, beta);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
  return pointwise_loss_forward(PointwiseLoss::Huber, input, target, {}, {}, reduction, delta);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            int64_t reduction) {
  return pointwise_loss_forward(PointwiseLoss::BCE, input, target, weight, {}, reduction, 0.0);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        int64_t reduction) {
  return pointwise_loss_forward(PointwiseLoss::BCEWithLogits, input, target, weight, pos_weight,
                                reduction, 0.0);
}

}  // namespace native
}  // namespace ember
