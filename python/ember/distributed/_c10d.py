"""Process groups and collectives (torch.distributed.distributed_c10d's API) on the Gloo backend
in C++ (ember._C._distributed) for CPU tensors and the NCCL backend (ember._C_nccl) for CUDA
tensors.

A group holds a Gloo group, an NCCL group, or both (``"cpu:gloo,cuda:nccl"``, and the default
when a GPU is there); each collective runs on the one for its tensors' device. As in PyTorch, the
NCCL communicator is made on the first collective over CUDA tensors, on their device. The C++
side needs contiguous buffers, so a non-contiguous tensor is copied into a contiguous one and the
result copied back when the operation completes (``Work.wait``; at once for a synchronous call).
Ranks given to a collective (``src``, ``dst``) are global ranks, as in PyTorch; a group
translates them.
"""

from __future__ import annotations

import datetime
import io
import pickle
import threading
import warnings

import numpy as np

import ember

from .. import _C
from ._rendezvous import gloo_address, rendezvous

_D = _C._distributed

# Default, as torch.distributed.constants.default_pg_timeout.
default_pg_timeout = datetime.timedelta(minutes=30)


def _seconds(timeout):
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)):
        return float(timeout)
    raise TypeError(f"timeout must be a datetime.timedelta, got {type(timeout).__name__}")


class ProcessGroup:
    """A group of processes: its rank and size, its global ranks, and the engines that run its
    collectives: a Gloo group for CPU tensors and, made on first use, an NCCL group for CUDA
    tensors (``_gloo`` is None on a process outside the group or for an NCCL-only group)."""

    def __init__(self, backend, gloo, ranks, name, nccl_store=None, rank=-1, timeout_s=None):
        self._backend, self._gloo, self._ranks, self.group_name = backend, gloo, ranks, name
        self._p2p_tags = {}
        # NCCL: the store its communicator meets through, this process's rank in the group, and
        # the communicator once made (with its CUDA device index).
        self._nccl_store, self._nccl, self._nccl_device = nccl_store, None, None
        self._rank = gloo.rank() if gloo is not None else rank
        self._timeout_s = gloo.timeout_seconds if gloo is not None else timeout_s
        self._destroyed = False

    def rank(self):
        return self._rank

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._backend

    def __repr__(self):
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks})"


class _GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


GroupMember = _GroupMember
group = _GroupMember


class _State:
    lock = threading.RLock()
    default = None  # the default ProcessGroup
    store = None  # the store behind it (groups use prefixes of it)
    groups = {}  # name -> ProcessGroup
    group_count = 0
    master_host = "127.0.0.1"


def is_initialized():
    """Whether the default process group exists."""
    return _State.default is not None


def _default_group():
    if _State.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _State.default


def _resolve(group):
    """The ProcessGroup for ``group`` (None: the default one)."""
    pg = _default_group() if group is None else group
    if pg is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(pg, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(pg).__name__}")
    if pg._destroyed:
        raise ValueError("the process group was destroyed")
    return pg


def _nccl_module():
    """ember._C_nccl when this build has NCCL and a GPU is there; else RuntimeError saying why.

    The module, and with it libnccl, loads only here: a copy of libnccl loaded by soname would
    otherwise be taken by a later ``import torch`` in place of its own (docs/design/cuda.md)."""
    from .. import _C, cuda

    if not _C._build_info()["nccl"]:
        raise RuntimeError("Distributed package doesn't have NCCL built in (this build of "
                           "Ember has no NCCL backend: use the gloo backend)")
    if not cuda.is_available():
        raise RuntimeError(f"ProcessGroupNCCL is only supported with GPUs, no GPUs found! "
                           f"({cuda._reason()}; use the gloo backend for CPU tensors)")
    from .. import _C_nccl

    return _C_nccl


def _engine(pg, tensor, op):
    """The engine that runs ``op`` on ``tensor``: Gloo for a CPU tensor, NCCL for a CUDA one."""
    return _engine_for(pg, tensor.device, op)


