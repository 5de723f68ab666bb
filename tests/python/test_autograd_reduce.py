"""Gradients of reductions and scans: the cases the op database cannot express.

Ties (max, amax, median, mode, cummax), products and cumulative products with zeros, norms at
zero, NaN handling, keepdim / negative dims, dtype= arguments, empty inputs, in-place scans,
out= refusal and non-differentiable outputs. Values are checked against hand-derived results
everywhere, and against PyTorch (same data, same grad_output) where it is installed.
"""

import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

INF = float("inf")
NAN = float("nan")


def leaf(data, dtype=ember.float64):
    return ember.tensor(data, dtype=dtype).requires_grad_()


def grad_of(fn, data, dtype=ember.float64):
    x = leaf(data, dtype)
    fn(x).sum().backward()
    return x.grad


def assert_grad(fn, data, expected, dtype=ember.float64):
    g = grad_of(fn, data, dtype)
    np.testing.assert_allclose(g.numpy(), np.asarray(expected, dtype=np.float64), rtol=1e-12,
                               atol=1e-12)


# ---- ties: the gradient is split evenly, or goes to the returned index --------------------------


def test_amax_amin_split_ties_evenly_per_slice():
    assert_grad(lambda x: ember.amax(x), [1.0, 3.0, 3.0, 2.0], [0, 0.5, 0.5, 0])
    assert_grad(lambda x: ember.amin(x, dim=1), [[1.0, 1.0, 2.0], [0.0, 5.0, 0.0]],
                [[0.5, 0.5, 0], [0.5, 0, 0.5]])
    assert_grad(lambda x: ember.amax(x, dim=(0, -1), keepdim=True),
                [[[1.0, 4.0], [4.0, 0.0]], [[4.0, 2.0], [3.0, 4.0]]],
                [[[0, 0.5], [0.5, 0]], [[0.5, 0], [0, 0.5]]])
    # A NaN maximum matches no element: the gradient is nan, as PyTorch.
    assert np.isnan(grad_of(lambda x: ember.amax(x), [1.0, NAN]).numpy()).all()


def test_max_min_over_all_elements_split_ties():
    assert_grad(lambda x: ember.max(x), [1.0, 3.0, 3.0, 2.0], [0, 0.5, 0.5, 0])
    assert_grad(lambda x: ember.min(x), [[1.0, 3.0], [1.0, 1.0]], [[1 / 3, 0], [1 / 3, 1 / 3]])
    # NaN result: the NaNs share the gradient.
    assert_grad(lambda x: ember.max(x), [1.0, NAN, 2.0, NAN], [0, 0.5, 0, 0.5])
    assert ember.max(leaf([1.0, 2.0])).grad_fn.name() == "MaxBackward1"


def test_max_min_along_dim_send_the_gradient_to_the_index():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    values, indices = ember.max(x, 1)
    assert values.grad_fn.name() == "MaxBackward0"
    assert indices.grad_fn is None and not indices.requires_grad
    (values * ember.tensor([10.0, 100.0], dtype=ember.float64)).sum().backward()
    expected = np.zeros((2, 3))
    expected[0, indices[0].item()] = 10
    expected[1, indices[1].item()] = 100
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert_grad(lambda x: ember.min(x, -1, keepdim=True)[0], [[4.0, 1.0, 2.0]], [[0, 1, 0]])
    assert_grad(lambda x: ember.max(x, 0)[0], 5.0, 1.0)  # 0-d


def test_aminmax_both_outputs():
    x = leaf([[1.0, 3.0, 1.0, 3.0], [2.0, 2.0, 0.0, 0.0]])
    mn, mx = ember.aminmax(x, dim=1)
    assert mn.grad_fn.name() == "AminmaxBackward0" and mx.grad_fn is mn.grad_fn
    (mn * 2 + mx * 5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1, 2.5, 1, 2.5], [2.5, 2.5, 1, 1]])
    # Only one of the outputs used.
    assert_grad(lambda x: ember.aminmax(x)[1], [1.0, 4.0, 4.0], [0, 0.5, 0.5])


