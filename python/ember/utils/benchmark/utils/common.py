"""What a timing run is (TaskSpec), what it produced (Measurement), and the number formatting
helpers that Measurement and Compare share.

The statistics follow torch.utils.benchmark: medians and quartiles are linearly interpolated
quantiles of the per-execution times, and the handful of quantities that PyTorch computes on default
(float32) tensors -- the unit choice, the significant-figure estimate and the trimming of
figures -- are rounded to float32 here as well, so that tables and reprs print the same digits.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import struct
import textwrap
from typing import Any, Callable, Iterable, Iterator

import ember

__all__ = [
    "TaskSpec",
    "Measurement",
    "select_unit",
    "unit_to_english",
    "trim_sigfig",
    "ordered_unique",
    "set_ember_threads",
    "set_torch_threads",
]


_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: no estimate is trusted below 25 ns

# A Measurement warns when its interquartile range is large relative to its median.
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


# ---- float32 arithmetic, as PyTorch does it on default-dtype tensors ---------------------------

_F32_PACK = struct.Struct("f")


def _f32(x: float) -> float:
    """x rounded to the nearest float32 (infinite beyond float32's range)."""
    try:
        return _F32_PACK.unpack(_F32_PACK.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _rounding_of(x: Any) -> Callable[[float], float]:
    """The rounding that torch.tensor(x) applies to x: float32 (the default dtype) for Python
    numbers, none for NumPy float64 scalars, which keep their dtype."""
    return float if str(getattr(x, "dtype", "")) == "float64" else _f32


def _log10_f32(x: float, rounding: Callable[[float], float] = _f32) -> float:
    """log10 of x as a float32 computation (or float64, given rounding=float): -inf at 0, nan
    below 0."""
    x = rounding(x)
    if x > 0:
        return rounding(math.log10(x))
    return -math.inf if x == 0 else math.nan


def _quantile(sorted_values: tuple[float, ...], q: float) -> float:
    """Linearly interpolated quantile of sorted values (the default of torch.quantile and
    numpy.quantile), interpolating the way torch.lerp does."""
    rank = q * (len(sorted_values) - 1)
    below = math.floor(rank)
    weight = rank - below
    start, end = sorted_values[below], sorted_values[math.ceil(rank)]
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1.0 - weight)


# ---- task description --------------------------------------------------------------------------


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """Everything that defines a Timer's task except its globals. Two measurements of equal
    TaskSpecs are replicates of one task (Measurement.merge pools them)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """A heading for the task: its label, else its one-line stmt, else the stmt indented
        under "stmt:" (each followed by the sub_label when there is one)."""
        sub = self.sub_label
        if self.label is not None:
            return self.label + (f": {sub}" if sub else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {sub}" if sub else "")
        heading = f"stmt: ({sub})" if sub else "stmt:"
        return heading + "\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        """The setup for display: empty when it is "pass" or empty."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task part of a Measurement's repr: title, description and setup, where a
        multi-line part is followed by a blank line."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


# ---- measurement -------------------------------------------------------------------------------


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of timing one task: `raw_times[i]` is the wall time of one run of
    `number_per_run` executions of the statement. Statistics are per execution (raw time divided
    by number_per_run) and computed on first use."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # free for the user's own payload

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median: float = -1.0
        self._mean: float = -1.0
        self._p25: float = -1.0
        self._p75: float = -1.0

    # -- the task's fields, forwarded --------------------------------------------------------

    @property
    def stmt(self) -> str:
        return self.task_spec.stmt

    @property
    def setup(self) -> str:
        return self.task_spec.setup

    @property
    def global_setup(self) -> str:
        return self.task_spec.global_setup

    @property
    def label(self) -> str | None:
        return self.task_spec.label

    @property
    def sub_label(self) -> str | None:
        return self.task_spec.sub_label

    @property
    def description(self) -> str | None:
        return self.task_spec.description

    @property
    def num_threads(self) -> int:
        return self.task_spec.num_threads

    @property
    def env(self) -> str:
        """The task's env tag, "Unspecified env" when it has none."""
        env = self.task_spec.env
        return "Unspecified env" if env is None else env

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    # -- statistics --------------------------------------------------------------------------

    @property
    def times(self) -> list[float]:
        """Seconds per execution of each run."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough number of trustworthy significant figures of the median (1 to 4), from a
        90% confidence interval (z = 1.645) of the runs between the quartiles. Compare uses it
        when trimming figures; the repr does not."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4 : math.ceil(3 * n / 4)]
        values = [_f32(t) for t in middle]
        mean = math.fsum(values) / len(values)
        std = _f32(math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values)))
        sqrt_n = _f32(math.sqrt(len(values)))
        confidence_interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(_log10_f32(self._median / confidence_interval)))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median = _quantile(self._sorted_times, 0.5)
        self._mean = math.fsum(self._sorted_times) / len(self._sorted_times)
        self._p25 = _quantile(self._sorted_times, 0.25)
        self._p75 = _quantile(self._sorted_times, 0.75)

        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        relative_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {relative_iqr:.1f}% "
            f"of the median measurement.\n           {message}",
        )

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is below `threshold` times the median."""
        return self.iqr / self.median < threshold

    def __repr__(self) -> str:
        """The object line, the task summary, then median, IQR, counts and warnings::

        <ember.utils.benchmark.utils.common.Measurement object at 0x7f1c2d3e4f50>
        add: float32
          Median: 2.13 us
          IQR:    0.05 us (2.10 to 2.15)
          412 measurements, 1000 runs per measurement, 1 thread
        """
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        if n > 1:
            counts = f"{n} measurements, {self.number_per_run} runs per measurement, {threads}"
        else:
            counts = f"{n} measurement, {self.number_per_run} runs , {threads}"
        lines.append("  " + counts)
        lines.extend(self._warnings)
        # Joined and re-split so that multi-line summaries and warnings behave as one text.
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Pools replicates: one Measurement per distinct TaskSpec (in order of first
        appearance), holding the per-execution times of all of them (number_per_run=1). The
        metadata is dropped, since replicates may disagree on it."""
        groups: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [
            Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
            for spec, times in groups.items()
        ]


# ---- formatting helpers ------------------------------------------------------------------------

_UNIT_SCALES = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}


def select_unit(t: float) -> tuple[str, float]:
    """The unit ("ns", "us", "ms" or "s") in which `t` seconds reads with 1 to 3 digits before
    the point, and that unit's length in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_f32(t, _rounding_of(t)) // 3), "s")
    return unit, _UNIT_SCALES[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1), in float32 like PyTorch
    (which computes in float64 only for a NumPy float64 x)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    rounding = _rounding_of(x)
    magnitude = int(math.ceil(_log10_f32(abs(x), rounding)))
    scale = 10 ** (magnitude - n)
    return float(rounding(round(rounding(x / scale)) * rounding(scale)))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements, in order of first appearance."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_ember_threads(n: int) -> Iterator[None]:
    """Runs the block with Ember's intra-op thread count set to `n`, then restores it."""
    prior = ember.get_num_threads()
    try:
        ember.set_num_threads(n)
        yield
    finally:
        ember.set_num_threads(prior)


# The name torch.utils.benchmark.utils.common uses, for code ported from PyTorch.
set_torch_threads = set_ember_threads
