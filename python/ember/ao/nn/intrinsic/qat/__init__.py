"""Fused QAT modules (``torch.ao.nn.intrinsic.qat``)."""

from ember.ao.nn.qat import Linear as _QATLinear
from ember.nn import functional as F

__all__ = ["LinearReLU"]


class LinearReLU(_QATLinear):
    """A QAT Linear followed by ReLU, from a fused nn.intrinsic.LinearReLU; converts to
    nn.intrinsic.quantized.LinearReLU."""

    def forward(self, input):
        return F.relu(F.linear(input, self.weight_fake_quant(self.weight), self.bias))
