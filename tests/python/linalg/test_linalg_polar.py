"""linalg.matrix_sqrth and linalg.polar: values against NumPy references (eigh / svd), the
defining identities (X @ X == A; A == U H, U^H U == I, H Hermitian positive-semidefinite),
edge cases, errors with PyTorch's messages, out=, gradients (float64 and complex128, double
backward, finite at repeated eigenvalues) and parity with PyTorch. Also linalg.matmul and
ember.linalg.__all__."""

import numpy as np
import pytest
from linalg_helpers import DTYPES, NP_DTYPES, adjoint, noncontiguous, rand, tol

import ember
from ember.autograd import gradcheck, gradgradcheck

L = ember.linalg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def spd(shape, dtype, seed=0):
    """Hermitian positive-definite matrices (..., n, n) of `dtype`."""
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a @ adjoint(a) + np.eye(n)).astype(NP_DTYPES[dtype])


def numpy_sqrth(a):
    w, v = np.linalg.eigh(a)
    return (v * np.sqrt(np.maximum(w, 0))[..., None, :]) @ adjoint(v)


def numpy_polar(a):
    w, s, vh = np.linalg.svd(a, full_matrices=False)
    return w @ vh, (adjoint(vh) * s[..., None, :]) @ vh


# ---- matrix_sqrth ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 3, 3)])
def test_matrix_sqrth_values_and_identity(dtype, shape):
    a = spd(shape, dtype)
    x = L.matrix_sqrth(ember.tensor(a))
    assert x.dtype == dtype and x.shape == shape
    xn = x.numpy()
    t = tol(dtype)
    np.testing.assert_allclose(xn, numpy_sqrth(a.astype(np.complex128)), rtol=t * 10, atol=t * 10)
    np.testing.assert_allclose(xn @ xn, a, rtol=t * 10, atol=t * 10)
    np.testing.assert_allclose(xn, adjoint(xn), atol=t * 10)
    assert np.linalg.eigvalsh(xn.astype(np.complex128)).min() > 0


def test_matrix_sqrth_reads_lower_triangle_and_clamps_negative_eigenvalues():
    a = np.array([[4.0, 100.0], [0.0, 9.0]])
    np.testing.assert_allclose(L.matrix_sqrth(ember.tensor(a)).numpy(), np.diag([2.0, 3.0]))
    # A semidefinite matrix and an indefinite one: negative eigenvalues count as zero.
    np.testing.assert_allclose(
        L.matrix_sqrth(ember.tensor(np.diag([1.0, 0.0]))).numpy(), np.diag([1.0, 0.0])
    )
    np.testing.assert_allclose(L.matrix_sqrth(-ember.eye(2, dtype=ember.float64)).numpy(), 0)
    b = np.array([[2.0, 3.0], [3.0, 2.0]])  # eigenvalues 5 and -1
    np.testing.assert_allclose(L.matrix_sqrth(ember.tensor(b)).numpy(), numpy_sqrth(b), atol=1e-12)


def test_matrix_sqrth_edge_cases():
    assert L.matrix_sqrth(ember.zeros(0, 0)).shape == (0, 0)
    assert L.matrix_sqrth(ember.zeros(0, 3, 3)).shape == (0, 3, 3)
    assert L.matrix_sqrth(ember.zeros(2, 0, 0)).shape == (2, 0, 0)
    a = spd((3, 4, 4), ember.float64)
    nc = noncontiguous(a)
    np.testing.assert_allclose(L.matrix_sqrth(nc).numpy(), numpy_sqrth(a), atol=1e-12)
    nan = L.matrix_sqrth(ember.tensor([[4.0, 0.0], [0.0, float("nan")]]))
    assert np.isnan(nan.numpy()).all()


