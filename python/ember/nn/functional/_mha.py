"""multi_head_attention_forward: nn.MultiheadAttention's computation as a function, in
PyTorch's (L, N, E) layout, composed of differentiable ops so every weight gets its gradient.

The masks follow PyTorch's MultiheadAttention convention, which is the opposite of
scaled_dot_product_attention's: a bool ``True`` marks a position that may NOT be attended to. Both
masks are first turned into additive float masks (0 or -inf, "canonical" masks), then summed.

Where PyTorch raises AssertionError for a bad argument (it does so explicitly, not with
``assert``), the same class is raised here, so code written against PyTorch catches it; the
messages name the shapes involved."""

import math
import warnings

import ember

from ._attention import scaled_dot_product_attention
from ._conv import linear as _float_linear
from ._dropout import dropout
from ._sampling import pad
from ._softmax import softmax

__all__ = ["multi_head_attention_forward"]


def _none_or_dtype(mask):
    if mask is None:
        return None
    if isinstance(mask, ember.Tensor):
        return mask.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ember.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as an additive float mask of ``target_type`` (0 where
    allowed, -inf where masked); a float mask is returned as it is. ``other_type`` is the dtype of
    the mask it will be combined with: a mismatch warns, as PyTorch does."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != ember.bool and not is_float:
        raise AssertionError(
            f"only bool and floating types of {mask_name} are supported, got {mask.dtype}"
        )
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            stacklevel=2,
        )
    if is_float:
        return mask
    return ember.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))


def _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (L, N, E) input, False for unbatched (L, E); raises on any other rank
    or on masks whose rank does not fit."""
    qd, kd, vd = query.dim(), key.dim(), value.dim()
    if qd not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{qd}-D query tensor of shape {tuple(query.shape)}"
        )
    batched = qd == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if kd != qd or vd != qd:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {qd}-D but found {kd}-D and "
            f"{vd}-D tensors respectively (shapes {tuple(key.shape)} and {tuple(value.shape)})"
        )
    kpm_rank = 2 if batched else 1
    if key_padding_mask is not None and key_padding_mask.dim() != kpm_rank:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or {kpm_rank}-D but "
            f"found {key_padding_mask.dim()}-D tensor of shape {tuple(key_padding_mask.shape)}"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor of shape {tuple(attn_mask.shape)}"
            )
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got "
                    f"{tuple(attn_mask.shape)}"
                )
    return batched


def _linear(x, w, b):
    """x w^T + b, or a quantized projection's own product (its bias inside; b is then None):
    a dynamically quantized MultiheadAttention passes objects with ``_quantized_linear``."""
    if hasattr(w, "_quantized_linear"):
        return w._quantized_linear(x)
    return _float_linear(x, w, b)


def _project_packed(q, k, v, w, b):
    """q, k and v through the rows of the packed (3E, E) in-projection, sharing one matmul
    where the inputs are the same tensor (self-attention, or key is value), as PyTorch does:
    the grouping decides the GEMM shapes and so the last bits of the result."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = _linear(q, w, b).unflatten(-1, (3, E))
            return proj.select(-2, 0), proj.select(-2, 1), proj.select(-2, 2)
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        kv = _linear(k, w_kv, b_kv).unflatten(-1, (2, E))
        return _linear(q, w_q, b_q), kv.select(-2, 0), kv.select(-2, 1)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _project_separate(q, k, v, w_q, w_k, w_v, b):
    """q, k and v through their own weights (kdim / vdim differ from embed_dim)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)),
                           ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(
                f"expecting {name} weights shape of {shape}, but got {tuple(w.shape)}"
            )
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _static_kv(static, name, bsz, num_heads, head_dim):
    if static.size(0) != bsz * num_heads or static.size(2) != head_dim:
        raise AssertionError(
            f"expecting {name} of shape ({bsz * num_heads}, S, {head_dim}) "
            f"(N * num_heads, S, head_dim), but got {tuple(static.shape)}"
        )
    return static


def _softmax_zero_for_empty_rows(scores):
    """Softmax over the last dim, where a row whose scores are all -inf (every key masked out)
    gives zeros instead of NaN. Such rows are set to 0 before the softmax (so no NaN enters the
    graph, forward or backward) and zeroed after it."""
    empty = (scores == float("-inf")).all(-1, keepdim=True)
    weights = softmax(scores.masked_fill(empty, 0.0), dim=-1)
    return weights.masked_fill(empty, 0.0)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention of query (L, N, E) over key (S, N, Ek) and value (S, N, Ev), or of
    unbatched (L, E) / (S, Ek) / (S, Ev). Returns (attn_output, attn_output_weights).

    key_padding_mask (N, S), or (S) unbatched, and attn_mask (L, S) or (N * num_heads, L, S):
    bool, True = may not attend, or float, added to the scores. is_causal is a hint that
    attn_mask is the causal mask; attn_mask is still required with it. bias_k / bias_v (1, 1, E)
    append one key / value to the sequence, add_zero_attn one zero key / value per head.

    need_weights=True computes the softmax of the scaled scores explicitly and returns it too,
    averaged over the heads (N, L, S) or per head (N, num_heads, L, S) with
    average_attn_weights=False; need_weights=False runs scaled_dot_product_attention and returns
    None for the weights.

    A query whose keys are all masked out gets zero weights and a zero attention output (before
    the output projection adds its bias), on both paths. PyTorch gives NaN there on the
    need_weights=True path (and on its fused kernels), which then spreads through any later
    layer; zeros keep such rows harmless, e.g. fully padded sequences in a batch."""
    is_batched = _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # Only scaled_dot_product_attention reads the hint: it builds the causal mask itself.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer the causal one

    for name, mask in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
        if mask is not None and mask.dtype != query.dtype:
            raise RuntimeError(
                f"Expected {name} dtype to be bool or float or to match query dtype, but got "
                f"{name}.dtype: {mask.dtype} and query.dtype: {query.dtype} instead."
            )

    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim} "
            f"(query of shape {tuple(query.shape)})"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                f"{tuple(value.shape[:2])}"
            )
    elif key.shape != value.shape:
        raise AssertionError(
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
        )

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _project_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        q, k, v = _project_separate(query, key, value, q_proj_weight, k_proj_weight,
                                    v_proj_weight, in_proj_bias)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # bias_k / bias_v: one more key and value, the same for every batch entry.
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ember.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ember.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # Heads into the batch dim: (L, N, E) -> (N * num_heads, L, head_dim).
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = _static_kv(static_k, "static_k", bsz, num_heads, head_dim)
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = _static_kv(static_v, "static_v", bsz, num_heads, head_dim)

    if add_zero_attn:
        zeros = ember.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = ember.cat([k, zeros], dim=1)
        v = ember.cat([v, zeros.to(v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"Expected key_padding_mask of shape {(bsz, src_len)} (batch, source length), "
                f"but got {tuple(key_padding_mask.shape)}"
            )
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.size(-1)))
        if is_causal and attn_mask is None:
            raise AssertionError("is_causal needs attn_mask when need_weights=True")
        if attn_mask is not None:
            scores = ember.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            scores = ember.bmm(q_scaled, k.transpose(-2, -1))
        weights = _softmax_zero_for_empty_rows(scores)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = ember.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # need_weights=False: scaled_dot_product_attention on (N, num_heads, L, head_dim).
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
