"""ember.accelerator: PyTorch's device-generic accelerator API (torch.accelerator). The one
accelerator Ember has is CUDA (ember.cuda); without a GPU it answers as a CPU-only PyTorch build
does: no accelerator is available, ``current_accelerator()`` is None, and what needs a device
raises RuntimeError with PyTorch's message. Scripts that test ``is_available()`` first take their
CPU path."""

from __future__ import annotations

import contextlib

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "empty_cache", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _cuda():
    """ember.cuda when a GPU can be used; else RuntimeError with PyTorch's message."""
    from . import cuda

    if not cuda.is_available():
        raise RuntimeError(_NONE)
    return cuda


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU) can be used."""
    from . import cuda

    return cuda.is_available()


def device_count() -> int:
    return _cuda().device_count() if is_available() else 0


def current_accelerator(check_available: bool = False):
    """The accelerator's device (``device(type='cuda')``), or None without one."""
    if not is_available():
        return None
    import ember

    return ember.device("cuda")


def current_device_index() -> int:
    return _cuda().current_device()


def set_device_index(device, /) -> None:
    _cuda().set_device(device)


current_device_idx, set_device_idx = current_device_index, set_device_index


def synchronize(device=None) -> None:
    _cuda().synchronize(device)


def empty_cache() -> None:
    _cuda().empty_cache()


def memory_allocated(device_index=None) -> int:
    return _cuda().memory_allocated(device_index)


def max_memory_allocated(device_index=None) -> int:
    return _cuda().max_memory_allocated(device_index)


# Without a caching allocator, memory reserved is memory allocated.
memory_reserved, max_memory_reserved = memory_allocated, max_memory_allocated


def memory_stats(device_index=None) -> dict:
    cuda = _cuda()
    return {"allocated_bytes.all.current": cuda.memory_allocated(device_index),
            "allocated_bytes.all.peak": cuda.max_memory_allocated(device_index)}


def reset_peak_memory_stats(device_index=None) -> None:
    _cuda().reset_peak_memory_stats(device_index)


def reset_accumulated_memory_stats(device_index=None) -> None:
    _cuda()  # nothing accumulates beyond the peak, which reset_peak_memory_stats resets


@contextlib.contextmanager
def device_index(device, /):
    """Selects an accelerator device inside the context; None selects nothing (as PyTorch)."""
    if device is None:
        yield
        return
    with _cuda().device(device):
        yield
