"""What the other ranks see when a job goes wrong: a rank that dies, collectives with
mismatched shapes, a wrong world size, a port in use. Each must end in a clear error on every
surviving rank within the timeout, never a hang."""

import time

import pytest
from dist_ranks import run_ranks

import ember.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_available(),
                                reason="this build has no Gloo (apt install libgloo-dev)")

KILLED = """
init()
t = ember.ones(4)
dist.all_reduce(t)
if RANK == 1:
    os._exit(3)  # dies without a word
try:
    for _ in range(10):
        dist.all_reduce(t)
        time.sleep(0.05)
except dist.DistBackendError as e:
    print("caught:", e)
    sys.exit(0)
print("no error")
sys.exit(1)
"""


def test_a_killed_rank_gives_the_others_an_error(tmp_path):
    start = time.monotonic()
    results = run_ranks(tmp_path, KILLED, world=3, timeout=60, pg_timeout=20)
    assert time.monotonic() - start < 40
    assert results[1].returncode == 3
    for r in (results[0], results[2]):
        assert r.returncode == 0, r.stdout + r.stderr
        assert "caught:" in r.stdout and "all_reduce" in r.stdout


MISMATCH = """
init()
t = ember.ones(10 if RANK == 0 else 20)
try:
    dist.all_reduce(t)
except dist.DistBackendError as e:
    print("caught:", e)
    sys.exit(0)
print("no error", t.tolist())
sys.exit(1)
"""


def test_mismatched_shapes_give_an_error_not_a_crash(tmp_path):
    start = time.monotonic()
    results = run_ranks(tmp_path, MISMATCH, world=2, timeout=60, pg_timeout=5)
    assert time.monotonic() - start < 40
    for r in results:  # every rank raises, naming what each passed (Note [Checking collectives])
        assert r.returncode == 0, r.stdout + r.stderr
        assert "rank 0: all_reduce of float32 x 10" in r.stdout
        assert "rank 1: all_reduce of float32 x 20" in r.stdout


DIFFERENT_CALLS = """
init()
try:
    if RANK == 0:
        dist.broadcast(ember.ones(3), src=0)
    else:
        dist.all_reduce(ember.ones(3))
except dist.DistBackendError as e:
    print("caught:", e)
try:
    if RANK == 0:
        dist.send(ember.ones(20), dst=1)
    else:
        dist.recv(ember.ones(10), src=0)
except dist.DistBackendError as e:
    print("caught:", e)
splits = [1, 1] if RANK == 0 else [2, 0]
try:
    dist.all_to_all_single(ember.empty(2), ember.ones(2), output_split_sizes=[1, 1],
                           input_split_sizes=splits)
except dist.DistBackendError as e:
    print("caught:", e)
# the group still works after these errors
t = ember.ones(2)
dist.all_reduce(t)
assert t.tolist() == [2.0, 2.0]
print("still works")
"""


def test_different_collectives_and_point_to_point_sizes(tmp_path):
    results = run_ranks(tmp_path, DIFFERENT_CALLS, world=2, timeout=60, pg_timeout=10)
    for r in results:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "still works" in r.stdout
    both = results[0].stdout + results[1].stdout
    assert "rank 0: broadcast of float32 x 3, root 0" in both
    assert "rank 0 sent 80 bytes, but this rank receives into a tensor of 40 bytes" in both
    assert "[all_to_all]" in both


WRONG_WORLD = """
try:
    init()
except (dist.DistStoreError, dist.DistNetworkError) as e:
    print("caught:", e)
    sys.exit(0)
sys.exit(1)
"""


def test_a_wrong_world_size_times_out_with_a_clear_error(tmp_path):
    # WORLD_SIZE says 3, but only ranks 0 and 1 exist.
    start = time.monotonic()
    results = run_ranks(tmp_path, WRONG_WORLD, world=3, ranks=[0, 1], timeout=60, pg_timeout=3)
    assert time.monotonic() - start < 30
    for r in results:
        assert r.returncode == 0, r.stdout + r.stderr
    assert "waiting for 3 processes" in results[0].stdout


PORT_IN_USE = """
import socket
s = socket.socket()
s.bind(("", int(os.environ["MASTER_PORT"])))
s.listen()
try:
    init()
except dist.DistNetworkError as e:
    print("caught:", e)
    sys.exit(0)
sys.exit(1)
"""


def test_a_port_in_use_is_reported(tmp_path):
    results = run_ranks(tmp_path, PORT_IN_USE, world=1, timeout=60, pg_timeout=3)
    assert results[0].returncode == 0, results[0].stdout + results[0].stderr
    assert "MASTER_PORT" in results[0].stdout


NOT_INITIALIZED = """
try:
    dist.all_reduce(ember.ones(1))
except ValueError as e:
    assert "has not been initialized" in str(e)
    print("ok")
init()
try:
    init()
except ValueError as e:
    assert "twice" in str(e)
    print("ok twice")
"""


def test_using_a_group_before_init_and_initializing_twice(tmp_path):
    results = run_ranks(tmp_path, NOT_INITIALIZED, world=1, timeout=60)
    assert results[0].returncode == 0, results[0].stderr
    assert "ok twice" in results[0].stdout


ONE_RANK_CHANGES = """
init()
dist.all_reduce(ember.ones(10))
try:
    dist.all_reduce(ember.ones(10 if RANK == 0 else 20))  # only rank 1's call changed
except dist.DistBackendError as e:
    print("caught:", e)
    sys.exit(0)
sys.exit(1)
"""


def test_a_mismatch_on_one_rank_times_out_with_an_error(tmp_path):
    # Only rank 1 checks (its signature changed), so the two wait for each other until the
    # timeout: an error on both, never a crash (Note [Checking collectives]).
    start = time.monotonic()
    results = run_ranks(tmp_path, ONE_RANK_CHANGES, world=2, timeout=60, pg_timeout=3)
    assert time.monotonic() - start < 40
    for r in results:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "caught:" in r.stdout


PLANS = """
init()
group = dist.group.WORLD
a, b = ember.ones(10), ember.ones(20)
group._gloo.declare_allreduce_plan([a, b], 0).wait(30)
for _ in range(3):  # following the plan: no argument checks
    dist.all_reduce(a)
    dist.all_reduce(b)
assert a[0].item() == 2 ** 3 and b[0].item() == 2 ** 3
try:  # off the plan, the checks are back
    dist.all_reduce(ember.ones(5 if RANK == 0 else 7))
except dist.DistBackendError as e:
    print("caught:", e)
try:  # ranks declaring different plans are refused
    group._gloo.declare_allreduce_plan([ember.ones(3 + RANK)], 0).wait(30)
except dist.DistBackendError as e:
    print("caught plan:", e)
t = ember.ones(2)
dist.all_reduce(t)
assert t.tolist() == [2.0, 2.0]
print("still works")
"""


def test_declared_plans_skip_checks_and_off_plan_calls_are_checked(tmp_path):
    results = run_ranks(tmp_path, PLANS, world=2, timeout=60, pg_timeout=10)
    for r in results:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "caught: [all_reduce of float32 x" in r.stdout
        assert "caught plan:" in r.stdout and "still works" in r.stdout
