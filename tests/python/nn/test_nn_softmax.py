"""softmax / log_softmax / softmin: NumPy references, gradients (gradcheck, gradgradcheck),
dtypes, special values, errors and PyTorch parity."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def np_log_softmax(x, dim):
    m = x.max(axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


def t64(a, requires_grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64)).requires_grad_(requires_grad)


# Shapes exercise the row kernel (reduced dim last), the column-block kernel (reduced dim inner,
# with more than one block of 64 columns) and size-1 dims.
SHAPES_DIMS = [
    ((7,), 0),
    ((4, 5), 1),
    ((4, 5), 0),
    ((3, 4, 130), 1),
    ((2, 3, 5), -1),
    ((1, 1, 3), 2),
    ((5, 1), 1),
]


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("fn,ref", [(F.softmax, np_softmax), (F.log_softmax, np_log_softmax)])
def test_forward_matches_numpy(shape, dim, fn, ref):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 3
    np.testing.assert_allclose(fn(t64(x), dim).numpy(), ref(x, dim), rtol=1e-12, atol=1e-14)
    x32 = x.astype(np.float32)
    got = fn(ember.tensor(x32), dim).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(x32.astype(np.float64), dim), rtol=2e-6, atol=2e-6)


def test_softmin_is_softmax_of_negation():
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_allclose(F.softmin(t64(x), 1).numpy(), np_softmax(-x, 1), rtol=1e-12)
    np.testing.assert_allclose(
        F.softmin(t64(x), 0, dtype=ember.float32).numpy(), np_softmax(-x, 0), rtol=1e-6
    )


def test_top_level_and_method_forms():
    x = t64(np.arange(6.0).reshape(2, 3))
    for a, b in [
        (ember.softmax(x, 1), x.softmax(1)),
        (ember.log_softmax(x, -1), x.log_softmax(-1)),
        (ember.softmax(x, dim=0), F.softmax(x, dim=0)),
    ]:
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert x.softmax(1, dtype=ember.float32).dtype == ember.float32
    assert ember.log_softmax(x, 1, dtype=ember.float32).dtype == ember.float32


def test_dtype_argument_casts_first():
    x = ember.arange(4)
    assert ember.softmax(x, 0, dtype=ember.float64).dtype == ember.float64
    np.testing.assert_allclose(
        ember.softmax(x, 0, dtype=ember.float64).numpy(), np_softmax(np.arange(4.0), 0)
    )
    h = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float16)
    assert ember.softmax(h, 0).dtype == ember.float16
    assert ember.softmax(h, 0, dtype=ember.float32).dtype == ember.float32
    assert ember.softmax(ember.tensor([1.0, 2.0]), 0, dtype=ember.bfloat16).dtype == ember.bfloat16


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_reduced_precision(dtype):
    x = np.random.default_rng(2).standard_normal((3, 70)).astype(np.float32)
    got = ember.log_softmax(ember.tensor(x).to(dtype), 1)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got.float().numpy(), np_log_softmax(x.astype(np.float64), 1), rtol=2e-2, atol=5e-2
    )


def test_special_values():
    inf, nan = float("inf"), float("nan")
    np.testing.assert_array_equal(ember.softmax(t64([1000.0, 0.0]), 0).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(ember.log_softmax(t64([-inf, 0.0]), 0).numpy(), [-inf, 0.0])
    # A row of -inf, a row with +inf or NaN gives NaN (as PyTorch).
    assert np.isnan(ember.softmax(t64([-inf, -inf]), 0).numpy()).all()
    assert np.isnan(ember.softmax(t64([inf, 1.0]), 0).numpy()).all()
    assert np.isnan(ember.softmax(t64([nan, 1.0]), 0).numpy()).all()
    # 0-d and empty tensors.
    assert ember.softmax(t64(3.0), 0).item() == 1.0
    assert ember.log_softmax(t64(3.0), -1).item() == 0.0
    assert ember.softmax(ember.zeros(0, 3), 1).shape == (0, 3)
    assert ember.log_softmax(ember.zeros(3, 0), 1).shape == (3, 0)


def test_non_contiguous_input():
    x = np.random.default_rng(3).standard_normal((5, 6))
    t = t64(x).transpose(0, 1)
    np.testing.assert_allclose(ember.softmax(t, 1).numpy(), np_softmax(x.T, 1), rtol=1e-12)
    np.testing.assert_allclose(
        ember.log_softmax(t64(x)[:, ::2], 0).numpy(), np_log_softmax(x[:, ::2], 0), rtol=1e-12
    )


def test_implicit_dim_warns_and_picks_pytorch_default():
    x = t64(np.random.default_rng(4).standard_normal((2, 3, 4)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    np.testing.assert_allclose(y.numpy(), np_softmax(x.numpy(), 0))  # 3-D: dim 0
    with pytest.warns(UserWarning, match="log_softmax"):
        y = F.log_softmax(x[0])
    np.testing.assert_allclose(y.numpy(), np_log_softmax(x[0].numpy(), 1))  # 2-D: dim 1


def test_errors():
    with pytest.raises(NotImplementedError, match=r"\[softmax\].*int64"):
        ember.softmax(ember.arange(3), 0)
    with pytest.raises(NotImplementedError, match="log_softmax"):
        ember.log_softmax(ember.ones(3, dtype=ember.bool), 0)
    with pytest.raises(NotImplementedError):
        ember.softmax(ember.ones(3, dtype=ember.complex64), 0)
    with pytest.raises(NotImplementedError):
        ember.softmax(ember.ones(3), 0, dtype=ember.int64)
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-2, 1\], but got 2\)",
    ):
        ember.softmax(ember.ones(2, 3), 2)
    with pytest.raises(TypeError):
        ember.softmax(ember.ones(2, 3), 1, dtype="float")


# ---- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax, F.softmin])
@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4, 2), 1), ((5,), 0), ((2, 3, 4), 0)])
def test_gradcheck(fn, shape, dim):
    x = t64(np.random.default_rng(5).standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda t: fn(t, dim), [x])


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_gradgradcheck(fn):
    x = t64(np.random.default_rng(6).standard_normal((3, 4)), requires_grad=True)
    assert gradgradcheck(lambda t: fn(t, 1), [x])
    y = t64(np.random.default_rng(7).standard_normal((2, 3, 2)), requires_grad=True)
    assert gradgradcheck(lambda t: fn(t, 1), [y])


def test_backward_matches_closed_form_and_names():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 5))
    g = rng.standard_normal((4, 5))
    t = t64(x, True)
    y = ember.softmax(t, 1)
    assert y.grad_fn.name() == "SoftmaxBackward0"
    y.backward(t64(g))
    s = np_softmax(x, 1)
    np.testing.assert_allclose(t.grad.numpy(), s * (g - (g * s).sum(1, keepdims=True)), rtol=1e-12)
    t = t64(x, True)
    y = ember.log_softmax(t, 1)
    assert y.grad_fn.name() == "LogSoftmaxBackward0"
    y.backward(t64(g))
    np.testing.assert_allclose(t.grad.numpy(), g - s * g.sum(1, keepdims=True), rtol=1e-12)


def test_gradient_of_dtype_cast_comes_back_in_input_dtype():
    x = ember.randn(3, 4, dtype=ember.float32).requires_grad_()
    ember.softmax(x, 1, dtype=ember.float64).sum().backward()
    assert x.grad.dtype == ember.float32


# ---- PyTorch parity ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape,dim", [((8, 33), 1), ((4, 9, 100), 1), ((6, 5), 0)])
def test_torch_parity(name, shape, dim):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x).requires_grad_()
    ty = getattr(torch.nn.functional, name)(tx, dim)
    ey = getattr(F, name)(ex, dim)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_no_warning_with_explicit_dim():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.softmax(ember.ones(2, 3), dim=1)
