// The transformer encoder's inference fastpath; see ops/nn/transformer.h and
// docs/design/transformer.md.
#include "ops/nn/transformer.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "kernels/nn/attention_stubs.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/nn/activation.h"
#include "ops/nn/linear.h"
#include "ops/nn/norm.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace {

constexpr const char* kOp = "transformer_encoder_fastpath";

// out (T, out_features) = act(x (T, in) @ w (out, in)^T + b) + residual, as one GEMM.
void fused_linear(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& b,
                  GemmActivation act, const Tensor& residual = {}) {
  GemmEpilogue e;
  e.bias = b.defined() ? b.data_ptr() : nullptr;
  e.activation = act;
  if (residual.defined()) {
    e.residual = residual.data_ptr();
    e.residual_row_stride = residual.stride(0);
  }
  linear_epilogue_into(out, x, w, e);
}

// A linear of the layer, float or dynamically quantized: out = act(x W^T + b) + residual. The
// int8 one quantizes x per call (7-bit, as nn.quantized.dynamic.Linear) and fuses bias and relu
// into its GEMM; gelu and the residual follow as passes over out.
void ffn_linear(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& b,
                const std::shared_ptr<PackedLinearWeight>& packed, GemmActivation act,
                const Tensor& residual = {}) {
  if (!packed) {
    fused_linear(out, x, w, b, act, residual);
    return;
  }
  linear_dynamic_into(out, x, *packed, /*reduce_range=*/true, act == GemmActivation::Relu);
  if (act == GemmActivation::Gelu) activation(Activation::Gelu, out, {}, out);
  if (residual.defined()) add(out, residual, 1, out);
}

// The feed-forward width of a layer (linear1's out_features).
int64_t ffn_width(const EncoderLayerWeights& w) {
  return w.linear1_packed ? w.linear1_packed->weight.size(0) : w.linear1_weight.size(0);
}

// The buffers of one call, allocated once and reused by every layer: large fresh allocations
// come from mmap, and touching their pages again for each layer cost 8% of a BERT-base run.
struct Workspace {
  Tensor x, y, attn, qkv, hidden, mean, rstd;
  Workspace(int64_t T, int64_t E, int64_t F, ScalarType dtype) {
    const TensorOptions o(dtype);
    x = empty({T, E}, o);
    y = empty({T, E}, o);
    attn = empty({T, E}, o);
    qkv = empty({T, 3 * E}, o);
    hidden = empty({T, F}, o);
    mean = empty({T}, o);
    rstd = empty({T}, o);
  }
};

// out = layer_norm(x) over the last dim (out may be x).
void norm_into(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor& b, double eps,
               Workspace& ws) {
  if (x.size(0) == 0) return;
  layer_norm_stub(x.device(), out, ws.mean, ws.rstd, x, w, b, x.size(0), x.size(1), eps, false);
}

// ws.y = x + the self-attention of the packed rows `in` (T, E): the QKV projection, the fused
// attention per sequence, and the output projection with the residual x added.
void attention_block(const Tensor& in, const Tensor& x, const EncoderLayerWeights& w,
                     const std::vector<int64_t>& offsets, const Tensor& bias, bool causal,
                     Workspace& ws) {
  const int64_t T = in.size(0), E = in.size(1);
  ffn_linear(ws.qkv, in, w.in_proj_weight, w.in_proj_bias, w.in_proj_packed, GemmActivation::None);
  if (T > 0) {
    SdpaParams p;
    p.scale = 1.0 / std::sqrt(static_cast<double>(E / w.num_heads));
    p.is_causal = causal;
    sdpa_packed_forward_stub(in.device(), ws.attn, ws.qkv, offsets.data(),
                             static_cast<int64_t>(offsets.size()) - 1, w.num_heads, bias, p);
  }
  ffn_linear(ws.y, ws.attn, w.out_proj_weight, w.out_proj_bias, w.out_proj_packed,
             GemmActivation::None, x);
}

