// Fused scaled-dot-product attention: validation, dtype handling and the kernel calls. See
// ops/nn/attention.h.
#include "ops/nn/attention.h"

#include <cmath>

#include "core/error.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(sdpa_forward_stub, SdpaForwardFn);
EMBER_DEFINE_STUB(sdpa_backward_stub, SdpaBackwardFn);
EMBER_DEFINE_STUB(sdpa_packed_forward_stub, SdpaPackedForwardFn);

namespace {

constexpr const char* kOp = "_scaled_dot_product_flash_attention_for_cpu";

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v) {
  EMBER_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "[", kOp,
              "] expected 4-D query, key and value (batch, heads, sequence, embedding), got "
              "shapes ",
              shape_str(q.sizes()), ", ", shape_str(k.sizes()), " and ", shape_str(v.sizes()));
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), "[", kOp,
              "] expected query, key and value of one dtype, got ", dtype_name(q.dtype()), ", ",
              dtype_name(k.dtype()), " and ", dtype_name(v.dtype()));
  EMBER_CHECK_T(NotImplementedError, is_floating(q.dtype()), "[", kOp,
                "] not implemented for dtype ", dtype_name(q.dtype()));
  EMBER_CHECK(q.size(0) == k.size(0) && q.size(0) == v.size(0), "[", kOp,
              "] query, key and value must have one batch size, got ", shape_str(q.sizes()), ", ",
              shape_str(k.sizes()), " and ", shape_str(v.sizes()));
  EMBER_CHECK(k.size(1) == v.size(1) && k.size(1) > 0 && q.size(1) % k.size(1) == 0, "[", kOp,
              "] the query heads (", q.size(1),
              ") must be a multiple of the key and value heads, which must agree (", k.size(1),
              ", ", v.size(1), ")");
  EMBER_CHECK(q.size(3) == k.size(3), "[", kOp,
              "] query and key must have one embedding size, got ", q.size(3), " and ", k.size(3));
  EMBER_CHECK(k.size(2) == v.size(2), "[", kOp,
              "] key and value must have one sequence length, got ", k.size(2), " and ", v.size(2));
}

ScalarType compute_type(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

// The kernels want the last dim contiguous and the compute dtype; other strides are fine.
Tensor prepare(const Tensor& t, ScalarType ct) {
  Tensor r = t.dtype() == ct ? t : to_dtype(t, ct);
  return r.size(3) > 1 && r.stride(3) != 1 ? contiguous(r) : r;
}

Tensor prepare_bias(const Tensor& bias, const Tensor& q, int64_t S, ScalarType ct) {
  if (!bias.defined()) return bias;
  EMBER_CHECK(is_floating(bias.dtype()), "[", kOp,
              "] attn_mask must be a float bias here (a bool mask is turned into one first), "
              "got ",
              dtype_name(bias.dtype()));
  const DimVector want{q.size(0), q.size(1), q.size(2), S};
  broadcast_shapes(bias.sizes(), want, kOp);  // raises naming both shapes when they do not fit
  Tensor b = bias.dtype() == ct ? bias : to_dtype(bias, ct);
  return expand(b, want);
}

// Note [Output layout as the query's]: the output takes the query's order of its batch, head
// and query dims (the embedding innermost), as PyTorch's CPU kernel gives it. A query that is a
// head-split view of a (batch, sequence, 3 * heads * embedding) projection, the usual
// self-attention, then gives an output laid out (batch, query, head, embedding), so that
// y.transpose(1, 2).view(B, L, H * E) works (PyTorch's SDPA tutorial depends on it) and merging
// the heads costs nothing; a contiguous query gives a contiguous output, which programs view
// as (B * H, L, E). The order is torch.preserve_format's (dense_strides_like: a broadcast batch
// keeps its place). A query whose embedding is not innermost, or a value width other than the
// query's, gives a contiguous output, as in PyTorch. The kernels write through the strides.
Tensor output_like_query(const Tensor& q, int64_t ev, ScalarType dtype) {
  const DimVector shape{q.size(0), q.size(1), q.size(2), ev};
  if (ev != q.size(3) || (q.size(3) > 1 && q.stride(3) != 1)) {
    return empty(shape, TensorOptions(dtype));
  }
  return empty_strided(shape, dense_strides_like(q.sizes(), q.strides()), TensorOptions(dtype));
}

}  // namespace

