"""ember.linalg's LU family: lu, lu_factor(_ex), lu_solve, lu_unpack (and the deprecated
ember.lu_solve / Tensor.lu_solve): factor identities, LAPACK's pivots and infos, rectangular and
empty inputs, pivot=False, errors, gradients and parity with PyTorch."""

import numpy as np
import pytest
from test_linalg_solve import DTYPES, NP, close, rand, well_conditioned

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.linalg import LinAlgError

LU_SHAPES = [(3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 1, 4, 6), (0, 0), (0, 3), (3, 0), (0, 2, 2),
             (1, 1)]


def reference_getrf(a):
    """Unblocked getrf (LAPACK's pivot choice: max |re| + |im|) on one matrix."""
    a = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).copy()
    m, n = a.shape
    piv = []
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j].real) + np.abs(a[j:, j].imag)))
        piv.append(p + 1)
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(piv, dtype=np.int32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_reconstructs(dtype, shape):
    a = rand(shape, dtype)
    P, L, U = ember.linalg.lu(ember.tensor(a))
    m, n = shape[-2:]
    k = min(m, n)
    assert P.shape == shape[:-2] + (m, m) and L.shape == shape[:-2] + (m, k)
    assert U.shape == shape[:-2] + (k, n)
    close(P @ L @ U, a, dtype, 10)
    l, u = L.numpy(), U.numpy()
    np.testing.assert_array_equal(np.triu(l, 1), 0)
    np.testing.assert_array_equal(np.tril(u, -1), 0)
    if k:
        np.testing.assert_array_equal(np.diagonal(l, axis1=-2, axis2=-1), 1)
    # lu_factor + lu_unpack gives the same factors
    LU, piv = ember.linalg.lu_factor(ember.tensor(a))
    assert piv.dtype == ember.int32 and piv.shape == shape[:-2] + (k,)
    P2, L2, U2 = ember.lu_unpack(LU, piv)
    np.testing.assert_array_equal(P2.numpy(), P.numpy())
    close(L2, l, dtype)
    close(U2, u, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (4, 6), (6, 4)])
def test_lu_factor_matches_lapack_pivoting(dtype, shape):
    a = rand(shape, dtype, 3)
    LU, piv = ember.linalg.lu_factor(ember.tensor(a))
    ref_lu, ref_piv = reference_getrf(a)
    np.testing.assert_array_equal(piv.numpy(), ref_piv)
    close(LU, ref_lu.astype(a.dtype), dtype, 10)
    assert LU.stride()[-2:] == (1, shape[0])  # column-major, as PyTorch's


def test_lu_of_larger_matrices_uses_the_recursive_algorithm():
    for n in (40, 100):
        a = rand((n, n), ember.float64, n)
        LU, piv = ember.linalg.lu_factor(ember.tensor(a))
        ref_lu, ref_piv = reference_getrf(a)
        np.testing.assert_array_equal(piv.numpy(), ref_piv)
        np.testing.assert_allclose(LU.numpy(), ref_lu, rtol=1e-9, atol=1e-11)


def test_singular_factorizations():
    z = np.zeros((2, 2, 2))
    z[0] = np.eye(2)
    LU, piv, info = ember.linalg.lu_factor_ex(ember.tensor(z))
    assert type(ember.linalg.lu_factor_ex(ember.tensor(z))).__name__ == "linalg_lu_factor_ex"
    assert info.tolist() == [0, 1] and piv.tolist() == [[1, 2], [1, 2]]
    msg = (r"\(Batch element 1\): U\[1,1\] is zero and using it on lu_solve would result in a "
           r"division by zero")
    with pytest.raises(RuntimeError, match=r"\[linalg.lu_factor\] " + msg):
        ember.linalg.lu_factor(ember.tensor(z))
    with pytest.raises(RuntimeError, match=r"\[linalg.lu_factor_ex\] " + msg):
        ember.linalg.lu_factor_ex(ember.tensor(z), check_errors=True)
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert ember.linalg.lu_factor_ex(ember.tensor(s)).info.item() == 2
    P, L, U = ember.linalg.lu(ember.tensor(z))  # linalg.lu never raises
    np.testing.assert_allclose((P @ L @ U).numpy(), z)
    with pytest.raises(LinAlgError):
        ember.linalg.lu_factor(ember.tensor(s))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_without_pivoting(dtype):
    a = well_conditioned((2, 4, 4), dtype)
    P, L, U = ember.linalg.lu(ember.tensor(a), pivot=False)
    assert P.shape == (2, 0, 0)
    close(L @ U, a, dtype, 10)
    LU, piv = ember.linalg.lu_factor(ember.tensor(a), pivot=False)
    assert piv.tolist() == [[1, 2, 3, 4]] * 2
    close(ember.linalg.lu_solve(LU, piv, ember.eye(4, dtype=dtype)), np.linalg.inv(a), dtype, 10)
    big = rand((70, 50), dtype) + 100 * np.eye(70, 50, dtype=NP[dtype])  # past one kernel block
    _, L, U = ember.linalg.lu(ember.tensor(big), pivot=False)
    close(L @ U, big, dtype, 100)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("nrhs", [1, 2])  # one right-hand side takes the trsv path
