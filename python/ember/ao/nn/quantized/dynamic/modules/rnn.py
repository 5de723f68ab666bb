"""Dynamically quantized LSTM and GRU (``torch.ao.nn.quantized.dynamic.LSTM`` / ``GRU``): every
gate projection is an int8 GEMM (qint8 weights packed once, each step's input and hidden state
quantized from their own range, 7-bit as nn.quantized.dynamic.Linear), the gate arithmetic float.
The recurrence, packed sequences, bidirectional and multi-layer stacks are nn.LSTM / nn.GRU's
own; only the per-step cell differs. The packed weights live in ``_packed_weights`` (one
LinearPackedParams per projection, in PyTorch's weight order), which is what the state_dict
holds."""

import ember
from ember import nn
from ember.ao.nn.quantized.modules.linear import LinearPackedParams

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNNCell"]

_Q = ember._C._quantized


def _linear(x, params):
    if params.dtype == ember.float16:
        weight, bias = params._packed_params
        return nn.functional.linear(x, weight, bias)
    return _Q._linear_dynamic(x, params._packed_params, True)


class _DynamicRNN:
    """What LSTM and GRU share: packed projections in place of the float parameters."""

    def _drop_float_weights(self, dtype=ember.qint8):
        for name in [n for names in self._all_weights for n in names]:
            delattr(self, name)
            self.register_parameter(name, None)
        # Per layer and direction: ih, hh (and hr for a projected LSTM); biases inside ih / hh.
        count = 3 if self.proj_size > 0 else 2
        self._packed_weights = nn.ModuleList(
            nn.ModuleList(LinearPackedParams(dtype) for _ in range(count))
            for _ in self._all_weights)

    def _update_flat_weights(self):
        pass

    def _layer_weights(self, layer, direction):
        return self._packed_weights[layer * (2 if self.bidirectional else 1) + direction]

    def _get_name(self):
        return f"DynamicQuantized{self.mode}"

    def __repr__(self):
        # As PyTorch: the packed weights are not shown.
        return f"{self._get_name()}({self.extra_repr()})"

    @classmethod
    def _from_float(cls, mod):
        from ember.ao.quantization.qconfig import default_dynamic_qconfig
        from ember.ao.quantization.utils import quantize_weight

        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        dtype = ember.float16 if qconfig.weight().dtype == ember.float16 else ember.qint8
        kwargs = dict(num_layers=mod.num_layers, bias=mod.bias, batch_first=mod.batch_first,
                      dropout=mod.dropout, bidirectional=mod.bidirectional, dtype=dtype)
        if mod.mode == "LSTM":
            kwargs["proj_size"] = mod.proj_size
        qm = cls(mod.input_size, mod.hidden_size, **kwargs)
        for names, packed in zip(mod._all_weights, qm._packed_weights):
            params = {n.split("_l")[0]: getattr(mod, n) for n in names}
            for slot, key in enumerate(("weight_ih", "weight_hh", "weight_hr")[:len(packed)]):
                observer = qconfig.weight()
                observer(params[key])
                weight = params[key].detach().float()
                if dtype == ember.qint8:
                    weight = quantize_weight(weight, observer)
                bias_key = key.replace("weight", "bias")
                bias = params.get(bias_key)
                packed[slot].set_weight_bias(weight, None if bias is None else bias.detach())
        qm.train(mod.training)
        return qm


class LSTM(_DynamicRNN, nn.LSTM):
    """LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, dtype=ember.qint8)"""

    _FLOAT_MODULE = nn.LSTM

    def __init__(self, *args, dtype=ember.qint8, **kwargs):
        super().__init__(*args, **kwargs)
        self._drop_float_weights(dtype)

    def _step(self, x, state, weights):
        h, c = state
        gates = _linear(x, weights[0]) + _linear(h, weights[1])
        i, f, g, o = gates.chunk(4, 1)
        c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
        h = ember.sigmoid(o) * ember.tanh(c)
        if len(weights) == 3:
            h = _linear(h, weights[2])
        return h, c

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls._from_float(mod)


class GRU(_DynamicRNN, nn.GRU):
    """GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, dtype=ember.qint8)"""

    _FLOAT_MODULE = nn.GRU

    def __init__(self, *args, dtype=ember.qint8, **kwargs):
        super().__init__(*args, **kwargs)
        self._drop_float_weights(dtype)

    def _step(self, x, state, weights):
        gi = _linear(x, weights[0])
        gh = _linear(state, weights[1])
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = ember.sigmoid(i_r + h_r)
        z = ember.sigmoid(i_z + h_z)
        n = ember.tanh(i_n + r * h_n)
        return (1 - z) * n + z * state

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls._from_float(mod)


