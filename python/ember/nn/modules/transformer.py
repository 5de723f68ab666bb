"""Transformer, TransformerEncoder(Layer) and TransformerDecoder(Layer)
(``torch.nn.modules.transformer``).

The "regular path" is MultiheadAttention, Linear, LayerNorm and Dropout composed, so it trains
and every parameter gets its gradient; the encoder layer and the encoder keep it in
``_regular_forward``. In inference (see _fastpath.py and ``ember.nn.why_not_fastpath``) they
run a fused C++ path instead, which gives the same result to float rounding. Submodule names
follow PyTorch, so PyTorch state_dicts load unchanged."""

import copy

import ember
from ember import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.functional._mha import _canonical_mask, _none_or_dtype

from . import _fastpath
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    # -inf above the diagonal, 0 on and below it: position i sees positions <= i.
    return ember.triu(ember.full((sz, sz), float("-inf"), dtype=dtype, device=device),
                      diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:  # unbatched (S, E)
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None) -> bool:
    """is_causal as given when it is True or False; when None, whether ``mask`` equals the
    square subsequent mask of ``size`` (default: the mask's own size)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear1, activation, linear2), each with a
    residual connection and LayerNorm: after the residual (post-norm, the original Transformer)
    or, with norm_first=True, on the block's input (pre-norm).

    activation: "relu", "gelu" or any callable. Input (S, N, E), (N, S, E) with batch_first,
    or unbatched (S, E)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # PyTorch's flag: 1 for relu, 2 for gelu, 0 for what the fused layer cannot run.
        self.activation_relu_or_gelu = _fastpath.activation_code(activation)
        self.activation = activation

    def forward(self, src: Tensor, src_mask=None, src_key_padding_mask=None,
                is_causal: bool = False) -> Tensor:
        """src_mask (S, S) or (N * nhead, S, S), src_key_padding_mask (N, S): bool (True = may
        not attend) or float (added). is_causal: hint that src_mask is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        reason = self._fastpath_reason(src, src_mask, src_key_padding_mask, is_causal)
        if isinstance(reason, _fastpath.BadInput):
            raise RuntimeError(f"TransformerEncoderLayer: {reason}")
        if not reason:
            # As the regular path's attention: the is_causal hint replaces the mask unless a
            # key padding mask is given.
            causal = bool(is_causal) and src_key_padding_mask is None
            return _fastpath.run([self], src, self.self_attn.batch_first,
                                 None if causal else src_mask, src_key_padding_mask, causal,
                                 None)
        return self._regular_forward(src, src_mask, src_key_padding_mask, is_causal)

    def _fastpath_reason(self, src, src_mask=None, src_key_padding_mask=None,
                         is_causal=False) -> str:
        """Why forward would take the regular path ('' if it takes the fastpath)."""
        return _fastpath.layer_reason(self, src, src_mask, src_key_padding_mask, is_causal)

    def _regular_forward(self, src: Tensor, src_mask, src_key_padding_mask,
                         is_causal: bool = False) -> Tensor:
        """The layer composed of differentiable modules (masks already canonical)."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention over the encoder's output (memory), then a
    feed-forward block; each with a residual connection and LayerNorm, post-norm or (with
    norm_first=True) pre-norm."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias,
                                            **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        """tgt (T, N, E), memory (S, N, E) ((N, T, E) / (N, S, E) with batch_first); tgt_mask
        (T, T), memory_mask (T, S), key padding masks (N, T) / (N, S), as in
        MultiheadAttention."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _why_no_nested_tensor(layer) -> str:
    """Why PyTorch's encoder would not run ``layer`` on nested tensors ('' if it would). Kept
    for ``use_nested_tensor``; unlike PyTorch, nothing is warned."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return "encoder_layer.norm_first was True"
    if not attn.batch_first:
        return "encoder_layer.self_attn.batch_first was not True"
    if not attn._qkv_same_embed_dim:
        return "encoder_layer.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return "encoder_layer.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return "encoder_layer.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return "encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps"
    if attn.num_heads % 2 == 1:
        return "encoder_layer.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` run in turn, then ``norm`` if given.

    enable_nested_tensor and mask_check are PyTorch's switches for its nested-tensor inference
    path; they are stored (``use_nested_tensor`` as PyTorch sets it) but this regular path does
    not use nested tensors, and no warning is given when they cannot apply."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor and not _why_no_nested_tensor(
            encoder_layer)
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask=None, src_key_padding_mask=None,
                is_causal=None) -> Tensor:
        """mask (S, S) or (N * nhead, S, S), src_key_padding_mask (N, S). is_causal=None:
        detected by comparing mask with the square subsequent mask."""
        padding = src_key_padding_mask
        if padding is not None and src.dim() == 3:
            batch_first = self.layers[0].self_attn.batch_first if len(self.layers) else True
            n, s = (src.size(0), src.size(1)) if batch_first else (src.size(1), src.size(0))
            if tuple(padding.shape) != (n, s):
                # PyTorch's encoder checks this before choosing a path, with a RuntimeError.
                raise RuntimeError(
                    f"TransformerEncoder: Mask size should match input size: "
                    f"src_key_padding_mask of shape {tuple(padding.shape)} for src of shape "
                    f"{tuple(src.shape)} (expected {(n, s)})"
                )
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        reason = self._fastpath_reason(src, mask, src_key_padding_mask, is_causal)
        if isinstance(reason, _fastpath.BadInput):
            raise RuntimeError(f"TransformerEncoder: {reason}")
        if not reason:
            return self._fast_forward(src, mask, padding, src_key_padding_mask, is_causal)
        return self._regular_forward(src, mask, src_key_padding_mask, is_causal)

    def _fastpath_reason(self, src, mask=None, src_key_padding_mask=None, is_causal=None) -> str:
        """Why forward would take the regular path ('' if it takes the fastpath)."""
        return _fastpath.encoder_reason(self, src, mask, src_key_padding_mask, is_causal)

    def _fast_forward(self, src, mask, padding, key_padding_mask, is_causal) -> Tensor:
        """The fused layers. With a bool padding mask, enable_nested_tensor and no mask other
        than the causal one, the real tokens are packed into one variable-length batch (the C++
        side keeps the dense batch where its cost model expects that to be faster) and padded
        positions come out as zeros, as PyTorch's nested-tensor path gives them."""
        batch_first = self.layers[0].self_attn.batch_first
        truly_causal = mask is not None and _detect_is_causal_mask(mask, None)
        pack = (self.enable_nested_tensor and padding is not None
                and padding.dtype == ember.bool and (mask is None or truly_causal))
        # The regular path's attention trusts the is_causal hint when no key padding mask is
        # given; packing needs the mask to really be causal.
        causal = truly_causal if pack else (bool(is_causal) and key_padding_mask is None)
        output = _fastpath.run(self.layers, src, batch_first, None if causal else mask,
                               key_padding_mask, causal,
                               padding if pack else None)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _regular_forward(self, src: Tensor, mask, src_key_padding_mask,
                         is_causal: bool) -> Tensor:
        """Each layer in turn on the padded input, then the final norm (masks canonical)."""
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` run in turn over the same memory, then
    ``norm`` if given."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm=None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask=None, memory_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None,
                memory_is_causal: bool = False) -> Tensor:
        """tgt_is_causal=None: detected by comparing tgt_mask with the square subsequent
        mask."""
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder-decoder Transformer: ``num_encoder_layers`` encoder layers and
    ``num_decoder_layers`` decoder layers, each stack followed by a LayerNorm (or
    custom_encoder / custom_decoder in their place). Every parameter of two or more dims is
    re-drawn Xavier-uniform, as PyTorch does.

    forward(src, tgt) encodes src into memory and decodes tgt against it; src (S, N, E) and tgt
    (T, N, E) ((N, S, E) / (N, T, E) with batch_first) or unbatched."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation=F.relu, custom_encoder=None, custom_decoder=None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, bias, **factory_kwargs)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, bias, **factory_kwargs)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False) -> Tensor:
        """The decoder's output, shaped like tgt."""
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError(
                "the batch number of src and tgt must be equal, got src of shape "
                f"{tuple(src.shape)} and tgt of shape {tuple(tgt.shape)}"
            )
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError(
                f"the feature number of src and tgt must be equal to d_model ({self.d_model}), "
                f"got src of shape {tuple(src.shape)} and tgt of shape {tuple(tgt.shape)}"
            )
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere (position i may attend
        to positions 0..i)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