def test_lu_solve(dtype, left, adjoint, nrhs):
    a = well_conditioned((2, 4, 4), dtype)
    b = rand((3, 1, 4, nrhs) if left else (3, 1, nrhs, 4), dtype, 1)
    LU, piv = ember.linalg.lu_factor(ember.tensor(a))
    X = ember.linalg.lu_solve(LU, piv, ember.tensor(b), left=left, adjoint=adjoint)
    op = np.conj(np.swapaxes(a, -1, -2)) if adjoint else a
    expected = (np.linalg.solve(op, b) if left
                else np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)),
                                 -1, -2))
    assert X.shape == (3, 2) + b.shape[-2:]
    if nrhs == 1:  # large enough for the blocked kernels too
        big = well_conditioned((70, 70), dtype, 2)
        c = rand((70, 1) if left else (1, 70), dtype, 3)
        LU2, piv2 = ember.linalg.lu_factor(ember.tensor(big))
        op2 = np.conj(big.T) if adjoint else big
        X2 = ember.linalg.lu_solve(LU2, piv2, ember.tensor(c), left=left, adjoint=adjoint)
        close(ember.tensor(op2 @ X2.numpy() if left else X2.numpy() @ op2), c, dtype, 100)
    close(X, expected, dtype, 10)


def test_deprecated_lu():
    a = rand((2, 3, 3), ember.float64)
    LU, piv = ember.lu(ember.tensor(a))
    ref_LU, ref_piv = ember.linalg.lu_factor(ember.tensor(a))
    np.testing.assert_array_equal(LU.numpy(), ref_LU.numpy())
    assert len(ember.lu(ember.tensor(a), get_infos=True)) == 3
    assert len(ember.tensor(a).lu(get_infos=True)) == 3
    with pytest.raises(RuntimeError, match="is zero"):
        ember.lu(ember.zeros(2, 2))
    assert ember.lu(ember.zeros(2, 2), get_infos=True)[2].item() == 1


def test_deprecated_lu_solve_forms():
    a = well_conditioned((3, 3), ember.float64)
    b = rand((3, 2), ember.float64, 1)
    LU, piv = ember.linalg.lu_factor(ember.tensor(a))
    expected = np.linalg.solve(a, b)
    np.testing.assert_allclose(ember.lu_solve(ember.tensor(b), LU, piv).numpy(), expected)
    np.testing.assert_allclose(ember.tensor(b).lu_solve(LU, piv).numpy(), expected)