double sdpa_scale(const Tensor& q, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(q.dim() - 1)));
}

std::tuple<Tensor, Tensor> scaled_dot_product_fused_attention(const Tensor& q, const Tensor& k,
                                                              const Tensor& v,
                                                              const Tensor& attn_bias,
                                                              bool is_causal,
                                                              std::optional<double> scale) {
  check_inputs(q, k, v);
  EMBER_CHECK(!(is_causal && attn_bias.defined()), "[", kOp,
              "] Explicit attn_mask should not be set when is_causal=True");
  const ScalarType ct = compute_type(q.dtype());
  const Tensor qc = prepare(q, ct), kc = prepare(k, ct), vc = prepare(v, ct);
  const Tensor bc = prepare_bias(attn_bias, q, k.size(2), ct);
  Tensor out = output_like_query(q, v.size(3), ct);
  Tensor lse = empty({q.size(0), q.size(1), q.size(2)}, TensorOptions(ct));
  if (out.numel() > 0) {
    SdpaParams p;
    p.scale = sdpa_scale(q, scale);
    p.is_causal = is_causal;
    if (k.size(2) == 0) {
      // No keys: every row is fully masked (zeros, lse = -inf), as the kernel would give.
      fill_(out, Scalar(0.0));
      lse = full(lse.sizes(), Scalar(-INFINITY), TensorOptions(ct));
    } else {
      sdpa_forward_stub(q.device(), out, lse, qc, kc, vc, bc, p);
    }
  }
  if (out.dtype() != q.dtype()) {
    Tensor converted = output_like_query(q, v.size(3), q.dtype());
    copy_(converted, out);
    out = converted;
  }
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> scaled_dot_product_fused_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
    const Tensor& attn_bias, const Tensor& out, const Tensor& logsumexp, bool is_causal,
    std::optional<double> scale) {
  check_inputs(q, k, v);
  const ScalarType ct = compute_type(q.dtype());
  EMBER_CHECK(grad_out.sizes().equals(out.sizes()), "[", kOp, "_backward] grad of shape ",
              shape_str(grad_out.sizes()), " does not match the output's shape ",
              shape_str(out.sizes()));
  const Tensor qc = prepare(q, ct), kc = prepare(k, ct), vc = prepare(v, ct);
  const Tensor gc = prepare(grad_out, ct), oc = prepare(out, ct);
  const Tensor lc = contiguous(logsumexp.dtype() == ct ? logsumexp : to_dtype(logsumexp, ct));
  const Tensor bc = prepare_bias(attn_bias, q, k.size(2), ct);
  // The kernel writes every element of the three gradients, so they start uninitialised;
  // only the shapes it does not run on start (and stay) zero.
  const bool runs = q.numel() > 0 && k.numel() > 0 && v.size(3) > 0 && q.size(2) > 0;
  const auto make = [&](const Tensor& like) {
    return runs ? empty(like.sizes(), TensorOptions(ct)) : zeros(like.sizes(), TensorOptions(ct));
  };
  Tensor dq = make(q), dk = make(k), dv = make(v);
  if (runs) {
    SdpaParams p;
    p.scale = sdpa_scale(q, scale);
    p.is_causal = is_causal;
    sdpa_backward_stub(q.device(), dq, dk, dv, gc, qc, kc, vc, bc, oc, lc, p);
  }
  if (ct != q.dtype()) {
    dq = to_dtype(dq, q.dtype());
    dk = to_dtype(dk, q.dtype());
    dv = to_dtype(dv, q.dtype());
  }
  return {dq, dk, dv};
}

}  // namespace native
}  // namespace ember
