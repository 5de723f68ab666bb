"""Ember: a tensor library with a C++ core and PyTorch's Python API.

    import ember
    x = ember.randn(3, 4)
    y = (x @ x.T).relu().sum()
"""

from . import _load

_load.preload()

from . import _C  # noqa: E402
from ._C import *  # noqa: E402,F401,F403
from ._C import Tensor, device, dtype  # noqa: E402,F401
from ._dtypes import (  # noqa: E402,F401
    bool,
    cdouble,
    cfloat,
    double,
    finfo,
    float,
    half,
    iinfo,
    int,
    long,
    short,
)
from ._size import Size  # noqa: E402,F401
from ._tensor_str import get_printoptions, printoptions, set_printoptions  # noqa: E402,F401
from ._functional import broadcast_shapes  # noqa: E402,F401
from . import _tensor  # noqa: E402,F401  (Python-level Tensor methods)
from ._elementwise import where  # noqa: E402,F401
from . import return_types  # noqa: E402,F401
from . import __config__  # noqa: E402,F401
from . import cuda, random, utils  # noqa: E402,F401
from . import serialization  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401

__version__ = "0.1.0"
from . import autograd  # noqa: E402,F401
from .autograd.grad_mode import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from . import nn  # noqa: E402,F401  (after autograd: nn's hooks use autograd.Function)
from . import optim  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
