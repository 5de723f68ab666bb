"""ember.distributed: the namespace scripts import at top level, as PyTorch's build without a
communication backend has it.

This build has no collective-communication backend yet (Gloo and NCCL come with the distributed
training work), so ``is_available()`` is False and a process group cannot be created:
``init_process_group`` raises PyTorch's own error for a build without the asked backend, and
the functions that need a process group raise PyTorch's "not initialized" error. What does not
need one works: ``is_available``, ``is_initialized``, ``is_gloo_available``,
``is_nccl_available``, ``is_mpi_available``, ``is_torchelastic_launched``, ``ReduceOp``,
``Backend``.
"""

from __future__ import annotations

import os
from enum import Enum

__all__ = [
    "Backend", "ReduceOp", "all_gather", "all_reduce", "barrier", "broadcast",
    "destroy_process_group", "get_backend", "get_rank", "get_world_size", "init_process_group",
    "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "new_group",
]

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def is_available():
    """Whether this build can create process groups: not yet (no Gloo or NCCL backend)."""
    return False


def is_initialized():
    """Whether the default process group has been initialized: never, in this build."""
    return False


def is_gloo_available():
    return False


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def is_torchelastic_launched():
    """Whether the process was started by torchrun (its TORCHELASTIC_RUN_ID is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class ReduceOp(Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class Backend(str):
    """A backend name, lower-cased and checked as PyTorch's ``Backend("GLOO")`` is."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Raises PyTorch's error for a build without the asked backend (this build has none)."""
    names = str(backend or "gloo").lower()
    for part in names.split(","):
        name = part.split(":")[-1]
        if name == "nccl":
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        if name == "gloo":
            raise RuntimeError("Distributed package doesn't have Gloo built in")
        if name == "mpi":
            raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only "
                               "included if you build PyTorch from source on a host that has "
                               "MPI installed.")
        raise RuntimeError(f"Invalid backend: '{name}'")


def _needs_group(name):
    def function(*_args, **_kwargs):
        raise ValueError(_NOT_INITIALIZED)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = ("Needs the default process group: raises PyTorch's error that it is not "
                        "initialized (this build cannot create one).")
    return function


get_rank = _needs_group("get_rank")
get_world_size = _needs_group("get_world_size")
get_backend = _needs_group("get_backend")
barrier = _needs_group("barrier")
all_reduce = _needs_group("all_reduce")
broadcast = _needs_group("broadcast")
all_gather = _needs_group("all_gather")
destroy_process_group = _needs_group("destroy_process_group")
new_group = _needs_group("new_group")
