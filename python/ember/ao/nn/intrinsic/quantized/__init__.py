"""Quantized fused modules (``torch.ao.nn.intrinsic.quantized``): the ReLU runs in the int8
GEMM's epilogue, before the requantization. A QAT Conv+BN (nn.intrinsic.qat) converts to these
or to the plain quantized Conv / Linear with its batch norm folded in."""

from ember.ao.nn.quantized.modules.batchnorm import BatchNorm2d as _QuantizedBatchNorm2d
from ember.ao.nn.quantized.modules.batchnorm import BatchNorm3d as _QuantizedBatchNorm3d
from ember.ao.nn.quantized.modules.conv import Conv1d as _QuantizedConv1d
from ember.ao.nn.quantized.modules.conv import Conv2d as _QuantizedConv2d
from ember.ao.nn.quantized.modules.linear import Linear as _QuantizedLinear

__all__ = ["BNReLU2d", "BNReLU3d", "ConvReLU1d", "ConvReLU2d", "LinearReLU"]


def _bn_folded(mod):
    """A QAT Conv+BN / Linear+BN as the float layer with its batch norm folded in (carrying
    the qconfig, weight fake quant and output observer), which the quantized layers'
    from_float take; any other module as itself."""
    from ember.ao.nn.intrinsic.qat import conv_fused, linear_fused

    if isinstance(mod, (conv_fused._ConvBnNd, linear_fused.LinearBn1d)):
        return mod._for_convert()
    return mod


class LinearReLU(_QuantizedLinear):
    """A statically quantized Linear with the ReLU fused into its int8 GEMM's epilogue."""

    _FLOAT_MODULE = None  # set below: nn.intrinsic.LinearReLU

    def _get_name(self):
        return "QuantizedLinearReLU"

    def forward(self, x):
        import ember

        return ember._C._quantized.linear(x, self._packed_params._packed_params,
                                          float(self.scale), int(self.zero_point), True)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        from ember.ao.nn.qat import Linear as QATLinear

        if isinstance(mod, QATLinear):  # a fused QAT LinearReLU
            return super().from_float(mod)
        linear = mod[0]
        linear.qconfig = getattr(mod, "qconfig", None)
        linear.activation_post_process = getattr(mod, "activation_post_process", None)
        return super().from_float(linear)


class ConvReLU1d(_QuantizedConv1d):
    """A statically quantized Conv1d with the ReLU fused into its epilogue (also what a QAT
    ConvBnReLU1d converts to, its batch norm folded in)."""

    _NAME = "QuantizedConvReLU1d"

    def forward(self, input):
        return self._conv(input, True)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return super().from_float(_bn_folded(mod), use_precomputed_fake_quant)


class ConvReLU2d(_QuantizedConv2d):
    """A statically quantized Conv2d with the ReLU fused into its epilogue (also what a QAT
    ConvBnReLU2d converts to, its batch norm folded in)."""

    _NAME = "QuantizedConvReLU2d"

    def forward(self, input):
        return self._conv(input, True)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return super().from_float(_bn_folded(mod), use_precomputed_fake_quant)


class _FoldedConvBn1d(_QuantizedConv1d):
    """convert()'s target for a QAT ConvBn1d: its from_float returns a quantized Conv1d
    (exactly nn.quantized.Conv1d) of the convolution with the batch norm folded in. PyTorch
    folds inside nn.quantized.Conv1d.from_float; Ember's takes a float convolution, so the
    folding happens here."""

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return _QuantizedConv1d.from_float(_bn_folded(mod), use_precomputed_fake_quant)


class _FoldedConvBn2d(_QuantizedConv2d):
    """convert()'s target for a QAT ConvBn2d: a quantized Conv2d (exactly
    nn.quantized.Conv2d) of the convolution with the batch norm folded in."""

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return _QuantizedConv2d.from_float(_bn_folded(mod), use_precomputed_fake_quant)


class _FoldedLinearBn1d(_QuantizedLinear):
    """convert()'s target for a QAT LinearBn1d: a quantized Linear (exactly
    nn.quantized.Linear) of the linear layer with the batch norm folded in."""

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return _QuantizedLinear.from_float(_bn_folded(mod), use_precomputed_fake_quant)


class BNReLU2d(_QuantizedBatchNorm2d):
    """A quantized BatchNorm2d with the ReLU applied before the requantization (from a fused
    nn.intrinsic.BNReLU2d)."""

    _NAME = "QuantizedBNReLU2d"
    _RELU = True

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps=eps, momentum=momentum, device=device, dtype=dtype)

    @classmethod
    def from_reference(cls, bn_relu, output_scale, output_zero_point):
        return super().from_reference(bn_relu[0], output_scale, output_zero_point)


class BNReLU3d(_QuantizedBatchNorm3d):
    """A quantized BatchNorm3d with the ReLU applied before the requantization (from a fused
    nn.intrinsic.BNReLU3d)."""

    _NAME = "QuantizedBNReLU3d"
    _RELU = True

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps=eps, momentum=momentum, device=device, dtype=dtype)

    @classmethod
    def from_reference(cls, bn_relu, output_scale, output_zero_point):
        return super().from_reference(bn_relu[0], output_scale, output_zero_point)