// One encoder layer over packed rows: ws.x = layer(x); x may be ws.x (it is read before ws.x
// is written).
void encoder_layer(const Tensor& x, const EncoderLayerWeights& w,
                   const std::vector<int64_t>& offsets, const Tensor& bias, bool causal,
                   Workspace& ws) {
  if (w.norm_first) {
    norm_into(ws.attn, x, w.norm1_weight, w.norm1_bias, w.norm1_eps, ws);
    attention_block(ws.attn, x, w, offsets, bias, causal, ws);  // reads ws.attn before writing
    norm_into(ws.attn, ws.y, w.norm2_weight, w.norm2_bias, w.norm2_eps, ws);
    ffn_linear(ws.hidden, ws.attn, w.linear1_weight, w.linear1_bias, w.linear1_packed,
               w.activation);
    ffn_linear(ws.x, ws.hidden, w.linear2_weight, w.linear2_bias, w.linear2_packed,
               GemmActivation::None, ws.y);
    return;
  }
  attention_block(x, x, w, offsets, bias, causal, ws);
  norm_into(ws.y, ws.y, w.norm1_weight, w.norm1_bias, w.norm1_eps, ws);
  ffn_linear(ws.hidden, ws.y, w.linear1_weight, w.linear1_bias, w.linear1_packed, w.activation);
  ffn_linear(ws.x, ws.hidden, w.linear2_weight, w.linear2_bias, w.linear2_packed,
             GemmActivation::None, ws.y);
  norm_into(ws.x, ws.x, w.norm2_weight, w.norm2_bias, w.norm2_eps, ws);
}

// The additive bias (N, H, S, S) view of a dense batch's masks in dtype `dt`, or undefined.
Tensor dense_bias(const EncoderMasks& m, int64_t N, int64_t H, int64_t S, ScalarType dt) {
  auto as_bias = [&](const Tensor& t, const char* name) {
    EMBER_CHECK(is_floating(t.dtype()), "[", kOp, "] ", name,
                " must be a float (additive) mask here, got ", dtype_name(t.dtype()));
    return contiguous(t.dtype() == dt ? t : to_dtype(t, dt));
  };
  Tensor bias;
  if (m.attn_mask.defined() && !m.is_causal) {
    const Tensor& a = m.attn_mask;
    const bool ok = (a.dim() == 2 && a.size(0) == S && a.size(1) == S) ||
                    (a.dim() == 3 && a.size(0) == N * H && a.size(1) == S && a.size(2) == S);
    EMBER_CHECK(ok, "[", kOp, "] attn_mask of shape ", shape_str(a.sizes()), " is not (", S, ", ",
                S, ") or (", N * H, ", ", S, ", ", S, ")");
    bias = view(as_bias(a, "attn_mask"), {a.dim() == 2 ? 1 : N, a.dim() == 2 ? 1 : H, S, S});
  }
  if (m.key_padding.defined()) {
    const Tensor& k = m.key_padding;
    EMBER_CHECK(k.dim() == 2 && k.size(0) == N && k.size(1) == S, "[", kOp,
                "] key_padding_mask of shape ", shape_str(k.sizes()), " is not (", N, ", ", S, ")");
    const Tensor kp = view(as_bias(k, "key_padding_mask"), {N, 1, 1, S});
    bias = bias.defined() ? add(bias, kp) : kp;
  }
  return bias.defined() ? expand(bias, {N, H, S, S}) : bias;
}

