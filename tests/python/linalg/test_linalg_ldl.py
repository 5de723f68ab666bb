"""ember.linalg.ldl_factor / ldl_factor_ex / ldl_solve: Bunch-Kaufman LDL^T (symmetric) and
LDL^H (Hermitian) with LAPACK's LD / pivots layout, solves against numpy, 2x2 pivots, singular
D, errors, gradients (with respect to B) and parity with PyTorch."""

import numpy as np
import pytest
from test_linalg_solve import DTYPES, close, rand

import ember
from ember.autograd import gradcheck
from ember.linalg import LinAlgError


def symmetric(shape, dtype, hermitian, seed=0):
    a = rand(shape, dtype, seed)
    at = np.swapaxes(a, -1, -2)
    return a + (np.conj(at) if hermitian else at)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 6, 6), (0, 0), (0, 3, 3), (40, 40)])
def test_ldl_solve_matches_numpy(dtype, hermitian, shape):
    a = symmetric(shape, dtype, hermitian)
    LD, piv = ember.linalg.ldl_factor(ember.tensor(a), hermitian=hermitian)
    n = shape[-1]
    assert LD.shape == shape and piv.shape == shape[:-1] and piv.dtype == ember.int32
    np.testing.assert_array_equal(np.triu(LD.numpy(), 1), 0)  # the upper triangle is zeroed
    p = piv.numpy()
    assert np.all((p != 0) & (np.abs(p) <= n))
    b = rand(shape[:-1] + (3,), dtype, 1)
    X = ember.linalg.ldl_solve(LD, piv, ember.tensor(b), hermitian=hermitian)
    if a.size:
        close(X, np.linalg.solve(a, b), dtype, 1000 if n == 40 else 100)


@pytest.mark.parametrize("hermitian", [False, True])
def test_two_by_two_pivots(hermitian):
    # Zero diagonal entries force 2x2 blocks (negative, repeated pivots).
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])
    LD, piv = ember.linalg.ldl_factor(ember.tensor(a), hermitian=hermitian)
    assert (piv.numpy() < 0).sum() == 2
    b = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(ember.linalg.ldl_solve(LD, piv, ember.tensor(b)).numpy(),
                               np.linalg.solve(a, b), rtol=1e-12, atol=1e-12)


def test_singular_d_and_errors():
    z = np.zeros((2, 2, 2))
    z[0] = np.eye(2)
    LD, piv, info = ember.linalg.ldl_factor_ex(ember.tensor(z))
    assert info.tolist() == [0, 1] and piv.tolist() == [[1, 2], [1, 2]]
    assert type(ember.linalg.ldl_factor_ex(ember.tensor(z))).__name__ == "linalg_ldl_factor_ex"
    with pytest.raises(LinAlgError, match=r"\[linalg.ldl_factor\] \(Batch element 1\): The "
                       r"factorization has been completed, but the block diagonal matrix D is "
                       r"exactly singular \(D\[1,1\] is zero\)"):
        ember.linalg.ldl_factor(ember.tensor(z))
    with pytest.raises(LinAlgError, match=r"\[linalg.ldl_factor_ex\]"):
        ember.linalg.ldl_factor_ex(ember.tensor(z), check_errors=True)
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        ember.linalg.ldl_factor(ember.ones(2, 3))
    with pytest.raises(NotImplementedError, match="Got Int"):
        ember.linalg.ldl_factor(ember.ones(2, 2, dtype=ember.int32))
    LD, piv = ember.linalg.ldl_factor(ember.eye(3))
    with pytest.raises(RuntimeError, match="Expected LD.shape\\[:-1\\] and pivots.shape to be "
                       r"the same, but got pivots with shape \[2\] instead"):
        ember.linalg.ldl_solve(LD, piv[:2], ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for torch.linalg.ldl_solve: "
                       "each A matrix is 3 by 3 but each b matrix is 2 by 2"):
        ember.linalg.ldl_solve(LD, piv, ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expected b and A to have the same dtype"):
        ember.linalg.ldl_solve(LD, piv, ember.ones(3, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"Pivots given to ldl_solve must all satisfy \|pivot\| "
                       r"<= LD.size\(-2\)"):
        ember.linalg.ldl_solve(LD, ember.tensor([5, 1, 1], dtype=ember.int32), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="Pivots given to ldl_solve"):  # unpaired 2x2 marker
        ember.linalg.ldl_solve(LD, ember.tensor([1, 2, -3], dtype=ember.int32), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="The input tensor B must have at least 2 dimensions"):
        ember.linalg.ldl_solve(LD, piv, ember.ones(3))
    # int64 pivots are accepted, as PyTorch does
    np.testing.assert_allclose(
        ember.linalg.ldl_solve(LD, piv.long(), ember.ones(3, 2)).numpy(), np.ones((3, 2)))


def test_broadcasting_and_out():
    a = symmetric((2, 4, 4), ember.float64, False)
    LD, piv = ember.linalg.ldl_factor(ember.tensor(a))
    b = rand((3, 1, 4, 2), ember.float64, 1)
    X = ember.linalg.ldl_solve(LD, piv, ember.tensor(b))
    assert X.shape == (3, 2, 4, 2)
    np.testing.assert_allclose(X.numpy(), np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)
    out = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.ldl_solve(LD, piv, ember.tensor(b), out=out) is out
    LD2, piv2 = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32)
    r = ember.linalg.ldl_factor(ember.tensor(a), out=(LD2, piv2))
    assert type(r).__name__ == "linalg_ldl_factor_out" and r.LD is LD2
    np.testing.assert_array_equal(LD2.numpy(), LD.numpy())


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("hermitian", [False, True])
def test_gradients(dtype, hermitian):
    a = symmetric((4, 4), dtype, hermitian)
    LD, piv = ember.linalg.ldl_factor(ember.tensor(a), hermitian=hermitian)
    B = ember.tensor(rand((4, 2), dtype, 1)).requires_grad_()
    assert gradcheck(lambda b: ember.linalg.ldl_solve(LD, piv, b, hermitian=hermitian), [B])
    # PyTorch defines no derivative for the factorization: reaching its node raises
    A = ember.tensor(a).requires_grad_()
    LD2, _ = ember.linalg.ldl_factor(A, hermitian=hermitian)
    assert LD2.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                       "implemented"):
        LD2.abs().sum().backward()


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("hermitian", [False, True])
def test_torch_parity(dtype, hermitian):
    torch = pytest.importorskip("torch")
    for n, seed in [(5, 0), (9, 1), (80, 2)]:
        a = symmetric((n, n), dtype, hermitian, seed)
        if seed == 1:
            a[0, 0] = a[1, 1] = 0  # 2x2 pivots
        e_LD, e_piv = ember.linalg.ldl_factor(ember.tensor(a), hermitian=hermitian)
        t_LD, t_piv = torch.linalg.ldl_factor(torch.tensor(a), hermitian=hermitian)
        np.testing.assert_array_equal(e_piv.numpy(), t_piv.numpy())
        np.testing.assert_allclose(e_LD.numpy(), t_LD.resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-10)
        b = rand((n, 2), dtype, 3)
        np.testing.assert_allclose(
            ember.linalg.ldl_solve(e_LD, e_piv, ember.tensor(b), hermitian=hermitian).numpy(),
            torch.linalg.ldl_solve(t_LD, t_piv, torch.tensor(b), hermitian=hermitian).numpy(),
            rtol=1e-8, atol=1e-9)
