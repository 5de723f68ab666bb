"""Dropout: statistics of the mask, scaling, reproducibility with manual_seed, evaluation mode,
p = 0 and p = 1, in-place forms, channel-wise and alpha forms, gradients (the same mask scales
them) and errors."""

import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_statistics_and_scaling(p):
    ember.manual_seed(0)
    n = 200_000
    y = F.dropout(ember.ones(n), p, training=True).numpy()
    kept = y != 0
    # The kept fraction is within 5 standard deviations of 1 - p.
    sd = math.sqrt(p * (1 - p) / n)
    assert abs(kept.mean() - (1 - p)) < 5 * sd
    np.testing.assert_allclose(y[kept], 1 / (1 - p), rtol=1e-6)
    # The expectation is preserved.
    assert abs(y.mean() - 1.0) < 5 * sd / (1 - p)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32, ember.float64])
def test_dropout_dtypes(dtype):
    x = ember.randn(1000).to(dtype)
    y = F.dropout(x, 0.3)
    assert y.dtype == dtype
    kept = y.double().numpy() != 0
    np.testing.assert_allclose(y.double().numpy()[kept], x.double().numpy()[kept] / 0.7,
                               rtol=1e-2 if dtype in (ember.float16, ember.bfloat16) else 1e-6)


def test_reproducible_with_manual_seed_and_independent_draws():
    ember.manual_seed(123)
    a = F.dropout(ember.ones(64, 64), 0.5).numpy()
    b = F.dropout(ember.ones(64, 64), 0.5).numpy()
    ember.manual_seed(123)
    a2 = F.dropout(ember.ones(64, 64), 0.5).numpy()
    b2 = F.dropout(ember.ones(64, 64), 0.5).numpy()
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    assert (a != b).any()
    # The result does not depend on the number of threads.
    n = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        ember.manual_seed(7)
        one = F.dropout(ember.ones(300_000), 0.5).numpy()
        ember.set_num_threads(2)
        ember.manual_seed(7)
        two = F.dropout(ember.ones(300_000), 0.5).numpy()
    finally:
        ember.set_num_threads(n)
    np.testing.assert_array_equal(one, two)


def test_eval_mode_p0_p1_and_empty():
    x = ember.randn(5, 4)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(ember.empty(0), 0.5).shape == (0,)
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False
    assert F.dropout2d(ember.randn(2, 3, 4, 4), 0.5, training=False).shape == (2, 3, 4, 4)


def test_inplace_dropout():
    ember.manual_seed(1)
    x = ember.ones(1000)
    r = F.dropout(x, 0.5, inplace=True)
    assert r is x
    vals = set(np.unique(x.numpy()).tolist())
    assert vals == {0.0, 2.0}
    y = ember.ones(10)
    assert F.dropout(y, 0.5, training=False, inplace=True) is y


def test_gradient_uses_the_same_mask():
    ember.manual_seed(3)
    x = ember.randn(50, 40, dtype=ember.float64, requires_grad=True)
    y = F.dropout(x, 0.4)
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    y.sum().backward()
    mask = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), mask / 0.6, rtol=1e-12)
    # In place on a non-leaf.
    x.grad = None
    z = x * 1
    F.dropout(z, 0.4, inplace=True)
    (z * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (z.detach().numpy() != 0) / 0.6, rtol=1e-12)


def test_gradcheck_with_a_fixed_mask():
    # Re-seeding inside the function gives the same mask on every call.
    def fn(t):
        ember.manual_seed(11)
        return F.dropout(t, 0.3)

    x = ember.randn(4, 5, dtype=ember.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))

    def feature(t):
        ember.manual_seed(12)
        return F.dropout2d(t, 0.5)

    assert gradcheck(feature, (ember.randn(2, 3, 2, 2, dtype=ember.float64, requires_grad=True),))

    def alpha(t):
        ember.manual_seed(13)
        return F.alpha_dropout(t, 0.5, training=True)

    assert gradcheck(alpha, (ember.randn(6, dtype=ember.float64, requires_grad=True),))


