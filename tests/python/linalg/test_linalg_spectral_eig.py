"""linalg.eig and linalg.eigvals: values against numpy.linalg, A V = V diag(L) with unit-norm
eigenvectors, complex outputs for real inputs, edge cases, errors with PyTorch's messages, out=,
gradients (float64 and complex128, double backward) and parity with PyTorch."""

import numpy as np
import pytest
from linalg_helpers import DTYPES, compare_with_torch, noncontiguous, rand, tol

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


COMPLEX_OF = {
    ember.float32: ember.complex64,
    ember.complex64: ember.complex64,
    ember.float64: ember.complex128,
    ember.complex128: ember.complex128,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 4, 4), (0, 3, 3), (0, 0)])
def test_eig_matches_numpy(dtype, shape):
    a = rand(shape, dtype, seed=1)
    L, V = ember.linalg.eig(ember.tensor(a))
    assert L.dtype == COMPLEX_OF[dtype] and V.dtype == COMPLEX_OF[dtype]
    assert L.shape == shape[:-1] and V.shape == shape
    if not a.size:
        return
    l, v = L.numpy(), V.numpy()
    np.testing.assert_allclose(a @ v, v * l[..., None, :], atol=tol(dtype) * 100)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol(dtype) * 10)
    want = np.linalg.eigvals(a)
    np.testing.assert_allclose(
        np.sort_complex(l.reshape(-1, shape[-1])),
        np.sort_complex(want.reshape(-1, shape[-1])),
        atol=tol(dtype) * 100,
    )
    np.testing.assert_allclose(
        ember.linalg.eigvals(ember.tensor(a)).numpy(), l, atol=tol(dtype) * 10
    )


def test_eig_real_matrix_with_complex_pairs():
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])  # eigenvalues +-i, 2
    L, V = ember.linalg.eig(ember.tensor(rot))
    np.testing.assert_allclose(
        np.sort_complex(L.numpy()), np.sort_complex([1j, -1j, 2]), atol=1e-14
    )
    v = V.numpy()
    np.testing.assert_allclose(rot @ v, v * L.numpy(), atol=1e-14)
    # conjugate eigenvalues have conjugate eigenvectors
    i, j = np.argsort(L.numpy().imag)[[0, 2]]
    np.testing.assert_allclose(v[:, i], v[:, j].conj(), atol=1e-14)
    assert V.stride() == (1, 3)


def test_eig_noncontiguous_and_batched():
    a = rand((40, 6, 6), ember.float64, seed=2)
    L = ember.linalg.eigvals(noncontiguous(a)).numpy()
    for k in range(0, 40, 7):
        np.testing.assert_allclose(
            np.sort_complex(L[k]), np.sort_complex(np.linalg.eigvals(a[k])), atol=1e-12
        )


def test_eig_out_and_errors():
    a = rand((3, 3))
    L, V = ember.empty(0, dtype=ember.complex128), ember.empty(0, dtype=ember.complex128)
    r = ember.linalg.eig(ember.tensor(a), out=(L, V))
    assert r[0] is L and r[1] is V and type(r).__name__ == "linalg_eig_out"
    o = ember.empty(0, dtype=ember.complex128)
    assert ember.linalg.eigvals(ember.tensor(a), out=o) is o
    with pytest.raises(
        RuntimeError,
        match="Expected eigenvalues to be safely castable from "
        "ComplexDouble dtype, but got eigenvalues with dtype Double",
    ):
        ember.linalg.eig(ember.tensor(a), out=(ember.empty(0, dtype=ember.float64), V))
    with pytest.raises(RuntimeError, match=r"\[linalg.eig\] A must be batches of square matrices"):
        ember.linalg.eig(ember.zeros(3, 4))
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Long"):
        ember.linalg.eigvals(ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        ember.linalg.eig(ember.zeros(3, 3, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="input tensor should not contain infs or NaNs"):
        ember.linalg.eig(ember.tensor(np.full((3, 3), np.inf)))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_eig_gradcheck(dtype):
    x = ember.tensor(rand((2, 4, 4), dtype, seed=3)).requires_grad_()
    assert gradcheck(ember.linalg.eigvals, (x,))
    assert gradcheck(lambda a: ember.linalg.eig(a)[1].abs(), (x,))

    def both(a):
        L, V = ember.linalg.eig(a)
        return (V.abs() * L.unsqueeze(-2)).sum(-1)

    assert gradcheck(both, (x,))
    assert gradgradcheck(ember.linalg.eigvals, (x,))
    assert gradgradcheck(lambda a: ember.linalg.eig(a)[1].abs(), (x,))
    L, V = ember.linalg.eig(x)
    assert L.grad_fn.name() == "LinalgEigBackward0"
    with pytest.raises(
        RuntimeError,
        match=r"\[linalg_eig_backward\] The eigenvectors in the "
        "complex case are specified up to multiplication by e\\^\\{i phi\\}",
    ):
        V.real.sum().backward()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig_matches_torch(torch, dtype):
    a = rand((2, 4, 4), getattr(ember, dtype), seed=4)
    compare_with_torch(torch, lambda m, x: m.linalg.eigvals(x).abs(), [a])
    compare_with_torch(torch, lambda m, x: m.linalg.eig(x)[1].abs(), [a], atol=1e-7)
