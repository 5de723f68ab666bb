"""ember.distributed in one process, without a process group: the queries, PyTorch's errors
before init_process_group, and the names scripts import at top level."""

import pytest

import ember
import ember.distributed as dist


def test_queries(monkeypatch):
    assert dist.is_available() == dist.is_gloo_available()
    assert dist.is_initialized() is False
    assert not dist.is_nccl_available() and not dist.is_mpi_available()
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert dist.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    assert dist.is_torchelastic_launched() is True
    assert dist.Backend("GLOO") == "gloo" and dist.ReduceOp.SUM.name == "SUM"
    assert ember.distributed is dist
    for name in dist.__all__:
        assert hasattr(dist, name), name


def test_errors_before_a_process_group():
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    with pytest.raises(RuntimeError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(ValueError, match="has not been initialized"):
            fn()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.all_reduce(ember.ones(2))


@pytest.mark.skipif(not dist.is_available(), reason="this build has no Gloo")
def test_a_group_of_one_in_process():
    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        t = ember.arange(4.0)
        dist.all_reduce(t)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
        out = [ember.empty(4)]
        dist.all_gather(out, t)
        assert ember.equal(out[0], t)
        dist.barrier()
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