def test_lu_solve_errors():
    LU, piv = ember.linalg.lu_factor(ember.tensor(well_conditioned((3, 3), ember.float32)))
    with pytest.raises(RuntimeError, match=r"\[linalg.lu_solve\] pivots should be a Tensor of "
                       "scalar type torch.int32"):
        ember.linalg.lu_solve(LU, piv.long(), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="Expected LU and B to have the same dtype, but found "
                       "LU of type Float and B of type Double instead"):
        ember.linalg.lu_solve(LU, piv, ember.ones(3, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Number of pivots per batch should be same as the "
                       "dimension of the matrix"):
        ember.linalg.lu_solve(LU, piv[:2], ember.ones(3, 2))
    with pytest.raises(RuntimeError, match=r"Expected LU.shape\[:-1\] and pivots.shape to be the "
                       r"same, but got pivots with shape \[2, 3\] instead"):
        ember.linalg.lu_solve(LU, piv.expand(2, 3), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="Pivots given to lu_solve must all be between 1 and"):
        ember.linalg.lu_solve(LU, ember.tensor([0, 1, 2], dtype=ember.int32), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="Pivots given to lu_solve must all be between 1 and"):
        ember.linalg.lu_solve(LU, ember.tensor([4, 1, 2], dtype=ember.int32), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match=r"equation XA = B \(3x3 and 3x2\)"):
        ember.linalg.lu_solve(LU, piv, ember.ones(3, 2), left=False)
    with pytest.raises(RuntimeError, match="The input tensor B must have at least 2 dimensions"):
        ember.linalg.lu_solve(LU, piv, ember.ones(3))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        ember.linalg.lu_solve(LU[:2], piv, ember.ones(3, 2))


def test_lu_unpack_options_and_errors():
    a = rand((3, 3), ember.float64)
    LU, piv = ember.linalg.lu_factor(ember.tensor(a))
    P, L, U = ember.lu_unpack(LU, piv, unpack_data=False)
    assert P.shape == (3, 3) and L.shape == (0,) and U.shape == (0,)
    P, L, U = ember.lu_unpack(LU, piv, unpack_pivots=False)
    assert P.shape == (0,) and L.shape == (3, 3)
    r = ember.lu_unpack(LU_data=LU, LU_pivots=piv)
    assert type(r).__name__ == "lu_unpack"
    with pytest.raises(RuntimeError, match="LU_pivots is expected to be a contiguous tensor of "
                       "torch.int32 dtype"):
        ember.lu_unpack(LU, piv.long())
    with pytest.raises(ValueError, match=r"Expected LU_pivots to have shape \[3\] but got \[2\] "
                       "instead"):
        ember.lu_unpack(LU, piv[:2])
    with pytest.raises(RuntimeError, match="pivots passed to lu_unpack must be between 1 and "
                       r"LU.size\(-2\) inclusive"):
        ember.lu_unpack(LU, ember.tensor([0, 2, 3], dtype=ember.int32))
    with pytest.raises(RuntimeError, match="Expected tensor with 2 or more dimensions"):
        ember.lu_unpack(LU[0], piv)
    with pytest.raises(RuntimeError, match=r"\[linalg.lu\] Expected tensor with 2 or more "
                       r"dimensions. Got size: \[3\] instead"):
        ember.linalg.lu(ember.ones(3))
    with pytest.raises(NotImplementedError):
        ember.linalg.lu_factor(ember.ones(3, 3, dtype=ember.int32))


def test_out_forms_and_return_types():
    a = rand((3, 3), ember.float64)
    LU, piv = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32)
    r = ember.linalg.lu_factor(ember.tensor(a), out=(LU, piv))
    assert type(r).__name__ == "linalg_lu_factor_out" and r.LU is LU and r.pivots is piv
    outs = tuple(ember.empty(0, dtype=ember.float64) for _ in range(3))
    r = ember.linalg.lu(ember.tensor(a), out=outs)
    assert type(r).__name__ == "linalg_lu_out" and r.P is outs[0]
    np.testing.assert_allclose((r.P @ r.L @ r.U).numpy(), a, atol=1e-12)
    with pytest.raises(RuntimeError, match="dtype int, but got long int"):
        ember.linalg.lu_factor(ember.tensor(a), out=(LU, ember.empty(0, dtype=ember.int64)))


# ---- gradients -------------------------------------------------------------------------------


def _leaf(shape, dtype, seed=0, shift=0.0):
    a = rand(shape, dtype, seed)
    if shift:
        a = a + shift * np.eye(shape[-1], dtype=a.dtype)
    return ember.tensor(a).requires_grad_()


GRAD_CASES = {
    "lu_factor": (lambda A: ember.linalg.lu_factor(A).LU, [(2, 3, 3)]),
    "lu_factor_ex": (lambda A: ember.linalg.lu_factor_ex(A).LU, [(3, 3)]),
    "lu": (lambda A: tuple(ember.linalg.lu(A))[1:], [(3, 3)]),
    "lu_wide": (lambda A: tuple(ember.linalg.lu(A))[1:], [(3, 5)]),
    "lu_tall": (lambda A: tuple(ember.linalg.lu(A))[1:], [(2, 5, 3)]),
    "lu_no_pivot": (lambda A: tuple(ember.linalg.lu(A, pivot=False))[1:], [(3, 3)]),
    "lu_unpack": (lambda A: tuple(ember.lu_unpack(*ember.linalg.lu_factor(A)))[1:], [(3, 3)]),
    "lu_unpack_wide": (lambda A: tuple(ember.lu_unpack(*ember.linalg.lu_factor(A)))[1:],
                       [(2, 3, 4)]),
    "lu_unpack_tall": (lambda A: tuple(ember.lu_unpack(*ember.linalg.lu_factor(A)))[1:],
                       [(4, 3)]),
    "lu_solve": (lambda A, B: ember.linalg.lu_solve(*ember.linalg.lu_factor(A), B),
                 [(3, 3), (3, 2)]),
    "lu_solve_right_adjoint": (
        lambda A, B: ember.linalg.lu_solve(*ember.linalg.lu_factor(A), B, left=False,
                                           adjoint=True), [(2, 3, 3), (2, 2, 3)]),
    "lu_solve_adjoint": (
        lambda A, B: ember.linalg.lu_solve(*ember.linalg.lu_factor(A), B, adjoint=True),
        [(3, 3), (3, 2)]),
    "lu_solve_right": (
        lambda A, B: ember.linalg.lu_solve(*ember.linalg.lu_factor(A), B, left=False),
        [(3, 3), (2, 3)]),
}


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(name, dtype):
    fn, shapes = GRAD_CASES[name]
    inputs = [_leaf(s, dtype, seed=i, shift=3.0 if i == 0 and name == "lu_no_pivot" else 0.0)
              for i, s in enumerate(shapes)]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["lu_factor", "lu", "lu_solve", "lu_unpack"])
