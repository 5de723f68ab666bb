"""Benchmark harness: Ember against a reference (PyTorch, else NumPy) in one process.

Each measurement alternates the two libraries (ember, reference, ember, reference, ...) so that
both see the same machine state (frequency, other processes, cache), repeats that `repeat`
times, and reports the median time per call of each and their ratio (ember / reference: below 1
means Ember is faster). The blocks of calls are timed with ember.utils.benchmark.Timer (for both
libraries) and collected as its Measurements (Bench.measurements; see docs/benchmarking.md).

    from common import Bench
    b = Bench(threads=1)
    b.compare("add", lambda: a + b, lambda: ta + tb)
    b.report()

Thread counts are set in both libraries (ember.set_num_threads, torch.set_num_threads), so a
"2 threads" row means both ran on two threads.
"""

from __future__ import annotations

import dataclasses
import os
import platform
from typing import Callable

import numpy as np

import ember
from ember.utils.benchmark import Measurement, TaskSpec, Timer

try:  # the reference of choice; NumPy when PyTorch is not installed
    import torch
except ImportError:  # pragma: no cover - depends on the benchmark environment
    torch = None

REFERENCE = "torch" if torch is not None else "numpy"


@dataclasses.dataclass
class Result:
    name: str
    threads: int
    ember_s: float | None  # median seconds per call; None when skipped
    ref_s: float | None
    reference: str = REFERENCE
    note: str = ""
    extra: dict = dataclasses.field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.ember_s is None or self.ref_s is None:
            return None
        return self.ember_s / self.ref_s

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["ratio"] = self.ratio
        return d


def set_threads(n: int) -> None:
    """Sets the thread count of Ember and of the reference library."""
    ember.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def _timer(fn: Callable[[], object]) -> Timer:
    """An ember.utils.benchmark.Timer of fn() at the current thread count: the one set_threads
    gave both libraries (the Timer's default of one thread would override it for Ember)."""
    return Timer(stmt=fn, num_threads=ember.get_num_threads())


def _block(timer: Timer, number: int) -> float:
    """Seconds taken by one block of `number` calls. Timer.timeit would warm up before every
    block; here calibration warms up once and the blocks of the two libraries then alternate."""
    return timer._timeit(number)


def _time_calls(fn: Callable[[], object], number: int) -> float:
    """Seconds per call of fn over one block of `number` calls."""
    return _block(_timer(fn), number) / number


def _calibrate(timer: Timer, target_s: float) -> int:
    _block(timer, 1)  # warm up: first-call costs (allocation, page faults, lazy init) are not timed
    number = 1
    while True:
        t = _block(timer, number)
        if t >= target_s / 4 or number >= 1 << 20:
            return max(1, int(number * target_s / max(t, 1e-9)))
        number *= 4


def calibrate(fn: Callable[[], object], target_s: float = 0.02) -> int:
    """How many calls make one timing sample last about target_s (at least 1)."""
    return _calibrate(_timer(fn), target_s)


def measure(
    fn_ember: Callable[[], object],
    fn_ref: Callable[[], object],
    repeat: int = 15,
    target_s: float = 0.02,
    name: str = "",
) -> tuple[Measurement, Measurement]:
    """Times the two functions alternately (ember, reference, ember, ...: `repeat` blocks each,
    all of one size, lasting about target_s) and returns the Measurement of each. Their stmt
    is `name` and their description the library ("ember", REFERENCE), so that Compare shows the
    cases as rows and the libraries as columns."""
    timers = _timer(fn_ember), _timer(fn_ref)
    number = min(_calibrate(t, target_s) for t in timers)
    raw_times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for timer, times in zip(timers, raw_times):
            times.append(_block(timer, number))
    threads = ember.get_num_threads()
    return tuple(  # type: ignore[return-value]
        Measurement(
            number_per_run=number,
            raw_times=times,
            task_spec=TaskSpec(stmt=name, setup="pass", description=library, num_threads=threads),
        )
        for times, library in zip(raw_times, ("ember", REFERENCE))
    )


def compare(
    fn_ember: Callable[[], object],
    fn_ref: Callable[[], object],
    repeat: int = 15,
    target_s: float = 0.02,
) -> tuple[float, float]:
    """Median seconds per call of each function, measured alternately in one process."""
    m_ember, m_ref = measure(fn_ember, fn_ref, repeat, target_s)
    return m_ember.median, m_ref.median


def has_op(name: str) -> bool:
    """Whether this Ember build has ember.<name> or Tensor.<name> (ops land on other branches)."""
    return hasattr(ember, name) or hasattr(ember.Tensor, name)


