"""ember.nn.init: each initialiser against its distribution (moments, bounds, a
Kolmogorov-Smirnov check against the exact CDF), structure (eye, dirac, orthogonal, sparse),
generator= reproducibility and PyTorch's errors."""

import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import init

N = 200_000


def ks_statistic(samples, cdf):
    """The Kolmogorov-Smirnov distance between the samples' empirical CDF and ``cdf``."""
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    n = x.size
    f = cdf(x)
    upper = np.arange(1, n + 1) / n - f
    lower = f - np.arange(0, n) / n
    return max(upper.max(), lower.max())


# 1.95 / sqrt(n) is the 0.1% critical value of the KS test; the draws are seeded (fixture
# below), so each check is deterministic.
def ks_ok(samples, cdf):
    return ks_statistic(samples, cdf) < 1.95 / math.sqrt(np.asarray(samples).size)


@pytest.fixture(autouse=True)
def seeded():
    ember.manual_seed(1234)


def normal_cdf(mean, std):
    from math import erf

    verf = np.vectorize(erf)
    return lambda x: 0.5 * (1.0 + verf((x - mean) / (std * math.sqrt(2.0))))


def uniform_cdf(a, b):
    return lambda x: np.clip((x - a) / (b - a), 0.0, 1.0)


def test_calculate_gain():
    for name in ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                 "conv_transpose2d", "conv_transpose3d", "sigmoid"]:
        assert init.calculate_gain(name) == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / (1 + 0.2**2))
    assert init.calculate_gain("leaky_relu", 1) == 1.0
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")


def test_calculate_gain_matches_torch():
    torch = pytest.importorskip("torch")
    for args in [("linear",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.3),
                 ("selu",), ("sigmoid",)]:
        assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_fan_in_fan_out():
    assert init._calculate_fan_in_and_fan_out(ember.empty(3, 5)) == (5, 3)
    assert init._calculate_fan_in_and_fan_out(ember.empty(4, 2, 3, 3)) == (18, 36)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))


def test_uniform_and_normal():
    t = ember.empty(N)
    assert init.uniform_(t, -2.0, 3.0) is t
    a = t.numpy()
    assert a.min() >= -2.0 and a.max() < 3.0
    assert ks_ok(a, uniform_cdf(-2.0, 3.0))
    init.normal_(t, 1.5, 0.5)
    a = t.numpy()
    assert abs(a.mean() - 1.5) < 0.01 and abs(a.std() - 0.5) < 0.01
    assert ks_ok(a, normal_cdf(1.5, 0.5))


def test_trunc_normal_both_regimes():
    t = ember.empty(N)
    # Wide interval: normal samples with rejection of the tails.
    init.trunc_normal_(t, mean=0.0, std=1.0, a=-2.0, b=2.0)
    a = t.numpy()
    assert a.min() >= -2.0 and a.max() <= 2.0
    phi = normal_cdf(0.0, 1.0)
    z = phi(np.array([2.0]))[0] - phi(np.array([-2.0]))[0]
    assert ks_ok(a, lambda x: (phi(x) - phi(np.array([-2.0]))[0]) / z)
    # Narrow interval in the tail: uniform proposals with acceptance.
    init.trunc_normal_(t, mean=0.0, std=1.0, a=1.0, b=1.5)
    a = t.numpy()
    assert a.min() >= 1.0 and a.max() <= 1.5
    lo, hi = phi(np.array([1.0]))[0], phi(np.array([1.5]))[0]
    assert ks_ok(a, lambda x: (phi(x) - lo) / (hi - lo))


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
        init.trunc_normal_(ember.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


def test_trunc_normal_matches_torch_distribution():
    torch = pytest.importorskip("torch")
    t = ember.empty(N)
    init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=3.0)
    r = torch.empty(N)
    torch.nn.init.trunc_normal_(r, mean=0.5, std=2.0, a=-1.0, b=3.0)
    e, q = np.sort(t.numpy()), np.sort(r.numpy())
    # Two-sample KS at the 1% level.
    d = np.max(np.abs(np.searchsorted(e, q, side="right") / N - np.arange(1, N + 1) / N))
    assert d < 1.95 * math.sqrt(2.0 / N) + 1.0 / N


def test_constant_ones_zeros():
    t = ember.empty(2, 3)
    assert init.constant_(t, 0.3) is t
    np.testing.assert_allclose(t.numpy(), np.full((2, 3), 0.3, dtype=np.float32))
    init.ones_(t)
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 3)))
    init.zeros_(t)
    np.testing.assert_array_equal(t.numpy(), np.zeros((2, 3)))


def test_eye():
    t = ember.empty(3, 5)
    init.eye_(t)
    np.testing.assert_array_equal(t.numpy(), np.eye(3, 5))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(3))


def test_dirac():
    torch = None
    try:
        import torch
    except ImportError:
        pass
    for shape, groups in [((4, 3, 3), 1), ((6, 3, 3, 3), 2), ((2, 2, 3, 3, 3), 1),
                          ((3, 5, 2), 1)]:
        t = ember.empty(*shape)
        init.dirac_(t, groups)
        a = t.numpy()
        out_per_group = shape[0] // groups
        expected = np.zeros(shape, dtype=np.float32)
        centre = tuple(s // 2 for s in shape[2:])
        for g in range(groups):
            for d in range(min(out_per_group, shape[1])):
                expected[(g * out_per_group + d, d) + centre] = 1
        np.testing.assert_array_equal(a, expected)
        if torch is not None:
            r = torch.empty(*shape)
            torch.nn.init.dirac_(r, groups)
            np.testing.assert_array_equal(a, r.numpy())
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(ember.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ember.empty(3, 3, 3), groups=2)


def test_xavier():
    t = ember.empty(300, 500)
    fan_in, fan_out = 500, 300
    init.xavier_uniform_(t, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    a = t.numpy()
    assert a.min() >= -bound and a.max() <= bound
    assert ks_ok(a, uniform_cdf(-bound, bound))
    init.xavier_normal_(t)
    std = math.sqrt(2.0 / (fan_in + fan_out))
    assert ks_ok(t.numpy(), normal_cdf(0.0, std))


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity,a", [("leaky_relu", 0), ("relu", 0),
                                            ("leaky_relu", math.sqrt(5)), ("tanh", 0)])
