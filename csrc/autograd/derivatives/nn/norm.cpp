// Derivatives of layer_norm / rms_norm, group_norm and batch_norm.
//
// Note [Fused backward, composite double backward]
// The usual backward (grad mode off while the engine runs a node) calls one fused kernel per
// op (softmax_backward_data, layer_norm_backward, ...), as PyTorch does. With
// create_graph=True grad mode is on and the same formula is evaluated with public ops, whose
// own nodes make the gradient differentiable again; the statistics are then recomputed from x
// (they depend on it) instead of read from the saved ones.
#include "autograd/derivatives/nn/norm.h"

#include <vector>

#include "api/elementwise.h"
#include "api/nn/norm.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

std::vector<int64_t> dims_from(int64_t first, int64_t ndim) {
  std::vector<int64_t> d;
  for (int64_t i = first; i < ndim; ++i) d.push_back(i);
  return d;
}

// Every dim of an (N, C, ...) tensor but the channel dim.
std::vector<int64_t> all_but_channel(int64_t ndim) {
  std::vector<int64_t> d{0};
  for (int64_t i = 2; i < ndim; ++i) d.push_back(i);
  return d;
}

// The shape (1, C, 1, ...) that broadcasts a channel vector against an (N, C, ...) tensor.
DimVector channel_shape(int64_t C, int64_t ndim) {
  DimVector s(ndim);
  for (int64_t i = 0; i < ndim; ++i) s[i] = i == 1 ? C : 1;
  return s;
}

// rstd * (dy - mean(dy) - xhat * mean(dy * xhat)) over `dims` (without the mean(dy) term for
// rms_norm): the input gradient shared by every normalisation.
Tensor normalized_input_grad(const Tensor& dy, const Tensor& xhat, const Tensor& rstd,
                             const std::vector<int64_t>& dims, bool centered) {
  Tensor proj = ember::mul(xhat, ember::mean(ember::mul(dy, xhat), dims, true));
  Tensor inner = centered ? ember::sub(ember::sub(dy, ember::mean(dy, dims, true)), proj)
                          : ember::sub(dy, proj);
  return ember::mul(rstd, inner);
}

// (xhat, rstd) recomputed with public ops over `dims` (composite path).
std::pair<Tensor, Tensor> normalize(const Tensor& x, const std::vector<int64_t>& dims, double eps,
                                    bool centered) {
  if (!centered) {
    Tensor rstd = ember::rsqrt(ember::add(ember::mean(ember::mul(x, x), dims, true), num(eps)));
    return {ember::mul(x, rstd), rstd};
  }
  Tensor mu = ember::mean(x, dims, true);
  Tensor var = ember::var(x, dims, Scalar(0), true);
  Tensor rstd = ember::rsqrt(ember::add(var, num(eps)));
  return {ember::mul(ember::sub(x, mu), rstd), rstd};
}

}  // namespace

// ---- layer_norm / rms_norm -----------------------------------------------------------------

Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, bool rms) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  auto node = autograd::new_node(
      rms ? "RmsNormBackward0" : "NativeLayerNormBackward0", {x, weight, bias},
      [k, eps, rms](FunctionNode& n, const variable_list& g) {
        variable_list r(3);
        if (!g[0].defined()) return r;
        const Tensor x = n.saved(0), w = n.saved(1);
        if (!autograd::GradMode::is_enabled()) {
          const bool need[3] = {n.should_compute_output(0), n.should_compute_output(1),
                                n.should_compute_output(2)};
          auto [dx, dw, db] = layer_norm_backward(g[0], x, n.saved(2), n.saved(3), w, k, rms, need);
          return variable_list{dx, dw, db};
        }
        const auto dims = dims_from(x.dim() - k, x.dim());
        auto [xhat, rstd] = normalize(x, dims, eps, !rms);
        if (n.should_compute_output(0)) {
          const Tensor dy = w.defined() ? ember::mul(g[0], w) : g[0];
          r[0] = normalized_input_grad(dy, xhat, rstd, dims, !rms);
        }
        // The engine sums these down to the parameters' (trailing) shape.
        if (n.should_compute_output(1)) r[1] = ember::mul(g[0], xhat);
        if (n.should_compute_output(2)) r[2] = g[0];
        return r;
      });
  node->save(x);
  node->save(weight);
  NormResult res;
  Tensor out =
      autograd::record(node, {x, weight, bias}, Tensor(), rms ? "rms_norm" : "layer_norm", [&] {
        res = layer_norm_forward(x, normalized_shape, weight, bias, eps, rms);
        return res.out;
      });
  node->save(res.mean);
  node->save(res.rstd);
  return out;
}