class _DynamicRNNCell(nn.Module):
    """What LSTMCell, GRUCell and RNNCell share: the input and hidden projections as packed
    int8 (or float16) weights with their biases inside, the gate arithmetic float."""

    _GATES = 1
    _FLOAT_MODULE = None

    def __init__(self, input_size, hidden_size, bias=True, dtype=ember.qint8):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_dtype = dtype
        rows = self._GATES * hidden_size
        self._packed_weight_ih = LinearPackedParams(dtype)
        self._packed_weight_hh = LinearPackedParams(dtype)
        for packed, cols in ((self._packed_weight_ih, input_size),
                             (self._packed_weight_hh, hidden_size)):
            weight = ember.zeros(rows, cols)
            if dtype == ember.qint8:
                weight = ember.quantize_per_tensor(weight, 1.0, 0, ember.qint8)
            packed.set_weight_bias(weight, ember.zeros(rows) if bias else None)

    def _get_name(self):
        return f"DynamicQuantized{type(self).__name__}"

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        return s + f", dtype={self.weight_dtype}"

    def __repr__(self):
        # As PyTorch: the packed weights are not shown.
        return f"{self._get_name()}({self.extra_repr()})"

    def _projections(self, x, h):
        return _linear(x, self._packed_weight_ih), _linear(h, self._packed_weight_hh)

    def _batched(self, input, hx, who):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{type(self).__name__}: input has inconsistent input_size: got "
                               f"{input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is not None and unbatched:
            hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(0)
        return x, hx, unbatched

    def _zeros(self, x):
        return ember.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        from ember.ao.quantization.qconfig import default_dynamic_qconfig
        from ember.ao.quantization.utils import quantize_weight

        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        dtype = ember.float16 if qconfig.weight().dtype == ember.float16 else ember.qint8
        kwargs = {"nonlinearity": mod.nonlinearity} if isinstance(mod, nn.RNNCell) else {}
        q = cls(mod.input_size, mod.hidden_size, mod.bias, dtype=dtype, **kwargs)
        for packed, weight, bias in ((q._packed_weight_ih, mod.weight_ih, mod.bias_ih),
                                     (q._packed_weight_hh, mod.weight_hh, mod.bias_hh)):
            w = weight.detach().float()
            if dtype == ember.qint8:
                observer = qconfig.weight()
                observer(w)
                w = quantize_weight(w, observer)
            packed.set_weight_bias(w, None if bias is None else bias.detach())
        return q


class LSTMCell(_DynamicRNNCell):
    """LSTMCell(input_size, hidden_size, bias=True, dtype=ember.qint8): forward(input, hx=None)
    -> (h, c)."""

    _GATES = 4
    _FLOAT_MODULE = nn.LSTMCell

    def forward(self, input, hx=None):
        x, hx, unbatched = self._batched(input, hx, "LSTMCell")
        h, c = hx if hx is not None else (self._zeros(x), self._zeros(x))
        gi, gh = self._projections(x, h)
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
        h = ember.sigmoid(o) * ember.tanh(c)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(_DynamicRNNCell):
    """GRUCell(input_size, hidden_size, bias=True, dtype=ember.qint8)."""

    _GATES = 3
    _FLOAT_MODULE = nn.GRUCell

    def forward(self, input, hx=None):
        x, hx, unbatched = self._batched(input, hx, "GRUCell")
        h = hx if hx is not None else self._zeros(x)
        gi, gh = self._projections(x, h)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = ember.sigmoid(i_r + h_r)
        z = ember.sigmoid(i_z + h_z)
        n = ember.tanh(i_n + r * h_n)
        h = (1 - z) * n + z * h
        return h.squeeze(0) if unbatched else h


class RNNCell(_DynamicRNNCell):
    """RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', dtype=ember.qint8)."""

    _FLOAT_MODULE = nn.RNNCell

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh",
                 dtype=ember.qint8):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, hx, unbatched = self._batched(input, hx, "RNNCell")
        h = hx if hx is not None else self._zeros(x)
        gi, gh = self._projections(x, h)
        h = ember.tanh(gi + gh) if self.nonlinearity == "tanh" else nn.functional.relu(gi + gh)
        return h.squeeze(0) if unbatched else h
