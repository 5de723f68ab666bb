"""A dynamically quantized MultiheadAttention: its input and output projections are int8 (as
``nn.quantized.dynamic.Linear``: qint8 weights packed once, activations quantized per call),
the attention itself float. PyTorch has no such module (``quantize_dynamic`` leaves its
attention float); Ember adds it so that a quantized transformer keeps every GEMM in int8, on
the regular path and on the encoder fastpath alike. Its state_dict holds the packed projections
as ``in_proj._packed_params`` (or ``q_proj`` / ``k_proj`` / ``v_proj`` when kdim or vdim differ
from embed_dim) and ``out_proj``."""

import ember
from ember import nn
from ember.ao.nn.quantized.modules.linear import LinearPackedParams

from .linear import Linear as DynamicLinear

__all__ = ["MultiheadAttention"]

_Q = ember._C._quantized


class _Projection:
    """Rows of an int8 projection as multi_head_attention_forward uses a weight: applied with
    ``_quantized_linear``, split into the query rows and the key/value rows, or chunked into
    thirds (cross-attention). The parts are packed once per weight and kept with it."""

    def __init__(self, params, rows=None):
        self._params = params  # a LinearPackedParams
        self._rows = rows  # (start, stop) of params' rows, or None for all of them
        packed = params._packed_params
        n = packed.out_features if rows is None else rows[1] - rows[0]
        self.shape = (n, packed.in_features)

    def _packed(self):
        if self._rows is None:
            return self._params._packed_params
        parts = self._params.__dict__.setdefault("_parts", {})
        if self._rows not in parts:
            weight, bias = self._params._weight_bias()
            start, stop = self._rows
            parts[self._rows] = _Q.linear_prepack(
                weight[start:stop].clone(), None if bias is None else bias[start:stop])
        return parts[self._rows]

    def _quantized_linear(self, x):
        return _Q._linear_dynamic(x, self._packed(), True)

    def split(self, sizes):
        start = 0 if self._rows is None else self._rows[0]
        out = []
        for n in sizes:
            out.append(_Projection(self._params, (start, start + n)))
            start += n
        return tuple(out)

    def chunk(self, n):
        return self.split([self.shape[0] // n] * n)


class MultiheadAttention(nn.MultiheadAttention):
    _FLOAT_MODULE = nn.MultiheadAttention

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__(embed_dim, num_heads, dropout, bias, add_bias_kv, add_zero_attn, kdim,
                         vdim, batch_first)
        # The float projection parameters give way to packed int8 ones (set by from_float).
        for name in ("in_proj_weight", "in_proj_bias", "q_proj_weight", "k_proj_weight",
                     "v_proj_weight"):
            delattr(self, name)
            self.register_parameter(name, None)
        self.out_proj = DynamicLinear(embed_dim, embed_dim, bias_=bias)
        names = ("in_proj",) if self._qkv_same_embed_dim else ("q_proj", "k_proj", "v_proj")
        for name in names:
            setattr(self, name, LinearPackedParams())

    def _get_name(self):
        return "DynamicQuantizedMultiheadAttention"

    def __repr__(self):
        # As PyTorch's quantized modules: the packed parameters are not shown as children.
        lines = [f"{self._get_name()}("]
        for name, child in self.named_children():
            if not isinstance(child, LinearPackedParams):
                body = repr(child).replace("\n", "\n  ")
                lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"

    def _projection_weights(self):
        out_w = _Projection(self.out_proj._packed_params)
        if self._qkv_same_embed_dim:
            return _Projection(self.in_proj), None, out_w, None, None, None, None
        q_w, k_w, v_w = (_Projection(getattr(self, n)) for n in ("q_proj", "k_proj", "v_proj"))
        # multi_head_attention_forward chunks in_proj_bias for separate weights: the biases
        # are inside the packed projections, so there is none to chunk.
        return None, None, out_w, None, q_w, k_w, v_w

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        from ember.ao.quantization.qconfig import default_dynamic_qconfig
        from ember.ao.quantization.utils import quantize_weight

        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        qm = cls(mod.embed_dim, mod.num_heads, mod.dropout, mod.out_proj.bias is not None,
                 mod.bias_k is not None, mod.add_zero_attn, mod.kdim, mod.vdim,
                 mod.batch_first)
        if mod.bias_k is not None:
            qm.bias_k = nn.Parameter(mod.bias_k.detach().clone())
            qm.bias_v = nn.Parameter(mod.bias_v.detach().clone())

        def pack(target, weight, bias):
            observer = qconfig.weight()
            observer(weight)
            target.set_weight_bias(quantize_weight(weight.detach().float(), observer), bias)

        bias = None if mod.in_proj_bias is None else mod.in_proj_bias.detach()
        if mod._qkv_same_embed_dim:
            pack(qm.in_proj, mod.in_proj_weight, bias)
        else:
            biases = (None, None, None) if bias is None else bias.chunk(3)
            for name, b in zip(("q_proj", "k_proj", "v_proj"), biases):
                pack(getattr(qm, name), getattr(mod, name + "_weight"), b)
        out_bias = None if mod.out_proj.bias is None else mod.out_proj.bias.detach()
        pack(qm.out_proj._packed_params, mod.out_proj.weight, out_bias)
        qm.train(mod.training)
        return qm
