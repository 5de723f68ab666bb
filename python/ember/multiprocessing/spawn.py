"""spawn / start_processes (torch.multiprocessing.spawn): ``fn(i, *args)`` in ``nprocs``
processes; the first to fail stops the others, and its error is raised in the parent."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import sys
import time
import traceback

__all__ = ["ProcessContext", "ProcessExitedException", "ProcessRaisedException",
           "SpawnContext", "spawn", "start_processes"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """True once every process ended; raises the first failure (stopping the others)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:  # stop the others
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + (grace_period if grace_period is not None else 5)
        for p in self.processes:
            p.join(max(0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()
        process = self.processes[failed]
        if self.error_queues[failed].empty():
            code = process.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                             failed, process.pid, code, name)
            raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                         failed, process.pid, code)
        original = self.error_queues[failed].get()
        raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following "
                                     f"error:\n{original}", failed, process.pid)


SpawnContext = ProcessContext


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``fn(i, *args)`` for i in range(nprocs) with ``start_method``; waits for them
    (re-raising a failure) when ``join``, else returns the ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    result = ProcessContext(processes, queues)
    if not join:
        return result
    while not result.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: start_processes with the "spawn" start method."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