def test_median_and_nanmedian():
    # Even count: the lower median.
    assert_grad(lambda x: ember.median(x), [4.0, 1.0, 3.0, 2.0], [0, 0, 0, 1])
    # All elements: ties share the gradient.
    assert_grad(lambda x: ember.median(x), [3.0, 1.0, 3.0, 3.0, 2.0], [1 / 3, 0, 1 / 3, 1 / 3, 0])
    assert_grad(lambda x: ember.median(x), [1.0, NAN, 3.0], [0, 1, 0])
    assert_grad(lambda x: ember.nanmedian(x), [1.0, NAN, 3.0], [1, 0, 0])
    # Along a dim: the returned index.
    x = leaf([[5.0, 1.0, 4.0, 2.0], [NAN, 1.0, 0.0, 2.0]])
    values, indices = ember.nanmedian(x, 1)
    assert values.grad_fn.name() == "NanmedianBackward1"
    values.sum().backward()
    expected = np.zeros((2, 4))
    for r in range(2):
        expected[r, indices[r].item()] = 1
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert ember.median(leaf([1.0, 2.0])).grad_fn.name() == "MedianBackward0"
    assert ember.median(leaf([1.0, 2.0]), 0)[0].grad_fn.name() == "MedianBackward1"


def test_mode_sends_the_gradient_to_the_returned_index():
    x = leaf([[1.0, 2.0, 2.0, 1.0, 3.0], [0.0, 0.0, 1.0, 1.0, 1.0]])
    values, indices = ember.mode(x, 1)
    assert values.grad_fn.name() == "ModeBackward0"
    values.sum().backward()
    expected = np.zeros((2, 5))
    for r in range(2):
        expected[r, indices[r].item()] = 1
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_cummax_cummin_accumulate_repeated_indices():
    # cummax of [1, 3, 3, 2]: values [1, 3, 3, 3] from indices [0, 1, 2, 2].
    assert_grad(lambda x: ember.cummax(x, 0)[0], [1.0, 3.0, 3.0, 2.0], [1, 1, 2, 0])
    assert_grad(lambda x: ember.cummin(x, 0)[0], [1.0, 3.0, 3.0, 2.0], [4, 0, 0, 0])
    assert_grad(lambda x: ember.cummax(x, 0)[0], 2.0, 1.0)  # 0-d


# ---- products with zeros ------------------------------------------------------------------------


def test_prod_with_zeros():
    assert_grad(lambda x: ember.prod(x), [2.0, 0.0, 3.0], [0, 6, 0])
    assert_grad(lambda x: ember.prod(x), [0.0, 2.0, 0.0], [0, 0, 0])
    assert_grad(lambda x: ember.prod(x, 1), [[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]],
                [[0, 6, 0], [0, 0, 0], [6, 3, 2]])
    assert_grad(lambda x: ember.prod(x, -2, keepdim=True), [[2.0, 0.0], [5.0, 3.0]],
                [[5, 3], [2, 0]])
    assert ember.prod(leaf([1.0])).grad_fn.name() == "ProdBackward0"
    assert ember.prod(leaf([1.0]), 0).grad_fn.name() == "ProdBackward1"


def test_prod_with_zeros_under_create_graph():
    # With create_graph the zero-safe formula (exclusive products) runs even for several zeros.
    for data, expected in [([2.0, 0.0, 3.0], [0, 6, 0]), ([0.0, 2.0, 0.0], [0, 0, 0])]:
        x = leaf(data)
        (g,) = ember.autograd.grad(ember.prod(x), x, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), expected)


def test_cumprod_with_zeros():
    # y = [2, 0, 0]: d(sum y)/dx = [1 + x1 + x1 x2, x0 + x0 x2, x0 x1] = [1, 8, 0].
    assert_grad(lambda x: ember.cumprod(x, 0), [2.0, 0.0, 3.0], [1, 8, 0])
    # Two zeros: after the first zero only its own derivative survives.
    data = [[2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 2.0, 0.0, 4.0, 5.0]]
    expected = [[1.0, 8.0, 0.0, 0.0, 0.0], [1 + 2 + 0, 1 + 0, 2 + 8 + 40, 0.0, 0.0]]
    assert_grad(lambda x: ember.cumprod(x, 1), data, expected)
    assert_grad(lambda x: ember.cumprod(x, 0), np.transpose(data).tolist(), np.transpose(expected))


