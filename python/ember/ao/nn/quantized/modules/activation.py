"""Quantized activations (``torch.ao.nn.quantized.ReLU6`` & co.). ReLU and ReLU6 clamp the
integers; the others compute ``quantize(op(dequantize(x)))`` with their own output scale and
zero point (from the float module's observer), which is what PyTorch's kernels give to one
rounding step."""

import ember
from ember import nn
from ember.nn import functional as F
from ember.nn.functional._softmax import _get_softmax_dim

__all__ = ["ELU", "Hardswish", "LeakyReLU", "ReLU", "ReLU6", "Sigmoid", "Softmax"]


def _clamped(x, lo, hi, who):
    """x's integers clamped to [lo, hi] (in real values), same quantization parameters."""
    if not x.is_quantized or x.qscheme() != ember.per_tensor_affine:
        raise TypeError(f"{who}: expected a per-tensor quantized input, got "
                        f"{x.dtype if not x.is_quantized else x.qscheme()}")
    scale, zp = x.q_scale(), x.q_zero_point()
    ints = x.int_repr()
    lo_q = zp if lo == 0.0 else None
    if lo_q is not None:
        ints = ember.maximum(ints, ember.full((), lo_q, dtype=ints.dtype))
    if hi is not None:
        hi_q = min(int(round(hi / scale)) + zp, ember.iinfo(ints.dtype).max)
        ints = ember.minimum(ints, ember.full((), hi_q, dtype=ints.dtype))
    return ember._make_per_tensor_quantized_tensor(ints, scale, zp)


class ReLU(nn.ReLU):
    """ReLU on a quantized tensor: its integers clamped below at the zero point."""

    def forward(self, input):
        return _clamped(input, 0.0, None, "quantized ReLU")

    def _get_name(self):
        return "QuantizedReLU"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU(mod.inplace)


class ReLU6(nn.ReLU6):
    """ReLU6 on a quantized tensor: clamped to the integers of 0 and 6."""

    def forward(self, input):
        return _clamped(input, 0.0, 6.0, "quantized ReLU6")

    def _get_name(self):
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU6(mod.inplace)


def _requantized(input, op, scale, zero_point, who, float_ok=False):
    """op on input's real values, quantized per tensor with (scale, zero_point) in input's
    dtype. ``float_ok``: a float input gets the float op itself.

    Sigmoid, Softmax, Hardsigmoid and Tanh pass float_ok: they are in Ember's static mapping
    but not in PyTorch's, which leaves them float (its float ops take quantized tensors too),
    so a PyTorch program with one of them in a float region (after a DeQuantStub, under the
    model's qconfig) must still run after convert()."""
    if not isinstance(input, ember.Tensor) or not input.is_quantized:
        if float_ok and isinstance(input, ember.Tensor):
            return op(input)
        raise TypeError(f"{who}: expected a quantized input, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}: put a QuantStub "
                        "before it")
    return ember.quantize_per_tensor(op(input.dequantize()), float(scale), int(zero_point),
                                     input.dtype)


class Hardswish(nn.Hardswish):
    """Hardswish on a quantized tensor, requantized with ``scale`` and ``zero_point``
    (buffers, as PyTorch's)."""

    def __init__(self, scale, zero_point, device=None, dtype=None):
        super().__init__()
        self.register_buffer("scale", ember.tensor(float(scale)))
        self.register_buffer("zero_point", ember.tensor(int(zero_point)))

    def forward(self, input):
        return _requantized(input, F.hardswish, self.scale, self.zero_point,
                            "quantized Hardswish")

    def _get_name(self):
        return "QuantizedHardswish"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Hardswish(float(scale), int(zero_point))

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(float(scale), int(zero_point))


class ELU(nn.ELU):
    """ELU on a quantized tensor, requantized with ``scale`` and ``zero_point``."""

    def __init__(self, scale, zero_point, alpha=1.0):
        super().__init__(alpha)
        self.scale = scale
        self.zero_point = zero_point

    def forward(self, input):
        return _requantized(input, lambda x: F.elu(x, self.alpha), self.scale, self.zero_point,
                            "quantized ELU")

    def _get_name(self):
        return "QuantizedELU"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return ELU(float(scale), int(zero_point), mod.alpha)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(float(scale), int(zero_point), mod.alpha)


