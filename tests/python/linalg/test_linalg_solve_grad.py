"""Gradients of ember.linalg's solve family: gradcheck in float64 and complex128, gradgradcheck
(PyTorch supports double backward for all of these), node names, the singular det gradient, and
values against PyTorch's gradients (skipped without torch)."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

GRAD_DTYPES = [ember.float64, ember.complex128]


def leaf(shape, dtype, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    if shift:
        a = a + shift * np.eye(shape[-1])
    return ember.tensor(a, dtype=dtype).requires_grad_()


def hermitian_pd(X):
    """A Hermitian positive-definite function of X (so that gradcheck's perturbations of any entry
    stay in the domain of cholesky & co)."""
    n = X.shape[-1]
    return X @ X.mH + n * ember.eye(n, dtype=X.dtype)


# Each case: name -> (function of the leaves, leaf shapes and diagonal shifts).
CASES = {
    "inv": (ember.linalg.inv, [((3, 3), 3.0)]),
    "inv_batched": (ember.linalg.inv, [((2, 3, 3), 3.0)]),
    "inv_ex": (lambda A: ember.linalg.inv_ex(A).inverse, [((3, 3), 3.0)]),
    "det": (ember.linalg.det, [((2, 3, 3), 0.0)]),
    "slogdet": (lambda A: ember.linalg.slogdet(A), [((2, 3, 3), 3.0)]),
    "logabsdet": (lambda A: ember.linalg.slogdet(A).logabsdet, [((3, 3), 3.0)]),
    "solve": (ember.linalg.solve, [((3, 3), 3.0), ((3, 2), 0.0)]),
    "solve_vector": (ember.linalg.solve, [((2, 3, 3), 3.0), ((2, 3), 0.0)]),
    "solve_broadcast": (ember.linalg.solve, [((3, 3), 3.0), ((2, 3, 2), 0.0)]),
    "solve_right": (lambda A, B: ember.linalg.solve(A, B, left=False),
                    [((2, 3, 3), 3.0), ((2, 2, 3), 0.0)]),
    "solve_ex": (lambda A, B: ember.linalg.solve_ex(A, B).result, [((3, 3), 3.0), ((3, 2), 0.0)]),
    "cholesky": (lambda X: ember.linalg.cholesky(hermitian_pd(X)), [((3, 3), 0.0)]),
    "cholesky_upper": (lambda X: ember.linalg.cholesky(hermitian_pd(X), upper=True),
                       [((2, 3, 3), 0.0)]),
    "cholesky_ex": (lambda X: ember.linalg.cholesky_ex(hermitian_pd(X)).L, [((3, 3), 0.0)]),
    "solve_triangular": (lambda A, B: ember.linalg.solve_triangular(A, B, upper=True),
                         [((3, 3), 3.0), ((3, 2), 0.0)]),
    "solve_triangular_right_unit": (
        lambda A, B: ember.linalg.solve_triangular(A, B, upper=False, left=False,
                                                   unitriangular=True),
        [((2, 3, 3), 0.0), ((2, 2, 3), 0.0)]),
    "triangular_solve": (lambda B, A: ember.triangular_solve(B, A, upper=False),
                         [((3, 2), 0.0), ((3, 3), 3.0)]),
    "triangular_solve_transpose": (
        lambda B, A: ember.triangular_solve(B, A, upper=True, transpose=True),
        [((2, 3, 2), 0.0), ((3, 3), 3.0)]),
    # cholesky_solve / cholesky_inverse read one triangle of the factor: differentiate through
    # tril / triu so that the entries they ignore have their zero gradient (as PyTorch's tests).
    "cholesky_solve": (lambda B, L: ember.cholesky_solve(B, L.tril()),
                       [((3, 2), 0.0), ((3, 3), 3.0)]),
    "cholesky_solve_upper": (lambda B, U: ember.cholesky_solve(B, U.triu(), True),
                             [((2, 3, 2), 0.0), ((3, 3), 3.0)]),
    # cholesky_inverse of a true factor (real diagonal: LAPACK's potri, hence PyTorch, ignores
    # the imaginary part of a complex diagonal).
    "cholesky_inverse": (
        lambda X: ember.cholesky_inverse(ember.linalg.cholesky(hermitian_pd(X))), [((3, 3), 0.0)]),
    "cholesky_inverse_upper": (
        lambda X: ember.cholesky_inverse(ember.linalg.cholesky(hermitian_pd(X), upper=True), True),
        [((3, 3), 0.0)]),
}


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name, dtype):
    fn, leaves = CASES[name]
    inputs = [leaf(shape, dtype, seed=i, shift=shift) for i, (shape, shift) in enumerate(leaves)]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize(
    "name", ["inv", "det", "slogdet", "solve", "solve_right", "cholesky", "solve_triangular",
             "triangular_solve", "cholesky_solve", "cholesky_inverse"])
def test_gradgradcheck(name, dtype):
    fn, leaves = CASES[name]
    inputs = [leaf(shape, dtype, seed=i, shift=shift) for i, (shape, shift) in enumerate(leaves)]
    assert gradgradcheck(fn, inputs)


def test_logdet_gradients():
    x = leaf((3, 3), ember.float64, shift=3.0)
    assert gradcheck(lambda A: ember.logdet(hermitian_pd(A)), [x])
    assert gradgradcheck(lambda A: ember.logdet(hermitian_pd(A)), [x])
    z = leaf((2, 3, 3), ember.complex128, shift=3.0)
    assert gradcheck(ember.logdet, [z])


def test_node_names():
    A = leaf((3, 3), ember.float64, shift=3.0)
    B = leaf((3, 2), ember.float64)
    names = {
        "LinalgInvExBackward0": ember.linalg.inv(A),
        "LinalgDetBackward0": ember.linalg.det(A),
        "LinalgSlogdetBackward0": ember.linalg.slogdet(A).logabsdet,
        "LinalgSolveExBackward0": ember.linalg.solve(A, B),
        "LinalgCholeskyExBackward0": ember.linalg.cholesky(hermitian_pd(A)),
        "LinalgSolveTriangularBackward0": ember.linalg.solve_triangular(A, B, upper=True),
        "TriangularSolveBackward0": ember.triangular_solve(B, A).solution,
        "CholeskySolveBackward0": ember.cholesky_solve(B, A),
        "CholeskyInverseBackward0": ember.cholesky_inverse(A),
    }
    for name, t in names.items():
        assert t.grad_fn.name() == name
    # info outputs are integers: no history
    assert ember.linalg.inv_ex(A).info.grad_fn is None
    assert ember.linalg.cholesky_ex(hermitian_pd(A)).info.grad_fn is None


def test_det_gradient_of_singular_matrices():
    # det is C^1: its gradient at a singular A is the cofactor matrix (adj(A)^T), finite.
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    A = ember.tensor(a).requires_grad_()
    ember.linalg.det(A).backward()
    cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j)
                     for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(A.grad.numpy(), cof, atol=1e-6)
    # batched, with a singular element, and with create_graph
    b = np.stack([a, np.eye(3) * 2])
    B = ember.tensor(b).requires_grad_()
    (g,) = ember.autograd.grad(ember.linalg.det(B).sum(), [B], create_graph=True)
    np.testing.assert_allclose(g[0].detach().numpy(), cof, atol=1e-6)
    np.testing.assert_allclose(g[1].detach().numpy(), 4 * np.eye(3), atol=1e-12)
    (gg,) = ember.autograd.grad(g[1].sum(), [B])
    assert np.isfinite(gg.numpy()).all()


def test_out_refused_with_grad():
    A = leaf((3, 3), ember.float64, shift=3.0)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.linalg.solve(A, A.detach(), out=ember.empty(0, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.linalg.slogdet(A, out=(ember.empty(0, dtype=ember.float64),
                                     ember.empty(0, dtype=ember.float64)))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    fn, leaves = CASES[name]
    arrays = [leaf(shape, dtype, seed=i, shift=shift).detach().numpy()
              for i, (shape, shift) in enumerate(leaves)]
    torch_fn = _torch_version(torch, name)
    e_in = [ember.tensor(a).requires_grad_() for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_out, t_out = fn(*e_in), torch_fn(*t_in)
    if not isinstance(e_out, tuple):
        e_out, t_out = (e_out,), (t_out,)
    rng = np.random.default_rng(7)
    e_loss, t_loss = 0, 0
    for e, t in zip(e_out, t_out):
        w = rng.standard_normal(tuple(t.shape))
        e_loss = e_loss + (e * ember.tensor(w)).real.sum() if e.is_complex() else e_loss + (
            e * ember.tensor(w)).sum()
        t_loss = t_loss + (t * torch.tensor(w)).real.sum() if t.is_complex() else t_loss + (
            t * torch.tensor(w)).sum()
    e_loss.backward()
    t_loss.backward()
    for e, t in zip(e_in, t_in):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-10)


def _torch_version(torch, name):
    L = torch.linalg

    def hpd(X):
        return X @ X.mH + X.shape[-1] * torch.eye(X.shape[-1], dtype=X.dtype)

    return {
        "inv": L.inv,
        "inv_batched": L.inv,
        "inv_ex": lambda A: L.inv_ex(A).inverse,
        "det": L.det,
        "slogdet": lambda A: tuple(L.slogdet(A)),
        "logabsdet": lambda A: L.slogdet(A).logabsdet,
        "solve": L.solve,
        "solve_vector": L.solve,
        "solve_broadcast": L.solve,
        "solve_right": lambda A, B: L.solve(A, B, left=False),
        "solve_ex": lambda A, B: L.solve_ex(A, B).result,
        "cholesky": lambda X: L.cholesky(hpd(X)),
        "cholesky_upper": lambda X: L.cholesky(hpd(X), upper=True),
        "cholesky_ex": lambda X: L.cholesky_ex(hpd(X)).L,
        "solve_triangular": lambda A, B: L.solve_triangular(A, B, upper=True),
        "solve_triangular_right_unit": lambda A, B: L.solve_triangular(
            A, B, upper=False, left=False, unitriangular=True),
        "triangular_solve": lambda B, A: tuple(torch.triangular_solve(B, A, upper=False)),
        "triangular_solve_transpose": lambda B, A: tuple(
            torch.triangular_solve(B, A, upper=True, transpose=True)),
        "cholesky_solve": lambda B, L_: torch.cholesky_solve(B, L_.tril()),
        "cholesky_solve_upper": lambda B, U: torch.cholesky_solve(B, U.triu(), True),
        "cholesky_inverse": lambda X: torch.cholesky_inverse(L.cholesky(hpd(X))),
        "cholesky_inverse_upper": lambda X: torch.cholesky_inverse(L.cholesky(hpd(X), upper=True),
                                                                   True),
    }[name]
