"""The worker process side of the DataLoader (as torch.utils.data._utils.worker): the loop each
worker runs, its identity (:func:`get_worker_info`) and how batches travel to the main process.

Note [Worker payloads]: a worker pickles each result itself and sends the bytes. A result that
cannot be pickled then becomes an error the main process re-raises, instead of a failure inside
the queue's feeder thread that nobody sees (the main process would wait forever). Tensors are
pickled compactly: a view sends only its own elements, not the whole storage it looks into
(``dataset[i]`` of a big tensor is a view).

Note [Shared-memory tensors]: the elements of a plain tensor of 64 KiB or more do not travel
through the pipe. The worker copies them once into a POSIX shared-memory segment and pickles only
its name, dtype and shape; the main process maps the segment and the rebuilt tensors use the
mapping (it is unmapped when the last of them dies). The pipe path costs about eight copies of
the bytes, and tops out near 0.4 GB/s here; this one costs one.

Segments are reused. The kernel zeroes every page of a new segment, which costs more than the
copy itself (10 ms for a 12.6 MB batch here, against 0.7 ms to copy into pages that exist), so
each worker keeps a small pool. A segment's first 64 bytes are its header: byte 0 is 1 while a
batch in it belongs to the main process and 0 once it is free. The main process clears it when
the mapping of that batch dies (a weakref finalizer), through a one-page mapping of the header it
keeps for the segment, and the worker writes a new batch only into a segment whose byte is 0.
x86 keeps the main process's last reads of a batch before its store of that 0, so the worker
never overwrites elements still being read. When every pooled segment is busy the batch goes in a
one-shot segment, so memory stays bounded by the pool.

No name outlives its first use: the main process opens each segment once, keeps the descriptor
for later batches in it, and unlinks the name at once (a one-shot segment is also unmapped when
its tensors die; a pooled one is freed when the worker exits and the main process closes its
descriptor at shutdown). Each name is registered with multiprocessing's resource tracker (which
the workers share with the main process), so one left behind by a crash, or by results nobody
received, is removed when the program ends; results still held by an iterator that shuts down
are unpacked, which unlinks them.
"""

import contextlib
import copyreg
import io
import itertools
import mmap
import os
import pickle
import queue
import random
import secrets
import signal
import threading
import weakref
from collections import deque
from dataclasses import dataclass

import numpy as np

import ember

from . import WORKER_LIVENESS_INTERVAL, ExceptionWrapper
from .fetch import _DatasetKind

__all__ = ["WorkerInfo", "get_worker_info"]


class ManagerWatchdog:
    """Tells whether the main process that started this worker is still alive: a worker whose
    parent died is re-parented, so its parent pid changes."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker: its ``id`` (``0 ..
    num_workers - 1``), ``num_workers``, the ``seed`` ember, ``random`` and NumPy were seeded
    with, and this worker's copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None


def get_worker_info():
    """The :class:`WorkerInfo` of the current DataLoader worker process, or None in the main
    process. An :class:`IterableDataset` uses it to split the stream between workers."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Persistent workers: start a new epoch (acknowledged by sending it back)."""

    seed: object = None


def _generate_state(base_seed, worker_id):
    """NumPy's seed for a worker: 4 x 32-bit words hashed from (base_seed, worker_id) the way
    NumPy's SeedSequence mixes entropy, as torch does, so that workers' NumPy streams differ and
    do not overlap the ember / random streams seeded with ``base_seed + worker_id``."""
    init_a, mult_a = 0x43B0D7E5, 0x931E8875
    init_b, mult_b = 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r = 0xCA01F9DD, 0x4973F715
    xshift = 16
    mask32 = 0xFFFFFFFF

    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_a = init_a

    def hash32(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & mask32
        hash_const_a = (hash_const_a * mult_a) & mask32
        value = (value * hash_const_a) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x, y):
        result = ((mix_mult_l * x) - (mix_mult_r * y)) & mask32
        return (result ^ (result >> xshift)) & mask32

    for i in range(4):
        pool[i] = hash32(entropy[i])
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash32(pool[i_src]))

    hash_const_b = init_b
    state = []
    for i_dst in range(4):
        value = (pool[i_dst] ^ hash_const_b) & mask32
        hash_const_b = (hash_const_b * mult_b) & mask32
        value = (value * hash_const_b) & mask32
        state.append((value ^ (value >> xshift)) & mask32)
    return state


