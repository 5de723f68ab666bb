"""Profiler events and their tables (``torch.autograd.profiler_util``): FunctionEvent,
FunctionEventAvg and EventList, built from the C++ recorder's events (csrc/core/profiler.h).

Times are in microseconds and memory in bytes, as in PyTorch. The table has PyTorch's columns;
device columns are absent because Ember profiles the CPU only.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]

_KIND_CATEGORY = {0: "cpu_op", 1: "cpu_op", 2: "user_annotation"}


class FunctionEvent:
    """One profiled range: an op, an autograd node or a record_function block."""

    def __init__(self, id, name, thread, start_us, end_us, kind=0, input_shapes=None,
                 input_dtypes=None, stack=None, cpu_memory_usage=0, self_cpu_memory_usage=0):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.kind = kind
        self.input_shapes = input_shapes or []
        self.input_dtypes = input_dtypes or []
        self.stack = stack or []
        self.cpu_memory_usage = cpu_memory_usage
        self.self_cpu_memory_usage = self_cpu_memory_usage
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1
        self.device_type = "CPU"
        self.is_async = False
        self.is_legacy = False
        self.node_id = -1
        self.flops = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0

    @property
    def key(self):
        return self.name

    @property
    def trace_name(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    # The CUDA names PyTorch keeps for old scripts: no device time on the CPU.
    cuda_time_total = property(lambda self: 0.0)
    self_cuda_time_total = property(lambda self: 0.0)
    cuda_memory_usage = property(lambda self: 0)
    self_cuda_memory_usage = property(lambda self: 0)

    @property
    def time_range(self):
        return _Interval(self.start_us, self.end_us)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class _Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEventAvg:
    """The events that share a key (a name, with the input shapes or stack when grouped so)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = "CPU"
        self.is_legacy = False
        self.flops = 0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0

    cuda_time_total = property(lambda self: 0.0)
    self_cuda_time_total = property(lambda self: 0.0)
    cuda_memory_usage = property(lambda self: 0)
    self_cuda_memory_usage = property(lambda self: 0)

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
        if other.key != self.key:
            raise ValueError(f"FunctionEventAvg.add: key {other.key!r} differs from {self.key!r}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def self_cpu_time(self):
        return 0.0 if self.count == 0 else self.self_cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_memory(nbytes):
    kb = 1024
    mb = 1024 * kb
    gb = 1024 * mb
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{nbytes} b"


def _format_percent(part, whole):
    return f"{(part / whole * 100 if whole else 0.0):.2f}%"


_SORT_KEYS = {
    "cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
    "self_cpu_memory_usage", "count", "cuda_time", "cuda_time_total", "self_cuda_time_total",
    "cuda_memory_usage", "self_cuda_memory_usage", "device_time", "device_time_total",
    "self_device_time_total", "device_memory_usage", "self_device_memory_usage", "flops",
}


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with PyTorch's table and trace export."""

    def __init__(self, *args, profile_memory=False, with_stack=False, record_shapes=False,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        self._record_shapes = record_shapes

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Events with the same name (and input shapes, and top stack frames when asked)
        summed into one FunctionEventAvg each, in first-seen order."""
        stats: dict = defaultdict(FunctionEventAvg)
        for event in self:
            key = [event.key]
            if group_by_input_shape:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key.append(str(event.stack[:group_by_stack_n]))
            stats[tuple(key)].add(event)
        averages = EventList(stats.values(), profile_memory=self._profile_memory,
                             with_stack=self._with_stack, record_shapes=self._record_shapes)
        averages._grouped_by_shape = group_by_input_shape
        averages._stack_n = group_by_stack_n
        for avg in averages:
            if group_by_stack_n > 0 and avg.stack is not None:
                avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shape:
                avg.input_shapes = None
        return averages

    def total_average(self):
        total = FunctionEventAvg()
        for event in self:
            total.count += event.count
            total.cpu_time_total += event.cpu_time_total
            total.self_cpu_time_total += event.self_cpu_time_total
            total.cpu_memory_usage += event.cpu_memory_usage
            total.self_cpu_memory_usage += event.self_cpu_memory_usage
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """PyTorch's profiler table: self/total CPU time and %, average, CPU memory when
        profiled, call counts, input shapes when grouped by them, source when by stack."""
        events = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            events.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if top_level_events_only:
            events = [e for e in events if e.cpu_parent is None]
        if row_limit is not None and row_limit > 0:
            events = events[:row_limit]
        shapes = getattr(self, "_grouped_by_shape", False) or (
            self._record_shapes and events and isinstance(events[0], FunctionEvent))
        stack_n = getattr(self, "_stack_n", 0) or (
            5 if self._with_stack and events and isinstance(events[0], FunctionEvent) else 0)
        memory = self._profile_memory

        name_width = min(max((len(e.key) for e in events), default=4) + 4,
                         max_name_column_width)
        columns = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if memory:
            columns += ["CPU Mem", "Self CPU Mem"]
        columns.append("# of Calls")
        total_self = sum(e.self_cpu_time_total for e in self)

        def fmt_time(us):
            if time_unit == "s":
                return f"{us / 1e6:.3f}s"
            if time_unit == "ms":
                return f"{us / 1e3:.3f}ms"
            if time_unit == "us":
                return f"{us:.3f}us"
            return _format_time(us)

        rows = []
        for e in events:
            name = e.key if len(e.key) <= name_width - 2 else e.key[: name_width - 5] + "..."
            row = [name, _format_percent(e.self_cpu_time_total, total_self),
                   fmt_time(e.self_cpu_time_total),
                   _format_percent(e.cpu_time_total, total_self), fmt_time(e.cpu_time_total),
                   fmt_time(e.cpu_time_total / max(e.count, 1))]
            if memory:
                row += [_format_memory(e.cpu_memory_usage),
                        _format_memory(e.self_cpu_memory_usage)]
            row.append(str(e.count))
            if shapes:
                text = str(e.input_shapes)
                row.append(text[:max_shapes_column_width])
            frames = [f[:max_src_column_width] for f in (e.stack or [])[:stack_n or 0]]
            if stack_n:
                row.append(frames[0] if frames else "")
            rows.append(row)
            # Further frames of the stack on lines of their own, as PyTorch's table.
            for frame in frames[1:]:
                rows.append([""] * (len(row) - 1) + [frame])
        heads = ["Name"] + columns
        if shapes:
            heads.append("Input Shapes")
        if stack_n:
            heads.append("Source Location")
        widths = [max([len(h)] + [len(r[i]) for r in rows]) + 2 for i, h in enumerate(heads)]
        widths[0] = max(widths[0], name_width)

        def line(cells):
            first = cells[0].ljust(widths[0])
            if stack_n:  # the source column reads left to right
                middle = "".join(c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1]))
                return first + middle + "  " + cells[-1]
            rest = "".join(c.rjust(w) for c, w in zip(cells[1:], widths[1:]))
            return first + rest

        rule = "-" * sum(widths)
        out = []
        if header is not None:
            out += ["=" * sum(widths), header]
        out += [rule, line(heads), rule]
        out += [line(r) for r in rows]
        out += [rule, f"Self CPU time total: {fmt_time(total_self)}", ""]
        return "\n".join(out)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path, metadata=None):
        """Writes the events in Chrome's trace event format (JSON object form): one complete
        ("X") event per range, with thread and process names as metadata events."""
        pid = os.getpid()
        trace_events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                         "args": {"name": "ember CPU"}}]
        threads = sorted({e.thread for e in self if isinstance(e, FunctionEvent)})
        for tid in threads:
            trace_events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                                 "args": {"name": f"thread {tid}"}})
        for e in self:
            if not isinstance(e, FunctionEvent):
                raise ValueError("export_chrome_trace: needs the events, not their averages "
                                 "(call it on the profile or on profile.events())")
            args = {"External id": e.id}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
                args["Input type"] = e.input_dtypes
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            if e.cpu_memory_usage:
                args["Self CPU Mem"] = e.self_cpu_memory_usage
            trace_events.append({"ph": "X", "cat": _KIND_CATEGORY.get(e.kind, "cpu_op"),
                                 "name": e.name, "pid": pid, "tid": e.thread,
                                 "ts": e.start_us, "dur": e.cpu_time_total, "args": args})
        trace = {"schemaVersion": 1, "traceEvents": trace_events, "displayTimeUnit": "ms",
                 "traceName": os.fspath(path), "deviceProperties": []}
        for key, value in (metadata or {}).items():
            trace.setdefault(key, value)
        path = os.fspath(path)
        if path.endswith(".gz"):
            import gzip

            with gzip.open(path, "wt", encoding="utf-8") as f:
                json.dump(trace, f)
        else:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(trace, f)
        return path

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """One line per event with a stack: the frames outermost first, ';'-joined, then the
        op and the metric in microseconds (the flame graph tools' folded format)."""
        if metric not in ("self_cpu_time_total", "self_cuda_time_total",
                          "self_device_time_total"):
            raise ValueError(f"export_stacks: metric must be self_cpu_time_total, got {metric!r}")
        with open(path, "w", encoding="utf-8") as f:
            for e in self:
                if e.stack:
                    frames = ";".join(reversed(e.stack))
                    value = int(getattr(e, metric, 0.0))
                    f.write(f"{frames};{e.name} {value}\n")


def build_events(raw, profile_memory=False, with_stack=False, record_shapes=False,
                 origin_ns=0):
    """FunctionEvents from the recorder's tuples, linked to their parents and children."""
    events = []
    by_id = {}
    for (name, kind, event_id, parent_id, thread, start_ns, end_ns, self_mem, total_mem,
         shapes, dtypes, stack) in raw:
        event = FunctionEvent(event_id, name, thread, (start_ns - origin_ns) / 1e3,
                              (end_ns - origin_ns) / 1e3, kind=kind, input_shapes=shapes,
                              input_dtypes=dtypes, stack=stack, cpu_memory_usage=total_mem,
                              self_cpu_memory_usage=self_mem)
        event._parent_id = parent_id
        by_id[event_id] = event
        events.append(event)
    for event in events:
        parent = by_id.get(event._parent_id)
        if parent is not None:
            event.cpu_parent = parent
            parent.cpu_children.append(event)
    events.sort(key=lambda e: (e.start_us, -e.end_us))
    return EventList(events, profile_memory=profile_memory, with_stack=with_stack,
                     record_shapes=record_shapes)