def test_matrix_sqrth_errors():
    with pytest.raises(RuntimeError, match=r"\[linalg.matrix_sqrth\] The input tensor A must have"):
        L.matrix_sqrth(ember.zeros(3))
    with pytest.raises(RuntimeError, match="must be batches of square matrices, but they are 2 by"):
        L.matrix_sqrth(ember.zeros(2, 3))
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex.*Long"):
        L.matrix_sqrth(ember.zeros(2, 2, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="Low precision dtypes not supported. Got Half"):
        L.matrix_sqrth(ember.eye(2, dtype=ember.float16))
    with pytest.raises(TypeError):
        L.matrix_sqrth(ember.eye(2), out=ember.empty(2, 2))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_matrix_sqrth_gradcheck(dtype):
    n = 3
    a = ember.tensor(rand((2, n, n), dtype)).requires_grad_()
    eye = ember.eye(n, dtype=dtype)

    def fn(x):  # a Hermitian positive-definite function of a free input
        return L.matrix_sqrth(x @ x.mH + eye)

    assert gradcheck(fn, (a,))
    assert gradgradcheck(fn, (a,))


def test_matrix_sqrth_gradient_is_finite_at_repeated_eigenvalues():
    # At A = I every eigenvalue repeats: the gradient solves X gA + gA X = herm(G) with X = I.
    g = rand((3, 3), ember.float64, seed=3)
    a = ember.eye(3, dtype=ember.float64).requires_grad_()
    L.matrix_sqrth(a).backward(ember.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), (g + g.T) / 4, atol=1e-12)


def test_matrix_sqrth_gradient_matches_sylvester_solution():
    a = spd((4, 4), ember.float64, seed=2)
    g = rand((4, 4), ember.float64, seed=5)
    t = ember.tensor(a).requires_grad_()
    L.matrix_sqrth(t).backward(ember.tensor(g))
    x = numpy_sqrth(a)
    ga = t.grad.numpy()
    np.testing.assert_allclose(x @ ga + ga @ x, (g + g.T) / 2, atol=1e-10)


# ---- polar ----------------------------------------------------------------------------------

POLAR_SHAPES = [(1, 1), (4, 4), (6, 3), (2, 5, 2), (2, 3, 4, 4), (5, 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", POLAR_SHAPES)
def test_polar_values_and_identities(dtype, shape):
    a = rand(shape, dtype)
    result = L.polar(ember.tensor(a))
    assert type(result).__name__ == "linalg_polar"
    u, h = result
    assert result.U is u and result.H is h
    n = shape[-1]
    assert u.shape == shape and h.shape == shape[:-2] + (n, n)
    assert u.dtype == dtype and h.dtype == dtype
    un, hn = u.numpy(), h.numpy()
    t = tol(dtype) * 10
    want_u, want_h = numpy_polar(a.astype(np.complex128))
    np.testing.assert_allclose(un, want_u, rtol=t, atol=t)
    np.testing.assert_allclose(hn, want_h, rtol=t, atol=t)
    np.testing.assert_allclose(un @ hn, a, rtol=t, atol=t)
    np.testing.assert_allclose(adjoint(un) @ un, np.broadcast_to(np.eye(n), h.shape), atol=t)
    np.testing.assert_allclose(hn, adjoint(hn), atol=t)
    assert np.linalg.eigvalsh(hn.astype(np.complex128)).min() > -t


def test_polar_edge_cases():
    u, h = L.polar(ember.zeros(3, 0))
    assert u.shape == (3, 0) and h.shape == (0, 0)
    u, h = L.polar(ember.zeros(0, 3, 2))
    assert u.shape == (0, 3, 2) and h.shape == (0, 2, 2)
    u, h = L.polar(ember.zeros(2, 2))  # rank 0: H = 0, U still orthogonal
    np.testing.assert_allclose(h.numpy(), 0)
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(2), atol=1e-6)
    a = rand((2, 5, 3), ember.float64)
    u, h = L.polar(noncontiguous(a))
    np.testing.assert_allclose(u.numpy() @ h.numpy(), a, atol=1e-12)
    # The closest matrix with orthonormal columns to an orthogonal matrix is itself.
    q = np.linalg.qr(rand((4, 4), ember.float64))[0]
    u, h = L.polar(ember.tensor(q))
    np.testing.assert_allclose(u.numpy(), q, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), np.eye(4), atol=1e-12)


def test_polar_non_finite_input_raises():
    with pytest.raises(L.LinAlgError, match="non-finite"):
        L.polar(ember.tensor([[1.0, float("nan")], [0.0, 1.0]]))


