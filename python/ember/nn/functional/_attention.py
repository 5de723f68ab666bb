"""scaled_dot_product_attention: the fused CPU kernel (FLASH_ATTENTION: blocked, online
softmax, O(L) memory; ember._C._nn._scaled_dot_product_flash_attention_for_cpu) where it
applies, else PyTorch's math form (softmax(q k^T * scale + bias) v from public ops, every input
differentiable). ember.nn.attention.sdpa_kernel restricts the choice.

The fused kernel takes: floating query/key/value of one dtype with equal batch dims (key/value
heads may divide the query heads), no dropout, and an attn_mask that does not need a gradient.
Anything else runs the math form; with only FLASH_ATTENTION allowed it raises, saying why."""

import math

import ember
from ember.backends import cuda as _backend_flags

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
    (..., L, S), or a CausalBias (ember.nn.attention.bias). is_causal: query i attends to keys
    j <= i (no attn_mask allowed with it).
    enable_gqa: key / value heads (dim -3) are repeated to match the query's heads."""
    if getattr(type(attn_mask), "_is_causal_bias", False):  # ember.nn.attention.bias
        return attn_mask._dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                   enable_gqa)
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
    if attn_mask is not None and attn_mask.dtype != ember.bool and attn_mask.dtype != query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {attn_mask.dtype} and  query.dtype: {query.dtype} instead."
        )
    if not 0.0 <= dropout_p <= 1.0:  # also NaN, which neither backend could apply
        raise RuntimeError(
            "scaled_dot_product_attention: dropout probability has to be between 0 and 1, but "
            f"got {dropout_p}"
        )
    reason = _fused_unavailable(query, key, value, attn_mask, dropout_p, enable_gqa)
    if reason is None and _backend_flags.flash_sdp_enabled():
        return _fused(query, key, value, attn_mask, is_causal, scale)
    if not _backend_flags.math_sdp_enabled():
        why = reason if reason is not None else "the FLASH_ATTENTION backend is disabled"
        raise RuntimeError(
            "No available kernel. Aborting execution. scaled_dot_product_attention on the CPU "
            "has the MATH and FLASH_ATTENTION backends; MATH is disabled and FLASH_ATTENTION "
            f"cannot run: {why}"
        )
    return _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _fused_unavailable(query, key, value, attn_mask, dropout_p, enable_gqa):
    """None when the fused kernel can run these inputs, else the reason in words."""
    if dropout_p > 0.0:
        return f"dropout_p={dropout_p} (the fused kernel has no dropout)"
    if not query.dtype.is_floating_point:
        return f"dtype {query.dtype} is not floating point"
    if attn_mask is not None and attn_mask.requires_grad:
        return "attn_mask requires grad (the fused backward gives no gradient for it)"
    if attn_mask is not None and not (attn_mask.dtype == ember.bool or
                                      attn_mask.dtype.is_floating_point):
        return f"attn_mask of dtype {attn_mask.dtype}"
    if query.dim() != key.dim() or query.dim() != value.dim():
        return (f"query, key and value have {query.dim()}, {key.dim()} and {value.dim()} dims "
                "(they broadcast)")
    if query.dim() >= 3:
        if tuple(query.shape[:-3]) != tuple(key.shape[:-3]) or \
                tuple(key.shape[:-3]) != tuple(value.shape[:-3]):
            return "the batch dims of query, key and value differ (they broadcast)"
        hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
        if hk != hv or hk == 0 or hq % hk != 0 or (hk != hq and hk != 1 and not enable_gqa):
            return f"query, key and value heads {hq}, {hk} and {hv} do not group"
    return None


def _as_4d(t):
    if t.dim() == 4:
        return t
    if t.dim() < 4:
        return t.reshape((1,) * (4 - t.dim()) + tuple(t.shape))
    return t.reshape(-1, *t.shape[-3:])


def _mask_as_bias(attn_mask, dtype):
    if attn_mask.dtype == ember.bool:
        return ember.zeros(attn_mask.shape, dtype=dtype).masked_fill(attn_mask.logical_not(),
                                                                     float("-inf"))
    return attn_mask


def _fused(query, key, value, attn_mask, is_causal, scale):
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    bias = None
    if attn_mask is not None:
        bias = _mask_as_bias(attn_mask, query.dtype)
        bias = _as_4d(bias.expand(*query.shape[:-1], key.size(-2)))
    out, _ = ember._C._nn._scaled_dot_product_flash_attention_for_cpu(
        _as_4d(query), _as_4d(key), _as_4d(value), 0.0, is_causal, attn_mask=bias, scale=scale)
    return out if query.dim() == 4 else out.reshape(*query.shape[:-1], value.size(-1))


def _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
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