def test_cumprod_with_zeros_under_create_graph_matches():
    rng = np.random.default_rng(3)
    data = rng.uniform(-2, 2, (3, 7))
    data[0, 2] = data[0, 5] = data[1, 0] = data[2, 6] = 0.0
    g = rng.uniform(-1, 1, (3, 7))
    for dim in (0, 1, -1):
        x = leaf(data)
        (plain,) = ember.autograd.grad(ember.cumprod(x, dim), x, ember.tensor(g))
        (graph,) = ember.autograd.grad(ember.cumprod(x, dim), x, ember.tensor(g),
                                       create_graph=True)
        np.testing.assert_allclose(graph.detach().numpy(), plain.numpy(), rtol=1e-12, atol=1e-12)
    # A long line: the exact (create_graph) form works in blocks.
    long = rng.uniform(0.5, 1.5, 2100)
    long[[10, 700]] = 0.0
    x = leaf(long)
    (plain,) = ember.autograd.grad(ember.cumprod(x, 0).sum(), x)
    (graph,) = ember.autograd.grad(ember.cumprod(x, 0).sum(), x, create_graph=True)
    np.testing.assert_allclose(graph.detach().numpy(), plain.numpy(), rtol=1e-9, atol=1e-12)


# ---- norms --------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", ["fro", 2, 1, 3, 0.5, 1.5, INF, -INF])
def test_norm_gradient_at_zero_is_zero(p):
    assert_grad(lambda x: ember.norm(x, p=p), [[0.0, 0.0], [0.0, 0.0]], [[0, 0], [0, 0]])
    assert_grad(lambda x: ember.norm(x, p=p, dim=1), [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
                np.zeros((2, 3)))


def test_norm_values_and_order_zero():
    assert_grad(lambda x: ember.norm(x), [3.0, -4.0], [0.6, -0.8])
    assert_grad(lambda x: ember.norm(x, p=1), [3.0, -4.0, 0.0], [1, -1, 0])
    assert_grad(lambda x: ember.norm(x, p=INF), [3.0, -3.0, 1.0], [0.5, -0.5, 0])
    assert_grad(lambda x: ember.norm(x, p=-INF), [1.0, -1.0, 3.0], [0.5, -0.5, 0])
    # p=0 counts nonzeros: piecewise constant, no gradient at all (as PyTorch).
    x = leaf([1.0, 0.0, 2.0])
    y = ember.norm(x, p=0)
    assert y.grad_fn.name() == "LinalgVectorNormBackward0"
    y.backward()
    assert x.grad is None


# ---- statistics ---------------------------------------------------------------------------------


def test_var_std_dims_keepdim_correction():
    data = np.random.default_rng(0).uniform(-2, 2, (2, 3, 4))
    x = leaf(data)
    ember.var(x, dim=(0, -1), keepdim=True, correction=0).sum().backward()
    mean = data.mean(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 / 8 * (data - mean), rtol=1e-12)
    x = leaf(data)
    s = ember.std(x, -1, correction=2)
    s.sum().backward()
    n = 4
    sd = data.std(axis=-1, ddof=2, keepdims=True)
    expected = (data - data.mean(axis=-1, keepdims=True)) / ((n - 2) * sd)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    # std of a constant is 0: the gradient is 0, not nan.
    assert_grad(lambda x: ember.std(x), [2.0, 2.0, 2.0], [0, 0, 0])
    assert ember.var(leaf([1.0, 2.0])).grad_fn.name() == "VarBackward0"


def test_var_over_all_elements_with_correction_too_large():
    # N - correction <= 0: inf where x differs from the mean, nan where it equals it.
    g = grad_of(lambda x: ember.var(x, correction=3), [1.0, 2.0, 3.0]).numpy()
    assert np.isinf(g[0]) and np.isnan(g[1]) and np.isinf(g[2])


def test_var_mean_std_mean_two_differentiable_outputs():
    data = [[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]]
    x = leaf(data)
    v, m = ember.var_mean(x, 1)
    assert v.grad_fn.name() == "VarMeanBackward0" and m.grad_fn is v.grad_fn
    (v + 3 * m).sum().backward()
    a = np.asarray(data)
    expected = 2 / 2 * (a - a.mean(1, keepdims=True)) + 1.0
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    # Only the mean used.
    assert_grad(lambda x: ember.std_mean(x, 1)[1], data, np.full((2, 3), 1 / 3))


def test_logsumexp_and_logcumsumexp():
    data = [[0.0, 1.0, -INF], [2.0, 2.0, 2.0]]
    a = np.asarray(data)
    soft = np.exp(a - np.log(np.exp(a).sum(1, keepdims=True)))
    assert_grad(lambda x: ember.logsumexp(x, 1), data, soft)
    assert_grad(lambda x: ember.logsumexp(x, -1, keepdim=True), data, soft)
    # d/dx_k sum_j logcumsumexp_j = sum_{j >= k} exp(x_k - y_j)
    data = [0.5, -1.0, 2.0, 0.0]
    a = np.asarray(data)
    y = np.logaddexp.accumulate(a)
    expected = [sum(math.exp(a[k] - y[j]) for j in range(k, 4)) for k in range(4)]
    assert_grad(lambda x: ember.logcumsumexp(x, 0), data, expected)


def test_nansum_nanmean_skip_nan():
    assert_grad(lambda x: ember.nansum(x, 1), [[1.0, NAN], [2.0, 3.0]], [[1, 0], [1, 1]])
    assert_grad(lambda x: ember.nanmean(x, 1), [[1.0, NAN], [2.0, 3.0]], [[1, 0], [0.5, 0.5]])
    assert ember.nansum(leaf([1.0])).grad_fn.name() == "NansumBackward0"


# ---- dtype=, empty inputs -----------------------------------------------------------------------


def test_dtype_argument_gradients_keep_the_input_dtype():
    x = leaf([1.0, 2.0, 3.0], dtype=ember.float32)
    ember.sum(x, dtype=ember.float64).backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1])
    x = leaf([1.0, 2.0, 3.0], dtype=ember.float32)
    y = ember.cumsum(x, 0, dtype=ember.float64)
    assert y.dtype is ember.float64 and y.grad_fn.name() == "CumsumBackward0"
    y.sum().backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), [3, 2, 1])
    x = leaf([1.0, 2.0, 3.0], dtype=ember.float32)
    ember.cumprod(x, 0, dtype=ember.float64).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 + 2 + 6, 1 + 3, 2])
    x = leaf([3.0, 4.0], dtype=ember.float32)
    ember.norm(x, dtype=ember.float64).backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), [0.6, 0.8], rtol=1e-6)


