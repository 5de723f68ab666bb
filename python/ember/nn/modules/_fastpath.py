"""The transformer encoder's inference fastpath: when it may run, and the call into C++.

``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder`` ask ``layer_reason`` /
``encoder_reason`` first; an empty string means the fused C++ path
(``ember._C._nn._transformer_encoder_fastpath``) gives the regular path's result to float
rounding, so it runs. Every condition is listed in docs/design/transformer.md; the strings are
what ``ember.nn.why_not_fastpath`` returns."""

import sys

import ember
from ember.nn import functional as F

from . import _global_hooks
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .linear import Linear, NonDynamicallyQuantizableLinear
from .normalization import LayerNorm

_DTYPES = (ember.float32, ember.float64)


class BadInput(str):
    """A reason that is an error in the input: where every other condition holds, forward raises
    it as a RuntimeError (as PyTorch's fused kernel does) instead of taking the regular path."""


def activation_code(activation) -> int:
    """1 for relu, 2 for gelu (erf form), 0 for anything the fused layer cannot run."""
    if activation is F.relu or type(activation) is ReLU:
        return 1
    if activation is F.gelu or (type(activation) is GELU and activation.approximate == "none"):
        return 2
    return 0


def _hooked_submodule(module) -> str:
    """The name of the first submodule with forward hooks, '' if none. The module's own hooks
    do not count: they fire around its forward whichever path runs inside."""
    if _global_hooks._global_forward_hooks or _global_hooks._global_forward_pre_hooks:
        return "global forward hooks (register_module_forward_hook)"
    for name, sub in module.named_modules():
        if name and (sub._forward_hooks or sub._forward_pre_hooks):
            return name
    return ""


def _layer_structure_reason(layer, prefix: str = "") -> str:
    """Reasons found from the layer alone (no input)."""
    attn = layer.self_attn
    if type(attn) not in (MultiheadAttention, _dynamic_attention()):
        return f"{prefix}self_attn is a {type(attn).__name__}, not nn.MultiheadAttention"
    for name in ("linear1", "linear2"):
        if type(getattr(layer, name)) not in (Linear, _dynamic_linear()):
            return (f"{prefix}{name} is a {type(getattr(layer, name)).__name__}, not nn.Linear "
                    "(or a dynamically quantized one)")
    if type(attn.out_proj) not in (Linear, NonDynamicallyQuantizableLinear, _dynamic_linear()):
        return f"{prefix}self_attn.out_proj is a {type(attn.out_proj).__name__}, not nn.Linear"
    for name in ("norm1", "norm2"):
        if type(getattr(layer, name)) is not LayerNorm:
            return f"{prefix}{name} is a {type(getattr(layer, name)).__name__}, not nn.LayerNorm"
        if len(getattr(layer, name).normalized_shape) != 1:
            return f"{prefix}{name} normalizes more than the last dim"
    if not attn._qkv_same_embed_dim:
        return f"{prefix}self_attn._qkv_same_embed_dim was not True"
    if attn.bias_k is not None or attn.add_zero_attn:
        return f"{prefix}self_attn has add_bias_kv or add_zero_attn"
    if not activation_code(layer.activation):
        return (f"{prefix}activation is {layer.activation!r}, not relu or gelu "
                "(activation_relu_or_gelu was not True)")
    return ""


