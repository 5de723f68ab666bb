"""ember.utils.benchmark: timing of Ember code, mirroring torch.utils.benchmark.

    from ember.utils.benchmark import Compare, Timer

    t = Timer("x + y", globals={"x": x, "y": y}, label="add", description="n=1024")
    m = t.blocked_autorange(min_run_time=0.2)  # a Measurement: m.median, m.iqr, print(m)
    Compare([m, ...]).print()                  # a table: rows sub_label, columns description

Timer runs the statement with Ember's thread pool at `num_threads` threads (default 1), warms
up, and returns Measurements of many replicates; Compare lays many of them out as tables.
"""

from .utils.common import (  # noqa: F401
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    set_ember_threads,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)
from .utils.compare import Colorize, Compare  # noqa: F401
from .utils.timer import Language, Timer, timer  # noqa: F401

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "set_ember_threads",
    "set_torch_threads",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]
