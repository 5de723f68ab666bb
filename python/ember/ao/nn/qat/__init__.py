"""Quantization-aware training modules (``torch.ao.nn.qat``): float layers whose weights pass
through a FakeQuantize in every forward."""

from ember import nn
from ember.nn import functional as F

__all__ = ["Linear"]


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
