"""``torch.autograd.profiler``: the older profiler names, on the same recorder as
ember.profiler.

    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        model(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))
"""

from __future__ import annotations

import warnings

from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from ember.profiler.profiler import _Recording, record_function

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]


class profile:
    """Records the ops, backward nodes and record_function ranges run inside it (when
    ``enabled``); afterwards ``function_events``, ``key_averages()``, ``table()`` and
    ``export_chrome_trace()`` read them."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        if use_cuda or (use_device not in (None, "cpu")):
            warnings.warn("profile: Ember profiles the CPU only; device activity is not "
                          "recorded", stacklevel=2)
        if not use_cpu:
            raise ValueError("profile(use_cpu=False): Ember only has CPU activity to profile")
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.function_events = None
        self._recording = None
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._recording = _Recording(self.record_shapes, self.profile_memory, self.with_stack)
        self._recording.start()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        self.function_events = self._recording.stop()
        self._recording = None
        return False

    def _check_finished(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finished()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._check_finished()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    def total_average(self):
        self._check_finished()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finished()
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path):
        self._check_finished()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finished()
        return self.function_events.export_stacks(path, metric)

    def __str__(self):
        self._check_finished()
        return self.function_events.table()

    __repr__ = __str__
