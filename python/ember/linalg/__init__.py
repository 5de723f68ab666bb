"""ember.linalg: torch.linalg's functions (batched, float32/64 and complex64/128, autograd).

The functions live in private modules by family, each listing its names in ``__all__``.
"""

from .._C import _LinAlgError as LinAlgError
from .._C import matmul as matmul  # torch.linalg.matmul: an alias
from . import _misc, _solve, _spectral
from ._misc import *  # noqa: F403
from ._solve import *  # noqa: F403
from ._spectral import *  # noqa: F403

LinAlgError.__module__ = "ember.linalg"
LinAlgError.__qualname__ = LinAlgError.__name__ = "LinAlgError"

__all__ = sorted(["LinAlgError", "matmul", *_misc.__all__, *_solve.__all__, *_spectral.__all__])