def _engine_for(pg, device, op):
    if device.type == "cuda":
        if pg._nccl_store is None:
            raise ValueError(f"{op}: the group's backend is {pg._backend!r}, which has no CUDA "
                             f"support; got a tensor on {device} (use the nccl backend, "
                             "or move the tensor to the CPU)")
        index = device.index or 0
        if pg._nccl is None:
            with _State.lock:
                if pg._nccl is None:
                    module = _nccl_module()
                    pg._nccl = module.ProcessGroupNCCL(pg._nccl_store, pg.rank(), pg.size(),
                                                       pg._timeout_s, index)
                    pg._nccl_device = index
        if index != pg._nccl_device:
            raise ValueError(f"{op}: the group's NCCL communicator is on cuda:{pg._nccl_device}, "
                             f"got a tensor on {device}")
        return pg._nccl
    if pg._gloo is None:
        raise ValueError(f"{op}: the group's backend is {pg._backend!r}, which reduces CUDA "
                         f"tensors only; got a tensor on {device} (use gloo, or "
                         "'cpu:gloo,cuda:nccl')")
    return pg._gloo


def _any_engine(pg):
    """The engine for an operation without tensors (barrier): Gloo when the group has it, else
    NCCL on its device (made on the current CUDA device if no collective made it yet)."""
    if pg._gloo is not None or pg._nccl is not None:
        return pg._gloo if pg._gloo is not None else pg._nccl
    from .. import cuda

    return _engine_for(pg, ember.device("cuda", cuda.current_device()), "barrier")


def _parse_backend(backend):
    """(the name get_backend reports, whether CPU tensors run on Gloo, whether CUDA tensors run
    on NCCL). None is PyTorch's default, "cpu:gloo,cuda:nccl"; a backend named alone serves
    every device it can."""
    names = "cpu:gloo,cuda:nccl" if backend is None else str(backend).lower()
    gloo = nccl = False
    for part in names.split(","):
        device, _, name = part.rpartition(":")
        if device not in ("", "cpu", "cuda"):
            raise RuntimeError(f"Invalid backend string: '{backend}' (device '{device}')")
        if name == "nccl":
            nccl = True
            continue
        if name == "mpi":
            raise RuntimeError("Distributed package doesn't have MPI built in")
        if name not in ("gloo", "undefined"):
            raise RuntimeError(f"Invalid backend: '{name}'")
        gloo = True
    if nccl and not gloo:
        _nccl_module()  # NCCL alone: it must be usable now, as PyTorch checks at init
        return "nccl", False, True
    if nccl:
        # With Gloo beside it, NCCL is made when a CUDA tensor first needs it (only if a GPU).
        from .. import cuda

        return "gloo", True, cuda.is_available()
    return "gloo", True, False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Creates the default process group (see torch.distributed.init_process_group): peers
    meet through ``init_method`` (default ``env://``: MASTER_ADDR, MASTER_PORT, RANK,
    WORLD_SIZE) or ``store`` (then ``rank`` and ``world_size`` are needed)."""
    with _State.lock:
        if _State.default is not None:
            raise ValueError("trying to initialize the default process group twice!")
        backend_name, use_gloo, use_nccl = _parse_backend(backend)
        timeout_s = _seconds(timeout)
        if store is not None:
            if init_method is not None:
                raise ValueError("Cannot specify both init_method and store.")
            if rank < 0 or world_size < 1:
                raise ValueError("rank and world_size must be given with a store")
            host = getattr(store, "host", "127.0.0.1")
        else:
            store, rank, world_size, host = rendezvous(init_method or "env://", rank,
                                                       world_size, timeout_s)
        hostname, interface = gloo_address(host)
        prefixed = _D.PrefixStore("default_pg", store)
        gloo = _D.ProcessGroupGloo(prefixed, rank, world_size, timeout_s, hostname,
                                   interface) if use_gloo else None
        nccl_store = _D.PrefixStore("default_pg_nccl", store) if use_nccl else None
        pg = ProcessGroup(backend_name, gloo, list(range(world_size)), group_name or "0",
                          nccl_store, rank, timeout_s)
        _State.default, _State.store, _State.master_host = pg, store, host
        _State.groups = {pg.group_name: pg}
        _State.group_count = 1
        GroupMember.WORLD = pg


def destroy_process_group(group=None):
    """Destroys ``group`` (None: every group, and the default one)."""
    with _State.lock:
        if group is None or group is _State.default:
            _default_group()
            for pg in _State.groups.values():
                pg._gloo = pg._nccl = None
                pg._destroyed = True
            _State.default = _State.store = None
            _State.groups = {}
            GroupMember.WORLD = None
            return
        if group is GroupMember.NON_GROUP_MEMBER:
            return
        _State.groups.pop(group.group_name, None)
        group._gloo = group._nccl = None
        group._destroyed = True


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the default group's ranks. Every process of the default group must
    call it, with the same ranks, in the same order; a process outside ``ranks`` gets
    ``GroupMember.NON_GROUP_MEMBER``."""
    with _State.lock:
        world = _default_group()
        size = world.size()
        ranks = sorted(set(range(size) if ranks is None else (int(r) for r in ranks)))
        for r in ranks:
            if not 0 <= r < size:
                raise ValueError(f"new_group: rank {r} is not in the default group (size {size})")
        if backend is None:
            backend_name, use_gloo = world._backend, world._gloo is not None
            use_nccl = world._nccl_store is not None
        else:
            backend_name, use_gloo, use_nccl = _parse_backend(backend)
        name = str(_State.group_count)
        _State.group_count += 1
        me = get_rank()
        if me not in ranks:
            return GroupMember.NON_GROUP_MEMBER
        timeout_s = _seconds(timeout) if timeout is not None else world._timeout_s
        hostname, interface = gloo_address(_State.master_host)
        prefixed = _D.PrefixStore(f"group_{name}", _State.store)
        gloo = _D.ProcessGroupGloo(prefixed, ranks.index(me), len(ranks), timeout_s, hostname,
                                   interface) if use_gloo else None
        nccl_store = _D.PrefixStore(f"group_{name}_nccl", _State.store) if use_nccl else None
        pg = ProcessGroup(backend_name, gloo, ranks, name, nccl_store, ranks.index(me),
                          timeout_s)
        _State.groups[name] = pg
        return pg


