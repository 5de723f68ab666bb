"""linalg.matrix_norm, linalg.norm and linalg.cond: every ord against numpy.linalg, dim /
keepdim / dtype, batches, empty inputs, errors with PyTorch's messages, gradients and parity
with PyTorch."""

import numpy as np
import pytest
from linalg_helpers import DTYPES, compare_with_torch, rand, tol

import ember
from ember.autograd import gradcheck

INF = float("inf")
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, INF, -INF]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_matches_numpy(dtype, ord):
    a = rand((3, 4, 5), dtype, seed=1)
    got = ember.linalg.matrix_norm(ember.tensor(a), ord)
    want = np.linalg.norm(a, ord, axis=(-2, -1))
    np.testing.assert_allclose(got.numpy(), want, rtol=tol(dtype) * 10)
    assert got.dtype == (
        ember.float32 if dtype in (ember.float32, ember.complex64) else ember.float64
    )
    # other dims, keepdim
    got = ember.linalg.matrix_norm(ember.tensor(a), ord, dim=(0, 2), keepdim=True)
    want = np.linalg.norm(a, ord, axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(got.numpy(), want, rtol=tol(dtype) * 10)
    got = ember.linalg.matrix_norm(ember.tensor(a), ord, dim=(-1, 0))
    np.testing.assert_allclose(
        got.numpy(), np.linalg.norm(a, ord, axis=(-1, 0)), rtol=tol(dtype) * 10
    )


def test_matrix_norm_default_dtype_and_errors():
    a = rand((4, 5), seed=2)
    np.testing.assert_allclose(ember.linalg.matrix_norm(ember.tensor(a)).numpy(), np.linalg.norm(a))
    r = ember.linalg.matrix_norm(ember.tensor(a.astype(np.float32)), dtype=ember.float64)
    assert r.dtype == ember.float64
    mn = ember.linalg.matrix_norm
    with pytest.raises(RuntimeError, match="Order 3.0 not supported|Order 3 not supported"):
        mn(ember.tensor(a), 3)
    with pytest.raises(RuntimeError, match="Order abc not supported"):
        mn(ember.tensor(a), "abc")
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        mn(ember.zeros(3))
    with pytest.raises(RuntimeError, match="dims must be different"):
        mn(ember.tensor(a), dim=(1, -1))
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        mn(ember.tensor(a), dim=(0,))
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex tensor"):
        mn(ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="dtype should be real for real inputs"):
        mn(ember.tensor(a), dtype=ember.complex128)
    with pytest.raises(RuntimeError, match="should be convertible without narrowing"):
        mn(ember.tensor(a), dtype=ember.float32)


def test_norm_dispatch():
    a = rand((3, 4), seed=3)
    v = rand((5,), seed=4)
    norm = ember.linalg.norm
    np.testing.assert_allclose(norm(ember.tensor(a)).numpy(), np.linalg.norm(a))
    np.testing.assert_allclose(norm(ember.tensor(v), 3).numpy(), np.linalg.norm(v, 3))
    for ord in MATRIX_ORDS:
        np.testing.assert_allclose(norm(ember.tensor(a), ord).numpy(), np.linalg.norm(a, ord))
    np.testing.assert_allclose(
        norm(ember.tensor(a), 2, dim=1).numpy(), np.linalg.norm(a, 2, axis=1)
    )
    np.testing.assert_allclose(
        norm(ember.tensor(a), INF, dim=(0, 1)).numpy(), np.linalg.norm(a, INF)
    )
    b = rand((2, 3, 4), seed=5)
    np.testing.assert_allclose(norm(ember.tensor(b)).numpy(), np.linalg.norm(b.ravel()))
    np.testing.assert_allclose(
        norm(ember.tensor(b), "nuc", dim=(1, 2), keepdim=True).numpy(),
        np.linalg.norm(b, "nuc", axis=(1, 2), keepdims=True),
    )
    o = ember.empty(0, dtype=ember.float64)
    assert norm(ember.tensor(a), out=o) is o
    with pytest.raises(
        RuntimeError,
        match="If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
    ):
        norm(ember.tensor(b), 2)
    with pytest.raises(RuntimeError, match="If dim is specified, it must be of length 1 or 2"):
        norm(ember.tensor(b), dim=(0, 1, 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [None, "fro", "nuc", 1, -1, 2, -2, INF, -INF])
def test_cond_matches_numpy(dtype, p):
    a = rand((2, 4, 4), dtype, seed=6) + 2 * np.eye(4)
    got = ember.linalg.cond(ember.tensor(a), p)
    np.testing.assert_allclose(got.numpy(), np.linalg.cond(a, p), rtol=tol(dtype) * 100)


def test_cond_edge_cases():
    rect = rand((5, 3), seed=7)
    np.testing.assert_allclose(ember.linalg.cond(ember.tensor(rect)).numpy(), np.linalg.cond(rect))
    singular = np.zeros((3, 3))
    assert ember.linalg.cond(ember.tensor(singular), 1).item() == INF
    assert ember.linalg.cond(ember.zeros(2, 0, 0)).tolist() == [0.0, 0.0]
    with pytest.raises(
        RuntimeError,
        match=r"linalg.cond\(ord=1\)\] A must be batches of square "
        "matrices, but they are 5 by 3 matrices",
    ):
        ember.linalg.cond(ember.tensor(rect), 1)
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: 3"):
        ember.linalg.cond(ember.tensor(singular), 3)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        ember.linalg.cond(ember.zeros(3))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_norms_gradcheck(dtype):
    x = ember.tensor(rand((3, 4), dtype, seed=8)).requires_grad_()
    for ord in MATRIX_ORDS:
        assert gradcheck(lambda a: ember.linalg.matrix_norm(a, ord), (x,)), ord
    sq = ember.tensor(rand((3, 3), dtype, seed=9) + 2 * np.eye(3)).requires_grad_()
    for p in [None, "fro", 1, -2]:
        assert gradcheck(lambda a: ember.linalg.cond(a, p), (sq,)), p
    assert gradcheck(lambda a: ember.linalg.norm(a, dim=1), (x,))


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -1, INF])
def test_norms_match_torch(torch, ord):
    a = rand((2, 3, 4), ember.complex128, seed=10)
    compare_with_torch(torch, lambda m, x: m.linalg.matrix_norm(x, ord), [a])
    sq = rand((3, 3), seed=11) + 2 * np.eye(3)
    if ord in (2, "nuc"):
        compare_with_torch(torch, lambda m, x: m.linalg.cond(x, ord), [sq])
    else:
        # PyTorch's cond cannot backpropagate through these ords (it fills inv's result in
        # place); compare values only. Ember's gradient is checked by gradcheck above.
        np.testing.assert_allclose(
            ember.linalg.cond(ember.tensor(sq), ord).numpy(),
            torch.linalg.cond(torch.tensor(sq), ord).numpy(),
            rtol=1e-12,
        )


