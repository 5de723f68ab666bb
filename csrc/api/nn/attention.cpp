// The fused attention op and its node. The node's backward is one fused kernel; with
// create_graph=True (grad mode on during backward) it is the same formula in public ops instead,
// so that the gradient is differentiable again (Note [Fused backward, composite double backward]
// in autograd/derivatives/nn/norm.cpp). PyTorch's flash backward raises there.
#include "api/nn/attention.h"

#include <cmath>
#include <vector>

#include "api/autocast.h"
#include "api/compare.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/matmul.h"
#include "api/nn/softmax.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/record.h"
#include "core/error.h"
#include "ops/compare.h"
#include "ops/creation.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// dq, dk, dv of softmax(scale q k^T + bias) v from public ops: the scores are materialised
// (L x S per head), which only double backward pays for.
variable_list composite_backward(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& bias, const Tensor& lse, bool is_causal,
                                 double scale) {
  const int64_t N = q.size(0), Hk = k.size(1), group = q.size(1) / k.size(1);
  const int64_t L = q.size(2), S = k.size(2);
  const Tensor kr = group > 1 ? repeat_interleave(k, group, 1, std::nullopt) : k;
  const Tensor vr = group > 1 ? repeat_interleave(v, group, 1, std::nullopt) : v;
  const Tensor scale_t = native::wrap_scalar(Scalar(scale));
  Tensor s = mul(matmul(q, transpose(kr, -2, -1)), scale_t);
  if (bias.defined()) s = add(s, bias);
  if (is_causal) {
    const Tensor above = native::full({L, S}, Scalar(-INFINITY), native::TensorOptions(s.dtype()));
    s = add(s, triu(above, 1));
  }
  // Rows with every key masked: zeros, as the forward gave (softmax of them would be NaN).
  const Tensor dead = unsqueeze(native::eq(lse, native::wrap_scalar(Scalar(-INFINITY))), -1);
  const Tensor zero = native::zeros({}, native::TensorOptions(s.dtype()));
  const Tensor p = where(dead, zero, softmax(where(dead, zero, s), -1));
  const Tensor dvr = matmul(transpose(p, -2, -1), g);
  const Tensor dp = matmul(g, transpose(vr, -2, -1));
  const Tensor ds = mul(p, sub(dp, sum(mul(dp, p), std::vector<int64_t>{-1}, true)));
  const Tensor dq = mul(matmul(ds, kr), scale_t);
  Tensor dk = mul(matmul(transpose(ds, -2, -1), q), scale_t);
  Tensor dv = dvr;
  if (group > 1) {
    dk = sum(reshape(dk, {N, Hk, group, S, k.size(3)}), std::vector<int64_t>{2});
    dv = sum(reshape(dv, {N, Hk, group, S, v.size(3)}), std::vector<int64_t>{2});
  }
  return {dq, dk, dv};
}

}  // namespace

std::tuple<Tensor, Tensor> scaled_dot_product_fused_attention(const Tensor& q, const Tensor& k,
                                                              const Tensor& v,
                                                              const Tensor& attn_bias,
                                                              bool is_causal,
                                                              std::optional<double> scale) {
  if (autocast::active()) {  // autocast: lower precision (PyTorch's list has the attention ops)
    const Tensor q2 = autocast::lower(q), k2 = autocast::lower(k), v2 = autocast::lower(v);
    const Tensor b2 = attn_bias.defined() && autocast::eligible(attn_bias)
                          ? autocast::lower(attn_bias)
                          : attn_bias;
    autocast::ExcludeGuard no_autocast;
    return scaled_dot_product_fused_attention(q2, k2, v2, b2, is_causal, scale);
  }
  if (!autograd::should_record(q, k, v)) {
    return native::scaled_dot_product_fused_attention(q, k, v, attn_bias, is_causal, scale);
  }
  auto node =
      autograd::new_node("ScaledDotProductFlashAttentionForCpuBackward0", {q, k, v},
                         [is_causal, scale](FunctionNode& n, const variable_list& g) {
                           if (!g[0].defined()) return variable_list(3);
                           if (autograd::GradMode::is_enabled()) {
                             const double sc = native::sdpa_scale(n.saved(0), scale);
                             return composite_backward(g[0], n.saved(0), n.saved(1), n.saved(2),
                                                       n.saved(3), n.saved(5), is_causal, sc);
                           }
                           auto [dq, dk, dv] = native::scaled_dot_product_fused_attention_backward(
                               g[0], n.saved(0), n.saved(1), n.saved(2), n.saved(3), n.saved(4),
                               n.saved(5), is_causal, scale);
                           return variable_list{dq, dk, dv};
                         });
  Tensor out, lse;
  {
    autograd::NoGradGuard no_grad;
    std::tie(out, lse) =
        native::scaled_dot_product_fused_attention(q, k, v, attn_bias, is_causal, scale);
  }
  node->save(q);
  node->save(k);
  node->save(v);
  node->save(attn_bias);
  autograd::attach_trace(*node);
  autograd::set_history_all(node, {out});
  node->save(out, /*is_output=*/true);
  node->save(lse);
  return {out, lse};
}

}  // namespace ember
