"""``torch.profiler``'s API on Ember's recorder: profile (with schedules and trace handlers),
record_function, schedule and tensorboard_trace_handler.

Events come from C++: the op observer times every op a program calls from Python, the autograd
engine times every backward node, and record_function marks user ranges (docs/design/profiler.md).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import warnings
from enum import Enum

from ember._C import _profiler as _recorder
from ember.profiler._events import build_events

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"


def supported_activities():
    """The activities this build can profile: the CPU."""
    return {ProfilerActivity.CPU}


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """PyTorch's profiler schedule: after ``skip_first`` steps, cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one saves), ``repeat`` times
    (0: forever). With ``skip_first_wait``, the first cycle has no wait."""
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"schedule: {name} must be a non-negative int, got {value!r}")
    if active < 1:
        raise ValueError("schedule: active must be at least 1")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"schedule: step must be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else \
            ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready handler that writes each saved trace to ``dir_name`` as
    ``{worker_name}.{time_ns}.pt.trace.json[.gz]``, the name TensorBoard's plugin reads."""

    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class record_function(contextlib.ContextDecorator):
    """Marks a range of user code in the profile (a no-op when nothing is profiling). Usable as
    a context manager or a decorator; ``args`` is accepted as PyTorch's and not recorded."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._handles = []

    def __enter__(self):
        self._handles.append(_recorder._push_range(self.name))
        return self

    def __exit__(self, *exc):
        _recorder._pop_range(self._handles.pop())
        return False


class _Recording:
    """Starts and stops the recorder; keeps the start time as the trace's origin."""

    def __init__(self, record_shapes, profile_memory, with_stack):
        self.options = (bool(record_shapes), bool(profile_memory), bool(with_stack))
        self.origin_ns = 0

    def start(self):
        self.origin_ns = _recorder._now_ns()
        _recorder._start(*self.options)

    def stop(self):
        raw = _recorder._stop()
        record_shapes, profile_memory, with_stack = self.options
        return build_events(raw, profile_memory=profile_memory, with_stack=with_stack,
                            record_shapes=record_shapes, origin_ns=self.origin_ns)


class profile:
    """``torch.profiler.profile``: records the CPU ops, backward nodes and record_function
    ranges of the code it wraps; with a ``schedule``, only the steps it marks (``step()``
    advances), handing each finished cycle to ``on_trace_ready``."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        for activity in activities:
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got "
                                f"{activity!r}")
        unsupported = activities - supported_activities()
        if unsupported:
            names = ", ".join(sorted(a.name for a in unsupported))
            warnings.warn(f"Profiler: {names} activity is not available in this build of ember "
                          "(CPU only); profiling the CPU", stacklevel=2)
        self.activities = activities
        self.schedule = schedule if schedule is not None else _default_schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._recording = None
        self._step_range = -1
        self._events = None
        self._metadata = {}

    # -- recording ------------------------------------------------------------------------
    def _start_trace(self):
        self._recording = _Recording(self.record_shapes, self.profile_memory, self.with_stack)
        self._recording.start()
        if self.schedule is not _default_schedule:
            self._step_range = _recorder._push_range(f"ProfilerStep#{self.step_num}")

    def _stop_trace(self):
        if self._recording is None:
            return
        if self._step_range >= 0:
            _recorder._pop_range(self._step_range)
            self._step_range = -1
        self._events = self._recording.stop()
        self._recording = None

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transition(self, previous, current):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous == ProfilerAction.RECORD_AND_SAVE or (
                previous in recording and current not in recording):
            if previous == ProfilerAction.RECORD and current is not None:
                warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}",
                              stacklevel=3)
            self._stop_trace()
            self._trace_ready()
            previous = ProfilerAction.NONE
        if current in recording and previous not in recording:
            self._start_trace()

    def start(self):
        self.current_action = self.schedule(self.step_num)
        self._transition(ProfilerAction.NONE, self.current_action)

    def stop(self):
        self._transition(self.current_action, None)
        self.current_action = ProfilerAction.NONE

    def step(self):
        """Marks the end of a training step: moves the schedule on."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous in (ProfilerAction.RECORD,) and self.current_action in (
                ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            # Still recording: the next step's range starts here.
            if self._step_range >= 0:
                _recorder._pop_range(self._step_range)
            self._step_range = _recorder._push_range(f"ProfilerStep#{self.step_num}")
            return
        self._transition(previous, self.current_action)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- results --------------------------------------------------------------------------
    def events(self):
        """The events of the last finished recording."""
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running: no events yet (leave the "
                               "profile's with-block, or reach a RECORD_AND_SAVE step)")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs "
                               "profile(record_shapes=True)")
        if group_by_stack_n > 0 and not self.with_stack:
            raise RuntimeError("key_averages(group_by_stack_n=...) needs profile(with_stack=True)")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        return self.events().export_chrome_trace(path, metadata=self._metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        if not self.with_stack:
            raise RuntimeError("export_stacks needs profile(with_stack=True)")
        return self.events().export_stacks(path, metric)

    def export_memory_timeline(self, path, device=None):
        raise RuntimeError("export_memory_timeline: Ember's profiler records memory per op "
                           "(profile_memory=True and the CPU Mem columns), not a timeline")

    def add_metadata(self, key, value):
        """A string entry written at the top level of the exported Chrome trace."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("add_metadata: key and value must be str")
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        """A JSON value (given as its text) written at the top level of the Chrome trace."""
        import json

        self._metadata[key] = json.loads(value)

