// layer_norm, rms_norm and group_norm: validation (PyTorch's messages), dtype handling and the
// kernel calls. batch_norm / instance_norm are in nn_norm_batch.cpp.
#include <cmath>
#include <limits>

#include "core/shape.h"
#include "ops/creation.h"
#include "ops/nn/norm.h"
#include "ops/nn/norm_common.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(layer_norm_stub, LayerNormFn);
EMBER_DEFINE_STUB(layer_norm_backward_stub, LayerNormBackwardFn);
EMBER_DEFINE_STUB(group_norm_stub, GroupNormFn);
EMBER_DEFINE_STUB(group_norm_backward_stub, GroupNormBackwardFn);

using nn_detail::list_str;

namespace {

// The (M, N) split of x for a normalisation over its last `k` dims.
std::pair<int64_t, int64_t> rows_and_cols(const Tensor& x, int64_t k) {
  int64_t M = 1, N = 1;
  for (int64_t d = 0; d < x.dim(); ++d) (d < x.dim() - k ? M : N) *= x.size(d);
  return {M, N};
}

void check_layer_norm_args(const Tensor& x, IntArrayRef shape, const Tensor& w, const Tensor& b,
                           bool rms) {
  const char* op = rms ? "rms_norm" : "layer_norm";
  nn_detail::check_floating_input(x, op);
  const int64_t k = static_cast<int64_t>(shape.size());
  EMBER_CHECK(k >= 1, "[", op, "] Expected normalized_shape to be at least 1-dimensional, i.e., ",
              "containing at least one element, but got normalized_shape = ", list_str(shape));
  EMBER_CHECK(!w.defined() || w.sizes().equals(shape), "[", op,
              "] Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              list_str(w.sizes()), " and normalized_shape = ", list_str(shape));
  EMBER_CHECK(!b.defined() || b.sizes().equals(shape), "[", op,
              "] Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              list_str(b.sizes()), " and normalized_shape = ", list_str(shape));
  bool ok = x.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = x.size(x.dim() - k + i) == shape[i];
  if (!ok) {
    // PyTorch's wording differs slightly between the two ops ("[*, 4]" and "[*4]").
    std::string expected = list_str(shape).substr(1);
    EMBER_THROW(Error, "[", op, "] Given normalized_shape=", list_str(shape),
                ", expected input with shape [*", rms ? "" : ", ", expected,
                ", but got input of size", list_str(x.sizes()));
  }
}

}  // namespace

double rms_norm_eps(const Tensor& x, std::optional<double> eps) {
  if (eps) return *eps;
  switch (x.dtype()) {
    case ScalarType::Float16:
      return 0.0009765625;
    case ScalarType::BFloat16:
      return 0.0078125;
    case ScalarType::Float64:
      return std::numeric_limits<double>::epsilon();
    default:
      return std::numeric_limits<float>::epsilon();
  }
}

// ---- layer_norm / rms_norm ---------------------------------------------------------------------

NormResult layer_norm_forward(const Tensor& x, IntArrayRef shape, const Tensor& w, const Tensor& b,
                              double eps, bool rms) {
  const char* op = rms ? "rms_norm" : "layer_norm";
  check_layer_norm_args(x, shape, w, b, rms);
  auto [M, N] = rows_and_cols(x, static_cast<int64_t>(shape.size()));
  Tensor xc = contiguous(nn_detail::to_compute_dtype(x));
  const ScalarType ct = xc.dtype();
  Tensor wc = nn_detail::param_for_kernel(w, x, ct, op);
  Tensor bc = nn_detail::param_for_kernel(b, x, ct, op);
  NormResult r;
  r.out = empty(x.sizes(), TensorOptions(ct));
  if (!rms) r.mean = empty({M}, TensorOptions(ct));
  r.rstd = empty({M}, TensorOptions(ct));
  if (M * N > 0) {
    layer_norm_stub(x.device(), r.out, r.mean, r.rstd, xc, wc, bc, M, N, eps, rms);
  }
  r.out = nn_detail::in_dtype_of(r.out, x);
  return r;
}

NormGrads layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& w, int64_t k, bool rms,
                              const bool need[3]) {
  const char* op = rms ? "rms_norm_backward" : "layer_norm_backward";
  auto [M, N] = rows_and_cols(x, k);
  Tensor xc = contiguous(nn_detail::to_compute_dtype(x));
  const ScalarType ct = xc.dtype();
  Tensor gc = contiguous(g.dtype() == ct ? g : to_dtype(g, ct));
  Tensor wc = nn_detail::param_for_kernel(w, x, ct, op);
  const TensorOptions opts(ct);
  Tensor dx = need[0] ? empty(x.sizes(), opts) : Tensor();
  Tensor dw = need[1] && w.defined() ? zeros({N}, opts) : Tensor();
  Tensor db = need[2] ? zeros({N}, opts) : Tensor();
  if (M * N > 0) {
    layer_norm_backward_stub(x.device(), dx, dw, db, gc, xc, mean, rstd, wc, M, N, rms);
  }
  IntArrayRef shape(x.sizes().data() + (x.dim() - k), static_cast<size_t>(k));
  if (dw.defined()) dw = view(dw, shape);
  if (db.defined()) db = view(db, shape);
  return {nn_detail::in_dtype_of(dx, x), dw, db};
}

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return layer_norm_forward(x, normalized_shape, weight, bias, eps, false).out;
}

