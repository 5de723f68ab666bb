// Derivative of quantile / nanquantile.
//
// PyTorch computes these as a composite (sort, gather, lerp; its grad_fn is the final squeeze).
// Ember's forward is one kernel, so the gradient is one node that follows the kernel step by
// step: ranks q * (n - 1) in double (n: the non-NaN count for nanquantile; a line
// holding NaN takes the last rank in quantile; negative ranks become 0 in nanquantile), rounded
// per interpolation mode; the gradient goes to the original positions of the order statistics
// below and above the rank, weighted 1 - w and w for linear interpolation (w = rank - floor(rank)),
// 1/2 each for midpoint, wholly to one of them otherwise. q gets a gradient for linear
// interpolation only, (above - below) * (n - 1) per line (0 where its rank was replaced).
#include "api/compare.h"
#include "api/conversion.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/join.h"
#include "api/sort.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/reduce.h"
#include "autograd/derivatives/reduce_common.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

using namespace reduction;  // NOLINT(build/namespaces)

namespace {

struct QuantileGeometry {
  DimVector in_sizes;
  bool along_dim;  // a dim was given and the input is not 0-d
  int64_t axis;    // the reduced dim (along_dim)
  bool keepdim;
  bool q_is_vector;
  bool ignore_nan;
  QuantileInterpolation mode;
};

// The result's gradient as [k, lines..., 1] (k: the number of q values; lines: the input's
// dims with the reduced one moved last, or none when all elements are reduced).
Tensor gradient_per_line(const Tensor& g, const QuantileGeometry& geo, int64_t k) {
  if (!geo.along_dim) return ember::reshape(g, {k, 1});
  Tensor r = geo.q_is_vector ? g : ember::unsqueeze(g, 0);
  if (!geo.keepdim) r = ember::unsqueeze(r, geo.axis + 1);
  return ember::movedim(r, {geo.axis + 1}, {-1});
}

// Drops the trailing 1 of [k, lines..., 1] and moves k last: [lines..., k].
Tensor k_last(const Tensor& t) {
  return ember::movedim(ember::squeeze(t, {-1}), {0}, {-1});
}

struct Ranks {
  Tensor below, above;  // int64 [k, lines..., 1] positions in the sorted line
  Tensor weight;        // the lerp weight (linear: rank - below; midpoint: 0.5); undefined else
  Tensor dq_scale;      // d rank / d q per line, 0 where the rank was replaced (linear only)
};

Ranks quantile_ranks(const Tensor& sorted, const Tensor& q, const QuantileGeometry& geo) {
  using Mode = QuantileInterpolation;
  const int64_t n = sorted.size(sorted.dim() - 1);
  const Tensor nan = ember::isnan(sorted);
  Tensor ranks, scale;
  if (geo.ignore_nan) {
    const Tensor count =
        ember::sum(ember::logical_not(nan), DimList(std::vector<int64_t>{-1}), /*keepdim=*/true);
    const Tensor last = ember::sub(count, num(1));
    ranks = ember::mul(q, last);
    const Tensor negative = ember::lt(ranks, num(0));
    ranks = ember::where(negative, num(0), ranks);
    scale = ember::mul(last, ember::logical_not(negative));
  } else {
    const Tensor any_nan = ember::any(nan, DimList(std::vector<int64_t>{-1}), /*keepdim=*/true);
    const double last = static_cast<double>(n - 1);
    ranks = ember::where(any_nan, num(last), ember::mul(q, num(last)));
    scale = ember::mul(ember::logical_not(any_nan), num(last));
  }
  if (geo.mode == Mode::Lower) ranks = ember::floor(ranks);
  if (geo.mode == Mode::Higher) ranks = ember::ceil(ranks);
  if (geo.mode == Mode::Nearest) ranks = ember::round(ranks);  // half to even, as round_()
  Ranks r;
  r.below = ember::to_dtype(ranks, ScalarType::Int64);
  if (geo.mode == Mode::Linear || geo.mode == Mode::Midpoint) {
    r.above = ember::to_dtype(ember::ceil(ranks), ScalarType::Int64);
    const Tensor weight =
        geo.mode == Mode::Linear
            ? ember::sub(ranks, ember::to_dtype(r.below, ranks.dtype()))
            : ember::full(ranks.sizes(), Scalar(0.5), TensorOptions(ranks.dtype()));
    r.weight = ember::to_dtype(weight, sorted.dtype());
  }
  if (geo.mode == Mode::Linear) r.dq_scale = scale;
  return r;
}

variable_list quantile_backward(FunctionNode& n, const Tensor& g, const QuantileGeometry& geo) {
  const Tensor x = n.saved(0);
  const Tensor q_saved = n.saved(1);
  // The input as lines along the last dim.
  const Tensor lines =
      geo.along_dim ? ember::movedim(x, {geo.axis}, {-1}) : ember::reshape(x, {-1});
  const int64_t k = q_saved.numel();
  DimVector q_shape(static_cast<size_t>(lines.dim()) + 1, 1);
  q_shape[0] = k;
  Tensor order;
  Ranks ranks;
  {
    autograd::NoGradGuard no_grad;
    const Tensor detached = ember::detach(lines);
    auto sorted = ember::sort(detached, -1, /*descending=*/false, /*stable=*/true);
    order = std::get<1>(sorted);
    // As the forward kernel: q rounded to the input's dtype, ranks formed in double.
    const Tensor q = ember::to_dtype(ember::to_dtype(q_saved, x.dtype()), ScalarType::Float64);
    ranks = quantile_ranks(std::get<0>(sorted), ember::reshape(q, q_shape), geo);
  }
  DimVector expanded(lines.sizes());
  expanded.insert(0, k);
  const Tensor order_k = ember::expand(ember::unsqueeze(order, 0), expanded);
  const Tensor at_below = ember::gather(order_k, -1, ranks.below);  // original positions
  const Tensor at_above =
      ranks.above.defined() ? ember::gather(order_k, -1, ranks.above) : Tensor();
  const Tensor grad = gradient_per_line(g, geo, k);

  variable_list out(2);
  if (n.should_compute_output(0)) {
    const Tensor zeros = ember::zeros(lines.sizes(), TensorOptions(grad.dtype()));
    Tensor gl;
    if (ranks.weight.defined()) {
      const Tensor to_below = ember::mul(grad, ember::sub(num(1), ranks.weight));
      const Tensor to_above = ember::mul(grad, ranks.weight);
      gl = ember::scatter_add(zeros, -1, ember::cat({k_last(at_below), k_last(at_above)}, -1),
                              ember::cat({k_last(to_below), k_last(to_above)}, -1));
    } else {
      gl = ember::scatter_add(zeros, -1, k_last(at_below), k_last(grad));
    }
    out[0] =
        geo.along_dim ? ember::movedim(gl, {-1}, {geo.axis}) : ember::reshape(gl, geo.in_sizes);
  }
  if (n.should_compute_output(1) && ranks.dq_scale.defined()) {
    const Tensor lines_k = ember::expand(ember::unsqueeze(lines, 0), expanded);
    const Tensor spread =
        ember::sub(ember::gather(lines_k, -1, at_above), ember::gather(lines_k, -1, at_below));
    const Tensor dq = ember::mul(ember::mul(grad, spread), ranks.dq_scale);
    std::vector<int64_t> rest;
    for (int64_t d = 1; d < dq.dim(); ++d) rest.push_back(d);
    out[1] = ember::reshape(ember::sum(dq, DimList(rest)), q_saved.sizes());
  }
  return out;
}

}  // namespace