def test_polar_errors():
    with pytest.raises(RuntimeError, match=r"\[linalg.polar\] The input tensor A must have at"):
        L.polar(ember.zeros(3))
    with pytest.raises(RuntimeError, match="at least as many rows as columns, but got 2 by 3"):
        L.polar(ember.zeros(2, 3))
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex.*Long"):
        L.polar(ember.zeros(2, 2, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="linalg_svd_cpu.*Half"):
        L.polar(ember.eye(2, dtype=ember.float16))
    with pytest.raises(TypeError, match="out must be a tuple of 2 tensors"):
        L.polar(ember.eye(2), out=ember.empty(2, 2))


def test_polar_out():
    a = rand((4, 3), ember.float64)
    u_out, h_out = ember.empty(4, 3, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    result = L.polar(ember.tensor(a), out=(u_out, h_out))
    assert type(result).__name__ == "linalg_polar_out"
    assert result.U is u_out and result.H is h_out
    assert h_out.shape == (3, 3)
    np.testing.assert_allclose(u_out.numpy() @ h_out.numpy(), a, atol=1e-12)
    with pytest.raises(RuntimeError, match="out="):
        L.polar(ember.tensor(a).requires_grad_(), out=(u_out, h_out))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 3), (4, 1)])
def test_polar_gradcheck(dtype, shape):
    a = ember.tensor(rand(shape, dtype, seed=4)).requires_grad_()
    assert gradcheck(lambda x: L.polar(x), (a,))
    assert gradgradcheck(lambda x: L.polar(x), (a,))
    assert gradcheck(lambda x: L.polar(x).U, (a,))
    assert gradcheck(lambda x: L.polar(x).H, (a,))


def test_polar_gradient_is_finite_at_repeated_singular_values():
    # At A = I: U's gradient is the skew part of G (the tangent space of the orthogonal group).
    g = rand((3, 3), ember.float64, seed=6)
    a = ember.eye(3, dtype=ember.float64).requires_grad_()
    L.polar(a).U.backward(ember.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), (g - g.T) / 2, atol=1e-12)


# ---- linalg.matmul and the namespace ---------------------------------------------------------


def test_linalg_matmul_is_matmul():
    a, b = rand((2, 3, 4), ember.float64), rand((4, 5), ember.float64)
    np.testing.assert_allclose(L.matmul(ember.tensor(a), ember.tensor(b)).numpy(), a @ b)
    out = ember.empty(2, 3, 5, dtype=ember.float64)
    assert L.matmul(ember.tensor(a), ember.tensor(b), out=out) is out
    with pytest.raises(RuntimeError):
        L.matmul(ember.zeros(2, 3), ember.zeros(2, 3))


def test_all_lists_every_public_function():
    for name in L.__all__:
        assert callable(getattr(L, name)), name
    namespace = {}
    exec("from ember.linalg import *", namespace)
    assert set(L.__all__) <= set(namespace)
    assert "polar" in L.__all__ and "LinAlgError" in L.__all__


def test_namespace_matches_torch(torch):
    public = {n for n in dir(torch.linalg) if not n.startswith("_") and n != "common_notes"}
    assert public - set(L.__all__) == set()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_torch_parity(torch, dtype):
    e_dtype = getattr(ember, dtype)
    t_dtype = getattr(torch, dtype)
    a = spd((2, 4, 4), e_dtype, seed=8)
    g = rand((2, 4, 4), e_dtype, seed=9)
    e_in, t_in = ember.tensor(a).requires_grad_(), torch.tensor(a, requires_grad=True)
    e_x, t_x = L.matrix_sqrth(e_in), torch.linalg.matrix_sqrth(t_in)
    np.testing.assert_allclose(e_x.detach().numpy(), t_x.detach().numpy(), atol=1e-12)
    e_x.backward(ember.tensor(g))
    t_x.backward(torch.tensor(g, dtype=t_dtype))
    np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.numpy(), atol=1e-12)

    b = rand((2, 5, 3), e_dtype, seed=10)
    gu, gh = rand((2, 5, 3), e_dtype, seed=11), rand((2, 3, 3), e_dtype, seed=12)
    e_in, t_in = ember.tensor(b).requires_grad_(), torch.tensor(b, requires_grad=True)
    (eu, eh), (tu, th) = L.polar(e_in), torch.linalg.polar(t_in)
    np.testing.assert_allclose(eu.detach().numpy(), tu.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(eh.detach().numpy(), th.detach().numpy(), atol=1e-12)
    ember.autograd.backward([eu, eh], [ember.tensor(gu), ember.tensor(gh)])
    torch.autograd.backward([tu, th], [torch.tensor(gu), torch.tensor(gh)])
    np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.numpy(), atol=1e-12)
