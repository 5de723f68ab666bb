// Derivatives of the pointwise losses (mse, l1, smooth_l1, huber, binary_cross_entropy,
// binary_cross_entropy_with_logits). See Note [Fused backward, composite double backward] in
// nn_norm.cpp.
#include "autograd/derivatives/nn/loss.h"

#include "api/compare.h"
#include "api/elementwise.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/record.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

void refuse_grad(const Tensor& t, const char* fn, const char* arg) {
  EMBER_CHECK(!t.defined() || !autograd::requires_grad(t), "[", fn, "] The function '", fn,
              "' is not differentiable with respect to argument '", arg,
              "'. This input cannot have requires_grad True.");
}

namespace {

const char* node_name(PointwiseLoss kind) {
  switch (kind) {
    case PointwiseLoss::MSE:
      return "MseLossBackward0";
    case PointwiseLoss::L1:
      return "L1LossBackward0";
    case PointwiseLoss::SmoothL1:
      return "SmoothL1LossBackward0";
    case PointwiseLoss::Huber:
      return "HuberLossBackward0";
    case PointwiseLoss::BCE:
      return "BinaryCrossEntropyBackward0";
    case PointwiseLoss::BCEWithLogits:
      break;
  }
  return "BinaryCrossEntropyWithLogitsBackward0";
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).
Tensor log_sigmoid(const Tensor& x) {
  return ember::sub(ember::clamp_max(x, Scalar(0)),
                    ember::log1p(ember::exp(ember::neg(ember::abs(x)))));
}

// (d loss / dx, d loss / dt) with public ops (the composite path).
std::pair<Tensor, Tensor> partials(PointwiseLoss kind, const Tensor& x, const Tensor& t,
                                   const Tensor& w, const Tensor& pw, double param) {
  const Tensor d = ember::sub(x, t);
  Tensor dx, dt;
  switch (kind) {
    case PointwiseLoss::MSE:
      dx = ember::mul(num(2), d);
      break;
    case PointwiseLoss::L1:
      dx = ember::sgn(d);
      break;
    case PointwiseLoss::SmoothL1:
      dx = ember::where(ember::lt(ember::abs(d), num(param)), ember::div(d, num(param)),
                        ember::sgn(d));
      break;
    case PointwiseLoss::Huber:
      dx = ember::clamp(d, Scalar(-param), Scalar(param));
      break;
    case PointwiseLoss::BCE:
      dx = ember::div(d, ember::clamp_min(ember::mul(ember::sub(num(1), x), x), Scalar(1e-12)));
      dt = ember::sub(ember::log1p(ember::neg(x)), ember::log(x));
      break;
    case PointwiseLoss::BCEWithLogits: {
      const Tensor pt = pw.defined() ? ember::mul(pw, t) : t;
      dx = ember::sub(ember::mul(ember::add(ember::sub(pt, t), num(1)), ember::sigmoid(x)), pt);
      dt = pw.defined() ? ember::sub(log_sigmoid(ember::neg(x)), ember::mul(pw, log_sigmoid(x)))
                        : ember::neg(x);
      break;
    }
  }
  if (!dt.defined()) dt = ember::neg(dx);
  if (w.defined()) {
    dx = ember::mul(dx, w);
    dt = ember::mul(dt, w);
  }
  return {dx, dt};
}

}  // namespace

Tensor pointwise_loss(PointwiseLoss kind, const Tensor& x, const Tensor& t, const Tensor& w,
                      const Tensor& pw, int64_t reduction, double param) {
  const char* op = pointwise_loss_name(kind);
  refuse_grad(w, op, "weight");
  refuse_grad(pw, op, "pos_weight");
  auto node = autograd::new_node(
      node_name(kind), {x, t}, [kind, reduction, param](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (!g[0].defined()) return r;
        const Tensor x = n.saved(0), t = n.saved(1), w = n.saved(2), pw = n.saved(3);
        const bool nx = n.should_compute_output(0), nt = n.should_compute_output(1);
        if (!autograd::GradMode::is_enabled()) {
          auto [gx, gt] =
              pointwise_loss_backward(kind, g[0], x, t, w, pw, reduction, param, nx, nt);
          return variable_list{gx, gt};
        }
        Tensor gs = g[0];
        if (reduction == static_cast<int64_t>(LossReduction::Mean)) {
          int64_t count = 1;
          for (int64_t s : broadcast_shapes(x.sizes(), t.sizes(), "loss")) count *= s;
          gs = ember::div(gs, num(static_cast<double>(count)));
        }
        auto [dx, dt] = partials(kind, x, t, w, pw, param);
        if (nx) r[0] = ember::mul(gs, dx);
        if (nt) r[1] = ember::mul(gs, dt);
        return r;
      });
  node->save(x);
  node->save(t);
  node->save(w);
  node->save(pw);
  if (node->has_forward()) {
    // The elementwise loss's differential dx * x_t + dt * t_t, then the reduction.
    node->set_jvp([kind, reduction, param](FunctionNode& n, const variable_list& tan) {
      if (!jvp::any_defined(tan)) return variable_list{Tensor()};
      auto [dx, dt] = partials(kind, n.saved(0), n.saved(1), n.saved(2), n.saved(3), param);
      const Tensor r = jvp::add(jvp::mul(tan[0], dx), jvp::mul(tan[1], dt));
      // dx and dt have the shape of the elementwise loss (that of x - t).
      if (reduction == static_cast<int64_t>(LossReduction::Mean))
        return variable_list{ember::mean(r)};
      if (reduction == static_cast<int64_t>(LossReduction::Sum))
        return variable_list{ember::sum(r)};
      return variable_list{r};
    });
  }
  return autograd::record(node, {x, t}, Tensor(), op, [&] {
    return pointwise_loss_forward(kind, x, t, w, pw, reduction, param);
  });
}

}  // namespace derivatives
}  // namespace ember
