"""Small end-to-end checks distilled from public PyTorch programs run with `import ember as
torch` (the REINFORCE / actor-critic examples, the parametrizations and model-ensembling
tutorials): the pieces that broke or needed checking, each against NumPy or PyTorch."""

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.utils.parametrize as parametrize
from ember.distributions import Categorical


def test_top_level_vmap_is_func_vmap():
    # The ensembling tutorial does `from torch import vmap`.
    from ember import vmap

    assert vmap is ember.func.vmap
    x = ember.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(vmap(lambda r: r.sum())(x).numpy(), [3.0, 12.0])


def test_ensemble_of_mlps_by_stacked_state_matches_the_loop():
    ember.manual_seed(0)
    models = [nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)) for _ in range(4)]
    params, buffers = ember.func.stack_module_state(models)
    data = ember.randn(4, 6, 5)

    def fmodel(p, b, x):
        return ember.func.functional_call(models[0], (p, b), (x,))

    got = ember.vmap(fmodel)(params, buffers, data)
    want = ember.stack([m(x) for m, x in zip(models, data)])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


def _policy_loss(lib, w1, b1, w2, b2, states, actions, returns):
    # The REINFORCE example's update: softmax policy, Categorical log-probabilities weighted by
    # the normalised returns, summed and differentiated.
    f = lib.nn.functional
    probs = f.softmax(f.linear(f.relu(f.linear(states, w1, b1)), w2, b2), dim=1)
    m = (lib.distributions.Categorical(probs))
    returns = (returns - returns.mean()) / (returns.std() + np.finfo(np.float32).eps.item())
    loss = lib.cat([(-m.log_prob(actions) * returns)]).sum()
    loss.backward()
    return loss, m.entropy()


def test_reinforce_update_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.3
              for s in [(16, 4), (16,), (2, 16), (2,)]]
    states = rng.standard_normal((9, 4)).astype(np.float32)
    actions = rng.integers(0, 2, 9)
    rewards = np.ones(9, np.float32)
    returns = np.array([sum(0.99 ** k * r for k, r in enumerate(rewards[i:]))
                        for i in range(9)], np.float32)
    results = []
    for lib in (ember, torch):
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        loss, entropy = _policy_loss(lib, *params, lib.tensor(states), lib.tensor(actions),
                                     lib.tensor(returns))
        results.append((loss.item(), entropy.detach().numpy(),
                        [p.grad.numpy() for p in params]))
    (le, ee, ge), (lt, et, gt) = results
    assert le == pytest.approx(lt, rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(ee, et, rtol=1e-5)
    for a, b in zip(ge, gt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_categorical_sample_log_prob_for_a_batch_of_one():
    # select_action in the examples: probs of shape (1, 2), one sample, its log-probability.
    probs = ember.tensor([[0.25, 0.75]])
    m = Categorical(probs)
    a = m.sample()
    assert a.shape == (1,) and a.dtype is ember.int64
    np.testing.assert_allclose(m.log_prob(a).numpy(), np.log(probs.numpy()[0, a.item()]),
                               rtol=1e-6)


class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


def test_symmetric_parametrization_and_dist():
    # The parametrizations tutorial checks layer.weight against the parametrization with
    # torch.dist, inside and outside parametrize.cached().
    ember.manual_seed(0)
    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    w = layer.weight
    np.testing.assert_allclose(w.detach().numpy(), w.detach().numpy().T)
    orig = layer.parametrizations.weight.original
    assert ember.dist(layer.weight, _Symmetric()(orig)).item() == 0.0
    with parametrize.cached():
        assert layer.weight is layer.weight
    d = ember.dist(layer.weight, orig)
    lower = np.tril(orig.detach().numpy(), -1) - np.triu(orig.detach().numpy(), 1).T
    assert d.item() == pytest.approx(np.linalg.norm(lower), rel=1e-6)
    d.backward()
    assert orig.grad is not None and orig.grad.shape == (3, 3)
