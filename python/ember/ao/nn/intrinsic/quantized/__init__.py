"""Quantized fused modules (``torch.ao.nn.intrinsic.quantized``): the ReLU runs in the int8
GEMM's epilogue, before the requantization."""

from ember.ao.nn.quantized.modules.conv import Conv1d as _QuantizedConv1d
from ember.ao.nn.quantized.modules.conv import Conv2d as _QuantizedConv2d
from ember.ao.nn.quantized.modules.linear import Linear as _QuantizedLinear

__all__ = ["ConvReLU1d", "ConvReLU2d", "LinearReLU"]


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
    """A statically quantized Conv1d with the ReLU fused into its epilogue."""

    _NAME = "QuantizedConvReLU1d"

    def forward(self, input):
        return self._conv(input, True)


class ConvReLU2d(_QuantizedConv2d):
    """A statically quantized Conv2d with the ReLU fused into its epilogue."""

    _NAME = "QuantizedConvReLU2d"

    def forward(self, input):
        return self._conv(input, True)
