"""QConfig: which observers make a module's activation and weight parameters
(``torch.ao.quantization.qconfig``)."""

from collections import namedtuple

import ember
from ember import nn

from .observer import (
    default_dynamic_quant_observer,
    default_float_qparams_observer,
    default_float_qparams_observer_4bit,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_weight_observer,
)

__all__ = ["QConfig", "QConfigDynamic", "default_dynamic_qconfig", "default_qat_qconfig",
           "default_qconfig", "float16_dynamic_qconfig", "float_qparams_weight_only_qconfig",
           "float_qparams_weight_only_qconfig_4bit", "get_default_qat_qconfig",
           "get_default_qconfig", "per_channel_dynamic_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """Observer classes (or ``Observer.with_args(...)`` factories) for a module's output
    activation and its weight; each module gets fresh instances."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments to "
                             "constructor if needed")
        return super().__new__(cls, activation, weight)


QConfigDynamic = QConfig  # PyTorch's deprecated alias

default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
# float16 weights for the dynamic linears and RNNs (PyTorch's float16_dynamic_qconfig): the
# products stay float32, the weights are rounded to float16.
float16_dynamic_qconfig = QConfig(
    activation=default_placeholder_observer.with_args(dtype=ember.float16, is_dynamic=True),
    weight=default_placeholder_observer.with_args(dtype=ember.float16))
# Embeddings: weight-only, per row with real zero points; activations stay float.
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
float_qparams_weight_only_qconfig_4bit = QConfig(activation=default_placeholder_observer,
                                                 weight=default_float_qparams_observer_4bit)


def _qat_qconfigs():
    from .fake_quantize import (
        FakeQuantize,
        default_fake_quant,
        default_per_channel_weight_fake_quant,
        default_weight_fake_quant,
    )
    from .observer import MovingAverageMinMaxObserver

    default = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
    x86 = QConfig(activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver,
                                                    quant_min=0, quant_max=255,
                                                    reduce_range=True),
                  weight=default_per_channel_weight_fake_quant)
    onednn = QConfig(activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver,
                                                       quant_min=0, quant_max=255),
                     weight=default_per_channel_weight_fake_quant)
    qnnpack = QConfig(activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver,
                                                        quant_min=0, quant_max=255,
                                                        reduce_range=False),
                      weight=default_weight_fake_quant)
    return default, {"x86": x86, "fbgemm": x86, "onednn": onednn, "qnnpack": qnnpack}


default_qat_qconfig, _QAT_BY_BACKEND = _qat_qconfigs()


def get_default_qat_qconfig(backend="x86", version=1):
    """The QAT qconfig PyTorch recommends for ``backend``: 7-bit activations and per-channel
    weights for x86, fbgemm and onednn (8-bit activations there), per-tensor weights and 8-bit
    activations for qnnpack."""
    if backend not in _QAT_BY_BACKEND:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of "
                             f"{sorted(_QAT_BY_BACKEND)}")
    return _QAT_BY_BACKEND[backend]


def get_default_qconfig(backend="x86", version=0):
    """The post-training qconfig PyTorch recommends for ``backend``: a HistogramObserver on
    activations (7-bit for x86 / fbgemm, 8-bit for onednn / qnnpack) and per-channel symmetric
    weights (per-tensor for qnnpack)."""
    from .observer import HistogramObserver, default_per_channel_weight_observer

    if backend in ("x86", "fbgemm"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "onednn":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_weight_observer)
    raise AssertionError(f"backend: {backend} not supported. backend must be one of ['x86', "
                         "'fbgemm', 'onednn', 'qnnpack']")