def test_kaiming(mode, nonlinearity, a):
    t = ember.empty(200, 100, 3, 3)
    fan = 100 * 9 if mode == "fan_in" else 200 * 9
    gain = init.calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    init.kaiming_uniform_(t, a=a, mode=mode, nonlinearity=nonlinearity)
    bound = math.sqrt(3.0) * std
    x = t.numpy()
    assert x.min() >= -bound and x.max() <= bound
    assert ks_ok(x, uniform_cdf(-bound, bound))
    init.kaiming_normal_(t, a=a, mode=mode, nonlinearity=nonlinearity)
    assert ks_ok(t.numpy(), normal_cdf(0.0, std))


def test_kaiming_errors_and_zero_element():
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of"):
        init.kaiming_uniform_(ember.empty(3, 3), mode="fan_avg")
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(ember.empty(0, 3))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(ember.empty(3, 0))


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3, 3)])
def test_orthogonal(shape):
    t = ember.empty(*shape)
    init.orthogonal_(t, gain=2.0)
    rows = shape[0]
    flat = t.numpy().reshape(rows, -1).astype(np.float64)
    if rows <= flat.shape[1]:
        np.testing.assert_allclose(flat @ flat.T, 4.0 * np.eye(rows), atol=1e-4)
    else:
        np.testing.assert_allclose(flat.T @ flat, 4.0 * np.eye(flat.shape[1]), atol=1e-4)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(ember.empty(3))


def test_orthogonal_is_haar_distributed():
    # For a Haar-random orthogonal n x n matrix, each entry has mean 0 and variance 1/n.
    n = 8
    entries = []
    g = ember.Generator().manual_seed(0)
    for _ in range(400):
        t = ember.empty(n, n)
        init.orthogonal_(t, generator=g)
        entries.append(t.numpy()[0, 0])
    entries = np.array(entries)
    assert abs(entries.mean()) < 0.05
    assert abs(entries.var() - 1.0 / n) < 0.03


def test_sparse():
    t = ember.empty(40, 30)
    init.sparse_(t, sparsity=0.25, std=0.5)
    a = t.numpy()
    num_zeros = math.ceil(0.25 * 40)
    assert all(int((a[:, j] == 0).sum()) == num_zeros for j in range(30))
    nz = a[a != 0]
    assert abs(nz.std() - 0.5) < 0.06
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(ember.empty(3, 3, 3), 0.1)
    init.sparse_(t, sparsity=0.0)
    assert (t.numpy() != 0).all()


def test_generator_reproducibility():
    for fn, kw in [(init.uniform_, {}), (init.normal_, {}), (init.trunc_normal_, {}),
                   (init.xavier_uniform_, {}), (init.xavier_normal_, {}),
                   (init.kaiming_uniform_, {}), (init.kaiming_normal_, {}),
                   (init.orthogonal_, {}), (init.sparse_, {"sparsity": 0.3})]:
        a, b = ember.empty(6, 5), ember.empty(6, 5)
        fn(a, generator=ember.Generator().manual_seed(3), **kw)
        fn(b, generator=ember.Generator().manual_seed(3), **kw)
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=fn.__name__)


def test_global_seed_reproducibility():
    ember.manual_seed(11)
    a = init.kaiming_uniform_(ember.empty(4, 4)).numpy().copy()
    ember.manual_seed(11)
    b = init.kaiming_uniform_(ember.empty(4, 4)).numpy()
    np.testing.assert_array_equal(a, b)


def test_initialisers_do_not_record_and_work_on_parameters():
    p = nn.Parameter(ember.empty(4, 4))
    for fn in [init.uniform_, init.normal_, init.trunc_normal_, init.ones_, init.zeros_,
               init.eye_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.orthogonal_]:
        out = fn(p)
        assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad
    init.constant_(p, 2.0)
    init.sparse_(p, 0.5)
    init.dirac_(nn.Parameter(ember.empty(2, 2, 3)))


def test_float64_and_half_tensors():
    for dtype in [ember.float64, ember.float16, ember.bfloat16]:
        t = ember.empty(64, 64, dtype=dtype)
        init.kaiming_uniform_(t, a=math.sqrt(5))
        init.orthogonal_(t)
        init.trunc_normal_(t, std=0.02, a=-0.04, b=0.04)
        assert t.dtype == dtype
        # The bounds as the dtype rounds them (bfloat16(0.04) = 0.0400390625), as PyTorch.
        assert float(t.abs().max()) <= float(ember.tensor(0.04, dtype=dtype))


def test_deprecated_aliases():
    t = ember.empty(3, 3)
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of "
                                           "`nn.init.uniform_`"):
        init.uniform(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["normal", "constant", "eye", "xavier_uniform", "xavier_normal",
                     "kaiming_uniform", "kaiming_normal", "orthogonal"]:
            fn = getattr(init, name)
            args = (t, 1.0) if name == "constant" else (t,)
            fn(*args)
        init.dirac(ember.empty(2, 2, 3))
        init.sparse(t, 0.5)


def test_all_torch_initialisers_exist():
    torch = pytest.importorskip("torch")
    for name in torch.nn.init.__all__:
        assert hasattr(init, name), name
