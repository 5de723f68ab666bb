"""ember.distributed: process groups and collectives with torch.distributed's API, on Gloo (CPU
tensors) in C++ (docs/design/distributed.md).

``init_process_group("gloo")`` (also the default, and ``"cpu:gloo,cuda:nccl"``), the collectives
(``all_reduce``, ``broadcast``, ``all_gather`` ... with ``async_op=True`` returning a Work),
point-to-point ``send``/``recv``, object collectives, ``new_group``, and the stores (TCPStore,
FileStore, HashStore, PrefixStore). ``python -m ember.distributed.run`` launches a job as torchrun
does. A build without Gloo has no backend: ``is_available()`` is False and
``init_process_group`` raises PyTorch's error for that.
"""

from __future__ import annotations

import os
from enum import Enum

from .. import _C

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "FileStore",
    "GroupMember", "HashStore", "P2POp", "PrefixStore", "ProcessGroup", "ReduceOp", "Store",
    "TCPStore", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce",
    "all_to_all", "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast",
    "broadcast_object_list", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_default_backend_for_device", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_available", "is_backend_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "isend",
    "monitored_barrier", "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor",
    "scatter", "scatter_object_list", "send",
]

_AVAILABLE = bool(getattr(_C._distributed, "available", False))


def is_available():
    """Whether this build can create process groups (it has Gloo)."""
    return _AVAILABLE


def is_gloo_available():
    return _AVAILABLE


def is_nccl_available():
    """Whether this build has the NCCL backend (ember._C_nccl), as
    torch.distributed.is_nccl_available: a GPU is needed only to use it."""
    from .. import _C

    return _AVAILABLE and bool(_C._build_info()["nccl"])


def is_mpi_available():
    return False


def is_backend_available(backend):
    """Whether this build has ``backend``: "gloo" when Gloo is built in, "nccl" when NCCL is (MPI
    and UCC never are)."""
    name = str(backend).lower()
    if name == "nccl":
        return is_nccl_available()
    return name == "gloo" and _AVAILABLE


# PyTorch's defaults per device type: gloo for the CPU (and the devices whose tensors Gloo
# reduces through host memory), nccl for CUDA.
_DEFAULT_BACKENDS = {"cpu": "gloo", "cuda": "nccl", "mps": "gloo", "xpu": "xccl", "hpu": "hccl",
                     "mtia": "gloo"}


def get_default_backend_for_device(device):
    """The backend PyTorch uses by default for ``device`` (a str or ember.device): "gloo" for
    "cpu", "nccl" for "cuda"."""
    # The type only: a str may name a device Ember has no tensors for ("cuda", "meta").
    kind = device.split(":")[0] if isinstance(device, str) else getattr(device, "type", None)
    if not isinstance(kind, str):
        raise TypeError(f"get_default_backend_for_device: expected a device or a str, got "
                        f"{type(device).__name__}")
    if kind not in _DEFAULT_BACKENDS:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return _DEFAULT_BACKENDS[kind]


def is_torchelastic_launched():
    """Whether the process was started by torchrun or ember.distributed.run (which set
    TORCHELASTIC_RUN_ID)."""
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


if _AVAILABLE:
    from ._c10d import (  # noqa: E402
        GroupMember,
        P2POp,
        ProcessGroup,
        Work,
        all_gather,
        all_gather_into_tensor,
        all_gather_object,
        all_reduce,
        all_to_all,
        all_to_all_single,
        barrier,
        batch_isend_irecv,
        broadcast,
        broadcast_object_list,
        destroy_process_group,
        gather,
        gather_object,
        get_backend,
        get_global_rank,
        get_group_rank,
        get_process_group_ranks,
        get_rank,
        get_world_size,
        group,
        init_process_group,
        irecv,
        is_initialized,
        isend,
        monitored_barrier,
        new_group,
        recv,
        reduce,
        reduce_scatter,
        reduce_scatter_tensor,
        scatter,
        scatter_object_list,
        send,
    )

    Store = _C._distributed.Store
    TCPStore = _C._distributed.TCPStore
    FileStore = _C._distributed.FileStore
    HashStore = _C._distributed.HashStore
    PrefixStore = _C._distributed.PrefixStore
    DistError = _C._distributed.DistError
    DistBackendError = _C._distributed.DistBackendError
    DistStoreError = _C._distributed.DistStoreError
    DistNetworkError = _C._distributed.DistNetworkError
else:
    from ._unavailable import *  # noqa: E402,F401,F403

    __all__ = [name for name in __all__ if name in globals()]