void check_layer(const EncoderLayerWeights& w, const Tensor& src) {
  const int64_t E = src.size(2);
  auto check = [&](const Tensor& t, const char* name, int64_t rows, int64_t cols) {
    if (!t.defined()) return;
    const bool ok = cols < 0 ? (t.dim() == 1 && t.size(0) == rows)
                             : (t.dim() == 2 && t.size(0) == rows && t.size(1) == cols);
    EMBER_CHECK(ok, "[", kOp, "] ", name, " has shape ", shape_str(t.sizes()),
                ", which does not fit d_model ", E);
    EMBER_CHECK(t.dtype() == src.dtype(), "[", kOp, "] ", name, " is ", dtype_name(t.dtype()),
                " but src is ", dtype_name(src.dtype()));
    EMBER_CHECK(t.is_contiguous(), "[", kOp, "] ", name, " must be contiguous");
  };
  EMBER_CHECK(w.num_heads > 0 && E % w.num_heads == 0, "[", kOp, "] embed_dim ", E,
              " is not divisible by num_heads ", w.num_heads);
  EMBER_CHECK(w.linear1_packed || (w.linear1_weight.defined() && w.linear1_weight.dim() == 2), "[",
              kOp, "] linear1.weight must be 2-D");
  const int64_t F = ffn_width(w);
  auto check_packed = [&](const std::shared_ptr<PackedLinearWeight>& p, const char* name,
                          int64_t rows, int64_t cols) {
    if (!p) return;
    EMBER_CHECK(p->weight.size(0) == rows && p->weight.size(1) == cols, "[", kOp, "] ", name,
                " has shape ", shape_str(p->weight.sizes()), ", which does not fit d_model ", E);
    EMBER_CHECK_T(NotImplementedError, src.dtype() == ScalarType::Float32, "[", kOp, "] ", name,
                  " is dynamically quantized, which takes float32 input; src is ",
                  dtype_name(src.dtype()));
  };
  check_packed(w.in_proj_packed, "self_attn.in_proj", 3 * E, E);
  check_packed(w.out_proj_packed, "self_attn.out_proj", E, E);
  check_packed(w.linear1_packed, "linear1", F, E);
  check_packed(w.linear2_packed, "linear2", E, F);
  check(w.in_proj_weight, "in_proj_weight", 3 * E, E);
  check(w.in_proj_bias, "in_proj_bias", 3 * E, -1);
  check(w.out_proj_weight, "out_proj.weight", E, E);
  check(w.out_proj_bias, "out_proj.bias", E, -1);
  check(w.linear1_weight, "linear1.weight", F, E);
  check(w.linear1_bias, "linear1.bias", F, -1);
  check(w.linear2_weight, "linear2.weight", E, F);
  check(w.linear2_bias, "linear2.bias", E, -1);
  check(w.norm1_weight, "norm1.weight", E, -1);
  check(w.norm1_bias, "norm1.bias", E, -1);
  check(w.norm2_weight, "norm2.weight", E, -1);
  check(w.norm2_bias, "norm2.bias", E, -1);
  EMBER_CHECK((w.in_proj_weight.defined() || w.in_proj_packed) &&
                  (w.out_proj_weight.defined() || w.out_proj_packed) &&
                  (w.linear2_weight.defined() || w.linear2_packed),
              "[", kOp, "] the projection weights are required");
}

}  // namespace

bool packing_pays(const std::vector<int64_t>& lengths, int64_t S, int64_t E, int64_t F) {
  // Per layer: the linears' 2 T (4 E^2 + 2 E F) flops and attention's 4 E len^2. Packing and
  // unpacking move about 3 N S E elements once, counted as 10 flops each (a memory-bound copy
  // against a compute-bound GEMM), so a sliver of padding keeps the dense batch.
  const double N = static_cast<double>(lengths.size());
  const double per_token = 2.0 * (4.0 * E * E + 2.0 * E * F);
  double T = 0, squares = 0;
  for (int64_t len : lengths) {
    T += len;
    squares += static_cast<double>(len) * len;
  }
  const double dense = N * S * per_token + 4.0 * E * N * S * S;
  const double packed = T * per_token + 4.0 * E * squares + 30.0 * N * S * E;
  return packed < dense;
}

