"""ember.distributed in one process, without a process group: the queries, PyTorch's errors
before init_process_group, and the names scripts import at top level."""

import pytest

import ember
import ember.distributed as dist


def test_queries(monkeypatch):
    assert dist.is_available() == dist.is_gloo_available()
    assert dist.is_initialized() is False
    assert dist.is_nccl_available() == dist.is_backend_available("nccl")
    assert not dist.is_mpi_available()
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert dist.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    assert dist.is_torchelastic_launched() is True
    assert dist.Backend("GLOO") == "gloo" and dist.ReduceOp.SUM.name == "SUM"
    assert ember.distributed is dist
    for name in dist.__all__:
        assert hasattr(dist, name), name


def test_default_backends_per_device_as_pytorch():
    assert dist.get_default_backend_for_device("cpu") == "gloo"
    assert dist.get_default_backend_for_device(ember.device("cpu")) == "gloo"
    assert dist.get_default_backend_for_device("cuda") == "nccl"
    with pytest.raises(ValueError, match="not registered for device : meta"):
        dist.get_default_backend_for_device("meta")
    with pytest.raises(TypeError, match="expected a device or a str"):
        dist.get_default_backend_for_device(None)
    assert dist.is_backend_available("gloo") == dist.is_available()
    assert dist.is_backend_available("GLOO") == dist.is_available()
    assert not dist.is_backend_available("mpi")


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the answers without a GPU")
def test_accelerator_answers_as_a_cpu_only_pytorch():
    # pytorch/examples test torch.accelerator first and take their CPU path when it has none.
    acc = ember.accelerator
    assert acc.is_available() is False and acc.device_count() == 0
    assert acc.current_accelerator() is None and acc.current_accelerator(True) is None
    for fn in (acc.current_device_index, acc.synchronize, acc.memory_allocated,
               acc.empty_cache):
        with pytest.raises(RuntimeError, match="none is available"):
            fn()
    with pytest.raises(RuntimeError, match="none is available"):
        acc.set_device_index(0)
    with pytest.raises(RuntimeError, match="none is available"):
        with acc.device_index(0):
            pass
    with acc.device_index(None):
        pass
    assert "accelerator" in dir(ember)


def test_errors_before_a_process_group():
    if not ember.cuda.is_available():
        nccl_error = ("only supported with GPUs" if dist.is_nccl_available()
                      else "doesn't have NCCL built in")
        with pytest.raises(RuntimeError, match=nccl_error):
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
