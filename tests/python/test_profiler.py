"""ember.profiler and ember.autograd.profiler: call counts, nesting, self times, memory columns,
backward nodes, schedules, and the Chrome trace."""

import json
import threading

import numpy as np
import pytest

import ember
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

recorder = ember._C._profiler


def _by_key(prof, **kwargs):
    return {e.key: e for e in prof.key_averages(**kwargs)}


def test_counts_calls_of_a_known_program():
    x = ember.randn(8, 8)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            y = ember.add(x, x)
            z = ember.matmul(y, y)
        ember.relu(z)
    rows = _by_key(prof)
    assert rows["aten::add"].count == 3
    assert rows["aten::matmul"].count == 3
    assert rows["aten::relu"].count == 1
    assert not recorder._observing()  # the observer is gone once the profile ends


def test_hand_written_fast_paths_are_recorded():
    x = ember.randn(4, 5)
    with profile() as prof:
        _ = x + x
        _ = x * 2
        _ = x[1]
        _ = x.sum()
        _ = x.view(20)
        _ = ember.zeros(3)
        x2 = x.clone()
        x2 += 1
    rows = _by_key(prof)
    for name in ("aten::add", "aten::mul", "aten::index", "aten::sum", "aten::view",
                 "aten::zeros", "aten::add_"):
        assert name in rows, (name, sorted(rows))


def test_record_function_nests_ops_and_self_time_excludes_children():
    x = ember.randn(64, 64)
    with profile() as prof:
        with record_function("block"):
            ember.matmul(x, x)
            ember.exp(x)
    events = prof.events()
    block = next(e for e in events if e.name == "block")
    children = {c.name for c in block.cpu_children}
    assert {"aten::matmul", "aten::exp"} <= children
    assert block.cpu_time_total >= sum(c.cpu_time_total for c in block.cpu_children)
    assert block.self_cpu_time_total == pytest.approx(
        block.cpu_time_total - sum(c.cpu_time_total for c in block.cpu_children))
    for e in events:
        assert e.self_cpu_time_total >= -1e-3


def test_record_function_as_decorator_and_outside_profiles():
    @record_function("decorated")
    def work(t):
        return t * 3

    x = ember.ones(3)
    work(x)  # no profile: a no-op
    with profile() as prof:
        work(x)
    event = next(e for e in prof.events() if e.name == "decorated")
    assert [c.name for c in event.cpu_children] == ["aten::mul"]


def test_backward_nodes_are_events():
    w = ember.randn(5, requires_grad=True)
    x = ember.randn(5)
    with profile() as prof:
        (w * x).exp().sum().backward()
    names = {e.key for e in prof.key_averages()}
    assert "autograd::engine::evaluate_function: MulBackward0" in names
    assert "autograd::engine::evaluate_function: ExpBackward0" in names
    assert "autograd::engine::evaluate_function: SumBackward0" in names


def test_memory_columns_add_up():
    with profile(profile_memory=True) as prof:
        with record_function("outer"):
            a = ember.zeros(1000)  # 4000 bytes
            b = ember.ones(250, dtype=ember.float64)  # 2000 bytes
        del a, b
    events = prof.events()
    zeros = next(e for e in events if e.name == "aten::zeros")
    assert zeros.cpu_memory_usage >= 4000
    outer = next(e for e in events if e.name == "outer")
    for e in events:
        assert e.cpu_memory_usage == e.self_cpu_memory_usage + sum(
            c.cpu_memory_usage for c in e.cpu_children)
    assert outer.cpu_memory_usage >= 6000
    table = prof.key_averages().table(sort_by="cpu_memory_usage")
    assert "CPU Mem" in table and "Self CPU Mem" in table


def test_record_shapes_and_grouping():
    a, b = ember.randn(2, 3), ember.randn(3, 4)
    c = ember.randn(5, 3)
    with profile(record_shapes=True) as prof:
        ember.matmul(a, b)
        ember.matmul(c, b)
        ember.matmul(c, b)
    groups = [e for e in prof.key_averages(group_by_input_shape=True)
              if e.key == "aten::matmul"]
    shapes = sorted((str(e.input_shapes), e.count) for e in groups)
    # Non-tensor arguments (here out=None) are [] as in PyTorch.
    assert shapes == [("[[2, 3], [3, 4], []]", 1), ("[[5, 3], [3, 4], []]", 2)]
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()
    with pytest.raises(RuntimeError, match="record_shapes"):
        with profile() as p2:
            ember.matmul(a, b)
        p2.key_averages(group_by_input_shape=True)