class LeakyReLU(nn.LeakyReLU):
    """LeakyReLU on a quantized tensor, requantized with ``scale`` and ``zero_point``
    (buffers, as PyTorch's)."""

    def __init__(self, scale, zero_point, negative_slope=1e-2, inplace=False, device=None,
                 dtype=None):
        super().__init__(negative_slope, inplace)
        self.register_buffer("scale", ember.tensor(float(scale)))
        self.register_buffer("zero_point", ember.tensor(int(zero_point)))

    def forward(self, input):
        return _requantized(input, lambda x: F.leaky_relu(x, self.negative_slope), self.scale,
                            self.zero_point, "quantized LeakyReLU")

    def _get_name(self):
        return "QuantizedLeakyReLU"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(scale), int(zero_point), mod.negative_slope, mod.inplace)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(float(scale), int(zero_point), mod.negative_slope, mod.inplace)


class Sigmoid(nn.Sigmoid):
    """Sigmoid on a quantized tensor, requantized with ``output_scale`` and
    ``output_zero_point``: 1/256 and 0 from prepare's fixed-parameter observer, PyTorch's
    quantized sigmoid output."""

    def __init__(self, output_scale, output_zero_point):
        super().__init__()
        self.output_scale = output_scale
        self.output_zero_point = output_zero_point

    def forward(self, input):
        return _requantized(input, ember.sigmoid, self.output_scale, self.output_zero_point,
                            "quantized Sigmoid", float_ok=True)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        output_scale, output_zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(output_scale), int(output_zero_point))


class Softmax(nn.Softmax):
    """Softmax along ``dim`` on a quantized tensor, requantized with ``scale`` and
    ``zero_point``."""

    def __init__(self, dim=None, scale=1.0, zero_point=0):
        super().__init__()
        self.dim = dim
        self.scale = scale
        self.zero_point = zero_point

    def forward(self, input):
        dim = self.dim
        if dim is None:
            dim = _get_softmax_dim("softmax", input.dim(), 3)
        return _requantized(input, lambda x: ember.softmax(x, dim), self.scale, self.zero_point,
                            "quantized Softmax", float_ok=True)

    def _get_name(self):
        return "QuantizedSoftmax"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Softmax(mod.dim, float(scale), int(zero_point))

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.dim, float(scale), int(zero_point))


class _FixedQParamsActivation:
    """Hardsigmoid and Tanh for convert(), which PyTorch leaves float: its quantized kernels
    then fix their output parameters (1/256 and 0 for hardsigmoid, 2/256 and 128 for tanh),
    which prepare_qat's fixed-parameter fake quantization simulates. Ember's float ops keep
    the input's parameters (hardsigmoid) or take no quantized input (tanh), so convert()
    swaps these in to give PyTorch's output. Subclasses of the float modules, so isinstance
    checks still hold."""

    _OP = None
    _NAME = ""

    def __init__(self, output_scale, output_zero_point):
        super().__init__()  # the float module's
        self.output_scale = output_scale
        self.output_zero_point = output_zero_point

    def forward(self, input):
        return _requantized(input, self._OP, self.output_scale, self.output_zero_point,
                            self._NAME, float_ok=True)

    def _get_name(self):
        return self._NAME

    def extra_repr(self):
        return f"output_scale={self.output_scale}, output_zero_point={self.output_zero_point}"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        output_scale, output_zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(output_scale), int(output_zero_point))


class _Hardsigmoid(_FixedQParamsActivation, nn.Hardsigmoid):
    _OP = staticmethod(F.hardsigmoid)
    _NAME = "QuantizedHardsigmoid"


class _Tanh(_FixedQParamsActivation, nn.Tanh):
    _OP = staticmethod(ember.tanh)
    _NAME = "QuantizedTanh"