// ---- group_norm ----------------------------------------------------------------------------

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  auto node = autograd::new_node(
      "NativeGroupNormBackward0", {x, weight, bias},
      [num_groups, eps](FunctionNode& n, const variable_list& g) {
        variable_list r(3);
        if (!g[0].defined()) return r;
        const Tensor x = n.saved(0), w = n.saved(1);
        if (!autograd::GradMode::is_enabled()) {
          const bool need[3] = {n.should_compute_output(0), n.should_compute_output(1),
                                n.should_compute_output(2)};
          auto [dx, dw, db] =
              group_norm_backward(g[0], x, n.saved(2), n.saved(3), w, num_groups, need);
          return variable_list{dx, dw, db};
        }
        const int64_t N = x.size(0), C = x.size(1);
        const DimVector grouped{N, num_groups, -1};
        auto [xhat_g, rstd] = normalize(ember::reshape(x, grouped), {2}, eps, true);
        const Tensor xhat = ember::reshape(xhat_g, x.sizes());
        const auto rdims = all_but_channel(x.dim());
        if (n.should_compute_output(0)) {
          const Tensor dy =
              w.defined() ? ember::mul(g[0], ember::reshape(w, channel_shape(C, x.dim()))) : g[0];
          r[0] = ember::reshape(
              normalized_input_grad(ember::reshape(dy, grouped), xhat_g, rstd, {2}, true),
              x.sizes());
        }
        if (n.should_compute_output(1)) r[1] = ember::sum(ember::mul(g[0], xhat), rdims);
        if (n.should_compute_output(2)) r[2] = ember::sum(g[0], rdims);
        return r;
      });
  node->save(x);
  node->save(weight);
  NormResult res;
  Tensor out = autograd::record(node, {x, weight, bias}, Tensor(), "group_norm", [&] {
    res = group_norm_forward(x, num_groups, weight, bias, eps);
    return res.out;
  });
  node->save(res.mean);
  node->save(res.rstd);
  return out;
}

// ---- batch_norm ----------------------------------------------------------------------------

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps) {
  auto node = autograd::new_node(
      "NativeBatchNormBackward0", {x, weight, bias},
      [training, eps](FunctionNode& n, const variable_list& g) {
        variable_list r(3);
        if (!g[0].defined()) return r;
        const Tensor x = n.saved(0), w = n.saved(1), mean = n.saved(2), invstd = n.saved(3);
        if (!autograd::GradMode::is_enabled()) {
          const bool need[3] = {n.should_compute_output(0), n.should_compute_output(1),
                                n.should_compute_output(2)};
          auto [dx, dw, db] = batch_norm_backward(g[0], x, mean, invstd, w, training, need);
          return variable_list{dx, dw, db};
        }
        const int64_t C = x.size(1);
        const DimVector cshape = channel_shape(C, x.dim());
        const auto rdims = all_but_channel(x.dim());
        Tensor xhat, rstd;
        if (training) {
          std::tie(xhat, rstd) = normalize(x, rdims, eps, true);
        } else {
          // The running statistics are constants.
          rstd = ember::reshape(ember::to_dtype(invstd, x.dtype()), cshape);
          xhat = ember::mul(ember::sub(x, ember::reshape(ember::to_dtype(mean, x.dtype()), cshape)),
                            rstd);
        }
        if (n.should_compute_output(0)) {
          const Tensor dy = w.defined() ? ember::mul(g[0], ember::reshape(w, cshape)) : g[0];
          r[0] =
              training ? normalized_input_grad(dy, xhat, rstd, rdims, true) : ember::mul(dy, rstd);
        }
        if (n.should_compute_output(1)) r[1] = ember::sum(ember::mul(g[0], xhat), rdims);
        if (n.should_compute_output(2)) r[2] = ember::sum(g[0], rdims);
        return r;
      });
  node->save(x);
  node->save(weight);
  NormResult res;
  Tensor out = autograd::record(node, {x, weight, bias}, Tensor(), "batch_norm", [&] {
    res = batch_norm_forward(x, weight, bias, running_mean, running_var, training, momentum, eps);
    return res.out;
  });
  node->save(res.mean);
  node->save(res.rstd);
  return out;
}

}  // namespace derivatives
}  // namespace ember
