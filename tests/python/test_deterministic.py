"""ember.use_deterministic_algorithms: the switch and its readers, the alert's error and
warn-only forms, and results that are bit-identical for every thread count with the switch on
(the ops whose partitioning otherwise follows the threads: split reductions, float64 GEMM,
oneDNN's convolution weight gradient, weighted histograms)."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F


@pytest.fixture
def deterministic():
    old_threads = ember.get_num_threads()
    ember.use_deterministic_algorithms(True)
    yield
    ember.use_deterministic_algorithms(False)
    ember.set_num_threads(old_threads)


def test_switch_and_readers():
    assert not ember.are_deterministic_algorithms_enabled()
    assert ember.get_deterministic_debug_mode() == 0
    try:
        ember.use_deterministic_algorithms(True, warn_only=True)
        assert ember.are_deterministic_algorithms_enabled()
        assert ember.is_deterministic_algorithms_warn_only_enabled()
        assert ember.get_deterministic_debug_mode() == 1
        ember.set_deterministic_debug_mode("error")
        assert ember.are_deterministic_algorithms_enabled()
        assert not ember.is_deterministic_algorithms_warn_only_enabled()
        assert ember.get_deterministic_debug_mode() == 2
        ember.set_deterministic_debug_mode(0)
        assert not ember.are_deterministic_algorithms_enabled()
    finally:
        ember.use_deterministic_algorithms(False)
    with pytest.raises(TypeError, match="must be bool"):
        ember.use_deterministic_algorithms(1)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        ember.set_deterministic_debug_mode("loud")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2"):
        ember.set_deterministic_debug_mode(3)


def test_alert_raises_or_warns():
    ember._C._alert_not_deterministic("some_op")  # switch off: nothing
    try:
        ember.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="some_op does not have a deterministic "
                                               "implementation, but you set"):
            ember._C._alert_not_deterministic("some_op")
        ember.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="some_op does not have a deterministic"):
            ember._C._alert_not_deterministic("some_op")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning):
                ember._C._alert_not_deterministic("some_op")
    finally:
        ember.use_deterministic_algorithms(False)


def per_thread_results(fn, threads=(1, 2, 3, 4)):
    out = []
    for n in threads:
        ember.set_num_threads(n)
        r = fn()
        r = r if isinstance(r, (tuple, list)) else (r,)
        out.append([t.detach().numpy().copy() for t in r])
    return out


def assert_bit_identical(results):
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


rng = np.random.default_rng(0)
X = rng.standard_normal(1_000_003).astype(np.float32)
M = rng.standard_normal((200_000, 3)).astype(np.float32)
D = rng.standard_normal((4, 300_000)).astype(np.float64)


CASES = {
    "sum": lambda: ember.tensor(X).sum(),
    "mean": lambda: ember.tensor(X).mean(),
    "norm": lambda: ember.tensor(X).norm(),
    "prod": lambda: (1 + 1e-7 * ember.tensor(X)).prod(),
    "sum_dim0": lambda: ember.tensor(M).sum(0),
    "mean_dim0": lambda: ember.tensor(M).mean(0),
    "norm_dim0": lambda: ember.tensor(M).norm(dim=0),
    "sum_dim1_f64": lambda: ember.tensor(D).sum(1),
    "cross_entropy": lambda: F.cross_entropy(
        ember.tensor(M[:, :3]).reshape(-1, 3), ember.tensor(np.arange(200_000) % 3)
    ),
    "mm_f64": lambda: ember.tensor(D[:, :2000].T.copy()) @ ember.tensor(D[:, 2000:2300]),
    "bmm_f64": lambda: ember.tensor(D[:, :60000].reshape(4, 200, 300)) @ ember.tensor(
        D[:, 60000:120000].reshape(4, 300, 200)
    ),
    "histogram_weighted": lambda: ember.histogram(
        ember.tensor(X), bins=7, weight=ember.tensor(X[::-1].copy())
    )[0],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_identical_across_thread_counts(deterministic, name):
    assert_bit_identical(per_thread_results(CASES[name]))


def test_conv_backward_bit_identical(deterministic):
    x = ember.tensor(rng.standard_normal((16, 8, 24, 24)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((16, 8, 3, 3)).astype(np.float32))
    b = ember.zeros(16)

    def run():
        xx, ww, bb = (t.clone().requires_grad_() for t in (x, w, b))
        F.conv2d(xx, ww, bb, padding=1).square().sum().backward()
        return xx.grad, ww.grad, bb.grad

    assert_bit_identical(per_thread_results(run))


def test_results_stay_accurate(deterministic):
    # The fixed partitioning changes the rounding, not the accuracy.
    ember.set_num_threads(2)
    np.testing.assert_allclose(ember.tensor(X).sum().item(), X.astype(np.float64).sum(),
                               rtol=1e-6)
    np.testing.assert_allclose(ember.tensor(M).sum(0).numpy(), M.astype(np.float64).sum(0),
                               rtol=1e-5)
    a, b = D[:, :2000].T, D[:, 2000:2300]
    np.testing.assert_allclose((ember.tensor(a.copy()) @ ember.tensor(b)).numpy(), a @ b,
                               rtol=1e-12, atol=1e-12)
    def hist():
        return ember.histogram(ember.tensor(X), bins=7, weight=ember.tensor(X[::-1].copy()))[0]

    h = hist().numpy()
    ember.use_deterministic_algorithms(False)
    np.testing.assert_allclose(h, hist().numpy(), rtol=1e-5)


def test_repeatable_between_runs_with_threads(deterministic):
    ember.set_num_threads(2)
    a = [ember.tensor(M).sum(0).numpy() for _ in range(5)]
    for r in a[1:]:
        np.testing.assert_array_equal(a[0], r)


def test_cudnn_deterministic_flag_is_separate():
    # As in PyTorch: backends.cudnn.deterministic is its own setting.
    with ember.backends.cudnn.flags(enabled=False, deterministic=True):
        assert ember.backends.cudnn.deterministic
        assert not ember.are_deterministic_algorithms_enabled()
