""":mod:`ember.optim`: optimization algorithms with torch.optim's API.

Every optimizer step is one fused C++ update per parameter group (ember._C._optim); see
Note [Fused Optimizer Steps] in csrc/ops/optim_steps.cpp.
"""

from . import functional, lr_scheduler, swa_utils  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "Adadelta",
    "Adagrad",
    "Adam",
    "Adamax",
    "AdamW",
    "functional",
    "LBFGS",
    "lr_scheduler",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "SGD",
    "swa_utils",
]
