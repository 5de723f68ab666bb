"""Statically quantized convolutions (``torch.ao.nn.quantized.Conv1d`` / ``Conv2d`` /
``ConvTranspose1d`` / ``ConvTranspose2d``) with PyTorch's state_dict layout: ``weight`` (qint8),
``bias`` (float), ``scale``, ``zero_point``.
The int8 GEMM behind them unfolds the input channels-last and requantizes in its epilogue
(docs/design/quantization.md); their outputs are channels-last in memory, as PyTorch's."""

import ember
from ember import nn
from ember.nn.modules.utils import _pair, _single

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

_Q = ember._C._quantized
_SUPPORTED_PADDING = {"zeros", "reflect"}


def _observed(cls, mod, conv):
    """(qint8 weight, output scale, output zero point) of a prepared, calibrated float
    convolution `conv` (inside `mod` when fused): its QAT weight fake-quant or a fresh weight
    observer of its qconfig, and its output observer's parameters."""
    from ember.ao.quantization.utils import quantize_weight

    qconfig = getattr(mod, "qconfig", None) or getattr(conv, "qconfig", None)
    if qconfig is None:
        raise RuntimeError(f"{cls.__name__}.from_float: the float module has no qconfig: run "
                           "ember.ao.quantization.prepare() on the model first")
    activation_post_process = getattr(mod, "activation_post_process", None)
    if activation_post_process is None:
        raise RuntimeError(f"{cls.__name__}.from_float: the float module has no output "
                           "observer (activation_post_process): run prepare() and "
                           "calibrate first")
    weight_observer = getattr(conv, "weight_fake_quant", None)
    if weight_observer is None:
        weight_observer = qconfig.weight()
        weight_observer(conv.weight)
    qweight = quantize_weight(conv.weight.detach().float(), weight_observer)
    scale, zero_point = activation_post_process.calculate_qparams()
    return qweight, float(scale), int(zero_point)


