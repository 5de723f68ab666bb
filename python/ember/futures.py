"""ember.futures: Future, as torch.futures. A Future holds a value (or an error) that arrives
later; ``then`` chains a callback that gets the completed future, and ``wait`` blocks for the
value. ember.distributed's ``Work.get_future()`` returns one (DDP communication hooks return
them)."""

from __future__ import annotations

import threading

__all__ = ["Future", "collect_all", "wait_all"]


# Note [Futures complete when asked]: a future made from a collective's Work completes when it
# is polled (``done``, ``value``, a new callback) or waited on, directly or through a future
# chained to it by ``then`` or ``collect_all``; its callbacks run then, on that thread. No
# backend thread ever runs Python, so a collective ending needs no GIL, and attaching a callback
# never waits: a DDP communication hook returns at once and its all-reduce overlaps the rest of
# backward. (PyTorch runs such callbacks on its backend thread as the work ends; the values seen
# are the same.) Futures completed by ``set_result`` run their callbacks at once, on the thread
# that completes them.
class Future:
    """A value (or an error) that arrives later, as torch.futures.Future (Note [Futures complete
    when asked])."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value = None
        self._error = None
        self._callbacks = []
        self._waiter = None  # a Work to complete from, for futures made from one
        self._sources = ()  # futures whose completion completes this one (then, collect_all)

    @classmethod
    def _from_work(cls, work):
        future = cls()
        future._waiter = work
        return future

    def _drive(self, block):
        """Completes this future from its Work once that has ended (with ``block``, after
        waiting for it), or asks the futures it depends on to do so."""
        if self._done.is_set():
            return
        with self._lock:
            work = self._waiter
            if work is not None and (block or work.is_completed()):
                self._waiter = None  # this thread completes it; others wait on _done
            else:
                work = None
        if work is not None:
            try:
                work.wait()
            except Exception as e:  # the future carries the error
                self.set_exception(e)
                return
            self.set_result(work._result)
            return
        for source in self._sources:
            source._drive(block)

    def done(self):
        self._drive(block=False)
        return self._done.is_set()

    def wait(self):
        """Blocks until the value is set; returns it (raises the error it was set with)."""
        self._drive(block=True)
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        self._drive(block=False)
        if not self._done.is_set():
            raise RuntimeError("Future.value() called before the future completed")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError("set_exception needs an exception")
        self._finish(None, result)

    def _finish(self, value, error):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Future can only be marked completed once")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def add_done_callback(self, callback):
        """Calls ``callback(self)`` when the future completes (at once if it has; see Note
        [Futures complete when asked])."""
        self._drive(block=False)
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A future of ``callback(self)``, run when this one completes."""
        chained = Future()
        chained._sources = (self,)

        def run(done):
            try:
                chained.set_result(callback(done))
            except Exception as e:
                chained.set_exception(e)

        self.add_done_callback(run)
        return chained


def collect_all(futures):
    """A future of the list of ``futures``, completed when all are."""
    result = Future()
    futures = list(futures)
    result._sources = tuple(futures)
    if not futures:
        result.set_result([])
        return result
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            result.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return result


def wait_all(futures):
    """The values of ``futures``, waiting for each."""
    return [f.wait() for f in futures]
