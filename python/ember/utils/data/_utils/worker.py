"""The worker process side of the DataLoader (as torch.utils.data._utils.worker): the loop each
worker runs, its identity (:func:`get_worker_info`) and how batches travel to the main process.

Note [Worker payloads]: a worker pickles each result itself and sends the bytes. A result that
cannot be pickled then becomes an error the main process re-raises, instead of a failure inside
the queue's feeder thread that nobody sees (the main process would wait forever). Tensors are
pickled compactly: a view sends only its own elements, not the whole storage it looks into
(``dataset[i]`` of a big tensor is a view).
"""

import copyreg
import io
import os
import pickle
import queue
import random
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


_payload_dispatch = copyreg.dispatch_table.copy()
_payload_dispatch[ember.Tensor] = _reduce_tensor_compact


def _dumps(obj):
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _payload_dispatch
    pickler.dump(obj)
    return buffer.getvalue()


def _pack(data, worker_id):
    """The bytes sent for one result; an unpicklable result becomes the error it raised."""
    try:
        return _dumps(data)
    except Exception:
        if isinstance(data, ExceptionWrapper):
            # The exception's own type cannot travel (a local class, say); its text can.
            data.exc_type = RuntimeError
        else:
            data = ExceptionWrapper(
                where=f"in DataLoader worker process {worker_id} while sending a batch"
            )
        return _dumps(data)


def _unpack(payload):
    return pickle.loads(payload)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers):
    """Runs in a worker process: takes ``(task_idx, index)`` from ``index_queue``, sends
    ``(task_idx, payload)`` to ``data_queue``; None on the index queue ends the loop."""
    global _worker_info
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
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
