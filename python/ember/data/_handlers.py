"""Exception handlers, as WebDataset's: a stage that fails on a sample or a shard calls
``handler(exn)``; True means go on (the sample or shard is skipped), False means stop the
iteration quietly, and raising propagates. Skips are counted in :data:`report`, so a run can say
how many samples and shards it lost and why."""

from __future__ import annotations

import threading
import warnings
from collections import Counter

__all__ = [
    "reraise_exception", "ignore_and_continue", "warn_and_continue", "ignore_and_stop",
    "warn_and_stop", "SkipReport", "report",
]


class SkipReport:
    """Counts of what the handlers skipped in this process: ``shards`` (unreadable or corrupt
    shards: the rest of each is skipped), ``samples`` (samples a stage failed on), and the last
    ``errors`` (at most 100 messages). Thread-safe; ``reset()`` clears it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        with self._lock:
            self.shards = 0
            self.samples = 0
            self.by_type = Counter()
            self.errors = []

    def record(self, exn):
        from ._source import ShardError

        with self._lock:
            if isinstance(exn, ShardError):
                self.shards += 1
            else:
                self.samples += 1
            self.by_type[type(exn).__name__] += 1
            if len(self.errors) < 100:
                self.errors.append(f"{type(exn).__name__}: {exn}")

    def __repr__(self):
        return (f"SkipReport(shards={self.shards}, samples={self.samples}, "
                f"by_type={dict(self.by_type)})")


report = SkipReport()


def reraise_exception(exn):
    """Raise: the default."""
    raise exn


def ignore_and_continue(exn):
    """Skip what failed, silently (it is still counted in :data:`report`)."""
    report.record(exn)
    return True


def warn_and_continue(exn):
    """Skip what failed with a warning naming it."""
    report.record(exn)
    warnings.warn(repr(exn), stacklevel=2)
    return True


def ignore_and_stop(exn):
    """End the iteration quietly."""
    report.record(exn)
    return False


def warn_and_stop(exn):
    """End the iteration with a warning."""
    report.record(exn)
    warnings.warn(repr(exn), stacklevel=2)
    return False