def test_native_dropout():
    ember.manual_seed(5)
    x = ember.randn(100)
    out, mask = ember.native_dropout(x, 0.25, True)
    assert mask.dtype == ember.bool
    np.testing.assert_allclose(out.numpy(), x.numpy() * mask.numpy() / 0.75, rtol=1e-6)
    out, mask = ember.native_dropout(x, 0.25, False)
    assert mask.numpy().all()
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    out, mask = ember.native_dropout(x, 1.0, True)
    assert (out.numpy() == 0).all() and not mask.numpy().any()


@pytest.mark.parametrize("fn,shape,noise_shape", [
    (F.dropout2d, (4, 6, 5, 5), (4, 6)),
    (F.dropout1d, (4, 6, 9), (4, 6)),
    (F.dropout3d, (2, 3, 2, 3, 4), (2, 3)),
])
def test_channel_dropout_zeroes_whole_channels(fn, shape, noise_shape):
    ember.manual_seed(4)
    y = fn(ember.ones(*shape), 0.5).numpy()
    per_channel = y.reshape(*noise_shape, -1)
    for row in per_channel.reshape(-1, per_channel.shape[-1]):
        assert (row == 0).all() or np.allclose(row, 2.0)
    assert 0 < (per_channel[..., 0] == 0).mean() < 1


def test_channel_dropout_unbatched_and_inplace():
    ember.manual_seed(6)
    y = F.dropout1d(ember.ones(6, 9), 0.5)
    assert y.shape == (6, 9)
    for row in y.numpy():
        assert (row == 0).all() or np.allclose(row, 2.0)
    x = ember.ones(3, 2, 4, 4)
    assert F.dropout3d(x, 0.5, inplace=True) is x
    x = ember.ones(6, 9)
    assert F.dropout1d(x, 0.5, inplace=True) is x
    assert set(np.unique(x.numpy()).tolist()) <= {0.0, 2.0}
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(4), 0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.dropout2d(ember.ones(2, 3, 4), 0.5)
    assert any("dropout2d" in str(w.message) for w in caught)


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(8)
    x = ember.randn(400_000)
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.01
    assert abs(y.std() - 1.0) < 0.01
    # Dropped elements all take one value: -alpha' * a + b.
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha**2 * 0.2 + 1) * 0.8)
    dropped = -alpha * a + alpha * a * 0.2
    assert np.isclose(y, dropped).mean() > 0.15
    z = F.feature_alpha_dropout(ember.randn(8, 16, 3), 0.5, training=True).numpy()
    for row in z.reshape(-1, 3):
        assert np.allclose(row, dropped_value(0.5)) or not np.isclose(row, dropped_value(0.5)).any()


def dropped_value(p):
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha**2 * p + 1) * (1 - p))
    return -alpha * a + alpha * a * p


def test_errors():
    x = ember.randn(3)
    for fn in (F.dropout, F.alpha_dropout, F.feature_alpha_dropout, F.dropout2d):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            fn(x, 1.5)
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
        ember.dropout(x, -0.1, True)
    with pytest.raises(NotImplementedError, match=r"\[native_dropout\].*int64"):
        F.dropout(ember.tensor([1, 2, 3]), 0.5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        ember.feature_dropout(x, 0.5, True)
    with pytest.raises(RuntimeError, match="leaf"):
        F.dropout(ember.randn(3, requires_grad=True), 0.5, inplace=True)


def test_statistics_like_torch():
    torch = pytest.importorskip("torch")
    # Different generators, same distribution: compare the kept fractions and the scale.
    torch.manual_seed(0)
    ember.manual_seed(0)
    n = 100_000
    t = torch.nn.functional.dropout(torch.ones(n), 0.3).numpy()
    e = F.dropout(ember.ones(n), 0.3).numpy()
    assert abs((t != 0).mean() - (e != 0).mean()) < 0.01
    assert np.unique(t[t != 0]).tolist() == pytest.approx(np.unique(e[e != 0]).tolist())
    ta = torch.nn.functional.alpha_dropout(torch.ones(n), 0.3, training=True).numpy()
    ea = F.alpha_dropout(ember.ones(n), 0.3, training=True).numpy()
    np.testing.assert_allclose(np.unique(ea), np.unique(ta), rtol=1e-6)