class _ConvNd(nn.Module):
    _version = 3
    _NAME = ""
    _FLOAT_MODULE = ()
    _expand = staticmethod(_pair)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _SUPPORTED_PADDING:
            raise ValueError(f"'padding_mode' {padding_mode} is not supported by quantized "
                             f"convolution: use one of {sorted(_SUPPORTED_PADDING)}")
        if isinstance(padding, str):
            raise ValueError(f"{self._get_name()}: string padding {padding!r} is not supported "
                             "by quantized convolution: give the padding as numbers")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = self._expand(kernel_size)
        self.stride = self._expand(stride)
        self.padding = self._expand(padding)
        self.dilation = self._expand(dilation)
        self.transposed = False
        self.output_padding = self._expand(0)
        self.groups = groups
        self.padding_mode = padding_mode
        ints = ember.zeros((out_channels, in_channels // groups, *self.kernel_size),
                           dtype=ember.int8)
        qweight = ember._make_per_tensor_quantized_tensor(ints, 1.0, 0)
        self.set_weight_bias(qweight, ember.zeros(out_channels) if bias else None)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return self._NAME

    def set_weight_bias(self, w, b):
        if b is not None and b.dtype != ember.float32:
            b = b.float()
        # Reflect padding is applied to the input before the convolution, which then pads
        # nothing (PyTorch's quantized modules do the same).
        padding = [0] * len(self.padding) if self.padding_mode != "zeros" else list(self.padding)
        self._packed_params = _Q.conv_prepack(w, b, list(self.stride), padding,
                                              list(self.dilation), self.groups)

    def _weight_bias(self):
        return self._packed_params.unpack()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}, scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias() is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _pad(self, input):
        if self.padding_mode == "zeros":
            return input
        pads = []
        for p in reversed(self.padding):
            pads += [p, p]
        padded = nn.functional.pad(input.dequantize(), pads, mode=self.padding_mode)
        return ember.quantize_per_tensor(padded, input.q_scale(), input.q_zero_point(),
                                         input.dtype)

    def _conv(self, input, relu):
        if not isinstance(input, ember.Tensor) or not input.is_quantized:
            raise TypeError(f"{self._get_name()}: expected a quantized (quint8) input, got "
                            f"{getattr(input, 'dtype', type(input).__name__)}: put a QuantStub "
                            "before it")
        return _Q.conv(self._pad(input), self._packed_params, float(self.scale),
                       int(self.zero_point), relu)

    def forward(self, input):
        return self._conv(input, False)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        w, b = self._weight_bias()
        destination[prefix + "weight"] = w
        destination[prefix + "bias"] = b
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for key in ("weight", "bias", "scale", "zero_point"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
        if all(prefix + key in state_dict for key in ("weight", "bias")):
            self.set_weight_bias(state_dict.pop(prefix + "weight"),
                                 state_dict.pop(prefix + "bias"))
        if prefix + "scale" in state_dict:
            self.scale = float(state_dict.pop(prefix + "scale"))
        if prefix + "zero_point" in state_dict:
            self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A statically quantized copy of a float (or QAT, or fused-with-ReLU) convolution that
        went through prepare() and calibration."""
        conv = mod[0] if isinstance(mod, nn.Sequential) else mod
        qweight, scale, zero_point = _observed(cls, mod, conv)
        qconv = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                    conv.padding, conv.dilation, conv.groups, conv.bias is not None,
                    conv.padding_mode)
        qconv.set_weight_bias(qweight, conv.bias.detach() if conv.bias is not None else None)
        qconv.scale, qconv.zero_point = scale, zero_point
        return qconv

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        qconv = cls(ref_qconv.in_channels, ref_qconv.out_channels, ref_qconv.kernel_size,
                    ref_qconv.stride, ref_qconv.padding, ref_qconv.dilation, ref_qconv.groups,
                    ref_qconv.bias is not None, ref_qconv.padding_mode)
        qconv.set_weight_bias(ref_qconv.get_quantized_weight(), ref_qconv.bias)
        qconv.scale = float(output_scale)
        qconv.zero_point = int(output_zero_point)
        return qconv


class Conv1d(_ConvNd):
    """int8 1-D convolution: quint8 (N, C, L) in, quint8 out."""

    _NAME = "QuantizedConv1d"
    _FLOAT_MODULE = (nn.Conv1d,)
    _expand = staticmethod(_single)


class Conv2d(_ConvNd):
    """int8 2-D convolution: quint8 (N, C, H, W) in, quint8 out (channels-last memory)."""

    _NAME = "QuantizedConv2d"
    _FLOAT_MODULE = (nn.Conv2d,)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution: weight (C_in, C_out / groups, *kernel) quantized per tensor (as
    PyTorch, which refuses per-channel weights here), computed as the int8 GEMM of each input
    pixel with the weight and the columns scattered into exact integer sums."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f"'padding_mode' {padding_mode} is not supported by quantized "
                             "transposed convolution: only 'zeros'")
        nn.Module.__init__(self)
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = self._expand(kernel_size)
        self.stride = self._expand(stride)
        self.padding = self._expand(padding)
        self.dilation = self._expand(dilation)
        self.transposed = True
        self.output_padding = self._expand(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        ints = ember.zeros((in_channels, out_channels // groups, *self.kernel_size),
                           dtype=ember.int8)
        qweight = ember._make_per_tensor_quantized_tensor(ints, 1.0, 0)
        self.set_weight_bias(qweight, ember.zeros(out_channels) if bias else None)
        self.scale = 1.0
        self.zero_point = 0

    def set_weight_bias(self, w, b):
        if b is not None and b.dtype != ember.float32:
            b = b.float()
        self._packed_params = _Q.conv_transpose_prepack(
            w, b, list(self.stride), list(self.padding), list(self.output_padding),
            list(self.dilation), self.groups)

    def extra_repr(self):
        s = super().extra_repr()
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        return s

    def _conv(self, input, relu):
        if not isinstance(input, ember.Tensor) or not input.is_quantized:
            raise TypeError(f"{self._get_name()}: expected a quantized (quint8) input, got "
                            f"{getattr(input, 'dtype', type(input).__name__)}: put a QuantStub "
                            "before it")
        return _Q.conv_transpose(input, self._packed_params, float(self.scale),
                                 int(self.zero_point))

    def forward(self, input, output_size=None):
        if output_size is not None:
            raise ValueError(f"{self._get_name()}: output_size is not supported by quantized "
                             "transposed convolution (nor by PyTorch's): set output_padding "
                             "when constructing the module instead")
        return self._conv(input, False)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A statically quantized copy of a float transposed convolution that went through
        prepare() and calibration (a per-tensor weight observer)."""
        qweight, scale, zero_point = _observed(cls, mod, mod)
        qconv = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding,
                    mod.output_padding, mod.groups, mod.bias is not None, mod.dilation,
                    mod.padding_mode)
        qconv.set_weight_bias(qweight, mod.bias.detach() if mod.bias is not None else None)
        qconv.scale, qconv.zero_point = scale, zero_point
        return qconv

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        qconv = cls(ref_qconv.in_channels, ref_qconv.out_channels, ref_qconv.kernel_size,
                    ref_qconv.stride, ref_qconv.padding, ref_qconv.output_padding,
                    ref_qconv.groups, ref_qconv.bias is not None, ref_qconv.dilation,
                    ref_qconv.padding_mode)
        qconv.set_weight_bias(ref_qconv.get_quantized_weight(), ref_qconv.bias)
        qconv.scale = float(output_scale)
        qconv.zero_point = int(output_zero_point)
        return qconv


class ConvTranspose1d(_ConvTransposeNd):
    """int8 1-D transposed convolution: quint8 (N, C, L) in, quint8 out."""

    _NAME = "QuantizedConvTranspose1d"
    _FLOAT_MODULE = (nn.ConvTranspose1d,)
    _expand = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    """int8 2-D transposed convolution: quint8 (N, C, H, W) in, quint8 out (channels-last
    memory)."""

    _NAME = "QuantizedConvTranspose2d"
    _FLOAT_MODULE = (nn.ConvTranspose2d,)
