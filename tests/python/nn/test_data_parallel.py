"""nn.DataParallel and nn.parallel.data_parallel as PyTorch's CPU build has them: the wrapper
runs its module as it is, under the ``module.`` prefix; data_parallel has no device to use.
Against PyTorch where it is installed."""

import numpy as np
import pytest

import ember
import ember.nn as nn


def test_data_parallel_wraps_and_runs_the_module():
    ember.manual_seed(0)
    inner = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    model = nn.DataParallel(inner)
    assert model.module is inner and model.device_ids == []
    assert nn.parallel.DataParallel is nn.DataParallel
    x = ember.randn(5, 4)
    np.testing.assert_array_equal(model(x).detach().numpy(), inner(x).detach().numpy())
    assert list(model.state_dict()) == ["module.0.weight", "module.0.bias"]
    assert "(module): Sequential" in repr(model)
    # Training through the wrapper reaches the wrapped parameters.
    model(x).sum().backward()
    assert inner[0].weight.grad is not None
    # A state_dict saved from a DataParallel model loads into another one.
    other = nn.DataParallel(nn.Sequential(nn.Linear(4, 3), nn.ReLU()))
    other.load_state_dict(model.state_dict())
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())
    # Keyword arguments pass through.
    attn = nn.DataParallel(nn.MultiheadAttention(4, 2, batch_first=True))
    q = ember.randn(2, 3, 4)
    out, weights = attn(q, q, q, need_weights=True)
    assert out.shape == (2, 3, 4) and weights.shape == (2, 3, 3)
    with pytest.raises(TypeError, match="expected an nn.Module"):
        nn.DataParallel(lambda v: v)


def test_data_parallel_function_has_no_device():
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        nn.parallel.data_parallel(nn.Linear(2, 2), ember.ones(1, 2))


def test_matches_pytorch_cpu_build():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("PyTorch sees a GPU here: its DataParallel would replicate")
    theirs = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    mine = nn.DataParallel(nn.Linear(3, 2))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert mine.device_ids == theirs.device_ids
    mine.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(mine(ember.from_numpy(x)).detach().numpy(),
                               theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError) as want:
        torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2))
    with pytest.raises(RuntimeError) as got:
        nn.parallel.data_parallel(nn.Linear(2, 2), ember.ones(1, 2))
    assert str(got.value) == str(want.value)