EMPTY_CASES = [
    lambda x: ember.sum(x),
    lambda x: ember.prod(x),
    lambda x: ember.prod(x, 0),
    lambda x: ember.amax(x, 1),
    lambda x: ember.var(x),
    lambda x: ember.std(x, 0),
    lambda x: ember.norm(x),
    lambda x: ember.norm(x, p=1, dim=1),
    lambda x: ember.logsumexp(x, 0),
    lambda x: ember.cumsum(x, 0),
    lambda x: ember.cumprod(x, 1),
    lambda x: ember.median(x),
    lambda x: ember.nanmedian(x),
    lambda x: ember.max(x, 1)[0],
    lambda x: ember.median(x, 1)[0],
    lambda x: ember.mode(x, 1)[0],
    lambda x: ember.cummax(x, 0)[0],
    lambda x: ember.logcumsumexp(x, 0),
    lambda x: ember.mean(x),
    lambda x: ember.nansum(x),
    lambda x: ember.aminmax(x, dim=1)[0],
]


@pytest.mark.parametrize("i", range(len(EMPTY_CASES)))
def test_empty_inputs_give_empty_gradients(i):
    x = ember.zeros(0, 3, dtype=ember.float64).requires_grad_()
    EMPTY_CASES[i](x).sum().backward()
    assert tuple(x.grad.shape) == (0, 3)


# ---- forms: in-place, out=, non-differentiable outputs ------------------------------------------


def test_inplace_scans_on_non_leaves():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y.cumsum_(0)
    assert y.grad_fn.name() == "CumsumBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 2, 1])
    x = leaf([2.0, 0.0, 3.0])
    y = x * 1
    y.cumprod_(0)
    assert y.grad_fn.name() == "CumprodBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 8, 0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf([1.0, 2.0]).cumsum_(0)


