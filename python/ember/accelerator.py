"""ember.accelerator: PyTorch's device-generic accelerator API (torch.accelerator). This build
of Ember runs on the CPU only, so it answers as a CPU-only PyTorch build does: no accelerator
is available, ``current_accelerator()`` is None, and what needs a device raises RuntimeError
with PyTorch's message. Scripts that test ``is_available()`` first take their CPU path."""

from __future__ import annotations

import contextlib

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "empty_cache", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _no_device(*args, **kwargs):
    raise RuntimeError(_NONE)


def is_available() -> bool:
    """Whether an accelerator can be used: never in this build."""
    return False


def device_count() -> int:
    return 0


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, or None: this build has none."""
    return None


current_device_index = current_device_idx = _no_device
set_device_index = set_device_idx = _no_device
synchronize = _no_device
empty_cache = memory_stats = memory_allocated = max_memory_allocated = _no_device
memory_reserved = max_memory_reserved = _no_device
reset_accumulated_memory_stats = reset_peak_memory_stats = _no_device


@contextlib.contextmanager
def device_index(device, /):
    """Selects an accelerator device inside the context; None selects nothing (as PyTorch)."""
    if device is not None:
        raise RuntimeError(_NONE)
    yield
