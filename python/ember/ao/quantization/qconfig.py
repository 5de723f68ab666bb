"""QConfig: which observers make a module's activation and weight parameters
(``torch.ao.quantization.qconfig``)."""

from collections import namedtuple

from ember import nn

from .observer import (
    default_dynamic_quant_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)

__all__ = ["QConfig", "QConfigDynamic", "default_dynamic_qconfig", "default_qconfig",
           "per_channel_dynamic_qconfig"]


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
