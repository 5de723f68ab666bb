"""Quantized normalisations (``torch.ao.nn.quantized.LayerNorm`` / ``GroupNorm`` /
``InstanceNorm1d`` / ``2d`` / ``3d``): ``quantize(norm(dequantize(x)))`` with the module's output
``scale`` and ``zero_point`` (buffers, from the float module's observer), which is what
PyTorch's kernels give to one rounding step. They share the float module's weight and bias."""

import ember
from ember import nn
from ember.nn import functional as F
from ember.nn.modules.normalization import _NormBase

from .activation import _requantized

__all__ = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LayerNorm"]


class LayerNorm(nn.LayerNorm):
    """LayerNorm on a quantized tensor. ``weight`` and ``bias`` are the float module's
    parameters (or None)."""

    def __init__(self, normalized_shape, weight, bias, scale, zero_point, eps=1e-5,
                 elementwise_affine=True, device=None, dtype=None):
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine)
        self.weight = weight
        self.bias = bias
        self.register_buffer("scale", ember.tensor(float(scale)))
        self.register_buffer("zero_point", ember.tensor(int(zero_point)))

    def forward(self, input):
        return _requantized(
            input, lambda x: F.layer_norm(x, self.normalized_shape, self.weight, self.bias,
                                          self.eps),
            self.scale, self.zero_point, "quantized LayerNorm")

    def _get_name(self):
        return "QuantizedLayerNorm"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(mod.normalized_shape, mod.weight, mod.bias, float(scale), int(zero_point),
                   mod.eps, mod.elementwise_affine)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.normalized_shape, mod.weight, mod.bias, float(scale), int(zero_point),
                   mod.eps, mod.elementwise_affine)


class GroupNorm(nn.GroupNorm):
    """GroupNorm on a quantized tensor. ``weight`` and ``bias`` are the float module's
    parameters (or None)."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, weight, bias, scale, zero_point, eps=1e-5,
                 affine=True, device=None, dtype=None):
        super().__init__(num_groups, num_channels, eps, affine)
        self.weight = weight
        self.bias = bias
        self.register_buffer("scale", ember.tensor(float(scale)))
        self.register_buffer("zero_point", ember.tensor(int(zero_point)))

    def forward(self, input):
        return _requantized(
            input, lambda x: F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps),
            self.scale, self.zero_point, "quantized GroupNorm")

    def _get_name(self):
        return "QuantizedGroupNorm"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(mod.num_groups, mod.num_channels, mod.weight, mod.bias, float(scale),
                   int(zero_point), mod.eps, mod.affine)


def _instance_norm_base(name):
    """ember.nn's InstanceNorm of that name once it has one (so that isinstance holds, as in
    PyTorch), else the batch norms' base, which has the same constructor and attributes."""
    return getattr(nn, name, None) or _NormBase


class _InstanceNorm:
    """The quantized instance norms: each (sample, channel) normalised over its own spatial
    values (never running statistics, as PyTorch's quantized kernel)."""

    _NAME = ""

    def _init_quantized(self, weight, bias, scale, zero_point):
        self.weight = weight
        self.bias = bias
        self.register_buffer("scale", ember.tensor(float(scale)))
        self.register_buffer("zero_point", ember.tensor(int(zero_point)))

    def forward(self, input):
        return _requantized(
            input, lambda x: F.instance_norm(x, None, None, self.weight, self.bias, True,
                                             self.momentum if self.momentum is not None else 0.0,
                                             self.eps),
            self.scale, self.zero_point, f"quantized {type(self).__name__}")

    def _get_name(self):
        return self._NAME

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(mod.num_features, mod.weight, mod.bias, float(scale), int(zero_point),
                   mod.eps, mod.affine)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.num_features, mod.weight, mod.bias, float(scale), int(zero_point),
                   mod.eps, mod.affine)


class InstanceNorm1d(_InstanceNorm, _instance_norm_base("InstanceNorm1d")):
    """InstanceNorm1d on a quantized (N, C, L) tensor."""

    _NAME = "QuantizedInstanceNorm1d"

    def __init__(self, num_features, weight, bias, scale, zero_point, eps=1e-5, momentum=0.1,
                 affine=False, track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self._init_quantized(weight, bias, scale, zero_point)


class InstanceNorm2d(_InstanceNorm, _instance_norm_base("InstanceNorm2d")):
    """InstanceNorm2d on a quantized (N, C, H, W) tensor."""

    _NAME = "QuantizedInstanceNorm2d"

    def __init__(self, num_features, weight, bias, scale, zero_point, eps=1e-5, momentum=0.1,
                 affine=False, track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self._init_quantized(weight, bias, scale, zero_point)


class InstanceNorm3d(_InstanceNorm, _instance_norm_base("InstanceNorm3d")):
    """InstanceNorm3d on a quantized (N, C, D, H, W) tensor."""

    _NAME = "QuantizedInstanceNorm3d"

    def __init__(self, num_features, weight, bias, scale, zero_point, eps=1e-5, momentum=0.1,
                 affine=False, track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self._init_quantized(weight, bias, scale, zero_point)