Tensor transformer_encoder_fastpath(const Tensor& src,
                                    const std::vector<EncoderLayerWeights>& layers,
                                    const EncoderMasks& masks, const Tensor& pack_padding) {
  EMBER_CHECK(src.dim() == 3, "[", kOp, "] expected src of shape (N, S, E), got ",
              shape_str(src.sizes()));
  EMBER_CHECK_T(NotImplementedError,
                src.dtype() == ScalarType::Float32 || src.dtype() == ScalarType::Float64, "[", kOp,
                "] not implemented for dtype ", dtype_name(src.dtype()));
  for (const auto& w : layers) check_layer(w, src);
  const int64_t N = src.size(0), S = src.size(1), E = src.size(2);
  const Tensor x0 = contiguous(src);
  int64_t F = 0;
  for (const auto& w : layers) F = std::max(F, ffn_width(w));
  auto run_dense = [&] {
    std::vector<int64_t> offsets(N + 1);
    for (int64_t n = 0; n <= N; ++n) offsets[n] = n * S;
    Workspace ws(N * S, E, F, src.dtype());
    Tensor x = view(x0, {N * S, E});
    for (const auto& w : layers) {
      encoder_layer(x, w, offsets, dense_bias(masks, N, w.num_heads, S, src.dtype()),
                    masks.is_causal, ws);
      x = ws.x;
    }
    return view(layers.empty() ? clone(x) : x, {N, S, E});
  };
  if (!pack_padding.defined()) return run_dense();
  EMBER_CHECK(pack_padding.dtype() == ScalarType::Bool && pack_padding.dim() == 2 &&
                  pack_padding.size(0) == N && pack_padding.size(1) == S,
              "[", kOp, "] the padding mask must be bool of shape (", N, ", ", S, "), got ",
              dtype_name(pack_padding.dtype()), " ", shape_str(pack_padding.sizes()));
  EMBER_CHECK(!masks.attn_mask.defined(), "[", kOp,
              "] a packed batch takes no attn_mask (only is_causal)");
  const Tensor pad = contiguous(pack_padding);
  const bool* padded = pad.data<bool>();
  std::vector<int64_t> offsets(N + 1, 0), rows;  // rows: the source row of each packed row
  rows.reserve(N * S);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s = 0; s < S; ++s) {
      if (!padded[n * S + s]) rows.push_back(n * S + s);
    }
    offsets[n + 1] = static_cast<int64_t>(rows.size());
  }
  std::vector<int64_t> lengths(N);
  for (int64_t n = 0; n < N; ++n) lengths[n] = offsets[n + 1] - offsets[n];
  if (!packing_pays(lengths, S, E, F)) {
    // The dense batch with the key padding mask, then zeros at the padded positions: the same
    // result as packing gives.
    EMBER_CHECK(masks.key_padding.defined(), "[", kOp,
                "] a dense run of a padded batch needs its key_padding_mask");
    Tensor out = contiguous(run_dense());
    const size_t row_bytes = static_cast<size_t>(E) * out.itemsize();
    char* base = static_cast<char*>(out.data_ptr());
    for (int64_t r = 0; r < N * S; ++r) {
      if (padded[r]) std::memset(base + r * row_bytes, 0, row_bytes);
    }
    return out;
  }
  const int64_t T = offsets[N];
  const size_t row_bytes = static_cast<size_t>(E) * x0.itemsize();
  const char* from = static_cast<const char*>(x0.data_ptr());
  Workspace ws(T, E, F, src.dtype());
  char* packed = static_cast<char*>(ws.x.data_ptr());
  parallel_for(0, T, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(E, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   std::memcpy(packed + r * row_bytes, from + rows[r] * row_bytes, row_bytes);
                 }
               });
  for (const auto& w : layers) encoder_layer(ws.x, w, offsets, Tensor(), masks.is_causal, ws);
  Tensor out = zeros({N, S, E}, TensorOptions(src.dtype()));
  char* to = static_cast<char*>(out.data_ptr());
  const char* result = static_cast<const char*>(ws.x.data_ptr());
  parallel_for(0, T, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(E, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   std::memcpy(to + rows[r] * row_bytes, result + r * row_bytes, row_bytes);
                 }
               });
  return out;
}

}  // namespace native
}  // namespace ember
