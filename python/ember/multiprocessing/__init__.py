"""ember.multiprocessing, as torch.multiprocessing: Python's multiprocessing (every name of it is
here) plus ``spawn`` / ``start_processes``, which run ``fn(i, *args)`` in ``nprocs`` processes
and re-raise a child's exception in the parent with its traceback, the way distributed
training scripts start their ranks.

Ember tensors passed to a child are pickled by value (there is no CUDA IPC), so the sharing
strategy functions exist for compatibility and report "file_system"."""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = list(getattr(multiprocessing, "__all__", [])) + [
    "ProcessContext", "ProcessExitedException", "ProcessRaisedException", "SpawnContext",
    "get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy", "spawn",
    "start_processes",
]

_SHARING_STRATEGIES = {"file_system", "file_descriptor"}
_sharing_strategy = "file_system"


def set_sharing_strategy(new_strategy):
    global _sharing_strategy
    if new_strategy not in _SHARING_STRATEGIES:
        raise ValueError(f"unknown sharing strategy {new_strategy!r}; one of "
                         f"{sorted(_SHARING_STRATEGIES)}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return set(_SHARING_STRATEGIES)
