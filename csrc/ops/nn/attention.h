// Fused scaled-dot-product attention (PyTorch's _scaled_dot_product_flash_attention_for_cpu and
// its backward): one blocked kernel with an online softmax, so that the L x S scores are never
// materialised. The kernels are kernels/cpu/nn/attention_kernels.cpp; the math-form reference
// and the choice between the two are in python/ember/nn/functional/_attention.py.
#pragma once
#include <optional>
#include <tuple>

#include "core/tensor.h"
#include "kernels/nn/attention_stubs.h"

namespace ember {
namespace native {

// The scale of the scores: `scale` when given, else 1 / sqrt(E) (E: q's last dim), as PyTorch.
double sdpa_scale(const Tensor& q, std::optional<double> scale);

// q (N, Hq, L, E), k (N, Hk, S, E), v (N, Hk, S, Ev) with Hq a multiple of Hk; attn_bias
// (optional) a float tensor broadcastable to (N, Hq, L, S), added to the scaled scores. Returns
// (out (N, Hq, L, Ev), logsumexp (N, Hq, L)), in q's dtype (float16 / bfloat16 compute in
// float32; lse stays float32). A row with every key masked gives zeros and lse = -inf. Not
// recorded (the api layer records it).
std::tuple<Tensor, Tensor> scaled_dot_product_fused_attention(const Tensor& q, const Tensor& k,
                                                              const Tensor& v,
                                                              const Tensor& attn_bias,
                                                              bool is_causal,
                                                              std::optional<double> scale);

// (dq, dk, dv) given grad_out and the forward's out and logsumexp.
std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_fused_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
    const Tensor& attn_bias, const Tensor& out, const Tensor& logsumexp, bool is_causal,
    std::optional<double> scale);

}  // namespace native
}  // namespace ember