def test_out_arguments_refuse_autograd():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    msg = "don't support automatic differentiation"
    with pytest.raises(RuntimeError, match=msg):
        ember.sum(x, 0, out=ember.empty(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=msg):
        ember.cumprod(x, 0, out=ember.empty(2, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=msg):
        ember.max(x, 0, out=(ember.empty(2, dtype=ember.float64),
                             ember.empty(2, dtype=ember.int64)))
    with pytest.raises(RuntimeError, match=msg):
        ember.var_mean(x, 0, out=(ember.empty(2, dtype=ember.float64),
                                  ember.empty(2, dtype=ember.float64)))
    # Without grad mode out= works as before.
    with ember.no_grad():
        o = ember.empty(2, dtype=ember.float64)
        ember.sum(x, 0, out=o)
    np.testing.assert_allclose(o.numpy(), [4, 6])


def test_non_differentiable_results_record_nothing():
    x = leaf([[1.0, 5.0], [3.0, 4.0]])
    for r in [ember.argmax(x), ember.argmin(x, 1), ember.all(x), ember.any(x, 0),
              ember.count_nonzero(x), ember.max(x, 1)[1], ember.cummax(x, 0)[1],
              ember.mode(x, 0)[1], ember.median(x, 0)[1]]:
        assert r.grad_fn is None and not r.requires_grad


def test_quantile_q_gradient_only_for_linear_interpolation():
    x = ember.tensor([1.0, 3.0, 5.0, 2.0], dtype=ember.float64)
    q = leaf([0.3, 0.5])
    y = ember.quantile(x, q)
    assert y.requires_grad
    y.sum().backward()
    # sorted [1, 2, 3, 5]: ranks 0.9 and 1.5, d/dq = (above - below) * (n - 1)
    np.testing.assert_allclose(q.grad.numpy(), [(2 - 1) * 3, (3 - 2) * 3])
    for mode in ["lower", "higher", "midpoint", "nearest"]:
        assert not ember.quantile(x, q, interpolation=mode).requires_grad
    x = leaf([[1.0, NAN, 5.0, 2.0], [0.5, 1.0, 2.0, 3.0]])
    q = leaf([0.3, 0.5])
    ember.nanquantile(x, q, dim=1).sum().backward()
    # Row 0 has 3 valid values (ranks 0.6 and 1.0), row 1 four (ranks 0.9 and 1.5).
    np.testing.assert_allclose(x.grad.numpy(), [[0.4, 0, 0, 1.6], [0.1, 1.4, 0.5, 0]], atol=1e-12)
    np.testing.assert_allclose(q.grad.numpy(), [(2 - 1) * 2 + (1 - 0.5) * 3, 0 + (2 - 1) * 3])


# ---- double backward (create_graph) -------------------------------------------------------------


def _rand(*shape, seed=0):
    return ember.tensor(np.random.default_rng(seed).uniform(-2, 2, shape)).requires_grad_()


@pytest.mark.parametrize("fn", [
    lambda x: ember.amax(x, dim=(0, 2), keepdim=True),
    lambda x: ember.max(x, 1)[0],
    lambda x: ember.var(x, dim=(0, -1)),
    lambda x: ember.std(x, 1, keepdim=True),
    lambda x: ember.var_mean(x, 2),
    lambda x: ember.logsumexp(x, (1, 2)),
    lambda x: ember.prod(x, 1),
    lambda x: ember.prod(x),
    lambda x: ember.norm(x, dim=1),
    lambda x: ember.norm(x, p=INF, dim=(0, 2)),
    lambda x: ember.median(x, -1)[0],
    lambda x: ember.nansum(x, 0),
], ids=["amax", "max_dim", "var", "std", "var_mean", "logsumexp", "prod_dim", "prod", "norm2",
        "norm_inf", "median_dim", "nansum"])
def test_double_backward(fn):
    x = _rand(2, 3, 4)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# ---- parity with PyTorch ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


TIES = [[1.0, 3.0, 3.0, 2.0], [3.0, 0.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]]
ZEROS = [[2.0, 0.0, 3.0, 4.0], [0.0, 1.5, 0.0, 2.0], [1.0, 2.0, 3.0, 0.5]]
MIXED = [[0.5, -1.25, 2.0, 0.0], [1.5, 0.75, -0.5, 2.5], [0.0, 0.0, 0.0, 0.0]]
WITH_NAN = [[1.0, NAN, 3.0, 2.0], [0.5, 1.0, NAN, NAN], [4.0, 1.0, 2.0, 3.0]]
# Quantiles: distinct values and at most one NaN per line (PyTorch's unstable sort orders ties,
# NaNs included, arbitrarily, and the gradient follows that order).
QUANT = [[0.5, -1.25, 2.0, 0.0], [1.5, NAN, -0.5, 2.5], [0.25, 3.0, -2.0, 1.0]]

PARITY = [
    ("amax_ties", lambda m, x: m.amax(x), TIES),
    ("amax_dim_ties", lambda m, x: m.amax(x, dim=1, keepdim=True), TIES),
    ("amin_negdims", lambda m, x: m.amin(x, dim=(-1, 0)), TIES),
    ("max_all_ties", lambda m, x: m.max(x), TIES),
    ("min_all_ties", lambda m, x: m.min(x), TIES),
    ("max_dim_ties", lambda m, x: m.max(x, 1)[0], TIES),
    ("min_dim_ties_keepdim", lambda m, x: m.min(x, -1, keepdim=True)[0], TIES),
    ("aminmax_dim", lambda m, x: m.aminmax(x, dim=0)[0] * 2 + m.aminmax(x, dim=0)[1], TIES),
    ("aminmax_all", lambda m, x: m.aminmax(x)[1], TIES),
    ("median_all_ties", lambda m, x: m.median(x), TIES),
    ("median_all_even", lambda m, x: m.median(x), [[4.0, 1.0], [3.0, 2.0]]),
    ("median_dim_distinct", lambda m, x: m.median(x, 1)[0], MIXED[:2]),
    ("median_nan", lambda m, x: m.median(x), WITH_NAN),
    ("nanmedian_all", lambda m, x: m.nanmedian(x), WITH_NAN),
    ("nanmedian_dim", lambda m, x: m.nanmedian(x, 1, keepdim=True)[0], WITH_NAN),
    ("mode_ties", lambda m, x: m.mode(x, 1)[0], [[1.0, 2.0, 2.0, 1.0], [0.0, 1.0, 1.0, 1.0]]),
    ("prod_zero_all", lambda m, x: m.prod(x), [[2.0, 0.0], [3.0, 4.0]]),
    ("prod_zeros_all", lambda m, x: m.prod(x), ZEROS),
    ("prod_zeros_dim", lambda m, x: m.prod(x, 1), ZEROS),
    ("prod_zeros_negdim_keepdim", lambda m, x: m.prod(x, -2, keepdim=True), ZEROS),
    ("cumprod_zeros_dim1", lambda m, x: m.cumprod(x, 1), ZEROS),
    ("cumprod_zeros_dim0", lambda m, x: m.cumprod(x, 0), ZEROS),
    ("cumsum_negdim", lambda m, x: m.cumsum(x, -1), MIXED),
    ("cummax_ties", lambda m, x: m.cummax(x, 1)[0], TIES),
    ("cummin_ties", lambda m, x: m.cummin(x, 0)[0], TIES),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), MIXED),
    ("logsumexp_dims", lambda m, x: m.logsumexp(x, (0, 1)), MIXED),
    ("logsumexp_keepdim", lambda m, x: m.logsumexp(x, -1, keepdim=True), MIXED),
    ("var_dims_keepdim", lambda m, x: m.var(x, dim=(0, 1), keepdim=True), MIXED),
    ("var_correction0", lambda m, x: m.var(x, 1, correction=0), MIXED),
    ("std_negdim", lambda m, x: m.std(x, -2), MIXED),
    ("std_zero_row", lambda m, x: m.std(x, 1), MIXED),
    ("var_mean_both", lambda m, x: m.var_mean(x, 1)[0] + m.var_mean(x, 1)[1], MIXED),
    ("std_mean_both", lambda m, x: m.std_mean(x, 0)[0] * m.std_mean(x, 0)[1], MIXED),
    ("nansum", lambda m, x: m.nansum(x, 1), WITH_NAN),
    ("nanmean", lambda m, x: m.nanmean(x, 0), WITH_NAN),
    ("quantile_dim", lambda m, x: m.quantile(x, 0.3, dim=1), MIXED[:2]),
    ("quantile_nan", lambda m, x: m.quantile(x, 0.4, dim=1), QUANT),
    ("quantile_dim0_vector_q", lambda m, x: m.quantile(x, m.tensor([0.2, 0.7], dtype=x.dtype), 0),
     QUANT[::2]),
    ("nanquantile_nan", lambda m, x: m.nanquantile(x, 0.4, dim=1, keepdim=True), QUANT),
    ("quantile_all_nearest", lambda m, x: m.quantile(x, 0.45, interpolation="nearest"), QUANT[::2]),
    ("quantile_all_midpoint", lambda m, x: m.quantile(x, 0.45, interpolation="midpoint"),
     QUANT[::2]),
    ("quantile_all_lower", lambda m, x: m.quantile(x, 0.45, interpolation="lower"), QUANT[::2]),
    ("quantile_all_higher", lambda m, x: m.quantile(x, 0.45, interpolation="higher"), QUANT[::2]),
] + [
    (f"norm_{p}_{tag}", (lambda p: lambda m, x: m.norm(x, p=p, dim=1))(p), data)
    for p in ["fro", 2, 1, 3, 0.5, 1.5, INF, -INF, 0]
    for tag, data in [("mixed", MIXED), ("zeros", [[0.0, 0.0], [0.0, 1.0]])]
]