def test_table_columns_and_sorting():
    x = ember.randn(32, 32)
    with profile() as prof:
        for _ in range(2):
            ember.matmul(x, x)
        ember.exp(x)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    for column in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg", "# of Calls"):
        assert column in table
    assert "Self CPU time total:" in table
    counts = [e.count for e in sorted(prof.key_averages(), key=lambda e: e.count, reverse=True)]
    assert counts[0] == 2
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_column")


def test_chrome_trace_is_valid(tmp_path):
    x = ember.randn(4, 4, requires_grad=True)
    with profile(record_shapes=True) as prof:
        with record_function("fwd"):
            y = (x * x).sum()
        y.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == len(prof.events())
    for e in complete:
        assert isinstance(e["name"], str)
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        assert e["dur"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    assert any(e["name"] == "fwd" and e["cat"] == "user_annotation" for e in complete)
    assert all(e["ph"] in ("X", "M") for e in events)


def test_schedule_actions():
    fn = schedule(wait=1, warmup=1, active=2, repeat=1)
    actions = [fn(i) for i in range(6)]
    assert actions == [ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                       ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE, ProfilerAction.NONE]
    fn = schedule(wait=0, warmup=1, active=1, skip_first=2)
    assert [fn(i) for i in range(6)] == [
        ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.WARMUP, ProfilerAction.RECORD_AND_SAVE]


def test_schedule_records_only_active_steps_and_calls_trace_handler(tmp_path):
    saved = []

    def on_ready(p):
        saved.append(sorted({e.name for e in p.events() if e.name.startswith("ProfilerStep")}))

    x = ember.ones(4)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=on_ready) as prof:
        for _ in range(10):
            ember.exp(x)
            prof.step()
    assert saved == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]

    handler = ember.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=handler) as prof:
        for _ in range(3):
            ember.exp(x)
            prof.step()
    files = list((tmp_path / "tb").iterdir())
    assert len(files) == 1 and files[0].name.startswith("w.")
    assert files[0].name.endswith(".pt.trace.json")
    json.loads(files[0].read_text())


def test_profiles_do_not_nest_and_errors_are_clear():
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
    with pytest.raises(RuntimeError, match="didn't finish"):
        profile().events()
    with pytest.raises(TypeError):
        record_function(3)
    with pytest.raises(ValueError):
        schedule(wait=-1, warmup=0, active=1)


def test_with_stack_points_at_this_file(tmp_path):
    x = ember.ones(3)
    with profile(with_stack=True) as prof:
        ember.exp(x)
    event = next(e for e in prof.events() if e.name == "aten::exp")
    assert any("test_profiler.py" in frame for frame in event.stack)
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    assert "aten::exp" in (tmp_path / "stacks.txt").read_text()


def test_ops_of_other_threads_are_recorded():
    x = ember.ones(16)
    done = threading.Event()

    def worker():
        ember.exp(x)
        done.set()

    with profile() as prof:
        ember.exp(x)
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    threads = {e.thread for e in prof.events() if e.name == "aten::exp"}
    assert done.is_set() and len(threads) == 2


def test_results_unchanged_while_profiling():
    a = ember.randn(3, 4)
    b = ember.randn(4)
    plain = [a + b, a * 2, a[1], a.sum(), (a @ b)]
    with profile(record_shapes=True, profile_memory=True, with_stack=True):
        observed = [a + b, a * 2, a[1], a.sum(), (a @ b)]
    for p, o in zip(plain, observed):
        np.testing.assert_array_equal(p.numpy(), o.numpy())


def test_legacy_autograd_profiler():
    x = ember.randn(6, 6)
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        with ember.autograd.profiler.record_function("legacy"):
            ember.matmul(x, x)
    assert isinstance(prof.function_events, ember.autograd.profiler.EventList)
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["aten::matmul"].count == 1 and rows["legacy"].count == 1
    assert "aten::matmul" in prof.table(sort_by="self_cpu_time_total")
    assert prof.total_average().count == len(prof.function_events)
    with ember.autograd.profiler.profile(enabled=False) as off:
        ember.matmul(x, x)
    with pytest.raises(RuntimeError):
        off.key_averages()


def test_cuda_activity_warns_on_cpu_build():
    with pytest.warns(UserWarning, match="CUDA"):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            pass
