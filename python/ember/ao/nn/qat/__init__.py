"""Quantization-aware training modules (``torch.ao.nn.qat``): float layers whose weights pass
through a FakeQuantize in every forward."""

from ember import nn
from ember.nn import functional as F

__all__ = ["Conv1d", "Conv2d", "Linear"]


class Linear(nn.Linear):
    """nn.Linear with ``weight_fake_quant`` (from its qconfig) applied to the weight."""

    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None,
                 dtype=None):
        super().__init__(in_features, out_features, bias)
        if qconfig is None:
            raise ValueError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if getattr(mod, "qconfig", None) is None:
            raise ValueError("Input float module must have a valid qconfig")
        linear = mod[0] if isinstance(mod, nn.Sequential) else mod
        qat = cls(linear.in_features, linear.out_features, linear.bias is not None,
                  qconfig=mod.qconfig)
        qat.weight = linear.weight
        qat.bias = linear.bias
        return qat

    def to_float(self):
        linear = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = nn.Parameter(self.bias.detach())
        return linear


class _ConvNd:
    """Mixin of the QAT convolutions: the float convolution with ``weight_fake_quant`` applied
    to its weight."""

    _FLOAT_MODULE = None

    def _init_qat(self, qconfig):
        if qconfig is None:
            raise ValueError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if getattr(mod, "qconfig", None) is None:
            raise ValueError("Input float module must have a valid qconfig")
        conv = mod[0] if isinstance(mod, nn.Sequential) else mod
        qat = cls(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                  padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                  bias=conv.bias is not None, padding_mode=conv.padding_mode,
                  qconfig=mod.qconfig)
        qat.weight = conv.weight
        qat.bias = conv.bias
        return qat

    def to_float(self):
        conv = self._FLOAT_MODULE(self.in_channels, self.out_channels, self.kernel_size,
                                  self.stride, self.padding, self.dilation, self.groups,
                                  self.bias is not None, self.padding_mode)
        conv.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            conv.bias = nn.Parameter(self.bias.detach())
        return conv


class Conv1d(_ConvNd, nn.Conv1d):
    """nn.Conv1d with ``weight_fake_quant`` (from its qconfig) applied to the weight."""

    _FLOAT_MODULE = nn.Conv1d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", qconfig=None, device=None,
                 dtype=None):
        nn.Conv1d.__init__(self, in_channels, out_channels, kernel_size, stride, padding,
                           dilation, groups, bias, padding_mode)
        self._init_qat(qconfig)


class Conv2d(_ConvNd, nn.Conv2d):
    """nn.Conv2d with ``weight_fake_quant`` (from its qconfig) applied to the weight."""

    _FLOAT_MODULE = nn.Conv2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", qconfig=None, device=None,
                 dtype=None):
        nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride, padding,
                           dilation, groups, bias, padding_mode)
        self._init_qat(qconfig)
