// Public fused attention op: records its node when an input requires grad (api/nn/attention.cpp).
#pragma once
#include <optional>
#include <tuple>

#include "ops/nn/attention.h"

namespace ember {

// PyTorch's _scaled_dot_product_flash_attention_for_cpu: (out, logsumexp); see
// ops/nn/attention.h. The gradient flows to query, key and value (not to attn_bias: the caller
// takes the math form when the bias needs one).
std::tuple<Tensor, Tensor> scaled_dot_product_fused_attention(const Tensor& q, const Tensor& k,
                                                              const Tensor& v,
                                                              const Tensor& attn_bias,
                                                              bool is_causal,
                                                              std::optional<double> scale);

}  // namespace ember
