"""Quantized batch norms (``torch.ao.nn.quantized.BatchNorm2d`` / ``BatchNorm3d``): a batch
norm with no convolution before it to fold into. Inference only: the running statistics
normalise, in training mode too (as PyTorch's quantized kernels); the output is requantized
with the module's ``scale`` and ``zero_point`` (buffers, as PyTorch's)."""

import ember
import ember.ao.nn.intrinsic as nni  # its fused modules exist before it imports this package
from ember.nn import functional as F
from ember.nn.modules.normalization import _BatchNorm as _FloatBatchNorm

__all__ = ["BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(_FloatBatchNorm):
    _NNI_BN_RELU_MODULE = None  # the fused float nn.intrinsic.BNReLU of the subclass
    _NDIM = 4
    _NAME = ""
    _RELU = False

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, True, True, device=device, dtype=dtype)
        self.register_buffer("scale", ember.tensor(1.0))
        self.register_buffer("zero_point", ember.tensor(0))

    def _get_name(self):
        return self._NAME

    def _check_input_dim(self, input):
        if input.dim() != self._NDIM:
            shape = "(N, C, H, W)" if self._NDIM == 4 else "(N, C, D, H, W)"
            raise ValueError(f"Input shape must be `{shape}`!")

    def forward(self, input):
        if not isinstance(input, ember.Tensor) or not input.is_quantized:
            raise TypeError(f"{self._get_name()}: expected a quantized input, got "
                            f"{getattr(input, 'dtype', type(input).__name__)}: put a "
                            "QuantStub before it")
        self._check_input_dim(input)
        y = F.batch_norm(input.dequantize(), self.running_mean, self.running_var, self.weight,
                         self.bias, False, 0.0, self.eps)
        if self._RELU:
            y = F.relu(y)
        return ember.quantize_per_tensor(y, float(self.scale), int(self.zero_point),
                                         input.dtype)

    @staticmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """(PyTorch's signature: the subclasses pass themselves.) The quantized batch norm of a
        float BatchNorm (or fused BNReLU) after prepare() and calibration; it shares the float
        module's parameters and running statistics."""
        activation_post_process = mod.activation_post_process
        if type(mod) is cls._NNI_BN_RELU_MODULE:
            mod = mod[0]
        scale, zero_point = activation_post_process.calculate_qparams()
        new_mod = cls(mod.num_features, mod.eps)
        new_mod.weight = mod.weight
        new_mod.bias = mod.bias
        new_mod.running_mean = mod.running_mean
        new_mod.running_var = mod.running_var
        new_mod.scale = scale
        new_mod.zero_point = zero_point
        return new_mod

    @classmethod
    def from_reference(cls, bn, output_scale, output_zero_point):
        qbn = cls(bn.num_features, bn.eps, bn.momentum)
        qbn.weight = bn.weight
        qbn.bias = bn.bias
        qbn.running_mean = bn.running_mean
        qbn.running_var = bn.running_var
        qbn.scale = output_scale
        qbn.zero_point = output_zero_point
        return qbn


class BatchNorm2d(_BatchNorm):
    """BatchNorm2d on a quantized (N, C, H, W) tensor."""

    _NAME = "QuantizedBatchNorm2d"
    _NNI_BN_RELU_MODULE = nni.BNReLU2d

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, device=device, dtype=dtype)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return _BatchNorm.from_float(cls, mod, use_precomputed_fake_quant)


class BatchNorm3d(_BatchNorm):
    """BatchNorm3d on a quantized (N, C, D, H, W) tensor."""

    _NAME = "QuantizedBatchNorm3d"
    _NNI_BN_RELU_MODULE = nni.BNReLU3d
    _NDIM = 5

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, device=device, dtype=dtype)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return _BatchNorm.from_float(cls, mod, use_precomputed_fake_quant)

