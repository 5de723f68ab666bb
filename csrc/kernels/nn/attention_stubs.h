// Kernel stubs of the fused scaled-dot-product attention (ops/nn/attention.h includes this
// header; the op is ops/nn/attention.cpp, the kernels kernels/cpu/nn/attention_kernels.cpp).
//
// The kernels see 4-D operands: q (N, Hq, L, E), k (N, Hk, S, E), v (N, Hk, S, Ev), with query
// head h reading key/value head h / (Hq / Hk) (grouped-query attention when Hk < Hq). Any
// strides, except that the last dim of q, k, v, grad_out and out is contiguous. The optional
// additive bias is a view (N, Hq, L, S) with any strides (0 where it broadcasts).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

struct SdpaParams {
  double scale = 1.0;
  bool is_causal = false;  // query i attends to keys j <= i (top-left aligned, as PyTorch)
};

// out (N, Hq, L, Ev) = softmax(scale q k^T + bias) v, without materialising the L x S scores
// (blocks of keys with an online softmax); lse (N, Hq, L) = the log of each row's softmax
// denominator (-inf for a row with every key masked, whose output is 0). out and lse are
// contiguous; float32 / float64.
using SdpaForwardFn = void (*)(const Tensor& out, const Tensor& lse, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& bias,
                               const SdpaParams& p);
EMBER_DECLARE_STUB(sdpa_forward_stub, SdpaForwardFn);

// The gradients of the forward above given grad_out (N, Hq, L, Ev) and the forward's out and
// lse; dq, dk, dv contiguous, of q's, k's and v's shapes (zeroed by the kernel).
using SdpaBackwardFn = void (*)(const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                const Tensor& grad_out, const Tensor& q, const Tensor& k,
                                const Tensor& v, const Tensor& bias, const Tensor& out,
                                const Tensor& lse, const SdpaParams& p);
EMBER_DECLARE_STUB(sdpa_backward_stub, SdpaBackwardFn);

// Self-attention of the transformer fastpath, on a packed QKV projection: qkv (T, 3 H D)
// contiguous, whose column thirds are the queries, keys and values (head h at columns h D ..);
// sequence n owns rows [offsets[n], offsets[n + 1]) and attends within itself. out (T, H D)
// contiguous, heads side by side (what the output projection reads). bias: undefined, or a view
// (N, H, L, L) with any strides when every sequence has length L. float32 / float64.
using SdpaPackedForwardFn = void (*)(const Tensor& out, const Tensor& qkv, const int64_t* offsets,
                                     int64_t sequences, int64_t heads, const Tensor& bias,
                                     const SdpaParams& p);
EMBER_DECLARE_STUB(sdpa_packed_forward_stub, SdpaPackedForwardFn);

}  // namespace native
}  // namespace ember
