// batch_norm (PyTorch's semantics, including the running-statistics update); instance_norm is a
// composite in api/nn/norm.cpp.
#include "core/scalar.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/nn/norm.h"
#include "ops/nn/norm_common.h"
#include "ops/unary.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(batch_norm_stats_stub, BatchNormStatsFn);
EMBER_DEFINE_STUB(batch_norm_apply_stub, BatchNormApplyFn);
EMBER_DEFINE_STUB(batch_norm_backward_stub, BatchNormBackwardFn);

namespace {

struct ChannelGeometry {
  int64_t N, C, S;
};

ChannelGeometry channel_geometry(const Tensor& x) {
  ChannelGeometry g{x.dim() > 0 ? x.size(0) : 1, x.dim() > 1 ? x.size(1) : 0, 1};
  for (int64_t d = 2; d < x.dim(); ++d) g.S *= x.size(d);
  return g;
}

void check_channel_vector(const Tensor& t, int64_t C, const char* what) {
  if (!t.defined()) return;
  EMBER_CHECK(t.numel() == C, "[batch_norm] ", what, " should contain ", C, " elements not ",
              t.numel());
}

Tensor number(double v) {
  return wrap_scalar(Scalar(v));
}

// r = (1 - momentum) * r + factor * stat, in place (r keeps its dtype).
void update_running(const Tensor& r, const Tensor& stat, double momentum, double factor) {
  native::mul(r, number(1.0 - momentum), r);
  native::add(r, stat, Scalar(factor), r);
}

}  // namespace

NormResult batch_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b,
                              const Tensor& running_mean, const Tensor& running_var, bool training,
                              double momentum, double eps) {
  const char* op = "batch_norm";
  nn_detail::check_floating_input(x, op);
  const ChannelGeometry geo = channel_geometry(x);
  check_channel_vector(running_mean, geo.C, "running_mean");
  check_channel_vector(running_var, geo.C, "running_var");
  check_channel_vector(w, geo.C, "weight");
  check_channel_vector(b, geo.C, "bias");
  EMBER_CHECK(x.dim() >= 2, "[", op, "] Expected 2D or higher input, but got input of shape ",
              nn_detail::list_str(x.sizes()));
  if (!training) {
    EMBER_CHECK(running_mean.defined(), "[", op,
                "] running_mean must be defined in evaluation mode");
    EMBER_CHECK(running_var.defined(), "[", op, "] running_var must be defined in evaluation mode");
  }
  Tensor xc = contiguous(nn_detail::to_compute_dtype(x));
  const ScalarType ct = xc.dtype();
  const TensorOptions opts(ct);
  Tensor wc = nn_detail::param_for_kernel(w, x, ct, op);
  Tensor bc = nn_detail::param_for_kernel(b, x, ct, op);
  NormResult r;
  if (training) {
    r.mean = empty({geo.C}, opts);
    Tensor var = empty({geo.C}, opts);
    batch_norm_stats_stub(x.device(), r.mean, var, xc, geo.N, geo.C, geo.S);
    r.rstd = native::rsqrt(native::add(var, number(eps)));
    const double n = static_cast<double>(geo.N * geo.S);
    if (running_mean.defined()) update_running(running_mean, r.mean, momentum, momentum);
    if (running_var.defined()) {
      update_running(running_var, var, momentum, momentum * n / (n - 1.0));
    }
  } else {
    // Copies: the node keeps them, and the running statistics change in place later.
    r.mean = clone(
        to_dtype(running_mean.dim() == 1 ? running_mean : reshape(running_mean, {geo.C}), ct));
    Tensor rv = to_dtype(running_var.dim() == 1 ? running_var : reshape(running_var, {geo.C}), ct);
    r.rstd = native::rsqrt(native::add(rv, number(eps)));
  }
  r.out = empty(x.sizes(), opts);
  if (x.numel() > 0) {
    batch_norm_apply_stub(x.device(), r.out, xc, contiguous(r.mean), contiguous(r.rstd), wc, bc,
                          geo.N, geo.C, geo.S);
  }
  r.out = nn_detail::in_dtype_of(r.out, x);
  return r;
}

NormGrads batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& invstd, const Tensor& w, bool training,
                              const bool need[3]) {
  const ChannelGeometry geo = channel_geometry(x);
  Tensor xc = contiguous(nn_detail::to_compute_dtype(x));
  const ScalarType ct = xc.dtype();
  Tensor gc = contiguous(g.dtype() == ct ? g : to_dtype(g, ct));
  Tensor wc = nn_detail::param_for_kernel(w, x, ct, "batch_norm_backward");
  const TensorOptions opts(ct);
  Tensor dx = need[0] ? empty(x.sizes(), opts) : Tensor();
  Tensor dw = need[1] && w.defined() ? zeros({geo.C}, opts) : Tensor();
  Tensor db = need[2] ? zeros({geo.C}, opts) : Tensor();
  if (x.numel() > 0) {
    batch_norm_backward_stub(x.device(), dx, dw, db, gc, xc, mean, invstd, wc, geo.N, geo.C, geo.S,
                             training);
  }
  return {nn_detail::in_dtype_of(dx, x), dw, db};
}

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps) {
  return batch_norm_forward(x, weight, bias, running_mean, running_var, training, momentum, eps)
      .out;
}

}  // namespace native
}  // namespace ember
