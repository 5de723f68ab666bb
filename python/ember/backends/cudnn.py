"""ember.backends.cudnn: PyTorch's cuDNN switches. Ember has no cuDNN (is_available() is False,
version() is None); the flags are kept with PyTorch's defaults so that scripts which set them
(``ember.backends.cudnn.benchmark = True``) run unchanged and can read them back."""

from contextlib import contextmanager

from . import ContextProp, PropModule, _allow_nonbracketed_mutation, _install, _settings

__all__ = ["flags", "is_acceptable", "is_available", "set_flags", "version"]


def is_available():
    """Whether cuDNN can be used: False, Ember has no cuDNN backend."""
    return False


def version():
    """The cuDNN version, or None when cuDNN is not available (always, in Ember)."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN can run on ``tensor``: False without a cuDNN backend."""
    return False


def set_flags(
    _enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None
):
    """Set the flags that are not None (all at once) and return the previous values, in the
    order of the arguments. ``_benchmark_limit`` is ignored without cuDNN (as in PyTorch)."""
    changes = {
        name: value
        for name, value in (
            ("cudnn.enabled", _enabled),
            ("cudnn.benchmark", _benchmark),
            ("cudnn.deterministic", _deterministic),
            ("cudnn.allow_tf32", _allow_tf32),
        )
        if value is not None
    }
    with _settings._lock:
        orig = (
            _settings.get("cudnn.enabled"),
            _settings.get("cudnn.benchmark"),
            None,
            _settings.get("cudnn.deterministic"),
            _settings.get("cudnn.allow_tf32"),
        )
        _settings.update(changes)
    return orig


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the cuDNN flags for the duration of the ``with`` block and restore them afterwards.
    The defaults are PyTorch's: ``flags()`` with no arguments turns cuDNN off."""
    with _allow_nonbracketed_mutation():
        orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig)


class CudnnModule(PropModule):
    enabled = ContextProp("cudnn.enabled")
    benchmark = ContextProp("cudnn.benchmark")
    deterministic = ContextProp("cudnn.deterministic")
    allow_tf32 = ContextProp("cudnn.allow_tf32")
    # PyTorch has a benchmark limit only where cuDNN is available; otherwise the attribute is None.
    benchmark_limit = None


_install(__name__, CudnnModule)
