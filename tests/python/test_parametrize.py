"""ember.nn.utils.parametrize, parametrizations (weight_norm, spectral_norm, orthogonal) and the
older hook-based weight_norm / spectral_norm: values against NumPy, state_dict layouts,
gradients, and PyTorch parity where PyTorch is installed."""

import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.utils import parametrize
from ember.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, x):
        return x * self.s

    def right_inverse(self, x):
        return x / self.s


class SplitSum(nn.Module):
    """Two originals: forward(a, b) = a + b; right_inverse(x) = (x / 2, x / 2)."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, x):
        return x / 2, x / 2


def np_(t):
    return t.detach().numpy()


# ------------------------------------------------------------------ parametrize


def test_register_symmetric_layout_and_class():
    ember.manual_seed(0)
    m = nn.Linear(4, 4)
    w0 = np_(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear"
    assert isinstance(m, nn.Linear)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    w = np_(m.weight)
    np.testing.assert_allclose(w, w.T)
    expected = np.triu(w0) + np.triu(w0, 1).T
    np.testing.assert_allclose(w, expected, rtol=1e-6)
    # The stored original is right_inverse(w0) = triu(w0).
    np.testing.assert_allclose(np_(m.parametrizations.weight.original), np.triu(w0))
    assert list(m.state_dict().keys()) == ["bias", "parametrizations.weight.original"]
    names = [n for n, _ in m.named_parameters()]
    assert names == ["bias", "parametrizations.weight.original"]


def test_parametrized_forward_and_gradient():
    ember.manual_seed(1)
    m = nn.Linear(3, 3).double()
    parametrize.register_parametrization(m, "weight", Symmetric())
    x = ember.randn(5, 3, dtype=ember.float64)
    m(x).sum().backward()
    g = m.parametrizations.weight.original.grad
    assert g is not None
    # d/dA sum(x @ (triu A + triu(A,1)^T)^T) : check against the plain computation.
    a = m.parametrizations.weight.original.detach().clone().requires_grad_()
    w = a.triu() + a.triu(1).mT
    F.linear(x, w, m.bias.detach()).sum().backward()
    np.testing.assert_allclose(np_(g), np_(a.grad), rtol=1e-12)
    assert ember.autograd.gradcheck(lambda a: Symmetric()(a), (a.detach().requires_grad_(),))


def test_assign_runs_right_inverse_and_keeps_original_object():
    m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    orig = m.parametrizations.weight.original
    target = ember.arange(9.0).reshape(3, 3)
    m.weight = target
    assert m.parametrizations.weight.original is orig
    np.testing.assert_allclose(np_(orig), np_(target) / 2)
    np.testing.assert_allclose(np_(m.weight), np_(target))


def test_chained_parametrizations():
    m = nn.Linear(3, 3)
    w0 = np_(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    parametrize.register_parametrization(m, "weight", Scale(3.0))
    assert len(m.parametrizations.weight) == 2
    # original = w0 (the first registration stored w0 / 2 ... then the value is 2 * w0 / 2 = w0).
    np.testing.assert_allclose(np_(m.weight), 3.0 * w0, rtol=1e-6)
    m.weight = ember.ones(3, 3) * 6.0
    np.testing.assert_allclose(np_(m.parametrizations.weight.original), np.ones((3, 3)))
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]


def test_sequence_right_inverse_originals():
    m = nn.Linear(2, 3)
    w0 = np_(m.weight).copy()
    parametrize.register_parametrization(m, "weight", SplitSum())
    keys = list(m.state_dict())
    assert keys == [
        "bias",
        "parametrizations.weight.original0",
        "parametrizations.weight.original1",
    ]
    np.testing.assert_allclose(np_(m.weight), w0, rtol=1e-6)
    assert isinstance(m.parametrizations.weight.original0, nn.Parameter)
    with pytest.raises(ValueError, match="leave_parametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear
    np.testing.assert_allclose(np_(m.weight), w0, rtol=1e-6)


def test_shape_and_dtype_checks_and_unsafe():
    class Flatten(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    class ToDouble(nn.Module):
        def forward(self, x):
            return x.double()

    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Flatten())
    assert type(m) is nn.Linear and "weight" in m._parameters  # left untouched
    with pytest.raises(ValueError, match="may not change the dtype"):
        parametrize.register_parametrization(m, "weight", ToDouble())
    parametrize.register_parametrization(m, "weight", Flatten(), unsafe=True)
    assert m.weight.shape == (6,)
    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(m, "nope", Scale(1.0))


def test_remove_leave_parametrized_false_and_buffers():
    m = nn.BatchNorm1d(3)
    m.running_mean.fill_(1.0)
    parametrize.register_parametrization(m, "running_mean", Scale(2.0))
    # A buffer stays a buffer: its original is a buffer in the ParametrizationList.
    assert "parametrizations.running_mean.original" in m.state_dict()
    np.testing.assert_allclose(np_(m.running_mean), np.ones(3))
    parametrize.remove_parametrizations(m, "running_mean", leave_parametrized=False)
    assert "running_mean" in m._buffers
    np.testing.assert_allclose(np_(m.running_mean), np.full(3, 0.5))
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(m, "running_mean")


def test_remove_keeps_parameter_identity_for_optimizers():
    m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    orig = m.parametrizations.weight.original
    value = np_(m.weight).copy()
    parametrize.remove_parametrizations(m, "weight")
    assert m.weight is orig
    np.testing.assert_allclose(np_(m.weight), value)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")


def test_cached():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    m = nn.Linear(2, 2)
    parametrize.register_parametrization(m, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        a = m.weight
        b = m.weight
        with parametrize.cached():
            c = m.weight
    assert a is b is c and len(calls) == 1
    _ = m.weight
    _ = m.weight
    assert len(calls) == 3


def test_transfer_parametrizations_and_deepcopy():
    a = nn.Linear(3, 3)
    parametrize.register_parametrization(a, "weight", Scale(2.0))
    b = nn.Linear(3, 3)
    parametrize.transfer_parametrizations_and_params(a, b)
    assert parametrize.is_parametrized(b, "weight")
    np.testing.assert_allclose(np_(b.weight), np_(a.weight))
    c = copy.deepcopy(a)
    assert type(c).__name__ == "ParametrizedLinear"
    np.testing.assert_allclose(np_(c.weight), np_(a.weight))
    import pickle

    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(a)


def test_state_dict_roundtrip_between_parametrized_modules():
    a = nn.Linear(4, 4)
    parametrize.register_parametrization(a, "weight", Symmetric())
    b = nn.Linear(4, 4)
    parametrize.register_parametrization(b, "weight", Symmetric())
    b.load_state_dict(a.state_dict())
    np.testing.assert_allclose(np_(b.weight), np_(a.weight))


# ------------------------------------------------------------------ weight_norm


def np_norm_except_dim(v, dim):
    if dim is None or dim == -1:
        return np.sqrt((v**2).sum())
    axes = tuple(i for i in range(v.ndim) if i != dim)
    return np.sqrt((v**2).sum(axis=axes, keepdims=True))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_values(dtype, dim):
    ember.manual_seed(0)
    m = nn.Conv2d(3, 4, 3).to(dtype)
    w0 = np_(m.weight).copy()
    weight_norm(m, dim=dim)
    keys = list(m.state_dict())
    assert keys == [
        "bias",
        "parametrizations.weight.original0",
        "parametrizations.weight.original1",
    ]
    g = np_(m.parametrizations.weight.original0)
    v = np_(m.parametrizations.weight.original1)
    np.testing.assert_allclose(g, np_norm_except_dim(w0, dim), rtol=1e-5)
    np.testing.assert_allclose(v, w0)
    np.testing.assert_allclose(np_(m.weight), w0, rtol=1e-5, atol=1e-6)
    assert m.weight.dtype == dtype


def test_weight_norm_gradcheck_and_negative_dim():
    from ember.nn.utils.weight_norm import _weight_norm

    v = ember.randn(3, 4, 2, dtype=ember.float64, requires_grad=True)
    for dim in (0, 1, 2, -1):
        gshape = [1, 1, 1]
        if dim != -1:
            gshape[dim] = v.shape[dim]
        g = ember.rand(*gshape, dtype=ember.float64, requires_grad=True)
        assert ember.autograd.gradcheck(lambda v, g, d=dim: _weight_norm(v, g, d), (v, g))
        assert ember.autograd.gradgradcheck(lambda v, g, d=dim: _weight_norm(v, g, d), (v, g))


def test_weight_norm_conv_training_matches_plain_computation():
    # A small conv net trained with weight_norm, against the same net written by hand
    # (w = g v / ||v||) from the same starting values: identical losses and parameters.
    ember.manual_seed(0)
    conv = nn.Conv2d(2, 3, 3, padding=1).double()
    lin = nn.Linear(3 * 5 * 5, 2).double()
    g0 = np_norm_except_dim(np_(conv.weight), 0)
    v = ember.tensor(np_(conv.weight).copy(), requires_grad=True)
    g = ember.tensor(g0.copy(), requires_grad=True)
    b = ember.tensor(np_(conv.bias).copy(), requires_grad=True)
    lw = ember.tensor(np_(lin.weight).copy(), requires_grad=True)
    lb = ember.tensor(np_(lin.bias).copy(), requires_grad=True)
    weight_norm(conv)
    model = nn.Sequential(conv, nn.Tanh(), nn.Flatten(), lin)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    opt_ref = ember.optim.SGD([g, v, b, lw, lb], lr=0.1)
    x = ember.randn(4, 2, 5, 5, dtype=ember.float64)
    y = ember.randn(4, 2, dtype=ember.float64)
    for _ in range(3):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt_ref.zero_grad()
        w = v * (g / v.reshape(3, -1).norm(dim=1).reshape(3, 1, 1, 1))
        h = ember.tanh(F.conv2d(x, w, b, padding=1)).reshape(4, -1)
        loss_ref = F.mse_loss(F.linear(h, lw, lb), y)
        loss_ref.backward()
        opt_ref.step()
        np.testing.assert_allclose(loss.item(), loss_ref.item(), rtol=1e-12)
    np.testing.assert_allclose(np_(conv.parametrizations.weight.original0), np_(g), rtol=1e-10)
    np.testing.assert_allclose(np_(conv.parametrizations.weight.original1), np_(v), rtol=1e-10)


def test_weight_norm_loads_old_hook_layout():
    old = nn.Linear(3, 2)
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(old)
    assert set(old.state_dict()) == {"bias", "weight_g", "weight_v"}
    new = weight_norm(nn.Linear(3, 2))
    new.load_state_dict(old.state_dict())
    x = ember.randn(2, 3)
    np.testing.assert_allclose(np_(new(x)), np_(old(x)), rtol=1e-6)


def test_legacy_weight_norm_hook_and_remove():
    m = nn.Linear(4, 3)
    w0 = np_(m.weight).copy()
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(m, dim=None)
    np.testing.assert_allclose(np_(m.weight_g), np.sqrt((w0**2).sum()), rtol=1e-6)
    with ember.no_grad():
        m.weight_g.mul_(2.0)
    m(ember.randn(1, 4))  # the pre-hook recomputes weight
    np.testing.assert_allclose(np_(m.weight), 2 * w0, rtol=1e-5)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm"):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert isinstance(m.weight, nn.Parameter)
    assert set(m.state_dict()) == {"weight", "bias"}
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


# ------------------------------------------------------------------ spectral_norm


def test_spectral_norm_converges_to_largest_singular_value():
    ember.manual_seed(0)
    m = nn.Linear(6, 5).double()
    w0 = np_(m.weight).copy()
    spectral_norm(m, n_power_iterations=1)
    assert set(m.state_dict()) == {
        "bias",
        "parametrizations.weight.original",
        "parametrizations.weight.0._u",
        "parametrizations.weight.0._v",
    }
    for _ in range(50):
        w = m.weight  # training mode: each access is one power-iteration step
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(np_(w), w0 / sigma, rtol=1e-8)
    assert np.linalg.svd(np_(w), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-8)


def test_spectral_norm_buffers_update_only_in_training():
    m = spectral_norm(nn.Conv2d(2, 3, 3))
    sn = m.parametrizations.weight[0]
    m.eval()
    u = np_(sn._u).copy()
    _ = m.weight
    np.testing.assert_array_equal(np_(sn._u), u)
    m.train()
    _ = m.weight
    assert not np.array_equal(np_(sn._u), u)
    # ConvTranspose uses dim 1 as the output dim by default.
    t = spectral_norm(nn.ConvTranspose2d(2, 3, 3))
    assert t.parametrizations.weight[0].dim == 1
    with pytest.raises(ValueError, match="n_power_iterations"):
        spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        spectral_norm(nn.Linear(2, 2), dim=2)


def test_spectral_norm_gan_discriminator_step():
    # One GAN discriminator update with spectral-normalised layers: the gradient reaches the
    # original weights, and after the step every layer's weight still has sigma ~ 1.
    ember.manual_seed(0)
    disc = nn.Sequential(
        spectral_norm(nn.Linear(8, 16)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(16, 1))
    )
    opt = ember.optim.Adam(disc.parameters(), lr=1e-3)
    real, fake = ember.randn(16, 8), ember.randn(16, 8)
    for _ in range(3):
        opt.zero_grad()
        loss = F.softplus(-disc(real)).mean() + F.softplus(disc(fake)).mean()
        loss.backward()
        assert disc[0].parametrizations.weight.original.grad is not None
        opt.step()
    disc.eval()
    for layer in (disc[0], disc[2]):
        w = np_(layer.weight)
        assert np.linalg.svd(w, compute_uv=False)[0] == pytest.approx(1.0, rel=0.05)


def test_legacy_spectral_norm_layout_and_remove():
    ember.manual_seed(0)
    m = nn.utils.spectral_norm(nn.Linear(5, 4))
    sd = m.state_dict()
    assert set(sd) == {"bias", "weight_orig", "weight_u", "weight_v"}
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    for _ in range(30):
        m(ember.randn(1, 5))
    w0 = np_(m.weight_orig)
    np.testing.assert_allclose(
        np_(m.weight), w0 / np.linalg.svd(w0, compute_uv=False)[0], rtol=1e-4
    )
    m2 = nn.utils.spectral_norm(nn.Linear(5, 4))
    m2.load_state_dict(sd)
    nn.utils.remove_spectral_norm(m)
    assert set(m.state_dict()) == {"weight", "bias"}
    assert not m._state_dict_hooks and not m._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(m)


# ------------------------------------------------------------------ orthogonal


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_maps(orth_map, shape):
    ember.manual_seed(0)
    m = nn.Linear(shape[1], shape[0]).double()
    orthogonal(m, orthogonal_map=orth_map)
    q = np_(m.weight)
    if shape[0] >= shape[1]:
        np.testing.assert_allclose(q.T @ q, np.eye(shape[1]), atol=1e-10)
    else:
        np.testing.assert_allclose(q @ q.T, np.eye(shape[0]), atol=1e-10)
    # Assigning an orthogonal matrix stores it exactly (trivialization).
    a = np.linalg.qr(np.random.default_rng(0).standard_normal((max(shape), min(shape))))[0]
    target = a if shape[0] >= shape[1] else a.T
    m.weight = ember.tensor(target)
    np.testing.assert_allclose(np_(m.weight), target, atol=1e-10)
    # Gradients reach the unconstrained original.
    m(ember.randn(2, shape[1], dtype=ember.float64)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None


def test_orthogonal_without_trivialization_and_errors():
    m = nn.Linear(3, 5).double()
    orthogonal(m, orthogonal_map="householder", use_trivialization=False)
    q = np_(m.weight)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-10)
    assert "parametrizations.weight.0.base" not in m.state_dict()
    m2 = orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m2.weight = ember.eye(3)
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        orthogonal(nn.Linear(3, 3), orthogonal_map="svd")
    with pytest.raises(ValueError, match="Expected a matrix"):
        orthogonal(nn.BatchNorm1d(3), name="weight")


def test_orthogonal_training_keeps_orthogonality():
    ember.manual_seed(0)
    m = orthogonal(nn.Linear(4, 4).double())
    opt = ember.optim.SGD(m.parameters(), lr=0.01)
    x = ember.randn(8, 4, dtype=ember.float64)
    target = ember.randn(8, 4, dtype=ember.float64)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = F.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    q = np_(m.weight)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-10)


# ------------------------------------------------------------------ PyTorch parity


def test_pytorch_state_dicts_load():
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    torch.manual_seed(0)
    # parametrizations.weight_norm
    tm = tnn.utils.parametrizations.weight_norm(tnn.Conv2d(2, 3, 3))
    em = weight_norm(nn.Conv2d(2, 3, 3))
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert list(sd) == list(em.state_dict())
    em.load_state_dict(sd)
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        np_(em(ember.tensor(x))), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6
    )
    # parametrizations.spectral_norm, in eval mode (no power-iteration step)
    tm = tnn.utils.parametrizations.spectral_norm(tnn.Linear(4, 3)).eval()
    em = spectral_norm(nn.Linear(4, 3)).eval()
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert set(sd) == set(em.state_dict())
    em.load_state_dict(sd)
    np.testing.assert_allclose(np_(em.weight), tm.weight.detach().numpy(), rtol=1e-5)
    # the older hooks
    tm = tnn.utils.spectral_norm(tnn.Linear(4, 3)).eval()
    em = nn.utils.spectral_norm(nn.Linear(4, 3)).eval()
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert set(sd) == set(em.state_dict())
    em.load_state_dict(sd)
    xx = np.ones((1, 4), np.float32)
    np.testing.assert_allclose(
        np_(em(ember.tensor(xx))), tm(torch.tensor(xx)).detach().numpy(), rtol=1e-5
    )
    # orthogonal: the same original and base give the same weight
    tm = tnn.utils.parametrizations.orthogonal(tnn.Linear(3, 3).double())
    em = orthogonal(nn.Linear(3, 3).double())
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert set(sd) == set(em.state_dict())
    em.load_state_dict(sd)
    np.testing.assert_allclose(np_(em.weight), tm.weight.detach().numpy(), atol=1e-12)
