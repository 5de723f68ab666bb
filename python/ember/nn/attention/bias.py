"""ember.nn.attention.bias: causal attention masks that are never built (torch.nn.attention.bias).

``causal_upper_left(L, S)`` and ``causal_lower_right(L, S)`` return a ``CausalBias``: a Tensor
that stands for an L x S causal mask without holding it. Passed as ``attn_mask`` to
``F.scaled_dot_product_attention`` it selects the causal mask:

- upper left: query i sees keys j <= i (the same as ``is_causal=True``);
- lower right: the last query is aligned with the last key, so query i sees keys
  j <= i + S - L (decoding with a cache of earlier keys: L new queries over S keys).

An upper-left mask, and a lower-right one with L == S (the same mask), become the kernel's
causal flag, so nothing L x S is built. A lower-right mask with L != S is built as an L x S bool
mask, as PyTorch does on the CPU. ``_materialize()`` gives the mask as a bool Tensor
(True = attend), which is also what printing shows.

With L > S a lower-right mask leaves the first L - S queries without any key. Their outputs
are zeros, as for every fully masked row (docs/design/attention.md), and building such a mask
warns. (PyTorch's warning says NaN; its CPU kernels give zeros there too.)
"""

from __future__ import annotations

import enum
import warnings

import ember
from ember import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(enum.IntEnum):
    """Where the causal mask's diagonal starts, with PyTorch's values."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias(Tensor):
    """An L x S causal mask for ``F.scaled_dot_product_attention``, not materialised.

    The Tensor itself is empty: ops other than scaled_dot_product_attention see no elements.
    ``_materialize(device)`` builds the bool mask."""

    # Read by F.scaled_dot_product_attention, which would otherwise have to import this module.
    _is_causal_bias = True

    def __new__(cls, variant, seq_len_q, seq_len_kv):
        return Tensor._make_subclass(cls, ember.empty(0, dtype=ember.bool), False)

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        for name, value in (("seq_len_q", seq_len_q), ("seq_len_kv", seq_len_kv)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"CausalBias: {name} must be a non-negative int, got {value!r}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn(
                "Lower right causal bias with seq_len_q > seq_len_kv leaves the first "
                f"{seq_len_q - seq_len_kv} queries without keys: their outputs are zeros",
                stacklevel=3,
            )

    def _upper_left(self, device=None) -> Tensor:
        return ember.ones(self.seq_len_q, self.seq_len_kv, dtype=ember.bool, device=device).tril()

    def _lower_right(self, device=None) -> Tensor:
        ones = ember.ones(self.seq_len_q, self.seq_len_kv, dtype=ember.bool, device=device)
        return ones.tril(self.seq_len_kv - self.seq_len_q)

    def _materialize(self, device=None) -> Tensor:
        """The mask as a (seq_len_q, seq_len_kv) bool Tensor: True where a query attends."""
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        """scaled_dot_product_attention with this mask: the causal flag, aligned as the
        variant says."""
        from ember.nn.functional import scaled_dot_product_attention

        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if (query.size(-2), key.size(-2)) != (attn_mask.seq_len_q, attn_mask.seq_len_kv):
            raise RuntimeError(
                f"scaled_dot_product_attention: a CausalBias for {attn_mask.seq_len_q} queries "
                f"and {attn_mask.seq_len_kv} keys was given with {query.size(-2)} queries and "
                f"{key.size(-2)} keys"
            )
        if attn_mask.variant == CausalVariant.UPPER_LEFT or \
                attn_mask.seq_len_q == attn_mask.seq_len_kv:
            return scaled_dot_product_attention(query, key, value, None, dropout_p, True, scale,
                                                enable_gqa)
        # As PyTorch on the CPU: the mask is built, L x S bools (the fused kernel reads it as a
        # float bias of that shape, expanded over batch and heads without a copy).
        return scaled_dot_product_attention(query, key, value,
                                            attn_mask._materialize(query.device), dropout_p,
                                            False, scale, enable_gqa)

    def __repr__(self) -> str:
        return repr(self._materialize())

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (CausalBias, (self.variant, self.seq_len_q, self.seq_len_kv))

    def __deepcopy__(self, memo):
        return CausalBias(self.variant, self.seq_len_q, self.seq_len_kv)


def _causal_bias(variant: CausalVariant, name: str, size) -> CausalBias:
    if len(size) != 2:
        raise AssertionError(f"{name} only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(variant, seq_len_q, seq_len_kv)


def causal_upper_left(*size) -> CausalBias:
    """An upper-left causal mask of shape ``size`` = (seq_len_q, seq_len_kv): query i sees keys
    j <= i."""
    return _causal_bias(CausalVariant.UPPER_LEFT, "causal_upper_left", size)


def causal_lower_right(*size) -> CausalBias:
    """A lower-right causal mask of shape ``size`` = (seq_len_q, seq_len_kv): query i sees keys
    j <= i + seq_len_kv - seq_len_q, so the last query sees every key."""
    return _causal_bias(CausalVariant.LOWER_RIGHT, "causal_lower_right", size)
