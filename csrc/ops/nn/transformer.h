// The transformer encoder's inference fastpath (PyTorch's _transformer_encoder_layer_fwd and the
// nested-tensor encoder, done as Ember's own packed variable-length batch): a whole encoder
// layer is one call of GEMMs with fused epilogues (bias, activation, residual), a fused
// attention over the packed QKV projection, and layer norms. Nothing here records autograd: the
// Python modules take this path only when no gradient is wanted (see docs/design/transformer.md).
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/gemm_stubs.h"
#include "ops/quantized/linear_dynamic.h"

namespace ember {
namespace native {

// One nn.TransformerEncoderLayer's parameters (PyTorch's names). Biases may be undefined
// (bias=False). Weights are (out_features, in_features), as nn.Linear stores them.
struct EncoderLayerWeights {
  Tensor in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias;
  Tensor norm1_weight, norm1_bias, norm2_weight, norm2_bias;
  Tensor linear1_weight, linear1_bias, linear2_weight, linear2_bias;
  // A dynamically quantized linear1 / linear2 (nn.quantized.dynamic.Linear): its packed int8
  // weight and bias, used instead of the float weight and bias above (then undefined).
  std::shared_ptr<PackedLinearWeight> linear1_packed, linear2_packed;
  // The same for a dynamically quantized self-attention's in_proj (3E, E) and out_proj.
  std::shared_ptr<PackedLinearWeight> in_proj_packed, out_proj_packed;
  int64_t num_heads = 1;
  bool norm_first = false;
  GemmActivation activation = GemmActivation::Relu;
  double norm1_eps = 1e-5, norm2_eps = 1e-5;
};

// The attention masks of a dense (N, S, E) batch, as additive float tensors of src's dtype:
// key_padding (N, S) and/or attn_mask (S, S) or (N * heads, S, S); either may be undefined.
struct EncoderMasks {
  Tensor key_padding;
  Tensor attn_mask;
  bool is_causal = false;  // attn_mask is (or stands for) the causal mask; it is not read
};

// Runs `layers` over src (N, S, E), batch first. With pack_padding (a bool (N, S) mask, True =
// padding), the real tokens of the batch are packed into one variable-length batch first; every
// layer runs on those only and the result has zeros at the padded positions (PyTorch's nested
// tensor path). Otherwise the layers run on all N x S positions with `masks`.
Tensor transformer_encoder_fastpath(const Tensor& src,
                                    const std::vector<EncoderLayerWeights>& layers,
                                    const EncoderMasks& masks, const Tensor& pack_padding);

// The cost model of the choice between the two: whether packing the real tokens (count
// `real_tokens`, per-sequence lengths `lengths`) is expected to be faster than running the
// dense (N, S) batch, for a layer of width E and feed-forward width F.
bool packing_pays(const std::vector<int64_t>& lengths, int64_t S, int64_t E, int64_t F);

}  // namespace native
}  // namespace ember