@pytest.mark.parametrize("name,fn,data", PARITY, ids=[c[0] for c in PARITY])
def test_gradients_match_torch(torch, name, fn, data):
    xe = leaf(data)
    xt = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    ye, yt = fn(ember, xe), fn(torch, xt)
    assert tuple(ye.shape) == tuple(yt.shape)
    g = np.random.default_rng(len(name)).uniform(-1, 1, tuple(yt.shape))
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    if not name.startswith("quantile") and not name.startswith("nanquantile"):
        assert ye.grad_fn.name() == yt.grad_fn.name()
    if xt.grad is None:
        assert xe.grad is None
        return
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12,
                               equal_nan=True)


COMPLEX = [
    ("sum", lambda m, x: m.sum(x, 1)),
    ("mean", lambda m, x: m.mean(x)),
    ("prod", lambda m, x: m.prod(x, 1)),
    ("cumsum", lambda m, x: m.cumsum(x, 0)),
    ("cumprod", lambda m, x: m.cumprod(x, 1)),
    ("var", lambda m, x: m.var(x, 1)),
    ("std", lambda m, x: m.std(x)),
    ("norm", lambda m, x: m.norm(x, dim=0)),
    ("norm1", lambda m, x: m.norm(x, p=1)),
    ("norm3", lambda m, x: m.norm(x, p=3, dim=1)),
    ("logsumexp", lambda m, x: m.logsumexp(x, 1)),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1)),
]