Tensor rms_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  return layer_norm_forward(x, normalized_shape, weight, Tensor(), rms_norm_eps(x, eps), true).out;
}

// ---- group_norm --------------------------------------------------------------------------------

namespace {

struct GroupGeometry {
  int64_t N, C, HW;
};

GroupGeometry group_geometry(const Tensor& x) {
  GroupGeometry g{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) g.HW *= x.size(d);
  return g;
}

}  // namespace

NormResult group_norm_forward(const Tensor& x, int64_t G, const Tensor& w, const Tensor& b,
                              double eps) {
  const char* op = "group_norm";
  nn_detail::check_floating_input(x, op);
  EMBER_CHECK(x.dim() >= 2, "[", op, "] Expected at least 2 dimensions for input tensor but ",
              "received ", x.dim());
  const GroupGeometry geo = group_geometry(x);
  EMBER_CHECK(G > 0, "[", op, "] num_groups must be positive, but got num_groups=", G);
  EMBER_CHECK(geo.C % G == 0, "[", op, "] Expected number of channels in input to be divisible ",
              "by num_groups, but got input of shape ", list_str(x.sizes()), " and num_groups=", G);
  EMBER_CHECK(!w.defined() || (w.dim() == 1 && w.numel() == geo.C), "[", op,
              "] Expected weight to be a vector of size equal to the number of channels in ",
              "input, but got weight of shape ", list_str(w.sizes()), " and input of shape ",
              list_str(x.sizes()));
  EMBER_CHECK(!b.defined() || (b.dim() == 1 && b.numel() == geo.C), "[", op,
              "] Expected bias to be a vector of size equal to the number of channels in ",
              "input, but got bias of shape ", list_str(b.sizes()), " and input of shape ",
              list_str(x.sizes()));
  Tensor xc = contiguous(nn_detail::to_compute_dtype(x));
  const ScalarType ct = xc.dtype();
  Tensor wc = nn_detail::param_for_kernel(w, x, ct, op);
  Tensor bc = nn_detail::param_for_kernel(b, x, ct, op);
  NormResult r;
  r.out = empty(x.sizes(), TensorOptions(ct));
  r.mean = empty({geo.N, G}, TensorOptions(ct));
  r.rstd = empty({geo.N, G}, TensorOptions(ct));
  if (x.numel() > 0) {
    group_norm_stub(x.device(), r.out, r.mean, r.rstd, xc, wc, bc, geo.N, geo.C, geo.HW, G, eps);
  }
  r.out = nn_detail::in_dtype_of(r.out, x);
  return r;
}

NormGrads group_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor& w, int64_t G, const bool need[3]) {
  const GroupGeometry geo = group_geometry(x);
  Tensor xc = contiguous(nn_detail::to_compute_dtype(x));
  const ScalarType ct = xc.dtype();
  Tensor gc = contiguous(g.dtype() == ct ? g : to_dtype(g, ct));
  Tensor wc = nn_detail::param_for_kernel(w, x, ct, "group_norm_backward");
  const TensorOptions opts(ct);
  Tensor dx = need[0] ? empty(x.sizes(), opts) : Tensor();
  Tensor dw = need[1] && w.defined() ? zeros({geo.C}, opts) : Tensor();
  Tensor db = need[2] ? zeros({geo.C}, opts) : Tensor();
  if (x.numel() > 0) {
    group_norm_backward_stub(x.device(), dx, dw, db, gc, xc, mean, rstd, wc, geo.N, geo.C, geo.HW,
                             G);
  }
  return {nn_detail::in_dtype_of(dx, x), dw, db};
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return group_norm_forward(x, num_groups, weight, bias, eps).out;
}

}  // namespace native
}  // namespace ember
