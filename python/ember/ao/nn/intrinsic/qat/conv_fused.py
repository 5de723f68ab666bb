"""Convolution + batch norm for quantization-aware training (``torch.ao.nn.intrinsic.qat``'s
ConvBn1d / ConvBn2d / ConvBnReLU1d / ConvBnReLU2d, PyTorch's _ConvBnNd design).

The batch norm stays a real, trainable BatchNorm (batch statistics in training, running
statistics updated), but the weight is fake-quantized as it will be after convert() folds the
batch norm into it: ``fq(W * gamma / running_std)``. The convolution output is then divided
by the same factor and the batch norm applied, so training sees the folded weight's rounding
while the batch norm still normalises with batch statistics. In eval (or with the statistics
frozen) this is exactly the folded convolution that convert() produces."""

import math

import ember
import ember.ao.nn.intrinsic as nni
from ember import nn
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.utils import _pair, _single
from ember.nn.parameter import Parameter

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBnReLU1d", "ConvBnReLU2d", "freeze_bn_stats",
           "update_bn_stats"]


def _padding(padding, expand):
    """'same' / 'valid' as they are (the float convolution takes them), numbers expanded."""
    return padding if isinstance(padding, str) else expand(padding)


class _ConvBnNd:
    """The shared part of the QAT Conv+BN modules; the concrete class also derives from the
    float convolution (its _conv_forward, attributes and state_dict layout)."""

    _version = 2
    _FLOAT_MODULE = None  # the fused float module from_float takes (nni.ConvBn2d, ...)
    _FLOAT_CONV_MODULE = None
    _FLOAT_BN_MODULE = None
    _FLOAT_RELU_MODULE = None
    _FUSED_FLOAT_MODULE = None  # what to_float returns with a ReLU (nni.ConvReLU2d, ...)

    def _init_bn(self, out_channels, bias, eps, momentum, freeze_bn, qconfig):
        """After the float convolution's __init__ (built without bias): the batch norm, the
        weight fake quant and the convolution's own bias, as PyTorch's _ConvBnNd.__init__."""
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = self._FLOAT_BN_MODULE(out_channels, eps, momentum, True, True)
        self.weight_fake_quant = self.qconfig.weight()
        if bias:
            self.bias = Parameter(ember.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_bn_parameters()
        # After reset_bn_parameters, which resets the same state.
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()
        # PyTorch's flag for _forward_slow (exact with a zero gamma; two convolutions).
        self._enable_slow_path_for_better_numerical_stability = False

    def reset_running_stats(self):
        self.bn.reset_running_stats()

    def reset_bn_parameters(self):
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        # The convolution's bias (not the batch norm's), initialised as nn.Conv's.
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def update_bn_stats(self):
        """Batch statistics in training again (and running statistics updated)."""
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        """Running statistics from now on, in training too, and no longer updated: what the
        converted model computes (usually done for the last epochs of QAT)."""
        self.freeze_bn = True
        self.bn.training = False
        return self

    def _shapes(self):
        weight_shape = [1] * self.weight.dim()
        weight_shape[0] = -1
        bias_shape = [1] * self.weight.dim()
        bias_shape[1] = -1
        return weight_shape, bias_shape

    def _scale_factor(self):
        if self.bn.running_var is None:
            raise AssertionError("self.bn.running_var must not be None")
        running_std = ember.sqrt(self.bn.running_var + self.bn.eps)
        return self.bn.weight / running_std

    def _forward(self, input):
        if self._enable_slow_path_for_better_numerical_stability:
            return self._forward_slow(input)
        return self._forward_approximate(input)

    def _forward_approximate(self, input):
        """conv(x, fq(W * gamma / running_std)) / (gamma / running_std) + b, then the batch
        norm: one convolution. Approximate only in that the weight's fake quantization is
        undone by the division (gamma must be nonzero)."""
        weight_shape, bias_shape = self._shapes()
        scale_factor = self._scale_factor()
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(weight_shape))
        # The convolution's own bias is added after undoing the scale.
        zero_bias = ember.zeros(self.out_channels, dtype=input.dtype)
        conv = self._conv_forward(input, scaled_weight, zero_bias)
        conv_orig = conv / scale_factor.reshape(bias_shape)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(bias_shape)
        return self.bn(conv_orig)

    def _forward_slow(self, input):
        """Two convolutions (arXiv:1806.08342): the float one for the batch statistics, the
        fake-quantized folded one for the output, rescaled to the batch standard deviation in
        training. Handles gamma == 0."""
        if self.bn.running_var is None or self.bn.running_mean is None:
            raise AssertionError("self.bn.running_var and self.bn.running_mean must not be None")
        weight_shape, bias_shape = self._shapes()
        zero_bias = ember.zeros(self.out_channels, dtype=input.dtype)
        if self.bn.training:
            conv_out = self._conv_forward(input, self.weight, zero_bias)
            with ember.no_grad():  # updates the running statistics
                self.bn(conv_out if self.bias is None
                        else conv_out + self.bias.reshape(bias_shape))
            running_std = ember.sqrt(self.bn.running_var + self.bn.eps)
            scale_factor = self.bn.weight / running_std
            scaled_weight = self.weight_fake_quant(
                self.weight * scale_factor.reshape(weight_shape))
            conv_bn = self._conv_forward(input, scaled_weight, zero_bias)
            avg_dims = [0] + list(range(2, self.weight.dim()))
            batch_mean = conv_out.mean(avg_dims)
            batch_var = ember.square(conv_out - batch_mean.reshape(bias_shape)).mean(avg_dims)
            batch_std = ember.sqrt(batch_var + self.bn.eps)
            conv_bn = conv_bn * (running_std / batch_std).reshape(bias_shape)
            fused_mean, fused_std = batch_mean, batch_std
        else:
            running_std = ember.sqrt(self.bn.running_var + self.bn.eps)
            scale_factor = self.bn.weight / running_std
            scaled_weight = self.weight_fake_quant(
                self.weight * scale_factor.reshape(weight_shape))
            conv_bn = self._conv_forward(input, scaled_weight, zero_bias)
            fused_mean = self.bn.running_mean - (self.bias if self.bias is not None else 0)
            fused_std = running_std
        fused_bias = self.bn.bias - self.bn.weight * fused_mean / fused_std
        conv_bn = conv_bn + fused_bias.reshape(bias_shape)
        if self.bias is not None:  # keeps the bias in the graph (PyTorch's DDP workaround)
            conv_bn = conv_bn + (self.bias - self.bias).reshape(bias_shape)
        return conv_bn

    def forward(self, input):
        return self._forward(input)

    def train(self, mode=True):
        """Sets the mode, but leaves a frozen batch norm in eval: model.train() must not
        bring back batch statistics after freeze_bn_stats()."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    def _folded_float(self):
        """The float convolution computing this module in eval: the batch norm's running
        statistics folded into the weight and bias, the weight scaled by the same float
        expression as forward's, so its fake quantization's parameters fit it exactly."""
        weight_shape, bias_shape = self._shapes()
        with ember.no_grad():
            scale_factor = self._scale_factor()
            weight = self.weight * scale_factor.reshape(weight_shape)
            bias = self.bias if self.bias is not None else ember.zeros(self.out_channels)
            bias = (bias - self.bn.running_mean) * scale_factor + self.bn.bias
        conv = self._FLOAT_CONV_MODULE(self.in_channels, self.out_channels, self.kernel_size,
                                       self.stride, self.padding, self.dilation, self.groups,
                                       True, self.padding_mode)
        conv.weight = Parameter(weight.detach())
        conv.bias = Parameter(bias.detach())
        return conv

    def _for_convert(self):
        """What a quantized Conv's from_float reads, for convert(): the folded float
        convolution carrying this module's qconfig, weight fake quant (its parameters were
        observed on the folded weight) and output observer."""
        conv = self._folded_float()
        conv.qconfig = self.qconfig
        conv.weight_fake_quant = self.weight_fake_quant
        if hasattr(self, "activation_post_process"):
            conv.activation_post_process = self.activation_post_process
        return conv

    def to_float(self):
        """The float convolution (with the batch norm folded in, running statistics), and the
        ReLU for ConvBnReLU (as the fused nn.intrinsic.ConvReLU)."""
        conv = self._folded_float()
        if self._FLOAT_RELU_MODULE is not None:
            fused = self._FUSED_FLOAT_MODULE(conv, self._FLOAT_RELU_MODULE())
            fused.train(self.training)
            return fused
        conv.train(self.training)
        return conv

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Version 1 state_dicts kept the batch norm's parameters and buffers on the module
        itself (gamma, beta, running_mean, ...); version 2 has them under ``bn.``."""
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            v2_to_v1_names = {"bn.weight": "gamma", "bn.bias": "beta",
                              "bn.running_mean": "running_mean", "bn.running_var": "running_var",
                              "bn.num_batches_tracked": "num_batches_tracked"}
            for v2_name, v1_name in v2_to_v1_names.items():
                if prefix + v1_name in state_dict:
                    state_dict[prefix + v2_name] = state_dict.pop(prefix + v1_name)
                elif prefix + v2_name in state_dict:
                    pass  # a v2 layout saved as version 1 (as PyTorch tolerates)
                elif strict:
                    missing_keys.append(prefix + v2_name)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT module of a fused float nn.intrinsic.ConvBn / ConvBnReLU with a qconfig (what
        prepare_qat swaps in). It shares the float modules' parameters and buffers."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"qat.{cls.__name__}.from_float only works for "
                                 f"{cls._FLOAT_MODULE.__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if not mod.qconfig:
            raise AssertionError("Input float module must have a valid qconfig")
        conv, bn = mod[0], mod[1]
        qat = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                  conv.padding, conv.dilation, conv.groups, conv.bias is not None,
                  conv.padding_mode, bn.eps, bn.momentum, False, mod.qconfig)
        qat.weight = conv.weight
        qat.bias = conv.bias
        qat.bn.weight = bn.weight
        qat.bn.bias = bn.bias
        qat.bn.running_mean = bn.running_mean
        qat.bn.running_var = bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat


