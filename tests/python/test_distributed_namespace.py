"""ember.distributed without a backend: it imports, says so, and raises PyTorch's errors."""

import pytest

import ember
import ember.distributed as dist


def test_queries_work_without_a_backend(monkeypatch):
    assert dist.is_available() is False
    assert dist.is_initialized() is False
    assert not dist.is_nccl_available() and not dist.is_gloo_available()
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert dist.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    assert dist.is_torchelastic_launched() is True
    assert dist.Backend("GLOO") == "gloo" and dist.ReduceOp.SUM.name == "SUM"
    assert ember.distributed is dist


def test_process_groups_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    with pytest.raises(RuntimeError, match="doesn't have Gloo built in"):
        dist.init_process_group(backend="gloo", rank=0, world_size=1)
    with pytest.raises(RuntimeError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(ValueError, match="has not been initialized"):
            fn()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.all_reduce(ember.ones(2))