def test_gradgradcheck(name):
    fn, shapes = GRAD_CASES[name]
    inputs = [_leaf(s, ember.float64, seed=i) for i, s in enumerate(shapes)]
    assert gradgradcheck(fn, inputs)


def test_lu_solve_gradient_with_respect_to_the_packed_factors():
    # LU as a leaf: lu_solve reads its strict lower part as L and its upper part as U.
    lu = _leaf((3, 3), ember.float64, shift=3.0)
    piv = ember.tensor([2, 2, 3], dtype=ember.int32)
    b = _leaf((3, 2), ember.float64, seed=1)
    assert gradcheck(lambda LU, B: ember.linalg.lu_solve(LU, piv, B), [lu, b])
    assert gradcheck(lambda LU, B: ember.linalg.lu_solve(LU, piv, B, adjoint=True, left=False),
                     [lu, _leaf((2, 3), ember.float64, seed=2)])


def test_node_names():
    A = _leaf((3, 3), ember.float64)
    LU, piv = ember.linalg.lu_factor(A)
    assert LU.grad_fn.name() == "LinalgLuFactorExBackward0" and piv.grad_fn is None
    P, L, U = ember.linalg.lu(A)
    assert P.grad_fn is None and L.grad_fn.name() == "LinalgLuBackward0"
    P, L, U = ember.lu_unpack(LU, piv)
    assert P.grad_fn is None and U.grad_fn.name() == "LuUnpackBackward0"
    assert ember.linalg.lu_solve(LU, piv, A).grad_fn.name() == "LinalgLuSolveBackward0"


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_torch_parity(dtype):
    torch = pytest.importorskip("torch")
    a = rand((2, 4, 4), dtype, 11)
    e_LU, e_piv = ember.linalg.lu_factor(ember.tensor(a))
    t_LU, t_piv = torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_array_equal(e_piv.numpy(), t_piv.numpy())
    np.testing.assert_allclose(e_LU.numpy(), t_LU.numpy(), rtol=1e-12, atol=1e-12)
    for name, tf in _torch_cases(torch).items():
        fn, shapes = GRAD_CASES[name]
        arrays = [rand(s, dtype, i) for i, s in enumerate(shapes)]
        e_in = [ember.tensor(x).requires_grad_() for x in arrays]
        t_in = [torch.tensor(x, requires_grad=True) for x in arrays]
        e_out, t_out = fn(*e_in), tf(*t_in)
        e_out = e_out if isinstance(e_out, tuple) else (e_out,)
        t_out = t_out if isinstance(t_out, tuple) else (t_out,)
        rng = np.random.default_rng(5)
        e_loss = t_loss = 0
        for e, t in zip(e_out, t_out):
            expected = t.detach().resolve_conj().numpy()
            np.testing.assert_allclose(e.detach().numpy(), expected, rtol=1e-10, atol=1e-12,
                                       err_msg=name)
            w = rng.standard_normal(tuple(t.shape))
            e_loss = e_loss + (e * ember.tensor(w)).real.sum()
            t_loss = t_loss + (t * torch.tensor(w)).real.sum()
        e_loss.backward()
        t_loss.backward()
        for e, t in zip(e_in, t_in):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy(), rtol=1e-9,
                                       atol=1e-10, err_msg=name)


def _torch_cases(torch):
    """PyTorch versions of GRAD_CASES (CPU PyTorch has no LU without pivoting)."""
    L = torch.linalg
    return {
        "lu_factor": lambda A: L.lu_factor(A).LU,
        "lu_factor_ex": lambda A: L.lu_factor_ex(A).LU,
        "lu": lambda A: tuple(L.lu(A))[1:],
        "lu_wide": lambda A: tuple(L.lu(A))[1:],
        "lu_tall": lambda A: tuple(L.lu(A))[1:],
        "lu_unpack": lambda A: tuple(torch.lu_unpack(*L.lu_factor(A)))[1:],
        "lu_unpack_wide": lambda A: tuple(torch.lu_unpack(*L.lu_factor(A)))[1:],
        "lu_unpack_tall": lambda A: tuple(torch.lu_unpack(*L.lu_factor(A)))[1:],
        "lu_solve": lambda A, B: L.lu_solve(*L.lu_factor(A), B),
        "lu_solve_right_adjoint": lambda A, B: L.lu_solve(*L.lu_factor(A), B, left=False,
                                                          adjoint=True),
        "lu_solve_adjoint": lambda A, B: L.lu_solve(*L.lu_factor(A), B, adjoint=True),
        "lu_solve_right": lambda A, B: L.lu_solve(*L.lu_factor(A), B, left=False),
    }
