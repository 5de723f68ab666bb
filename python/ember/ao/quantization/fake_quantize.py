"""FakeQuantize: quantization simulated in float during training, with an observer choosing
its parameters (``torch.ao.quantization.fake_quantize``). What a converted model computes in
int8, this computes in float32, with straight-through gradients."""

import ember
from ember import nn

from .observer import (
    FixedQParamsObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    _with_args,
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer,
)

__all__ = ["FakeQuantize", "FixedQParamsFakeQuantize", "default_affine_fixed_qparams_fake_quant",
           "default_fake_quant", "default_fixed_qparams_range_0to1_fake_quant",
           "default_fixed_qparams_range_neg1to1_fake_quant",
           "default_per_channel_weight_fake_quant", "default_symmetric_fixed_qparams_fake_quant",
           "default_weight_fake_quant", "disable_fake_quant", "disable_observer",
           "enable_fake_quant", "enable_observer"]


class FakeQuantize(nn.Module):
    """Observes its input (while ``observer_enabled``), then fake-quantizes it with the
    observer's current scale and zero point (while ``fake_quant_enabled``)."""

    with_args = classmethod(_with_args)

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic=False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min >= quant_max:
                raise ValueError("quant_min must be strictly less than quant_max.")
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        self.activation_post_process = observer(is_dynamic=is_dynamic, **observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = is_dynamic
        self.register_buffer("fake_quant_enabled", ember.tensor([1], dtype=ember.uint8))
        self.register_buffer("observer_enabled", ember.tensor([1], dtype=ember.uint8))
        self.register_buffer("scale", ember.tensor([1.0]))
        self.register_buffer("zero_point", ember.tensor([0], dtype=ember.int32))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        self.is_per_channel = self.qscheme in (ember.per_channel_affine,
                                               ember.per_channel_symmetric)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            if self.scale.shape != scale.shape:
                self.scale = ember.ones(scale.shape)
                self.zero_point = ember.zeros(zero_point.shape, dtype=ember.int32)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point.to(ember.int32))
        if self.fake_quant_enabled[0] == 1:
            if self.is_per_channel:
                X = ember.fake_quantize_per_channel_affine(X, self.scale, self.zero_point,
                                                           self.ch_axis, self.quant_min,
                                                           self.quant_max)
            else:
                X = ember.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point,
                                                          self.quant_min, self.quant_max)
        return X

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0
        return self

    def disable_fake_quant(self):
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0
        return self

    def disable_observer(self):
        return self.enable_observer(False)

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled="
                f"{self.observer_enabled}, quant_min={self.quant_min}, quant_max="
                f"{self.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, ch_axis="
                f"{self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake quantization with the fixed scale and zero point of a FixedQParamsObserver: what
    prepare_qat puts after sigmoid, hardsigmoid, softmax and tanh, whose quantized kernels
    fix their output parameters, so that training sees the rounding the converted model will
    do. Its ``scale`` and ``zero_point`` are the observer's buffers themselves."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        if type(self.activation_post_process) is not FixedQParamsObserver:
            raise AssertionError(f"{type(self).__name__}'s observer must be a "
                                 f"{FixedQParamsObserver.__name__}")
        self._observer_ctr = observer
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point
        if self.qscheme not in (ember.per_tensor_affine, ember.per_tensor_symmetric):
            raise AssertionError("Only per tensor quantization is supported "
                                 f"FixedQParamsFakeQuantize module, got qscheme:{self.qscheme}")

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled="
                f"{self.observer_enabled}, scale={self.scale}, zero_point={self.zero_point}, "
                f"dtype={self.dtype}, quant_min={self.activation_post_process.quant_min}, "
                f"quant_max={self.activation_post_process.quant_max}, qscheme={self.qscheme}")


def _apply(method):
    def fn(mod):
        if isinstance(mod, FakeQuantize):
            getattr(mod, method)()
    fn.__name__ = method
    fn.__doc__ = f"``model.apply({method})`` calls {method}() on every FakeQuantize."
    return fn


disable_fake_quant = _apply("disable_fake_quant")
enable_fake_quant = _apply("enable_fake_quant")
disable_observer = _apply("disable_observer")
enable_observer = _apply("enable_observer")

default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0,
                                            quant_max=255, dtype=ember.quint8,
                                            qscheme=ember.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric, reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
# PyTorch's older names.
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
