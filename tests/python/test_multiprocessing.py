"""ember.multiprocessing: Python's multiprocessing names, and spawn / start_processes as
torch.multiprocessing has them (children's failures re-raised in the parent, the others
stopped), including the classic mp.spawn start of a distributed job."""

import os
import socket
import time

import pytest

import ember
import ember.distributed as dist
import ember.multiprocessing as mp


def _write_rank(i, directory, suffix):
    with open(os.path.join(directory, f"{i}{suffix}"), "w") as f:
        f.write(str(os.getpid()))


def _fail_on_one(i, directory):
    if i == 1:
        raise ValueError("rank one is unhappy")
    time.sleep(30)  # stopped by the parent when rank 1 fails


def _exit_three(i):
    os._exit(3)


def _all_reduce(i, port, directory):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=i, world_size=2)
    t = ember.ones(3) * (i + 1)
    dist.all_reduce(t)
    with open(os.path.join(directory, f"sum{i}"), "w") as f:
        f.write(str(t.tolist()))
    dist.destroy_process_group()


def test_namespace():
    assert mp.Process is not None and mp.Queue is not None and mp.get_context("spawn")
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("carrier-pigeon")


def test_spawn_runs_every_index(tmp_path):
    mp.spawn(_write_rank, args=(str(tmp_path), ".done"), nprocs=3)
    assert sorted(os.listdir(tmp_path)) == ["0.done", "1.done", "2.done"]
    context = mp.start_processes(_write_rank, args=(str(tmp_path), ".ctx"), nprocs=2,
                                 join=False, start_method="fork")
    while not context.join():
        pass
    assert len(context.pids()) == 2


def test_a_failing_child_is_raised_with_its_traceback(tmp_path):
    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException, match="rank one is unhappy") as info:
        mp.spawn(_fail_on_one, args=(str(tmp_path),), nprocs=2)
    assert "ValueError" in str(info.value) and info.value.error_index == 1
    assert time.monotonic() - start < 25  # the sleeping sibling was stopped
    with pytest.raises(mp.ProcessExitedException, match="exit code 3"):
        mp.spawn(_exit_three, nprocs=1)


@pytest.mark.skipif(not dist.is_available(), reason="this build has no Gloo")
def test_spawn_a_distributed_job(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_all_reduce, args=(port, str(tmp_path)), nprocs=2)
    for i in range(2):
        assert (tmp_path / f"sum{i}").read_text() == "[3.0, 3.0, 3.0]"
