"""scaled_dot_product_attention in PyTorch's math form (softmax(q k^T * scale + bias) v), built
from public ops so that every input gets its gradient. The fused kernel belongs to the
transformer work; this is the reference it will be checked against."""

import math

import ember

__all__ = ["scaled_dot_product_attention"]


def _safe_softmax_last(x):
    # PyTorch's math backend (_safe_softmax): a row whose scores are all -inf (every key masked
    # out) gives zeros instead of NaN. Other rows: exp(x - max) / sum, whose sum is >= 1.
    m = x.amax(-1, keepdim=True).detach()
    m = ember.where(m == float("-inf"), ember.zeros_like(m), m)
    e = (x - m).exp()
    s = e.sum(-1, keepdim=True)
    return e / ember.where(s == 0, ember.ones_like(s), s)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """Attention of query (..., L, E) over key (..., S, E) and value (..., S, Ev).

    attn_mask: bool (True = take part) or float (added to the scores), broadcastable to
    (..., L, S). is_causal: query i attends to keys j <= i (no attn_mask allowed with it).
    enable_gqa: key / value heads (dim -3) are repeated to match the query's heads."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: expected query, key and value to have at least 2 "
            f"dims, got {query.dim()}, {key.dim()} and {value.dim()}"
        )
    if query.size(-1) != key.size(-1):
        raise RuntimeError(
            "scaled_dot_product_attention: query and key must have the same embedding size, "
            f"got {query.size(-1)} and {key.size(-1)}"
        )
    if key.size(-2) != value.size(-2):
        raise RuntimeError(
            "scaled_dot_product_attention: key and value must have the same sequence length, "
            f"got {key.size(-2)} and {value.size(-2)}"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    bias = None
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True"
            )
        causal = ember.ones(L, S, dtype=ember.bool).tril(0)
        bias = ember.zeros(L, S, dtype=query.dtype).masked_fill(causal.logical_not(),
                                                                 float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == ember.bool:
            bias = ember.zeros(attn_mask.shape, dtype=query.dtype).masked_fill(
                attn_mask.logical_not(), float("-inf"))
        else:
            bias = attn_mask
    if enable_gqa:
        hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
        if hq % hk != 0 or hq % hv != 0:
            raise RuntimeError(
                "scaled_dot_product_attention: with enable_gqa=True the number of query heads "
                f"({hq}) must be a multiple of the key ({hk}) and value ({hv}) heads"
            )
        key = key.repeat_interleave(hq // hk, -3)
        value = value.repeat_interleave(hq // hv, -3)
    scores = ember.matmul(query, key.transpose(-2, -1)) * scale_factor
    if bias is not None:
        scores = scores + bias
    weights = _safe_softmax_last(scores)
    if dropout_p > 0.0:
        weights = ember.dropout(weights, dropout_p, True)
    return ember.matmul(weights, value)
