r"""Functional optimizer APIs: each updates the given tensors in place with one fused C++ call."""

from .adadelta import adadelta
from .adagrad import adagrad
from .adam import adam
from .adamax import adamax
from .adamw import adamw
from .nadam import nadam
from .radam import radam
from .rmsprop import rmsprop
from .sgd import sgd

__all__ = ["adadelta", "adagrad", "adam", "adamax", "adamw", "nadam", "radam", "rmsprop", "sgd"]
