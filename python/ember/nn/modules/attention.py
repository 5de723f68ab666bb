"""MultiheadAttention (``torch.nn.MultiheadAttention``, which PyTorch keeps in
``torch.nn.modules.activation``; ``activation.py`` re-exports it from here).

The computation is ``F.multi_head_attention_forward`` (composed ops, trainable). Parameter names
and shapes are PyTorch's (``in_proj_weight`` or ``q_proj_weight`` / ``k_proj_weight`` /
``v_proj_weight``, ``in_proj_bias``, ``bias_k``, ``bias_v``, ``out_proj.weight``,
``out_proj.bias``), so state_dicts interchange."""

import ember
from ember import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.functional._mha import _canonical_mask, _none_or_dtype
from ember.nn.parameter import Parameter

from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads of size embed_dim // num_heads, with input projections
    of query, key and value and an output projection (Attention Is All You Need).

    kdim / vdim: feature sizes of key and value when they differ from embed_dim (then q, k and
    v get separate projection weights instead of the packed in_proj_weight). add_bias_kv
    appends a learnt key and value to the sequence, add_zero_attn a zero one. batch_first:
    inputs and output are (N, L, E) instead of (L, N, E); unbatched (L, E) input is accepted
    either way. Masks follow PyTorch's MultiheadAttention convention (bool True = may not
    attend); see F.multi_head_attention_forward, also for fully masked rows (zeros here, NaN
    in PyTorch)."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                "embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            # PyTorch's class and message (code that catches it keeps working).
            raise AssertionError("embed_dim must be divisible by num_heads")

        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(
                ember.empty((3 * embed_dim, embed_dim), **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(ember.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(ember.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(ember.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ember.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(ember.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(ember.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        # PyTorch's initialisation: Xavier-uniform projections, zero biases (out_proj's too,
        # unlike a plain Linear), Xavier-normal bias_k / bias_v.
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask=None,
                need_weights: bool = True, attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False):
        """(attn_output, attn_output_weights); the weights are None when need_weights=False.

        attn_output: (L, N, E), (N, L, E) with batch_first, or (L, E) unbatched. Weights:
        (N, L, S) averaged over heads, (N, num_heads, L, S) with average_attn_weights=False,
        without the N for unbatched input."""
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)

        if self.batch_first and is_batched:
            # Transpose so that identities between query, key and value survive: the packed
            # in-projection shares one matmul between inputs that are the same tensor.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))

        in_w, in_b, out_w, out_b, q_w, k_w, v_w = self._projection_weights()
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, in_w, in_b, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, out_w, out_b, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=q_w,
            k_proj_weight=k_w, v_proj_weight=v_w, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            attn_output = attn_output.transpose(1, 0)
        return attn_output, attn_output_weights

    def _projection_weights(self):
        """(in_proj_weight, in_proj_bias, out_proj weight, out_proj bias, q/k/v_proj_weight)
        as multi_head_attention_forward takes them; the dynamically quantized subclass gives
        its packed int8 projections instead."""
        return (self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias,
                self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(merged_mask, mask_type) for batch-first self-attention ``query`` (N, L, E) and
        canonical (float) masks, as fused attention kernels take them: the padding mask alone
        is type 1 (N, L); with an attention mask, type 2, both broadcast to
        (N, num_heads, L, L) and summed; (None, None) without masks."""
        merged_mask, mask_type = None, None
        if key_padding_mask is not None:
            merged_mask, mask_type = key_padding_mask, 1
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            if attn_mask.dim() == 3:
                merged_mask = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged_mask = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged_mask = merged_mask + key_padding_mask.view(batch_size, 1, 1, seq_len)
            mask_type = 2
        return merged_mask, mask_type
