"""Timer: timeit.Timer made aware of Ember's thread pool, returning Measurements."""

from __future__ import annotations

import enum
import textwrap
import time
import timeit
from typing import Any, Callable, NoReturn, Union

import ember

from . import common

__all__ = ["Timer", "timer", "Language"]

_Snippet = Union[str, Callable[[], Any]]


def timer() -> float:
    """perf_counter, after waiting for queued CUDA work when a CUDA device is in use (builds
    without a CUDA backend never have one, so this is then time.perf_counter)."""
    if ember.cuda.is_available():
        ember.cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _callable_name(fn: Callable[[], Any]) -> str:
    """How a callable stmt or setup appears in reprs and tables: `name()`."""
    name = getattr(fn, "__name__", None)
    return f"{name}()" if isinstance(name, str) else repr(fn)


def _tidy(snippet: _Snippet) -> tuple[_Snippet, str]:
    """The snippet to run and its text for the TaskSpec. A string is dedented, loses one
    leading newline (that of a triple-quoted block) and its trailing whitespace, which changes
    nothing it does but keeps reprs tidy."""
    if callable(snippet):
        return snippet, _callable_name(snippet)
    if not isinstance(snippet, str):
        raise ValueError(f"stmt and setup must be a str or a callable, got {type(snippet)}")
    text = textwrap.dedent(snippet)
    text = (text[1:] if text.startswith("\n") else text).rstrip()
    return text, text


class Timer:
    """Measures the execution time of a Python statement, like timeit.Timer, with these
    differences:

    * The statement runs with Ember's thread pool at `num_threads` threads (default 1, so that
      results compare like with like), restored afterwards.
    * Timing methods warm up first and return a :class:`Measurement` of many replicates, from
      which the median and interquartile range are read; `blocked_autorange` and
      `adaptive_autorange` choose the block size themselves.
    * `label`, `sub_label`, `description` and `env` describe the task; reprs and
      :class:`Compare` tables use them (description becomes the column, sub_label or stmt the
      row, label the table).

    Args:
        stmt: the code to time: a string (compiled once, run with `globals` as its global
            namespace, as timeit does) or a callable taking no arguments.
        setup: code run once before each timing loop (a string or a callable); variables it
            defines are visible to a string `stmt`.
        global_setup: C++ only in PyTorch; must be empty here.
        timer: the clock, a callable returning seconds (default time.perf_counter).
        globals: the global namespace of string snippets (copied; `ember` is added when absent).
        label: a short name for the statement, e.g. "ReLU(x + 1)".
        sub_label: tells apart measurements of one label, e.g. "float32".
        description: the column of a Compare table, e.g. "n=1024".
        env: tags otherwise identical tasks run in different environments (A/B builds), which
            Measurement.merge and Compare then keep apart.
        num_threads: Ember's thread count while timing.
        language: "python" (or "py", Language.PYTHON). "c++" is not supported.
    """

    _timer_cls = timeit.Timer

    def __init__(
        self,
        stmt: _Snippet = "pass",
        setup: _Snippet = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = time.perf_counter,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Union[Language, str] = "python",
    ) -> None:
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError(
                "Timer(language='c++') is not supported by Ember: PyTorch compiles C++ "
                "snippets against its own C++ API with a C++ toolchain, and Ember has no "
                "equivalent. Time the Python call instead (language='python', the default), "
                "or time C++ code with a native benchmark harness."
            )
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                "simply be moved to `setup`."
            )
        self._language = Language.PYTHON

        # Copied so that what timeit adds (`__builtins__`) does not leak into the caller's dict.
        self._globals = dict(globals or {})
        self._globals.setdefault("ember", ember)

        stmt, stmt_text = _tidy(stmt)
        setup, setup_text = _tidy(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt_text,
            setup=setup_text,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        # No real statement takes under a nanosecond; the floor also rules out dividing by 0.
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Runs `stmt` `number` times (after a warm-up of number // 100 runs, at least 2) and
        returns a Measurement of that one run, like timeit.Timer.timeit."""
        with common.set_ember_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(
                number_per_run=number,
                raw_times=[self._timeit(number=number)],
                task_spec=self._task_spec,
            )

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(
        self,
        number: int,
        time_hook: Callable[[], float],
        stop_hook: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None = None,
        callback: Callable[[int, float], NoReturn] | None = None,
    ) -> list[float]:
        """Takes blocks of `number` runs until at least `min_run_time` seconds were measured
        and `stop_hook` agrees, or more than `max_run_time` seconds were (when given)."""
        total_time = 0.0
        can_stop = False
        times: list[float] = []
        with common.set_ember_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = time_hook()
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of runs per block for which the timer's own overhead is at
        most 0.01% of a block and a block lasts at least min_run_time / 1000 (or the first that
        lasts longer than min_run_time). Doubles as the warm-up."""
        with common.set_ember_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                time_taken = self._timeit(number)
                relative_overhead = overhead / time_taken
                if relative_overhead <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time:
                    break
                if number * 10 > 2147483647:  # the limit PyTorch keeps for its C++ timer
                    break
                number *= 10
        return number

    def blocked_autorange(
        self,
        callback: Callable[[int, float], NoReturn] | None = None,
        min_run_time: float = 0.2,
    ) -> common.Measurement:
        """Times blocks of runs until `min_run_time` seconds have been measured in total.

        The block size is the smallest power of ten for which the cost of reading the clock is
        negligible (see `_estimate_block_size`, which also warms up): large blocks keep the
        clock's overhead out of the result, small ones give more replicates. `setup` runs once
        before each block. `callback(number, seconds)` is called after each block.

        Returns:
            A Measurement of all blocks.
        """
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(
            number,
            lambda: self._timeit(number),
            lambda times: True,
            min_run_time=min_run_time,
            callback=callback,
        )
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], NoReturn] | None = None,
    ) -> common.Measurement:
        """Like `blocked_autorange`, but keeps taking blocks until the measurement is precise:
        it stops once there are more than 3 blocks, at least `min_run_time` seconds have been
        measured and the interquartile range is below `threshold` times the median -- or once
        more than `max_run_time` seconds have been measured, whatever the spread.

        Returns:
            A Measurement of all blocks.
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            if len(times) > 3:
                m = common.Measurement(
                    number_per_run=number, raw_times=times, task_spec=self._task_spec
                )
                return m.meets_confidence(threshold=threshold)
            return False

        times = self._threaded_measurement_loop(
            number,
            lambda: self._timeit(number),
            stop_hook,
            min_run_time,
            max_run_time,
            callback=callback,
        )
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Instruction counts under Valgrind's Callgrind: not supported by Ember."""
        raise NotImplementedError(
            "Timer.collect_callgrind is not supported by Ember; use blocked_autorange or "
            "adaptive_autorange for wall times, or run the script under valgrind yourself."
        )