def get_rank(group=None):
    """This process's rank in ``group`` (-1 outside it)."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The number of processes in ``group`` (-1 outside it)."""
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group):
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = _resolve(group)
    return list(pg._ranks) if pg is not None else []


def get_global_rank(group, group_rank):
    pg = _resolve(group)
    if pg is None or not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of the group")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _resolve(group)
    if pg is None or global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of the group")
    return pg._ranks.index(global_rank)


def _group_rank(pg, global_rank, what):
    if global_rank not in pg._ranks:
        raise ValueError(f"{what} {global_rank} is not a rank of the group {pg._ranks}")
    return pg._ranks.index(global_rank)


# -- Work ----------------------------------------------------------------------------------------
class Work:
    """An operation in flight (torch.distributed.Work): ``wait()`` blocks until it ends (and
    raises its error); then the outputs hold the result."""

    def __init__(self, work, timeout_s, finish=None, result=None):
        self._work, self._timeout_s = work, timeout_s
        self._finish, self._result = finish, result
        self._finished = False
        self._lock = threading.Lock()

    def wait(self, timeout=None):
        seconds = self._timeout_s if timeout is None else _seconds(timeout)
        self._work.wait(seconds)
        with self._lock:
            if not self._finished:
                self._finished = True
                if self._finish is not None:
                    self._finish()
        return True

    def is_completed(self):
        return self._work.is_completed()

    def is_success(self):
        return self._work.is_success()

    def exception(self):
        message = self._work.error_message()
        return _D.DistBackendError(message) if message else None

    def source_rank(self):
        return self._work.source_rank

    def result(self):
        self.wait()
        return list(self._result or [])

    def get_future(self):
        from .. import futures

        return futures.Future._from_work(self)

    def synchronize(self):
        self.wait()