class ConvBn1d(_ConvBnNd, nn.Conv1d):
    """Conv1d + BatchNorm1d for QAT (from nn.intrinsic.ConvBn1d); converts to a quantized
    Conv1d with the batch norm folded in. ``freeze_bn`` starts it with frozen statistics."""

    _FLOAT_MODULE = nni.ConvBn1d
    _FLOAT_CONV_MODULE = nn.Conv1d
    _FLOAT_BN_MODULE = nn.BatchNorm1d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1,
                 freeze_bn=False, qconfig=None):
        nn.Conv1d.__init__(self, in_channels, out_channels, _single(kernel_size),
                           _single(stride), _padding(padding, _single), _single(dilation),
                           groups, False, padding_mode)
        self._init_bn(out_channels, bias, eps, momentum, freeze_bn, qconfig)


class ConvBnReLU1d(ConvBn1d):
    """Conv1d + BatchNorm1d + ReLU for QAT (from nn.intrinsic.ConvBnReLU1d); converts to
    nn.intrinsic.quantized.ConvReLU1d with the batch norm folded in."""

    _FLOAT_MODULE = nni.ConvBnReLU1d
    _FLOAT_RELU_MODULE = nn.ReLU
    _FUSED_FLOAT_MODULE = nni.ConvReLU1d

    def forward(self, input):
        return F.relu(self._forward(input))


