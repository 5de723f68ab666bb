"""ember.backends.mkldnn: the oneDNN (formerly MKL-DNN) switches. Ember links oneDNN, so
is_available() is True. ``enabled`` and ``deterministic`` are stored with PyTorch's defaults;
Ember's kernels do not consult them yet (docs/design/backends.md)."""

from contextlib import contextmanager

from . import ContextProp, PropModule, _allow_nonbracketed_mutation, _install, _settings

__all__ = ["flags", "is_acl_available", "is_available", "set_flags"]


def is_available():
    """Whether Ember is built with oneDNN: True."""
    return True


def is_acl_available():
    """Whether oneDNN is built with the Arm Compute Library: False."""
    return False


def set_flags(_enabled=None, _deterministic=None):
    """Set the flags that are not None (all at once) and return the previous values."""
    changes = {
        name: value
        for name, value in (("mkldnn.enabled", _enabled), ("mkldnn.deterministic", _deterministic))
        if value is not None
    }
    with _settings._lock:
        orig = (_settings.get("mkldnn.enabled"), _settings.get("mkldnn.deterministic"))
        _settings.update(changes)
    return orig


@contextmanager
def flags(enabled=False, deterministic=False):
    """Set the oneDNN flags for the duration of the ``with`` block and restore them afterwards.
    The defaults are PyTorch's: ``flags()`` with no arguments turns oneDNN off."""
    with _allow_nonbracketed_mutation():
        orig = set_flags(enabled, deterministic)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig)


class MkldnnModule(PropModule):
    enabled = ContextProp("mkldnn.enabled")
    deterministic = ContextProp("mkldnn.deterministic")


_install(__name__, MkldnnModule)