def _finish(async_op, work):
    if async_op:
        return work
    work.wait()
    return None


def _check_tensor(t, op, name="tensor", like=None):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"{op}: {name} must be an ember.Tensor, got {type(t).__name__}")
    if t.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{op}: {name} is on {t.device}; collectives take CPU (gloo) or CUDA "
                         "(nccl) tensors")
    if like is not None and t.device != like.device:
        raise ValueError(f"{op}: {name} is on {t.device}, but the input is on {like.device}: "
                         "every tensor of a collective must be on one device")


def _empty(n, like):
    """A flat buffer of ``n`` elements of like's dtype, on like's device."""
    return ember.empty(n, dtype=like.dtype, device=like.device)


def _flat_cat(tensors, like):
    """The tensors' elements one after another, in a new flat tensor on like's device (copies,
    which run on every device, rather than ember.cat, which has no CUDA kernel yet)."""
    flat = _empty(sum(t.numel() for t in tensors), like)
    offset = 0
    for t in tensors:
        n = t.numel()
        flat[offset:offset + n].copy_(t.reshape(-1))
        offset += n
    return flat


def _contiguous(t):
    """(a contiguous tensor with t's elements, a function that copies it back into t)."""
    if t.is_contiguous():
        return t, None
    c = t.contiguous()
    return c, lambda: t.copy_(c)


def _chain(*steps):
    steps = [s for s in steps if s is not None]
    if not steps:
        return None

    def run():
        for s in steps:
            s()

    return run


def _reduce_op(op):
    from . import ReduceOp

    if isinstance(op, ReduceOp):
        value = op.value
    elif isinstance(op, int):
        value = op
    else:
        raise TypeError(f"op must be a ReduceOp, got {op!r}")
    if value == ReduceOp.PREMUL_SUM.value:
        raise ValueError("ReduceOp.PREMUL_SUM is only supported by the NCCL backend")
    return value


def _average(t, pg, op_value):
    """Gloo has no average: the sum is divided afterwards. NCCL averages itself (None)."""
    from . import ReduceOp

    if op_value != ReduceOp.AVG.value or t.device.type == "cuda":
        return None
    if not (t.is_floating_point() or t.is_complex()):
        raise TypeError(f"ReduceOp.AVG needs a floating-point or complex tensor, got {t.dtype}")
    size = pg.size()
    return lambda: t.div_(size)


def _skip_non_member(pg, op):
    if pg is None:
        warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the "
                      "given group.", stacklevel=3)
        return True
    return False


def all_reduce(tensor, op=None, group=None, async_op=False):
    """Reduces ``tensor`` across the group, in place on every rank."""
    from . import ReduceOp

    pg = _resolve(group)
    if _skip_non_member(pg, "all_reduce"):
        return None
    _check_tensor(tensor, "all_reduce")
    op_value = _reduce_op(ReduceOp.SUM if op is None else op)
    average = _average(tensor, pg, op_value)
    buffer, copy_back = _contiguous(tensor)
    work = _engine(pg, tensor, "all_reduce").allreduce(buffer, op_value, inline=not async_op)
    avg_buffer = _average(buffer, pg, op_value) if average else None
    return _finish(async_op, Work(work, pg._timeout_s, _chain(avg_buffer, copy_back),
                                  [tensor]))