def _reduce_tensor_compact(t):
    """Pickles a tensor with only the bytes it uses (see Note [Worker payloads])."""
    if t.untyped_storage().nbytes() > t.numel() * t.element_size():
        t = t.clone(memory_format=ember.contiguous_format)
    return t.__reduce_ex__(pickle.HIGHEST_PROTOCOL)


_SHM_MIN_BYTES = 1 << 16
_SHM_DTYPES = None
_shm_counter = itertools.count()
_shm_pending = None  # arrays collected by the _dumps in progress
_shm_current = threading.local()  # the mapping an _unpack in progress reads tensors from
_SHM_ALIGN = 64


def _shm_dtypes():
    global _SHM_DTYPES
    if _SHM_DTYPES is None:
        _SHM_DTYPES = {ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
                       ember.float16, ember.float32, ember.float64, ember.complex64,
                       ember.complex128}
    return _SHM_DTYPES


def _shm_posix():
    try:
        import _posixshmem
        from multiprocessing import resource_tracker
    except ImportError:
        return None, None
    return _posixshmem, resource_tracker


# Note [Resource tracker after fork]: multiprocessing's resource tracker guards its pipe with a
# lock. A forked worker inherits that lock in whatever state the parent's threads left it; if
# another thread of the parent held it at the fork (a finalizer unregistering a segment, say),
# the worker's first register() waits forever, and so does the parent's exit, which joins the
# worker. (A CI run hung that way.) The child gets a fresh lock, as CPython 3.12 does.
def _reset_tracker_lock_in_child():
    try:
        from multiprocessing import resource_tracker
    except ImportError:
        return
    tracker = resource_tracker._resource_tracker
    lock = getattr(tracker, "_lock", None)
    if lock is not None:
        tracker._lock = type(lock)()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_tracker_lock_in_child)


def _map(fd, size):
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)  # fault the pages in at once
    return mmap.mmap(fd, size, flags=flags)


_SHM_HEADER = 64  # byte 0: 1 while the main process holds the batch in the segment
_SHM_POOL_SEGMENTS = 6  # per worker: prefetched batches plus the ones being consumed
_shm_pool = []  # this worker's reusable segments
_shm_one_shot = deque(maxlen=64)  # names of its latest one-shot segments, maybe still in flight


@dataclass
class _Segment:
    name: str
    size: int
    mapping: mmap.mmap


def _create_segment(size):
    posixshmem, tracker = _shm_posix()
    name = f"/ember_dl_{os.getpid()}_{next(_shm_counter)}_{secrets.token_hex(4)}"
    fd = posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        tracker.register(name, "shared_memory")
        try:
            os.ftruncate(fd, size)
            return _Segment(name, size, _map(fd, size))
        except BaseException:
            _unlink_shared_memory(name)
            raise
    finally:
        os.close(fd)