class Bench:
    """Collects results of one benchmark file for one thread count."""

    def __init__(self, threads: int = 1, repeat: int = 15, target_s: float = 0.02):
        self.threads = threads
        self.repeat = repeat
        self.target_s = target_s
        self.results: list[Result] = []
        self.measurements: list[Measurement] = []  # ember's and the reference's, per case
        set_threads(threads)

    def compare(self, name, fn_ember, fn_ref, *, requires=(), extra=None) -> Result | None:
        """Times one case; skips it with a printed note when Ember lacks an op in `requires`."""
        missing = [op for op in requires if not has_op(op)]
        if missing:
            note = f"skipped: ember has no {', '.join(missing)} yet"
            print(f"  {name:<34} [{self.threads} thr]  {note}")
            self.results.append(Result(name, self.threads, None, None, note=note))
            return None
        m_ember, m_ref = measure(fn_ember, fn_ref, self.repeat, self.target_s, name=name)
        self.measurements += [m_ember, m_ref]
        te, tr = m_ember.median, m_ref.median
        res = Result(name, self.threads, te, tr, extra=dict(extra(te, tr) if extra else {}))
        self.results.append(res)
        print(format_result(res))
        return res


def format_time(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:7.1f} ns"
    if s < 1e-3:
        return f"{s * 1e6:7.2f} us"
    return f"{s * 1e3:7.2f} ms"


def format_result(r: Result) -> str:
    extra = "  ".join(
        f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.extra.items()
    )
    return (
        f"  {r.name:<34} [{r.threads} thr]  ember {format_time(r.ember_s)}   "
        f"{r.reference} {format_time(r.ref_s)}   ratio {r.ratio:5.2f}  {extra}"
    ).rstrip()


def environment() -> dict:
    """What the numbers were measured with."""
    info = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "ember": ember.__version__,
        "reference": REFERENCE,
    }
    if torch is not None:
        info["torch"] = torch.__version__
    if hasattr(os, "getloadavg"):  # other processes on the machine skew absolute times
        info["loadavg_1min"] = round(os.getloadavg()[0], 2)
    try:
        with open("/proc/cpuinfo") as f:
            fields = {}
            for line in f:
                if not line.strip():
                    break  # the first CPU's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
        info["cpu"] = fields.get("model name", "")
        # "AMD EPYC" says little: family / model identify the generation (25 / 17: Zen 4).
        info["cpu_family_model"] = f"{fields.get('cpu family', '?')}/{fields.get('model', '?')}"
        info["ember_cpu_capability"] = ember.backends.cpu.get_cpu_capability()
    except OSError:
        pass
    return info


def ratio_chart(
    results, path, goal: float = 1.0, what: str = "time", reference=None, goal_of=None
) -> None:
    """A horizontal bar chart of the ember / reference ratios of `results` (Result objects or
    their dicts), one bar per case and thread count, with a dashed line at `goal`. `reference`
    names the reference in the axis label (default: REFERENCE); `goal_of(row)` gives a row its
    own goal (its bar's colour and a dashed line per distinct goal)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no chart written ({path})")
        return
    rows = [r if isinstance(r, dict) else r.as_dict() for r in results]
    rows = [r for r in rows if r["ratio"] is not None]
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(rows) + 1.3))
    ys = list(range(len(rows)))[::-1]
    ratios = [r["ratio"] for r in rows]
    goals = [goal_of(r) if goal_of else goal for r in rows]
    ax.barh(ys, ratios, color=["#2a9d8f" if x <= g else "#e76f51" for x, g in zip(ratios, goals)])
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['name']}  [{r['threads']} thr]" for r in rows], fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    for g in sorted(set(goals) | {goal}):
        if g != 1.0:
            ax.axvline(g, color="gray", linewidth=0.8, linestyle="--")
    for y, x in zip(ys, ratios):
        ax.text(x, y, f" {x:.2f}", va="center", fontsize=8)
    goal_text = "goal " + " / ".join(f"{g:g}" for g in sorted(set(goals) | {goal}))
    ax.set_xlabel(f"{what} ratio ember / {reference or REFERENCE} (lower is better; {goal_text})")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def timed_block(fn: Callable[[], object], target_s: float, pause_s: float = 0.0) -> float:
    """Seconds per call of fn over a block of about target_s (after a warm-up call), each block
    started after pause_s of sleep so the other thread pools in the process go idle first. The
    int8 benchmarks alternate contestants block by block and take the median."""
    import time

    if pause_s:
        time.sleep(pause_s)
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(target_s / one))
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def run_per_thread_count(script: str, threads, args: list, json_prefix) -> None:
    """Runs `script --child T args` in a fresh process per thread count T (OMP_NUM_THREADS and
    MKL_NUM_THREADS set before any library starts its pool), results to <json_prefix>.T.json."""
    import subprocess
    import sys

    for t in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t))
        cmd = [sys.executable, script, "--child", str(t), *args]
        if json_prefix:
            cmd += ["--json", f"{json_prefix}.{t}.json"]
        subprocess.run(cmd, env=env, check=True)