def reduce(tensor, dst=None, op=None, group=None, async_op=False, group_dst=None):
    """Reduces ``tensor`` into rank ``dst``'s copy (the others' are scratch)."""
    from . import ReduceOp

    pg = _resolve(group)
    if _skip_non_member(pg, "reduce"):
        return None
    _check_tensor(tensor, "reduce")
    root = group_dst if group_dst is not None else _group_rank(pg, 0 if dst is None else dst,
                                                                 "dst")
    op_value = _reduce_op(ReduceOp.SUM if op is None else op)
    buffer, copy_back = _contiguous(tensor)
    average = _average(buffer, pg, op_value) if pg.rank() == root else None
    work = _engine(pg, tensor, "reduce").reduce(buffer, root, op_value, inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s, _chain(average, copy_back),
                                  [tensor]))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies rank ``src``'s ``tensor`` into every rank's."""
    pg = _resolve(group)
    if _skip_non_member(pg, "broadcast"):
        return None
    _check_tensor(tensor, "broadcast")
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src,
                                                                 "src")
    buffer, copy_back = _contiguous(tensor)
    work = _engine(pg, tensor, "broadcast").broadcast(buffer, root, inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s, copy_back, [tensor]))


def _same_layout(tensors, like, op):
    for i, t in enumerate(tensors):
        _check_tensor(t, op, f"tensor {i}", like)
        if t.dtype != like.dtype or t.numel() != like.numel():
            raise ValueError(f"{op}: tensor {i} is {t.dtype} with {t.numel()} elements; every "
                             f"tensor must be {like.dtype} with {like.numel()} elements "
                             "(as the input)")


def _split_into(flat, outputs):
    """Copies consecutive chunks of ``flat`` into ``outputs``."""
    def run():
        offset = 0
        for out in outputs:
            n = out.numel()
            out.copy_(flat[offset:offset + n].view(out.shape))
            offset += n

    return run


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` = rank r's ``tensor``, on every rank."""
    pg = _resolve(group)
    if _skip_non_member(pg, "all_gather"):
        return None
    _check_tensor(tensor, "all_gather")
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group "
                         f"has {pg.size()} ranks")
    _same_layout(tensor_list, tensor, "all_gather")
    source = tensor.contiguous()
    flat = _empty(pg.size() * tensor.numel(), tensor)
    work = _engine(pg, tensor, "all_gather").allgather(flat, source, inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s,
                                  _split_into(flat, tensor_list), tensor_list))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` = every rank's ``input_tensor``, concatenated (or stacked) in rank
    order."""
    pg = _resolve(group)
    if _skip_non_member(pg, "all_gather_into_tensor"):
        return None
    _check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor", output_tensor)
    if output_tensor.dtype != input_tensor.dtype or \
            output_tensor.numel() != pg.size() * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: the output ({output_tensor.dtype}, "
                         f"{output_tensor.numel()} elements) must be {input_tensor.dtype} with "
                         f"world size x {input_tensor.numel()} elements")
    buffer, copy_back = _contiguous(output_tensor)
    work = _engine(pg, input_tensor, "all_gather_into_tensor").allgather(
        buffer, input_tensor.contiguous(), inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s, copy_back, [output_tensor]))


def _reduce_scatter_flat(pg, output, flat, op_value, async_op, op):
    """Reduces ``flat`` (world size chunks of output's size) and keeps this rank's chunk. NCCL
    has the collective; on Gloo it is one all-reduce, as Gloo has no reduce-scatter for arbitrary
    types."""
    n = output.numel()
    me = pg.rank()
    engine = _engine(pg, flat, op)
    if output.device.type == "cuda":
        buffer, copy_back = _contiguous(output)
        return engine.reduce_scatter(buffer, flat, op_value, inline=not async_op), copy_back
    work = engine.allreduce(flat, op_value, inline=not async_op)
    average = _average(flat, pg, op_value)

    def keep_mine():
        output.copy_(flat[me * n:(me + 1) * n].view(output.shape))

    return work, _chain(average, keep_mine)


def reduce_scatter(output, input_list, op=None, group=None, async_op=False):
    """``output`` on rank r = the reduction over ranks of their ``input_list[r]``."""
    from . import ReduceOp

    pg = _resolve(group)
    if _skip_non_member(pg, "reduce_scatter"):
        return None
    _check_tensor(output, "reduce_scatter", "output")
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, the group "
                         f"has {pg.size()} ranks")
    _same_layout(input_list, output, "reduce_scatter")
    op_value = _reduce_op(ReduceOp.SUM if op is None else op)
    flat = _flat_cat(input_list, output)
    work, finish = _reduce_scatter_flat(pg, output, flat, op_value, async_op, "reduce_scatter")
    return _finish(async_op, Work(work, pg._timeout_s, finish, [output]))


def reduce_scatter_tensor(output, input, op=None, group=None, async_op=False):  # noqa: A002
    """As reduce_scatter, with the inputs as one tensor of world size chunks."""
    from . import ReduceOp

    pg = _resolve(group)
    if _skip_non_member(pg, "reduce_scatter_tensor"):
        return None
    _check_tensor(output, "reduce_scatter_tensor", "output")
    _check_tensor(input, "reduce_scatter_tensor", "input", output)
    if input.dtype != output.dtype or input.numel() != pg.size() * output.numel():
        raise ValueError(f"reduce_scatter_tensor: the input ({input.dtype}, {input.numel()} "
                         f"elements) must be {output.dtype} with world size x {output.numel()} "
                         "elements")
    op_value = _reduce_op(ReduceOp.SUM if op is None else op)
    flat = input.reshape(-1).clone()
    work, finish = _reduce_scatter_flat(pg, output, flat, op_value, async_op,
                                        "reduce_scatter_tensor")
    return _finish(async_op, Work(work, pg._timeout_s, finish, [output]))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """On rank ``dst``, ``gather_list[r]`` = rank r's ``tensor``."""
    pg = _resolve(group)
    if _skip_non_member(pg, "gather"):
        return None
    _check_tensor(tensor, "gather")
    root = group_dst if group_dst is not None else _group_rank(pg, 0 if dst is None else dst,
                                                                 "dst")
    finish = None
    flat = _empty(0, tensor)
    if pg.rank() == root:
        if gather_list is None or len(gather_list) != pg.size():
            raise ValueError(f"gather: the destination rank needs a gather_list of {pg.size()} "
                             "tensors")
        _same_layout(gather_list, tensor, "gather")
        flat = _empty(pg.size() * tensor.numel(), tensor)
        finish = _split_into(flat, gather_list)
    elif gather_list:
        raise ValueError("gather: gather_list must be given only on the destination rank")
    work = _engine(pg, tensor, "gather").gather(flat, tensor.contiguous(), root,
                                                 inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s, finish, gather_list or []))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's ``tensor`` = rank ``src``'s ``scatter_list[r]``."""
    pg = _resolve(group)
    if _skip_non_member(pg, "scatter"):
        return None
    _check_tensor(tensor, "scatter")
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src,
                                                                 "src")
    flat = _empty(0, tensor)
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != pg.size():
            raise ValueError(f"scatter: the source rank needs a scatter_list of {pg.size()} "
                             "tensors")
        _same_layout(scatter_list, tensor, "scatter")
        flat = _flat_cat(scatter_list, tensor)
    elif scatter_list:
        raise ValueError("scatter: scatter_list must be given only on the source rank")
    buffer, copy_back = _contiguous(tensor)
    work = _engine(pg, tensor, "scatter").scatter(buffer, flat, root, inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s, copy_back, [tensor]))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,  # noqa: A002
                      group=None, async_op=False):
    """Rank r sends chunk j of ``input`` (split along dim 0) to rank j and puts chunk r from
    each rank j into ``output``; equal chunks unless split sizes are given."""
    pg = _resolve(group)
    if _skip_non_member(pg, "all_to_all_single"):
        return None
    _check_tensor(output, "all_to_all_single", "output")
    _check_tensor(input, "all_to_all_single", "input", output)
    if input.dtype != output.dtype:
        raise TypeError(f"all_to_all_single: input is {input.dtype}, output {output.dtype}")
    size = pg.size()

    def counts(t, splits, name):
        row = t.numel() // t.shape[0] if t.dim() and t.shape[0] else (1 if t.dim() else t.numel())
        if not splits:
            if t.dim() == 0 or t.shape[0] % size:
                raise ValueError(f"all_to_all_single: {name}'s first dimension must divide by "
                                 f"the world size ({size}) without split sizes")
            return [t.numel() // size] * size
        if len(splits) != size or sum(splits) != (t.shape[0] if t.dim() else 0):
            raise ValueError(f"all_to_all_single: {name}_split_sizes {list(splits)} must have "
                             f"{size} entries adding up to {name}'s first dimension")
        return [int(s) * row for s in splits]

    out_counts = counts(output, output_split_sizes, "output")
    in_counts = counts(input, input_split_sizes, "input")
    buffer, copy_back = _contiguous(output)
    work = _engine(pg, input, "all_to_all_single").alltoall(
        buffer, input.contiguous(), out_counts, in_counts, inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s, copy_back, [output]))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r sends ``input_tensor_list[j]`` to rank j, which puts it in its
    ``output_tensor_list[r]``."""
    pg = _resolve(group)
    if _skip_non_member(pg, "all_to_all"):
        return None
    size = pg.size()
    if len(output_tensor_list) != size or len(input_tensor_list) != size:
        raise ValueError(f"all_to_all: both lists need {size} tensors (one per rank)")
    first = input_tensor_list[0]
    for i, t in enumerate(list(output_tensor_list) + list(input_tensor_list)):
        _check_tensor(t, "all_to_all", f"tensor {i}", first)
    dtype = first.dtype
    if any(t.dtype != dtype for t in list(output_tensor_list) + list(input_tensor_list)):
        raise TypeError("all_to_all: every tensor must have the same dtype")
    flat_in = _flat_cat(input_tensor_list, first)
    flat_out = _empty(sum(t.numel() for t in output_tensor_list), first)
    work = _engine(pg, first, "all_to_all").alltoall(
        flat_out, flat_in, [t.numel() for t in output_tensor_list],
        [t.numel() for t in input_tensor_list], inline=not async_op)
    return _finish(async_op, Work(work, pg._timeout_s,
                                  _split_into(flat_out, output_tensor_list), output_tensor_list))


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank of the group has called it."""
    pg = _resolve(group)
    if _skip_non_member(pg, "barrier"):
        return None
    return _finish(async_op, Work(_any_engine(pg).barrier(inline=not async_op),
                                  pg._timeout_s))


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that fails after ``timeout`` (default: the group's) instead of the group's."""
    pg = _resolve(group)
    if _skip_non_member(pg, "monitored_barrier"):
        return None
    work = Work(_any_engine(pg).barrier(inline=True), pg._timeout_s)
    work.wait(timeout)
    return None


# -- point to point ------------------------------------------------------------------------------
def _p2p(pg, tensor, peer, tag, op):
    _check_tensor(tensor, op)
    if not isinstance(tag, int) or not 0 <= tag < 2 ** 32:
        raise ValueError(f"{op}: tag must be an integer in [0, 2**32), got {tag!r}")
    if not tensor.is_contiguous():
        raise ValueError(f"{op}: the tensor must be contiguous (call .contiguous() first)")


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Starts sending ``tensor`` to rank ``dst``; the Work completes it."""
    pg = _resolve(group)
    if _skip_non_member(pg, "isend"):
        return None
    _p2p(pg, tensor, dst, tag, "isend")
    peer = group_dst if group_dst is not None else _group_rank(pg, dst, "dst")
    return Work(_engine(pg, tensor, "isend").send(tensor, peer, tag), pg._timeout_s, None,
                [tensor])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into ``tensor`` from rank ``src`` (None: any rank)."""
    pg = _resolve(group)
    if _skip_non_member(pg, "irecv"):
        return None
    _p2p(pg, tensor, src, tag, "irecv")
    if group_src is not None:
        peer = group_src
    else:
        peer = -1 if src is None else _group_rank(pg, src, "src")
    return Work(_engine(pg, tensor, "irecv").recv(tensor, peer, tag), pg._timeout_s, None,
                [tensor])


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends ``tensor`` to rank ``dst`` and waits until it is delivered."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into ``tensor`` from rank ``src`` (None: any); returns the sender's rank."""
    pg = _resolve(group)
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return pg._ranks[work.source_rank()] if work.source_rank() >= 0 else src


class P2POp:
    """One operation for batch_isend_irecv: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    """Starts every operation of the list; returns their Works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# -- objects -------------------------------------------------------------------------------------
# Objects travel pickled, as in PyTorch: unpickling runs code chosen by the sender, so use these
# only between processes that trust each other (the ranks of one job).
def _object_device(pg, device=None):
    """Where object bytes travel: the CPU on a group with Gloo, else (NCCL alone) the current
    CUDA device, as PyTorch does."""
    if device is not None:
        return ember.device(device)
    if pg._gloo is not None:
        return ember.device("cpu")
    from .. import cuda

    return ember.device("cuda", cuda.current_device())


def _to_bytes_tensor(obj, device):
    buffer = io.BytesIO()
    pickle.Pickler(buffer).dump(obj)
    data = ember.from_numpy(np.frombuffer(bytearray(buffer.getvalue()), dtype=np.uint8))
    return data if device.type == "cpu" else data.to(device)


def _from_bytes_tensor(t, size):
    return pickle.loads(t[:size].cpu().numpy().tobytes())


def _sizes_everywhere(pg, size, device):
    local = ember.tensor([size], dtype=ember.int64).to(device)
    sizes = [ember.zeros(1, dtype=ember.int64, device=device) for _ in range(pg.size())]
    all_gather(sizes, local, group=pg)
    return [int(s.cpu().item()) for s in sizes]


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` = rank r's ``obj`` (picklable), on every rank."""
    pg = _resolve(group)
    if _skip_non_member(pg, "all_gather_object"):
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, the "
                         f"group has {pg.size()} ranks")
    device = _object_device(pg)
    data = _to_bytes_tensor(obj, device)
    sizes = _sizes_everywhere(pg, data.numel(), device)
    longest = max(sizes)
    padded = ember.zeros(longest, dtype=ember.uint8, device=device)
    padded[:data.numel()].copy_(data)
    chunks = [ember.empty(longest, dtype=ember.uint8, device=device) for _ in range(pg.size())]
    all_gather(chunks, padded, group=pg)
    for r in range(pg.size()):
        object_list[r] = _from_bytes_tensor(chunks[r], sizes[r])


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """On rank ``dst``, ``object_gather_list[r]`` = rank r's ``obj``."""
    pg = _resolve(group)
    if _skip_non_member(pg, "gather_object"):
        return
    gathered = [None] * pg.size()
    all_gather_object(gathered, obj, group=pg)
    if get_rank() == dst:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError(f"gather_object: rank {dst} needs an object_gather_list of "
                             f"{pg.size()} entries")
        object_gather_list[:] = gathered


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Every rank's ``object_list`` becomes rank ``src``'s (same length on every rank)."""
    pg = _resolve(group)
    if _skip_non_member(pg, "broadcast_object_list"):
        return
    root = _group_rank(pg, src, "src")
    me = pg.rank()
    count = len(object_list)
    device = _object_device(pg, device)
    datas = [_to_bytes_tensor(o, device) for o in object_list] if me == root else []
    sizes = ember.tensor([d.numel() for d in datas] if me == root else [0] * count,
                         dtype=ember.int64).to(device)
    broadcast(sizes, src=src, group=pg)
    host_sizes = [int(n) for n in sizes.cpu().tolist()]
    total = sum(host_sizes)
    flat = _flat_cat(datas, datas[0]) if me == root and total else \
        ember.empty(total, dtype=ember.uint8, device=device)
    broadcast(flat, src=src, group=pg)
    if me != root:
        offset = 0
        for i in range(count):
            n = host_sizes[i]
            object_list[i] = _from_bytes_tensor(flat[offset:offset + n], n)
            offset += n


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0,
                        group=None):
    """Rank r's ``scatter_object_output_list[0]`` = rank ``src``'s input list entry r."""
    pg = _resolve(group)
    if _skip_non_member(pg, "scatter_object_list"):
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    objects = list(scatter_object_input_list) if get_rank() == src else [None] * pg.size()
    if len(objects) != pg.size():
        raise ValueError(f"scatter_object_list: the input list needs {pg.size()} entries")
    broadcast_object_list(objects, src=src, group=pg)
    scatter_object_output_list[0] = objects[pg.rank()]