def _pooled_segment(size):
    """A free segment of this worker's pool with room for ``size`` bytes (the smallest such), a
    new one while the pool has room, or None (Note [Shared-memory tensors])."""
    best = None
    for segment in _shm_pool:
        if segment.size >= size and segment.mapping[0] == 0 and \
                (best is None or segment.size < best.size):
            best = segment
    if best is None and len(_shm_pool) < _SHM_POOL_SEGMENTS:
        # Headroom, so that batches of slightly varying size reuse it.
        rounded = (size + size // 8 + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
        best = _create_segment(rounded)
        _shm_pool.append(best)
    return best


def _to_shared_memory(arrays):
    """Copies ``arrays`` back to back into a segment; (name, offsets, bytes used, pooled)."""
    # SIGTERM (see _exit_on_sigterm) waits until the segment is in this worker's lists: between
    # shm_open and them, an exit would leave a name nobody knows.
    with _sigterm_deferred():
        return _copy_to_shared_memory(arrays)


# SIGTERM's Python handler runs at the next bytecode boundary after the C-level delivery, so a
# signal delivered just before the mask is set would still run it inside the block: the handler
# itself checks this flag and leaves the exit for the end of the block.
_sigterm_state = {"deferring": 0, "pending": None, "received": False}


@contextlib.contextmanager
def _sigterm_deferred():
    blocked = hasattr(signal, "pthread_sigmask") and \
        threading.current_thread() is threading.main_thread()
    if blocked:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    _sigterm_state["deferring"] += 1
    try:
        yield
    finally:
        _sigterm_state["deferring"] -= 1
        if blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        pending = _sigterm_state["pending"]
        if pending is not None and not _sigterm_state["deferring"]:
            _sigterm_state["pending"] = None
            raise SystemExit(128 + pending)


def _copy_to_shared_memory(arrays):
    offsets, size = [], _SHM_HEADER
    for a in arrays:
        offsets.append(size)
        size += (a.nbytes + _SHM_ALIGN - 1) // _SHM_ALIGN * _SHM_ALIGN
    segment = _pooled_segment(size)
    pooled = segment is not None
    if not pooled:
        segment = _create_segment(size)
        _shm_one_shot.append(segment.name)
    try:
        view = np.frombuffer(segment.mapping, dtype=np.uint8, count=size)
        for a, offset in zip(arrays, offsets):
            view[offset:offset + a.nbytes] = a.reshape(-1).view(np.uint8)
        del view
        segment.mapping[0] = 1
    except BaseException:
        if not pooled:
            segment.mapping.close()
            _shm_one_shot.remove(segment.name)
            _unlink_shared_memory(segment.name)
        raise
    if not pooled:
        segment.mapping.close()
    return segment.name, offsets, size, pooled


def _release_segments():
    """A worker's exit: the names of its segments that the main process has not opened go
    (those it has opened are unlinked already, and the mappings stay valid)."""
    while _shm_pool:
        segment = _shm_pool.pop()
        try:
            segment.mapping.close()
        except BufferError:
            pass  # a view is still alive (an exception's frame): the exit unmaps it anyway
        _unlink_shared_memory(segment.name)
    while _shm_one_shot:
        _unlink_shared_memory(_shm_one_shot.pop())


def _exit_on_sigterm(signum, frame):
    # multiprocessing stops daemonic workers with SIGTERM at interpreter exit (and the main
    # process does on a stuck worker): exit through the finally blocks, which unlink this
    # worker's segments, instead of leaving them for the resource tracker to warn about.
    _sigterm_state["received"] = True
    if _sigterm_state["deferring"]:
        _sigterm_state["pending"] = signum
        return
    raise SystemExit(128 + signum)


def _unlink_shared_memory(name):
    """Unlinks ``name`` if it is still there; whoever unlinks it unregisters it, once."""
    posixshmem, tracker = _shm_posix()
    try:
        posixshmem.shm_unlink(name)
    except FileNotFoundError:
        return
    tracker.unregister(name, "shared_memory")


class _SegmentsSeen:
    """The main process's side of the worker pools: for each pooled segment seen, its
    descriptor and a one-page mapping of its header (Note [Shared-memory tensors])."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open = {}  # name -> (fd, header mapping)

    def map(self, name, size, pooled):
        """A mapping of the first ``size`` bytes of segment ``name``, which frees the segment
        for its worker when it dies."""
        if not pooled:
            fd = _open_and_unlink(name)
            try:
                return _map(fd, size)
            finally:
                os.close(fd)
        with self._lock:
            entry = self._open.get(name)
            if entry is None:
                fd = _open_and_unlink(name)
                entry = self._open[name] = (fd, mmap.mmap(fd, mmap.PAGESIZE))
            mapping = _map(entry[0], size)
        weakref.finalize(mapping, _mark_free, entry[1])
        return mapping

    def close(self):
        with self._lock:
            entries, self._open = list(self._open.values()), {}
        for fd, _ in entries:  # the header mappings stay alive while batches hold them
            os.close(fd)


def _mark_free(header):
    if not header.closed:
        header[0] = 0


def _open_and_unlink(name):
    posixshmem, _ = _shm_posix()
    fd = posixshmem.shm_open(name, os.O_RDWR, mode=0o600)
    _unlink_shared_memory(name)
    return fd


def _tensor_from_shared_memory(index, dtype, shape, requires_grad):
    """A tensor of the result being unpacked, viewing its segment (the mapping stays alive as
    long as any tensor uses it)."""
    mapping, offsets = _shm_current.mapping, _shm_current.offsets
    count = 1
    for n in shape:
        count *= n
    array = np.frombuffer(mapping, dtype=dtype, count=count, offset=offsets[index]).reshape(shape)
    t = ember.from_numpy(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor_shared(t):
    """Large plain tensors go to the result's shared-memory segment; others are pickled
    compactly (Note [Shared-memory tensors])."""
    if (_shm_pending is not None and type(t) is ember.Tensor and t.dtype in _shm_dtypes()
            and t.is_leaf and t.numel() * t.element_size() >= _SHM_MIN_BYTES
            and not getattr(t, "__dict__", None) and t.device.type == "cpu"):
        array = np.ascontiguousarray(t.detach().numpy())
        _shm_pending.append(array)
        return (_tensor_from_shared_memory,
                (len(_shm_pending) - 1, array.dtype.str, tuple(array.shape), t.requires_grad))
    return _reduce_tensor_compact(t)


_payload_dispatch = copyreg.dispatch_table.copy()
_payload_dispatch[ember.Tensor] = _reduce_tensor_shared


def _dumps(obj, shared=False):
    """The payload of one result: the pickle bytes, or (pickle bytes, segment name, offsets,
    bytes used, pooled) when large tensors went to shared memory."""
    global _shm_pending
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _payload_dispatch
    _shm_pending = [] if shared and _shm_posix()[0] is not None else None
    try:
        pickler.dump(obj)
        arrays = _shm_pending
    finally:
        _shm_pending = None
    if not arrays:
        return buffer.getvalue()
    return (buffer.getvalue(), *_to_shared_memory(arrays))


def _pack(data, worker_id):
    """The bytes sent for one result; an unpicklable result becomes the error it raised."""
    try:
        return _dumps(data, shared=True)
    except Exception:
        if isinstance(data, ExceptionWrapper):
            # The exception's own type cannot travel (a local class, say); its text can.
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(
                where=f"in DataLoader worker process {worker_id} while sending a batch"
            )
        return _dumps(data)


def _unpack(payload, segments=None):
    """The result ``payload`` (from :func:`_pack`) carries; ``segments`` is the receiving
    iterator's :class:`_SegmentsSeen`."""
    if isinstance(payload, bytes):
        return pickle.loads(payload)
    header, name, offsets, size, pooled = payload
    if segments is None:
        segments = _SegmentsSeen()
    _shm_current.mapping = segments.map(name, size, pooled)
    _shm_current.offsets = offsets
    try:
        return pickle.loads(header)
    finally:
        _shm_current.mapping = _shm_current.offsets = None


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers):
    """Runs in a worker process: takes ``(task_idx, index)`` from ``index_queue``, sends
    ``(task_idx, payload)`` to ``data_queue``; None on the index queue ends the loop."""
    global _worker_info
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        # The workers are the parallelism: one thread each keeps the machine from being
        # oversubscribed (and OpenMP's pool is not usable after fork anyway).
        ember.set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        ember.manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)

        def make_fetcher():
            return _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                               drop_last)

        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher()
        except Exception:
            init_exception = ExceptionWrapper(where=where)

        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=WORKER_LIVENESS_INTERVAL)
            except queue.Empty:
                # Shutdown also sends None, but the None may never come: when the iterator is
                # collected as garbage, its index queues can be finalized before its __del__
                # runs, and their feeder threads are gone.
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                try:
                    fetcher = make_fetcher()
                except Exception:
                    init_exception = ExceptionWrapper(where=where)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue  # drain the tasks of a finished iteration
            idx, index = r
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        # Sending one stop is enough: later tasks of this epoch are drained.
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=where)
            data_queue.put((idx, _pack(data, worker_id)))
            del data, idx, index, r
    except KeyboardInterrupt:
        # The main process handles Ctrl-C; the worker just stops.
        pass
    finally:
        _worker_info = None
        _release_segments()
        # Note [Worker exit never waits for its feeder]: when the main process stops this worker
        # (the done event, or SIGTERM at its interpreter exit) nobody reads further results, so
        # the exit must not wait for the result queue's feeder thread to flush them. It is here,
        # in the finally, because SIGTERM arrives as SystemExit, which skips code after the
        # block. Waiting could also hang for good: a SystemExit raised inside the first put()
        # after the feeder thread started but before the queue registered its close finalizer
        # leaves that thread waiting for a sentinel that never comes, and the interpreter's exit
        # joins it (a DataLoader test's worker hung so; PyTorch's workers cancel the same way).
        if done_event.is_set() or _sigterm_state["received"]:
            data_queue.cancel_join_thread()
            data_queue.close()
