"""ember.utils.benchmark: Timer, Measurement, Compare and the helpers of utils.common, against
hand-computed values and, where PyTorch is installed, against torch.utils.benchmark's output for
the same measurements (reprs and Compare tables, character for character)."""

import math
import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

import ember
import ember.utils.benchmark as benchmark
from ember.utils.benchmark import Compare, Measurement, TaskSpec, Timer
from ember.utils.benchmark.utils import common

# ---- helpers -----------------------------------------------------------------------------------


def _measurement(mod, times, number=1, **spec):
    """A Measurement of module `mod` (ember.utils.benchmark or torch.utils.benchmark) with the
    given per-run raw times and TaskSpec fields."""
    stmt = spec.pop("stmt", "x + y")
    setup = spec.pop("setup", "pass")
    return mod.Measurement(
        number_per_run=number,
        raw_times=list(times),
        task_spec=mod.TaskSpec(stmt=stmt, setup=setup, **spec),
    )


def _body(m) -> str:
    """A Measurement's repr without its first line (the object's address)."""
    first, _, rest = repr(m).partition("\n")
    assert first.startswith("<") and first.endswith(">")
    return rest


def _spread(base, n, rel):
    """n times around base, spread evenly by +-rel (deterministic)."""
    return [base * (1 + rel * (2 * i / max(n - 1, 1) - 1)) for i in range(n)]


# ---- the package -------------------------------------------------------------------------------


def test_layout_and_exports():
    from ember.utils.benchmark.utils import compare, timer

    assert benchmark.Timer is timer.Timer
    assert benchmark.Measurement is common.Measurement
    assert benchmark.Compare is compare.Compare
    assert benchmark.TaskSpec is common.TaskSpec
    assert ember.utils.benchmark.utils.common.Measurement is Measurement
    for name in ("select_unit", "trim_sigfig", "ordered_unique", "unit_to_english"):
        assert getattr(benchmark, name) is getattr(common, name)


