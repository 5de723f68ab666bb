"""Quantize and DeQuantize: the float/quantized boundaries of a statically quantized model
(``torch.ao.nn.quantized.Quantize`` / ``DeQuantize``)."""

import ember
from ember import nn

__all__ = ["DeQuantize", "Quantize"]


class Quantize(nn.Module):
    """Quantizes its float input with a fixed scale and zero point (buffers, as PyTorch)."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", ember.tensor([float(scale)]))
        self.register_buffer("zero_point", ember.tensor([int(zero_point)], dtype=ember.int64))
        self.dtype = dtype

    def forward(self, X):
        return ember.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(float(scale), int(zero_point), mod.activation_post_process.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """Turns a quantized input back into float32."""

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()