class ConvBn2d(_ConvBnNd, nn.Conv2d):
    """Conv2d + BatchNorm2d for QAT (from nn.intrinsic.ConvBn2d); converts to a quantized
    Conv2d with the batch norm folded in. ``freeze_bn`` starts it with frozen statistics."""

    _FLOAT_MODULE = nni.ConvBn2d
    _FLOAT_CONV_MODULE = nn.Conv2d
    _FLOAT_BN_MODULE = nn.BatchNorm2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1,
                 freeze_bn=False, qconfig=None):
        nn.Conv2d.__init__(self, in_channels, out_channels, _pair(kernel_size), _pair(stride),
                           _padding(padding, _pair), _pair(dilation), groups, False,
                           padding_mode)
        self._init_bn(out_channels, bias, eps, momentum, freeze_bn, qconfig)


class ConvBnReLU2d(ConvBn2d):
    """Conv2d + BatchNorm2d + ReLU for QAT (from nn.intrinsic.ConvBnReLU2d); converts to
    nn.intrinsic.quantized.ConvReLU2d with the batch norm folded in."""

    _FLOAT_MODULE = nni.ConvBnReLU2d
    _FLOAT_RELU_MODULE = nn.ReLU
    _FUSED_FLOAT_MODULE = nni.ConvReLU2d

    def forward(self, input):
        return F.relu(self._forward(input))


_CONV_BN = (ConvBn1d, ConvBnReLU1d, ConvBn2d, ConvBnReLU2d)


def update_bn_stats(mod):
    """``model.apply(update_bn_stats)``: batch statistics again in every QAT Conv+BN (as
    PyTorch, not LinearBn1d: call its method)."""
    if type(mod) in _CONV_BN:
        mod.update_bn_stats()


def freeze_bn_stats(mod):
    """``model.apply(freeze_bn_stats)``: running statistics, no longer updated, in every QAT
    Conv+BN (as PyTorch, not LinearBn1d: call its method)."""
    if type(mod) in _CONV_BN:
        mod.freeze_bn_stats()