# ---- torch.norm's matrix-norm cases ----------------------------------------------------------


def test_top_level_norm_nuc_is_matrix_norm():
    a = rand((2, 3, 4), ember.float64)
    want = np.linalg.norm(a, "nuc", axis=(1, 2))
    np.testing.assert_allclose(ember.norm(ember.tensor(a), p="nuc", dim=(1, 2)).numpy(), want)
    np.testing.assert_allclose(
        ember.tensor(a).norm("nuc", dim=(-2, -1), keepdim=True).numpy(), want[:, None, None]
    )
    np.testing.assert_allclose(
        ember.norm(ember.tensor(a[0]), "nuc").numpy(), np.linalg.norm(a[0], "nuc")
    )
    # PyTorch routes these to linalg.matrix_norm, which raises.
    with pytest.raises(RuntimeError, match=r"\[linalg.matrix_norm\] dim must be a 2-tuple"):
        ember.norm(ember.tensor(a), p="nuc")
    with pytest.raises(RuntimeError, match=r"\[linalg.matrix_norm\] dim must be a 2-tuple"):
        ember.norm(ember.tensor(a), p="fro", dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="Order bad not supported"):
        ember.norm(ember.tensor(a), p="bad")


def test_top_level_norm_nuc_gradient():
    a = ember.tensor(rand((3, 4), ember.float64)).requires_grad_()
    assert gradcheck(lambda x: ember.norm(x, "nuc"), (a,))
