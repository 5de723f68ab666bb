"""ember.profiler: PyTorch's ``torch.profiler`` for Ember's CPU ops.

    with ember.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with ember.profiler.record_function("model_inference"):
            model(x)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

Events come from the C++ op observer (every op called from Python), the autograd engine (every
backward node) and record_function; nothing is recorded, and nothing costs, when no profile
runs (docs/design/profiler.md).
"""

from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from ember.profiler.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]
