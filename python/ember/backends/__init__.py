"""ember.backends: the switches of the libraries behind Ember's kernels, with PyTorch 2.x's
``torch.backends`` API for what CPU programs use.

    ember.backends.cudnn.benchmark = True          # stored and readable back, as in PyTorch
    ember.backends.mkldnn.is_available()           # True: Ember links oneDNN
    with ember.backends.cudnn.flags(enabled=False, deterministic=True):
        ...

The values live in one table, ember.backends._settings (docs/design/backends.md). Submodules
whose flags are assigned as attributes (cudnn, mkldnn) have their module class replaced by a
subclass with a data descriptor per flag (``ContextProp``), so that ``module.flag = value``
validates and stores into the table instead of creating a module attribute.
"""

import sys
import types
from contextlib import contextmanager

from . import _settings

__all__ = [
    "ContextProp",
    "PropModule",
    "disable_global_flags",
    "flags_frozen",
    "cpu",
    "cuda",
    "cudnn",
    "mha",
    "mkl",
    "mkldnn",
    "mps",
    "openmp",
    "quantized",
]

# PyTorch's test-suite guard: after disable_global_flags(), assigning a flag outside its
# flags() context manager raises, so that a test cannot leak a changed flag into the next one.
_allow_nonbracketed_mutation_flag = True


def disable_global_flags():
    """Forbid bare assignment of backend flags (``ember.backends.cudnn.enabled = False``) from
    now on; the ``flags()`` context managers still work."""
    global _allow_nonbracketed_mutation_flag
    _allow_nonbracketed_mutation_flag = False


def flags_frozen():
    """Whether ``disable_global_flags()`` has been called."""
    return not _allow_nonbracketed_mutation_flag


@contextmanager
def _allow_nonbracketed_mutation():
    global _allow_nonbracketed_mutation_flag
    old = _allow_nonbracketed_mutation_flag
    _allow_nonbracketed_mutation_flag = True
    try:
        yield
    finally:
        _allow_nonbracketed_mutation_flag = old


class ContextProp:
    """A module attribute backed by the setting ``name`` in ember.backends._settings."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return _settings.get(self.name)

    def __set__(self, obj, value):
        if flags_frozen():
            raise RuntimeError(
                f"not allowed to set {obj.__name__} flags after disable_global_flags; "
                "please use flags() context manager instead"
            )
        _settings.set(self.name, value)


class PropModule(types.ModuleType):
    """Base class of the backend modules with ContextProp attributes; see ``_install``."""


def _install(module_name, cls):
    """Give the module ``module_name`` the class ``cls`` (a PropModule subclass), so that its
    ContextProps intercept attribute reads and assignments. The module object itself stays the
    same (unlike PyTorch's wrapper module), so its functions and globals are untouched."""
    sys.modules[module_name].__class__ = cls


from . import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp, quantized  # noqa: E402