@pytest.mark.parametrize("name,fn", COMPLEX, ids=[c[0] for c in COMPLEX])
def test_complex_gradients_match_torch(torch, name, fn):
    rng = np.random.default_rng(7)
    data = rng.uniform(-1, 1, (2, 3)) + 1j * rng.uniform(-1, 1, (2, 3))
    xe = ember.tensor(data, dtype=ember.complex128).requires_grad_()
    xt = torch.tensor(data, dtype=torch.complex128, requires_grad=True)
    ye, yt = fn(ember, xe), fn(torch, xt)
    # A real scalar loss of the (possibly complex) result: sum |y|^2.
    for y in (ye, yt):
        a = y.abs()
        (a * a).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.resolve_conj().numpy(), rtol=1e-10,
                               atol=1e-12)


INPLACE_VIEWS = [
    ("cumsum_row", lambda y: y[1].cumsum_(0)),
    ("cumprod_cols", lambda y: y[:, 1:].cumprod_(1)),
    ("cumprod_transposed", lambda y: y.t().cumprod_(0)),
]


@pytest.mark.parametrize("name,fn", INPLACE_VIEWS, ids=[c[0] for c in INPLACE_VIEWS])
def test_inplace_scans_on_views_match_torch(torch, name, fn):
    data = [[1.0, 2.0, 0.5], [3.0, -1.0, 0.0]]
    grads = []
    for m in (ember, torch):
        x = leaf(data) if m is ember else torch.tensor(data, dtype=torch.float64,
                                                       requires_grad=True)
        y = x * 1
        fn(y)
        (y * y).sum().backward()
        grads.append(np.asarray(x.grad.numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