def test_import_ember_stays_lazy():
    code = (
        "import sys, ember\n"
        "assert 'ember.utils.benchmark' not in sys.modules\n"
        "assert ember.utils.benchmark.Timer.__name__ == 'Timer'\n"  # attribute access imports it
        "import ember.utils.benchmark\n"
        "print(ember.utils.benchmark.Compare.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember.utils.benchmark.utils.compare"
    with pytest.raises(AttributeError):
        ember.utils.no_such_module  # noqa: B018


# ---- Timer -------------------------------------------------------------------------------------


def test_timeit_returns_measurement_with_sane_times():
    t = Timer("x + y", globals={"x": 1, "y": 2})
    m = t.timeit(1000)
    assert isinstance(m, Measurement)
    assert m.number_per_run == 1000
    assert len(m.raw_times) == 1
    assert 0 < m.raw_times[0] < 5.0
    assert m.times == [m.raw_times[0] / 1000]
    assert 1e-9 <= m.median < 1e-3  # an integer add: well under a millisecond
    assert m.median == m.mean and m.iqr == 0
    assert m.stmt == "x + y" and m.num_threads == 1


def test_timeit_default_number_and_runs_stmt_number_times():
    calls = []
    m = Timer(lambda: calls.append(None)).timeit(number=300)
    # warm-up of max(number // 100, 2) runs, then the timed runs
    assert len(calls) == 3 + 300
    assert m.number_per_run == 300
    calls.clear()
    Timer(lambda: calls.append(None)).timeit(number=150)
    assert len(calls) == 2 + 150
    assert Timer("pass").timeit().number_per_run == 1000000  # timeit's default


def test_globals_are_used_and_copied():
    out = []
    g = {"out": out, "v": 7}
    Timer("out.append(v)", globals=g).timeit(number=10)
    assert out == [7] * 12  # 2 warm-up runs + 10
    assert set(g) == {"out", "v"}  # timeit's __builtins__ and the ember default stay out
    # ember is in the namespace of string statements by default
    m = Timer("ember.ones(3).sum()").timeit(number=5)
    assert m.median > 0
    with pytest.raises(NameError):
        Timer("undefined_name + 1").timeit(number=1)


def test_setup_runs_before_each_timing_loop():
    # setup's variables are visible to stmt; setup runs once per loop (warm-up and timed run)
    log = []
    Timer("acc.append(1)", setup="acc = []; log.append(acc)", globals={"log": log}).timeit(5)
    assert [len(a) for a in log] == [2, 5]
    calls = []
    Timer(lambda: None, setup=lambda: calls.append("setup")).timeit(number=3)
    assert calls == ["setup", "setup"]


def test_callable_stmt():
    calls = []

    def work():
        calls.append(1)

    m = Timer(work, label="work").timeit(number=50)
    assert len(calls) == 52
    assert m.stmt == "work()" and m.title == "work"
    assert Timer(lambda: None).timeit(10).stmt == "<lambda>()"


def test_string_snippets_are_dedented_and_trimmed():
    t = Timer(
        """
        x = 1
        y = x + 1
        """,
        setup="""
            a = 2
        """,
    )
    assert t._task_spec.stmt == "x = 1\ny = x + 1"
    assert t._task_spec.setup == "a = 2"
    assert t.timeit(10).number_per_run == 10


def test_blocked_autorange_respects_min_run_time():
    blocks = []
    t = Timer("sum(range(50))")
    m = t.blocked_autorange(callback=lambda n, s: blocks.append((n, s)), min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05
    # it stops as soon as min_run_time is reached: all blocks but the last fall short of it
    assert sum(m.raw_times[:-1]) < 0.05
    assert blocks == [(m.number_per_run, s) for s in m.raw_times]
    # the block size is a power of ten
    assert 10 ** round(math.log10(m.number_per_run)) == m.number_per_run
    assert 0 < m.median < 1e-3


def test_blocked_autorange_block_size_for_slow_stmt():
    # one run already lasts longer than min_run_time: blocks of one run, and one block is enough
    m = Timer(lambda: time.sleep(0.025)).blocked_autorange(min_run_time=0.02)
    assert m.number_per_run == 1
    assert len(m.raw_times) == 1
    assert m.median >= 0.025


def test_adaptive_autorange_stops_on_confidence():
    m = Timer("sum(range(20))").adaptive_autorange(threshold=10.0, min_run_time=0.01)
    # with a threshold any spread meets, it stops at the first block after which there are
    # more than 3 blocks and min_run_time is reached
    assert len(m.raw_times) >= 4
    assert sum(m.raw_times) >= 0.01
    assert len(m.raw_times) == 4 or sum(m.raw_times[:-1]) < 0.01
    assert m.meets_confidence(10.0)


def test_adaptive_autorange_stops_at_max_run_time():
    # a threshold of 0 is never met (iqr / median < 0 is impossible): max_run_time ends it
    m = Timer("sum(range(20))").adaptive_autorange(threshold=0.0, max_run_time=0.1)
    assert sum(m.raw_times) > 0.1
    assert sum(m.raw_times[:-1]) <= 0.1


def test_adaptive_autorange_callback():
    blocks = []
    m = Timer("pass").adaptive_autorange(
        callback=lambda n, s: blocks.append((n, s)), max_run_time=0.2
    )
    assert blocks == [(m.number_per_run, s) for s in m.raw_times]


@pytest.mark.parametrize("method", ["timeit", "blocked_autorange", "adaptive_autorange"])
def test_num_threads_applied_while_timing_and_restored(method):
    prior = ember.get_num_threads()
    outside = 3 if prior != 3 else 2
    seen = set()
    ember.set_num_threads(outside)
    try:
        t = Timer(lambda: seen.add(ember.get_num_threads()), num_threads=1)
        if method == "timeit":
            m = t.timeit(number=100)
        elif method == "blocked_autorange":
            m = t.blocked_autorange(min_run_time=0.01)
        else:
            m = t.adaptive_autorange(max_run_time=0.05)
        assert seen == {1}
        assert ember.get_num_threads() == outside
        assert m.num_threads == 1
        seen.clear()
        Timer(lambda: seen.add(ember.get_num_threads()), num_threads=2).timeit(number=10)
        assert seen == {2}
        assert ember.get_num_threads() == outside
    finally:
        ember.set_num_threads(prior)


def test_num_threads_restored_when_stmt_raises():
    prior = ember.get_num_threads()
    with pytest.raises(ZeroDivisionError):
        Timer("1 / 0", num_threads=1 if prior != 1 else 2).timeit(number=10)
    assert ember.get_num_threads() == prior


def test_repeat_and_autorange_are_not_implemented():
    t = Timer("pass")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat(repeat=3, number=10)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.autorange()
    with pytest.raises(NotImplementedError):
        t.collect_callgrind()


def test_language():
    for language in ("python", "py", benchmark.Language.PYTHON):
        assert Timer("pass", language=language).timeit(10).number_per_run == 10
    for language in ("c++", "cpp", benchmark.Language.CPP):
        with pytest.raises(NotImplementedError, match="language='python'"):
            Timer("x++;", language=language)
    with pytest.raises(ValueError, match="Invalid language"):
        Timer("pass", language="rust")
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        Timer("pass", global_setup="#include <vector>")


def test_custom_timer_and_metadata():
    clock = iter(range(0, 10**6, 2))  # every reading advances 2 "seconds"
    t = Timer(
        "pass",
        timer=lambda: next(clock),
        label="L",
        sub_label="S",
        description="D",
        env="E",
        num_threads=2,
    )
    m = t.timeit(number=4)
    assert m.raw_times == [2] and m.median == 0.5
    assert (m.label, m.sub_label, m.description, m.env, m.num_threads) == ("L", "S", "D", "E", 2)
    assert m.title == "L: S"


# ---- Measurement -------------------------------------------------------------------------------


def test_statistics_from_injected_raw_times():
    m = _measurement(benchmark, [40, 10, 100, 30, 20], number=10)
    assert m.times == [4.0, 1.0, 10.0, 3.0, 2.0]
    assert m.median == 3.0
    assert m.mean == 4.0
    assert m.iqr == 2.0  # quartiles 2 and 4
    m = _measurement(benchmark, [4.0, 1.0, 3.0, 2.0])
    assert m.median == 2.5
    assert m.iqr == pytest.approx(3.25 - 1.75)

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 7, 50, 333):
        raw = rng.lognormal(-10, 0.3, size=n).tolist()
        m = _measurement(benchmark, raw, number=7)
        t = np.asarray(raw) / 7
        assert m.median == pytest.approx(np.median(t), rel=1e-12)
        assert m.mean == pytest.approx(t.mean(), rel=1e-12)
        q25, q75 = np.quantile(t, [0.25, 0.75])
        assert m.iqr == pytest.approx(q75 - q25, rel=1e-9, abs=1e-18)


def test_warnings_and_confidence():
    tight = _measurement(benchmark, _spread(1e-6, 9, 0.02))
    assert not tight.has_warnings
    assert tight.meets_confidence() and tight.meets_confidence(0.1)
    loose = _measurement(benchmark, _spread(1e-6, 9, 0.15))  # IQR 15% of the median
    assert loose.has_warnings and not loose.meets_confidence(0.1) and loose.meets_confidence(0.25)
    assert "This could indicate system fluctuation." in repr(loose)
    gross = _measurement(benchmark, _spread(1e-6, 9, 0.5))
    assert "This suggests significant environmental influence." in repr(gross)
    assert "Interquartile range is 50.0% of the median measurement." in repr(gross)


def test_significant_figures():
    # no spread: the confidence interval is floored at 25 ns, and the figures capped at 4
    assert _measurement(benchmark, [1e-6] * 10).significant_figures == 1  # 1 us / 25 ns = 40
    assert _measurement(benchmark, [1e-3] * 10).significant_figures == 4
    assert _measurement(benchmark, _spread(1e-6, 100, 0.5)).significant_figures == 1
    m = _measurement(benchmark, _spread(1e-3, 100, 0.01))
    assert m.significant_figures == 3


def test_task_fields_forwarded():
    m = _measurement(
        benchmark,
        [1.0],
        stmt="f(x)",
        setup="x = 1",
        label="L",
        sub_label="S",
        description="D",
        num_threads=4,
    )
    assert (m.stmt, m.setup, m.label, m.sub_label, m.description, m.num_threads) == (
        "f(x)",
        "x = 1",
        "L",
        "S",
        "D",
        4,
    )
    assert m.global_setup == ""
    assert m.env == "Unspecified env"
    assert _measurement(benchmark, [1.0], env="A/B").env == "A/B"
    assert m.title == "L: S" and m.as_row_name == "S"
    assert _measurement(benchmark, [1.0], stmt="g()").as_row_name == "g()"
    assert _measurement(benchmark, [1.0], stmt="").as_row_name == "[Unknown]"
    assert m.metadata is None
    assert _measurement(benchmark, [1.0]).task_spec == TaskSpec("x + y", "pass")


def test_measurement_pickles():
    m = _measurement(benchmark, [3.0, 1.0, 2.0], number=2, label="L")
    m.median  # noqa: B018  (fills the caches)
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and m2.median == 1.0 and repr(m2).split("\n")[1:] == repr(m).split("\n")[1:]


def test_repr_format():
    m = _measurement(
        benchmark,
        [2.10e-3, 2.12e-3, 2.13e-3, 2.14e-3, 2.15e-3],
        number=1000,
        label="add",
        sub_label="float32",
        description="n=1024",
    )
    lines = repr(m).split("\n")
    assert lines[0].startswith("<ember.utils.benchmark.utils.common.Measurement object at 0x")
    assert lines[1:] == [
        "add: float32",
        "n=1024",
        "  Median: 2.13 us",
        "  IQR:    0.02 us (2.12 to 2.14)",
        "  5 measurements, 1000 runs per measurement, 1 thread",
    ]
    # one run: no "Median:", no IQR, singular counts; a multi-line stmt and setup
    m = _measurement(
        benchmark, [0.5], number=100, stmt="a = 1\nb = a", setup="import x\ny = 1", num_threads=2
    )
    assert _body(m) == (
        "stmt:\n  a = 1\n  b = a\n\nsetup:\n  import x\n  y = 1\n\n"
        "  5.00 ms\n  1 measurement, 100 runs , 2 threads"
    )
    # fewer than 4 runs: no IQR line
    m = _measurement(benchmark, [3e-9, 4e-9, 5e-9], stmt="f()", setup="g()")
    assert _body(m) == (
        "f()\nsetup: g()\n  Median: 4.00 ns\n  3 measurements, 1 runs per measurement, 1 thread\n"
        "  WARNING: Interquartile range is 25.0% of the median measurement.\n"
        "           This suggests significant environmental influence."
    )
    m = _measurement(benchmark, _spread(1.5, 6, 0.01), number=3)
    assert _body(m) == (
        "x + y\n  Median: 500.00 ms\n  IQR:    5.00 ms (497.50 to 502.50)\n"
        "  6 measurements, 3 runs per measurement, 1 thread"
    )
    m = _measurement(benchmark, _spread(2.0, 8, 0.3))
    assert _body(m) == (
        "x + y\n  Median: 2.00 s\n  IQR:    0.60 s (1.70 to 2.30)\n"
        "  8 measurements, 1 runs per measurement, 1 thread\n"
        "  WARNING: Interquartile range is 30.0% of the median measurement.\n"
        "           This suggests significant environmental influence."
    )


def test_merge():
    a1 = _measurement(benchmark, [10.0, 20.0], number=10, label="a")
    a2 = _measurement(benchmark, [3.0], number=1, label="a")
    b = _measurement(benchmark, [8.0], number=4, label="b")
    a1.metadata = {"run": 1}
    merged = Measurement.merge([a1, b, a2])
    assert [m.label for m in merged] == ["a", "b"]
    assert merged[0].raw_times == [1.0, 2.0, 3.0] and merged[0].number_per_run == 1
    assert merged[0].metadata is None and merged[0].task_spec == a1.task_spec
    assert merged[1].raw_times == [2.0]
    assert merged[0].median == 2.0
    # a different env (or any TaskSpec field) keeps replicates apart
    c = _measurement(benchmark, [1.0], label="a", env="other")
    assert len(Measurement.merge([a1, c])) == 2
    assert Measurement.merge([]) == []


# ---- helpers of utils.common -------------------------------------------------------------------


def test_select_unit():
    assert common.select_unit(5e-9) == ("ns", 1e-9)
    assert common.select_unit(999e-9) == ("ns", 1e-9)
    assert common.select_unit(1e-6) == ("us", 1e-6)
    assert common.select_unit(2.5e-4) == ("us", 1e-6)
    assert common.select_unit(1e-3) == ("ms", 1e-3)
    assert common.select_unit(0.5) == ("ms", 1e-3)
    assert common.select_unit(1.0) == ("s", 1)
    assert common.select_unit(3600.0) == ("s", 1)
    assert common.select_unit(1e-12) == ("s", 1)  # below ns: PyTorch falls back to seconds too
    assert common.unit_to_english("us") == "microsecond"


def test_trim_sigfig():
    assert common.trim_sigfig(3.14159, 2) == pytest.approx(3.1, rel=1e-6)
    assert common.trim_sigfig(3.14159, 4) == pytest.approx(3.142, rel=1e-6)
    assert common.trim_sigfig(123456.0, 2) == 120000.0
    assert common.trim_sigfig(0.0012345, 3) == pytest.approx(0.00123, rel=1e-6)
    assert common.trim_sigfig(-987.0, 1) == -1000.0
    assert common.trim_sigfig(25.0, 1) == 20.0  # ties to even, like torch.round
    with pytest.raises(AssertionError):
        common.trim_sigfig(1.0, 1.5)


def test_ordered_unique():
    assert common.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert common.ordered_unique(iter("abca")) == ["a", "b", "c"]
    assert common.ordered_unique([]) == []


def test_taskspec():
    spec = TaskSpec("f(x)", "pass")
    assert spec.title == "f(x)" and spec.setup_str() == "" and spec.summarize() == "f(x)"
    spec = TaskSpec("a\nb", "s = 1", sub_label="S", description="D")
    assert spec.title == "stmt: (S)\n  a\n  b"
    assert spec.summarize() == "stmt: (S)\n  a\n  b\n\nD\nsetup: s = 1"
    assert TaskSpec("x", "", label="L").title == "L"
    assert hash(spec) == hash(TaskSpec("a\nb", "s = 1", sub_label="S", description="D"))
    with pytest.raises(AttributeError):
        spec.stmt = "y"  # frozen


# ---- Compare -----------------------------------------------------------------------------------


def _compare_results(mod):
    results = []
    for threads in (1, 2):
        for sub, base in (("float", 1.5e-6), ("int", 4.25e-6)):
            for desc, scale in (("n=1", 1.0), ("n=1024", 37.0)):
                results.append(
                    _measurement(
                        mod,
                        _spread(base * scale / threads, 9, 0.01),
                        label="add",
                        sub_label=sub,
                        description=desc,
                        num_threads=threads,
                    )
                )
    results.append(
        _measurement(
            mod,
            _spread(2e-3, 9, 0.3),
            number=10,
            label="matmul",
            sub_label="float",
            description="n=1",
        )
    )
    return results


_EXPECTED_TABLES = "\n".join(
    [
        "[-------------- add --------------]",
        "             |   n=1    |   n=1024 ",
        "1 threads: ------------------------",
        "      float  |  1500.0  |   55500.0",
        "      int    |  4250.0  |  157250.0",
        "2 threads: ------------------------",
        "      float  |   750.0  |   27750.0",
        "      int    |  2125.0  |   78625.0",
        "",
        "Times are in nanoseconds (ns).",
        "",
        "[------ matmul -----]",
        "             |   n=1 ",
        "1 threads: ----------",
        "      float  |  200.0",
        "",
        "Times are in microseconds (us).",
        "",
    ]
)


def test_compare_table():
    c = Compare(_compare_results(benchmark))
    assert str(c) == _EXPECTED_TABLES


def test_compare_print(capsys):
    Compare(_compare_results(benchmark)).print()
    assert capsys.readouterr().out == _EXPECTED_TABLES + "\n"


def test_compare_options():
    c = Compare(_compare_results(benchmark))
    c.trim_significant_figures()
    c.highlight_warnings()
    text = str(c)
    assert "      int    |  4200  |  160000" in text  # 4 and 2 significant figures
    assert "      float  |  200 (! 30%)" in text  # the matmul row's IQR / median
    assert "(! XX%) Measurement has high variance" in text
    c.colorize()
    colored = str(c)
    assert "\033[92m\033[1m" in colored and "\033[0m" in colored
    c.colorize(rowwise=True)
    assert str(c) != colored


def test_compare_merges_replicates_and_extends():
    a = _measurement(benchmark, [1e-6, 1.1e-6], label="x", description="d")
    b = _measurement(benchmark, [1.2e-6, 1.3e-6], label="x", description="d")
    c = Compare([a])
    c.extend_results([b])
    text = str(c)
    assert text.count("x + y") == 1  # one row: the two are replicates
    assert "      x + y  |  1.2\n" in text  # the median of all four times, 1.15 us
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        c.extend_results([1.0])


def test_compare_envs_and_missing_cells():
    results = [
        _measurement(
            benchmark, [1e-6] * 3, label="L", sub_label="a", description="d1", env="before"
        ),
        _measurement(
            benchmark, [2e-6] * 3, label="L", sub_label="a", description="d1", env="after"
        ),
        _measurement(
            benchmark, [3e-6] * 3, label="L", sub_label="b", description="d2", env="after"
        ),
    ]
    assert str(Compare(results)) == (
        "[------------ L ------------]\n"
        "               |   d1  |   d2\n"
        "1 threads: ------------------\n"
        "  (after)   a  |  2.0  |     \n"
        "            b  |       |  3.0\n"
        "  (before)  a  |  1.0  |     \n"
        "\n"
        "Times are in microseconds (us).\n"
    )
    # results without a description get an unnamed column
    assert "x + y" in str(Compare([_measurement(benchmark, [1e-6], label="L")]))


# ---- parity with torch.utils.benchmark ---------------------------------------------------------

_REPR_CASES = [
    dict(
        times=[2.10e-3, 2.12e-3, 2.13e-3, 2.14e-3, 2.15e-3],
        number=1000,
        label="add",
        sub_label="float32",
        description="n=1024",
    ),
    dict(times=[0.5], number=100, stmt="a = 1\nb = a", setup="import x\ny = 1", num_threads=2),
    dict(times=[3e-9, 4e-9, 5e-9], stmt="f()", setup="g()"),
    dict(times=_spread(2.0, 8, 0.3)),
    dict(
        times=_spread(7.3e-5, 41, 0.12),
        number=10,
        stmt="a\nb",
        sub_label="s",
        description="multi\nline",
    ),
    dict(times=_spread(9.99e-7, 6, 0.001), label="", sub_label="", description="", setup=""),
    dict(times=[1e-3, 1.5e-3, 2e-3, 9e-3], number=3, env="E", num_threads=8),
]


@pytest.mark.parametrize("case", range(len(_REPR_CASES)))
def test_repr_matches_torch(case):
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    spec = dict(_REPR_CASES[case])
    times, number = spec.pop("times"), spec.pop("number", 1)
    ours = _measurement(benchmark, times, number, **spec)
    theirs = _measurement(torch_benchmark, times, number, **spec)
    assert _body(ours) == _body(theirs)
    for attr in ("median", "iqr", "significant_figures", "has_warnings", "title", "as_row_name"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-12)


def test_helpers_match_torch():
    pytest.importorskip("torch")
    from torch.utils.benchmark.utils import common as tc

    rng = np.random.default_rng(1)
    values = list(10.0 ** rng.uniform(-11, 3, size=500)) + [10.0**e for e in range(-10, 3)]
    for x in values:
        assert common.select_unit(x) == tc.select_unit(x), x
        for n in (1, 2, 3, 4):
            assert common.trim_sigfig(x, n) == tc.trim_sigfig(x, n), (x, n)
    for k in (1, 2, 5, 9, 40, 201):
        for rel in (0.0, 0.001, 0.05, 0.4):
            times = (1e-6 * (1 + rel * rng.standard_normal(k))).tolist()
            ours = _measurement(benchmark, times)
            theirs = _measurement(tc, times)
            assert ours.significant_figures == theirs.significant_figures
            assert _body(ours) == _body(theirs)


@pytest.mark.parametrize(
    "options", [(), ("trim",), ("warn",), ("trim", "warn"), ("color",), ("rowcolor", "trim")]
)
def test_compare_matches_torch(options):
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    rng = np.random.default_rng(len(options))

    def results(mod):
        out = _compare_results(mod)
        for env in ("before", "after"):  # a table that shows envs
            for threads in (4, 1):
                for sub in ("relu", "gelu"):
                    for desc in ("small", "a long description"):
                        out.append(
                            _measurement(
                                mod,
                                (1e-5 * (1 + 0.2 * rng.standard_normal(7))).tolist(),
                                number=100,
                                label="activations",
                                sub_label=sub,
                                description=desc,
                                env=env,
                                num_threads=threads,
                            )
                        )
        return out

    state = rng.bit_generator.state
    ours = Compare(results(benchmark))
    rng.bit_generator.state = state
    theirs = torch_benchmark.Compare(results(torch_benchmark))
    for c in (ours, theirs):
        for option in options:
            if option == "trim":
                c.trim_significant_figures()
            elif option == "warn":
                c.highlight_warnings()
            elif option == "color":
                c.colorize()
            else:
                c.colorize(rowwise=True)
    assert str(ours) == str(theirs)