def _common_reason(module, src, params) -> str:
    """The conditions shared by a layer and an encoder."""
    if not ember.backends.mha.get_fastpath_enabled():
        return "ember.backends.mha.get_fastpath_enabled() was not True"
    if not isinstance(src, ember.Tensor):
        return f"src is a {type(src).__name__}, not a Tensor"
    if src.dim() != 3:
        return f"input not batched; expected src.dim() of 3 but got {src.dim()}"
    if module.training:
        return "training is enabled"
    # ember.onnx loads on first use (ember/__init__.py): until something imported it, no export
    # can be running, and the check must not be what imports it.
    onnx = sys.modules.get("ember.onnx")
    if onnx is not None and onnx.is_in_onnx_export():
        return "exporting to ONNX (the export traces the reference path's ops)"
    if ember.is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in params)):
        return ("grad is enabled and at least one of query or the input/output projection "
                "weights or biases requires_grad")
    if ember.is_autocast_enabled("cpu") or ember.is_autocast_enabled("cuda"):
        return "autocast is enabled"
    if src.device.type != "cpu":
        return f"src is on {src.device}; the fastpath runs on the CPU"
    if src.dtype not in _DTYPES:
        return f"src has dtype {src.dtype}, not float32 or float64"
    for p in params:
        if p.dtype != src.dtype or p.device != src.device:
            return (f"a parameter is {p.dtype} on {p.device} but src is {src.dtype} on "
                    f"{src.device}")
    hooked = _hooked_submodule(module)
    if hooked:
        return f"forward hooks or pre-hooks are attached to {hooked}"
    return ""


def _mask_reason(src, batch_first, heads, src_mask, src_key_padding_mask, mask_name) -> str:
    """Masks whose shapes the fused path does not read: the regular path gives the error."""
    n, s = (src.size(0), src.size(1)) if batch_first else (src.size(1), src.size(0))
    for mask, name in ((src_key_padding_mask, "src_key_padding_mask"), (src_mask, mask_name)):
        if mask is not None and mask.is_floating_point() and mask.dtype != src.dtype:
            # The regular path's attention raises for this; let it.
            return f"{name} is {mask.dtype} but src is {src.dtype}"
    if src_key_padding_mask is not None and tuple(src_key_padding_mask.shape) != (n, s):
        return BadInput(f"src_key_padding_mask has shape {tuple(src_key_padding_mask.shape)}, "
                        f"not (N, S) = {(n, s)}")
    if src_mask is not None:
        shapes = [(s, s)] + [(n * h, s, s) for h in sorted(set(heads))][:1]
        if tuple(src_mask.shape) not in shapes:
            return BadInput(f"{mask_name} has shape {tuple(src_mask.shape)}, not {shapes[0]} or "
                            "(N * nhead, S, S)")
        if len(set(heads)) > 1 and src_mask.dim() == 3:
            return f"a 3-D {mask_name} with layers of different head counts"
    return ""


_CAUSAL_WITHOUT_MASK = (
    "is_causal=True is a hint that {0} is the causal mask, but {0} is None; pass "
    "{0}=nn.Transformer.generate_square_subsequent_mask(S) (PyTorch ignores the hint here in "
    "inference and raises in training)"
)


def _dynamic_linear():
    from ember.ao.nn.quantized.dynamic import Linear as DynamicLinear

    return DynamicLinear


def _dynamic_attention():
    from ember.ao.nn.quantized.dynamic import MultiheadAttention as DynamicAttention

    return DynamicAttention


def _linear_params(linear):
    """(weight, bias) of a float Linear; (packed int8 weights, None) of a dynamic one."""
    if hasattr(linear, "_packed_params"):
        return linear._packed_params._packed_params, None
    return linear.weight, linear.bias


def _quantized_linears(layer):
    attn = layer.self_attn
    named = {"self_attn.in_proj": attn if hasattr(attn, "in_proj") else None,
             "self_attn.out_proj": attn.out_proj, "linear1": layer.linear1,
             "linear2": layer.linear2}
    return [name for name, m in named.items() if hasattr(m, "_packed_params")
            or hasattr(m, "in_proj")]


def _quantized_dtype_reason(layer, src, prefix: str = "") -> str:
    quantized = _quantized_linears(layer)
    if quantized and src.dtype != ember.float32:
        return (f"{prefix}{quantized[0]} is dynamically quantized, which takes float32 input; "
                f"src is {src.dtype}")
    return ""


def layer_params(layer):
    a = layer.self_attn
    in_proj = ((a.in_proj._packed_params, None) if hasattr(a, "in_proj")
               else (a.in_proj_weight, a.in_proj_bias))
    return (*in_proj, *_linear_params(a.out_proj),
            layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,
            *_linear_params(layer.linear1), *_linear_params(layer.linear2))


