"""Quantized activations (``torch.ao.nn.quantized.ReLU6`` & co.)."""

import ember
from ember import nn

__all__ = ["ReLU", "ReLU6"]


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
