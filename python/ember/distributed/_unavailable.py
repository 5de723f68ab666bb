"""ember.distributed in a build without Gloo: what does not need a process group works, and the
rest raises PyTorch's errors for a build without the backend (its build with
USE_DISTRIBUTED=0 behaves the same)."""

from __future__ import annotations

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class DistError(RuntimeError):
    pass


class DistBackendError(DistError):
    pass


class DistStoreError(DistError):
    pass


class DistNetworkError(DistError):
    pass


def is_initialized():
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Raises PyTorch's error for a build without the asked backend (this build has none)."""
    names = str(backend or "gloo").lower()
    for part in names.split(","):
        name = part.split(":")[-1]
        if name == "nccl":
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        if name == "gloo":
            raise RuntimeError("Distributed package doesn't have Gloo built in (install "
                               "libgloo-dev and rebuild Ember)")
        if name == "mpi":
            raise RuntimeError("Distributed package doesn't have MPI built in")
        raise RuntimeError(f"Invalid backend: '{name}'")


def _needs_group(name):
    def function(*_args, **_kwargs):
        raise ValueError(_NOT_INITIALIZED)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = "Needs the default process group, which this build cannot create."
    return function


for _name in ("get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "reduce",
              "broadcast", "all_gather", "all_gather_into_tensor", "all_gather_object",
              "reduce_scatter", "reduce_scatter_tensor", "gather", "gather_object", "scatter",
              "scatter_object_list", "all_to_all", "all_to_all_single", "send", "recv", "isend",
              "irecv", "batch_isend_irecv", "broadcast_object_list", "destroy_process_group",
              "new_group", "monitored_barrier", "get_process_group_ranks", "get_global_rank",
              "get_group_rank"):
    globals()[_name] = _needs_group(_name)
del _name
