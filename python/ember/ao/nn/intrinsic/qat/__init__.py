"""Fused QAT modules (``torch.ao.nn.intrinsic.qat``): a layer (and its batch norm) with
fake-quantized weights, from the fused float modules of nn.intrinsic."""

from ember.ao.nn.qat import Conv1d as _QATConv1d
from ember.ao.nn.qat import Conv2d as _QATConv2d
from ember.ao.nn.qat import Linear as _QATLinear
from ember.nn import functional as F

from .conv_fused import (
    ConvBn1d,
    ConvBn2d,
    ConvBnReLU1d,
    ConvBnReLU2d,
    freeze_bn_stats,
    update_bn_stats,
)
from .linear_fused import LinearBn1d

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvReLU1d", "ConvReLU2d",
           "LinearBn1d", "LinearReLU", "freeze_bn_stats", "update_bn_stats"]


class LinearReLU(_QATLinear):
    """A QAT Linear followed by ReLU, from a fused nn.intrinsic.LinearReLU; converts to
    nn.intrinsic.quantized.LinearReLU."""

    def forward(self, input):
        return F.relu(F.linear(input, self.weight_fake_quant(self.weight), self.bias))


class ConvReLU1d(_QATConv1d):
    """A QAT Conv1d followed by ReLU, from a fused nn.intrinsic.ConvReLU1d."""

    def forward(self, input):
        return F.relu(super().forward(input))


class ConvReLU2d(_QATConv2d):
    """A QAT Conv2d followed by ReLU, from a fused nn.intrinsic.ConvReLU2d; converts to
    nn.intrinsic.quantized.ConvReLU2d."""

    def forward(self, input):
        return F.relu(super().forward(input))