Tensor quantile(bool ignore_nan, const Tensor& t, const Tensor& q, double q_value,
                std::optional<int64_t> dim, bool keepdim, QuantileInterpolation interpolation,
                const Tensor& out) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  QuantileGeometry geo{DimVector(t.sizes()),
                       dim.has_value() && t.dim() > 0,
                       dim ? single_dim(t.sizes(), *dim) : 0,
                       keepdim,
                       q.defined() && q.dim() == 1,
                       ignore_nan,
                       interpolation};
  // As PyTorch's composite: only the linear weights depend on q differentiably.
  const bool q_differentiable = q.defined() && interpolation == QuantileInterpolation::Linear;
  const Tensor q_input = q_differentiable ? q : Tensor();
  auto node = autograd::new_node(
      ignore_nan ? "NanquantileBackward0" : "QuantileBackward0", {t, q_input},
      [geo](FunctionNode& n, const variable_list& g) { return quantile_backward(n, g[0], geo); });
  node->save(t);
  node->save(q.defined() ? q : scalar_tensor(Scalar(q_value), t.dtype()));
  return autograd::record(node, {t, q_input}, out, op, [&] {
    if (q.defined()) {
      return ignore_nan ? native::nanquantile(t, q, dim, keepdim, interpolation, out)
                        : native::quantile(t, q, dim, keepdim, interpolation, out);
    }
    return ignore_nan ? native::nanquantile(t, q_value, dim, keepdim, interpolation, out)
                      : native::quantile(t, q_value, dim, keepdim, interpolation, out);
  });
}

}  // namespace derivatives
}  // namespace ember
