"""DataLoader, as torch.utils.data.dataloader: batches of a dataset, read in the main process
or in worker processes.

Note [DataLoader workers]: with ``num_workers > 0`` each worker is a process with its own copy
of the dataset. The main process sends task ``(task_idx, indices)`` to the workers' index
queues in turn, keeping ``prefetch_factor * num_workers`` tasks in flight, and gets
``(task_idx, payload)`` back from one shared result queue; results that arrive early wait in
``_task_info`` so batches come out in sampler order (unless ``in_order=False``).

Nothing waits forever: a receiver thread moves results from the result queue to a local queue,
and the main process waits on the local queue in short slices, checking between slices that
every worker is alive. A worker that dies (os._exit, a signal, the OOM killer), even in the
middle of sending a batch, therefore raises "DataLoader worker (pid(s) N) exited unexpectedly"
within a fraction of a second, where a blocking read of its half-written message would hang.
"""

import itertools
import multiprocessing as python_multiprocessing
import os
import queue
import threading
import time
import warnings

import ember

from . import _utils
from ._utils import ExceptionWrapper
from ._utils.fetch import _DatasetKind
from ._utils.worker import (
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _SegmentsSeen,
    _unpack,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert
get_worker_info = _utils.worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: placeholders, as many as asked for."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count():
    if hasattr(os, "sched_getaffinity"):
        try:
            return len(os.sched_getaffinity(0))
        except OSError:
            pass
    return os.cpu_count()


class DataLoader:
    """Iterates over ``dataset`` in batches.

    Arguments and defaults are PyTorch's: ``batch_size=1``, ``shuffle`` (a fresh permutation
    every epoch), ``sampler`` / ``batch_sampler`` (custom orders), ``num_workers`` (worker
    processes; 0 loads in the main process), ``collate_fn`` (default: :func:`default_collate`),
    ``pin_memory`` (accepted; Ember has no pinned memory, so it only warns), ``drop_last``,
    ``timeout`` (seconds to wait for a batch from the workers; 0 waits as long as they live),
    ``worker_init_fn(worker_id)``, ``multiprocessing_context``, ``generator`` (an
    :class:`ember.Generator` that drives shuffling and the workers' seeds), and keyword-only
    ``prefetch_factor`` (batches in flight per worker, default 2), ``persistent_workers`` (keep
    the workers between epochs), ``pin_memory_device`` and ``in_order``.
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            # The dataset decides the order; there is nothing to sample.
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        # len(dataloader) of an iterable dataset, once asked for: more batches than that warn.
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method "
                            f"in {valid_start_methods!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = python_multiprocessing.get_context(
                        multiprocessing_context
                    )
                if not isinstance(multiprocessing_context,
                                  python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in (
            "batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is "
                "initialized"
            )
        super().__setattr__(attr, val)

    def __iter__(self):
        # Persistent workers: one iterator, reset at the start of every epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # What the iterators draw from: batches of indices, or single indices.
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # The dataset's own length, in batches; with workers it is only right if the
            # dataset shards itself so that the workers do not repeat samples.
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warns when more workers are asked for than this process has CPUs."""
        if not self.num_workers:
            return
        max_num_worker_suggest = _cpu_count()
        cpuset_checked = hasattr(os, "sched_getaffinity")
        if max_num_worker_suggest is None or self.num_workers > max_num_worker_suggest:
            if max_num_worker_suggest is not None:
                suggestion = (
                    "Our suggested max number of worker in current system is "
                    f"{max_num_worker_suggest}"
                    f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                    "which is smaller than what this DataLoader is going to create."
                )
            else:
                suggestion = (
                    "DataLoader is not able to compute a suggested max number of worker in "
                    "current system."
                )
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"{suggestion} Please be aware that excessive worker creation might get "
                "DataLoader running slow or even freeze, lower the worker number to avoid "
                "potential slowness/freeze if necessary.",
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                stacklevel=2,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # The workers' seeds derive from this draw (base_seed + worker_id), so that a seeded
        # generator (or ember.manual_seed) makes the workers' randomness reproducible.
        self._base_seed = (
            ember.empty((), dtype=ember.int64).random_(generator=loader.generator).item()
        )
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warn_msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                warn_msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker (see "
                    "ember.utils.data.get_worker_info)."
                )
            warnings.warn(warn_msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


def _receive_loop(result_queue, local_queue, done_event):
    """The receiver thread (see Note [DataLoader workers]). It owns the reading end of the
    result queue and closes it when done, so that shutdown never waits for it and never closes
    a pipe it is reading."""
    try:
        while not done_event.is_set():
            try:
                item = result_queue.get(timeout=_utils.WORKER_LIVENESS_INTERVAL)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):
                return
            local_queue.put(item)
    finally:
        result_queue.cancel_join_thread()
        result_queue.close()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """See Note [DataLoader workers]."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        assert self._num_workers > 0
        assert self._prefetch_factor > 0
        context = loader.multiprocessing_context or python_multiprocessing
        # What the workers use is imported before they fork: an import inside a forked child
        # can deadlock on an import lock that another thread of this process held at the fork.
        import numpy.random  # noqa: F401
        self._worker_init_fn = loader.worker_init_fn
        # One resource tracker for this process and its workers (Note [Shared-memory tensors]).
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._receiver_done_event = threading.Event()
        self._index_queues = []
        self._workers = []
        # Ready for _shutdown_workers from here on, should starting a worker fail.
        self._workers_status = [True] * self._num_workers
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._segments = _SegmentsSeen()  # the workers' shared-memory segments it has mapped
        for i in range(self._num_workers):
            index_queue = context.Queue()
            # A worker that died with unread tasks must not block this process's exit.
            index_queue.cancel_join_thread()
            w = context.Process(
                target=_utils.worker._worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, self._worker_init_fn, i,
                      self._num_workers, self._persistent_workers),
            )
            w.daemon = True
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)

        self._data_queue = queue.Queue()
        self._receiver_thread = threading.Thread(
            target=_receive_loop,
            args=(self._worker_result_queue, self._data_queue, self._receiver_done_event),
            name="ember_data_receiver",
            daemon=True,
        )
        self._receiver_thread.start()
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the task_idx of the next task to send
        self._rcvd_idx = 0  # the task_idx of the next result to return
        # task_idx -> (worker_id,) while outstanding, (worker_id, data) once arrived early.
        self._task_info = {}
        self._tasks_outstanding = 0
        # False for workers that will get no more tasks this epoch (iterable dataset
        # exhausted, or shut down).
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers start a new epoch; results of an epoch left unfinished come
            # back before each worker's acknowledgement and are dropped.
            for index_queue in self._index_queues:
                index_queue.put(_ResumeIteration())
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _check_workers_alive(self, cause=None):
        failed_workers = []
        for worker_id, w in enumerate(self._workers):
            if self._workers_status[worker_id] and not w.is_alive():
                failed_workers.append(w)
                self._mark_worker_as_unavailable(worker_id)
        if failed_workers:
            pids_str = ", ".join(str(w.pid) for w in failed_workers)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids_str}) exited unexpectedly") \
                from cause

    def _try_get_data(self, timeout=_utils.MP_STATUS_CHECK_INTERVAL):
        """(True, item) or, after ``timeout`` seconds with no item, (False, None); raises if
        a worker died meanwhile."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                slice_s = max(0.0, min(remaining, _utils.WORKER_LIVENESS_INTERVAL))
                return True, self._data_queue.get(timeout=slice_s)
            except queue.Empty as e:
                self._check_workers_alive(e)
                if remaining <= 0:
                    return False, None
            if not self._receiver_thread.is_alive():
                raise RuntimeError("DataLoader's result receiver thread exited unexpectedly")

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # Skip tasks of workers that stopped (iterable dataset exhausted) without
            # result; stop when every sent task has been returned.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx, None)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            data = _unpack(data, self._segments)
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(
                data, _IterableDatasetStopIteration
            ):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue

            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order:
                    break
                if self._workers_num_tasks[worker_queue_idx] < max_tasks // sum(
                    self._workers_status
                ):
                    break
        else:
            return  # no active worker left
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        # Sends the worker its end signal; it exits once done with its current task.
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if _utils is None or _utils.python_exit_status is True or _utils.python_exit_status is None:
            # Interpreter exit: multiprocessing terminates the daemonic workers itself.
            return
        if getattr(self, "_shutdown", True):
            return  # done already, or __init__ failed before any worker started
        if os.getpid() != self._owner_pid:
            # A forked worker's copy of this iterator: the workers are its siblings, not its
            # children, and they are not its to stop.
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            # Idle workers exit at once on the end signal; a worker still inside a long
            # __getitem__ gets a short grace period, then is terminated (its result is unwanted).
            deadline = time.monotonic() + _utils.WORKER_SHUTDOWN_GRACE
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            # The receiver stops within one liveness interval and closes the result queue.
            self._receiver_done_event.set()
            self._release_unreceived()
            self._segments.close()

    def _release_unreceived(self):
        """Unpacks the results this iterator holds but will never return, which unlinks their
        shared-memory segments (Note [Shared-memory tensors])."""
        held = [info[1] for info in getattr(self, "_task_info", {}).values() if len(info) == 2]
        while True:
            try:
                held.append(self._data_queue.get_nowait()[1])
            except (queue.Empty, AttributeError, IndexError, TypeError):
                break
        for payload in held:
            try:
                _unpack(payload, self._segments)
            except Exception:  # a payload that fails to unpack holds nothing to release
                pass

    def __del__(self):
        self._shutdown_workers()