def layer_tuple(layer):
    """A layer's parameters and settings as the C++ call takes them."""
    return (*layer_params(layer), layer.self_attn.num_heads, layer.norm_first,
            activation_code(layer.activation), layer.norm1.eps, layer.norm2.eps)


def layer_reason(layer, src, src_mask=None, src_key_padding_mask=None, is_causal=False) -> str:
    """Why ``layer(src, ...)`` would take the regular path ('' when the fastpath runs)."""
    reason = _common_reason(layer, src, list(layer.parameters()))
    if reason:
        return reason
    reason = _layer_structure_reason(layer) or _quantized_dtype_reason(layer, src)
    if reason:
        return reason
    if src.size(-1) != layer.self_attn.embed_dim:
        return BadInput(f"src.size(-1) is {src.size(-1)}, not d_model "
                        f"{layer.self_attn.embed_dim}")
    if is_causal and src_mask is None:
        return BadInput(_CAUSAL_WITHOUT_MASK.format("src_mask"))
    return _mask_reason(src, layer.self_attn.batch_first, [layer.self_attn.num_heads], src_mask,
                        src_key_padding_mask, "src_mask")


def encoder_reason(encoder, src, mask=None, src_key_padding_mask=None, is_causal=None) -> str:
    """Why ``encoder(src, ...)`` would take the regular path ('' when the fastpath runs)."""
    params = [p for layer in encoder.layers for p in layer.parameters()]
    reason = _common_reason(encoder, src, params)
    if reason:
        return reason
    if len(encoder.layers) == 0:
        return "the encoder has no layers"
    first = encoder.layers[0]
    for i, layer in enumerate(encoder.layers):
        if type(layer).__name__ != "TransformerEncoderLayer":
            return f"layers.{i} is a {type(layer).__name__}, not nn.TransformerEncoderLayer"
        reason = (_layer_structure_reason(layer, f"layers.{i}.")
                  or _quantized_dtype_reason(layer, src, f"layers.{i}."))
        if reason:
            return reason
        if layer.self_attn.batch_first != first.self_attn.batch_first:
            return f"layers.{i} has another batch_first than layers.0"
        if layer.self_attn.embed_dim != first.self_attn.embed_dim:
            return f"layers.{i} has another d_model than layers.0"
    if src.size(-1) != first.self_attn.embed_dim:
        return BadInput(f"src.size(-1) is {src.size(-1)}, not d_model "
                        f"{first.self_attn.embed_dim}")
    if is_causal and mask is None:
        return BadInput(_CAUSAL_WITHOUT_MASK.format("mask"))
    return _mask_reason(src, first.self_attn.batch_first,
                        [layer.self_attn.num_heads for layer in encoder.layers], mask,
                        src_key_padding_mask, "mask")


def run(layers, src, batch_first, attn_mask, key_padding_mask, is_causal, pack_padding):
    """The fused layers over src; masks canonical (float) or None; pack_padding a bool (N, S)
    mask when the real tokens may be packed (zeros at padded positions), else None."""
    x = src if batch_first else src.transpose(0, 1)
    out = ember._C._nn._transformer_encoder_fastpath(
        x, [layer_tuple(layer) for layer in layers], key_padding_mask, attn_mask,
        bool(is_causal), pack_padding)
    return out if batch_first else out.transpose(0, 1)


def why_not_fastpath(module, *args, **kwargs) -> str:
    """Why ``module(*args, **kwargs)`` would not take the transformer inference fastpath, as
    the first failing condition in words; '' when it would. ``module`` is an
    nn.TransformerEncoderLayer or nn.TransformerEncoder; the arguments are its forward's."""
    from .transformer import TransformerEncoder, TransformerEncoderLayer

    if isinstance(module, TransformerEncoderLayer):
        return module._fastpath_reason(*args, **kwargs)
    if isinstance(module, TransformerEncoder):
        return module._fastpath_reason(*args, **kwargs)
    raise TypeError(
        "why_not_fastpath() takes an nn.TransformerEncoderLayer or nn.TransformerEncoder, got "
        f"{type(module).__name__}"
    )
