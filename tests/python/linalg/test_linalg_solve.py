"""ember.linalg's solve family (values, layouts, errors): cholesky(_ex), inv(_ex), det, slogdet,
logdet, solve(_ex), solve_triangular, triangular_solve, cholesky_solve, cholesky_inverse and the
top-level aliases, against numpy.linalg. Gradients: test_linalg_solve_grad.py; the LU and LDL
families: test_linalg_lu.py."""

import numpy as np
import pytest
from linalg_helpers import NP_DTYPES as NP
from linalg_helpers import randn as rand

import ember
from ember.linalg import LinAlgError

DTYPES = [ember.float32, ember.float64, ember.complex64, ember.complex128]


def tol(dtype):
    return 1e-4 if dtype in (ember.float32, ember.complex64) else 1e-10


def well_conditioned(shape, dtype, seed=0):
    """Random matrices with a dominant diagonal (condition numbers near 1)."""
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a + 2 * n * np.eye(n)).astype(NP[dtype]) if n else a


def spd(shape, dtype, seed=0):
    """Hermitian positive-definite matrices."""
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(NP[dtype])


def close(actual, expected, dtype, scale=1.0):
    t = tol(dtype) * scale
    np.testing.assert_allclose(actual.numpy(), expected, rtol=t, atol=t)


SHAPES = [(0, 0), (1, 1), (3, 3), (2, 4, 4), (0, 3, 3), (2, 0, 2, 2)]


# ---- inv / det / slogdet / logdet ------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_inv_det_slogdet_match_numpy(dtype, shape):
    a = well_conditioned(shape, dtype)
    A = ember.tensor(a)
    inv = ember.linalg.inv(A)
    assert inv.shape == A.shape and inv.dtype == dtype
    close(inv, np.linalg.inv(a) if a.size else a, dtype)
    det = ember.linalg.det(A)
    assert det.shape == A.shape[:-2] and det.dtype == dtype
    expected_det = np.linalg.det(a) if a.size else np.ones(shape[:-2], dtype=a.dtype)
    close(det, expected_det, dtype, scale=10)
    sign, logabsdet = ember.linalg.slogdet(A)
    assert logabsdet.dtype == (ember.float32 if dtype in (ember.float32, ember.complex64)
                               else ember.float64)
    if a.size:
        es, el = np.linalg.slogdet(a)
        close(sign, es, dtype)
        close(logabsdet, el, dtype)
    else:
        assert np.all(sign.numpy() == 1) and np.all(logabsdet.numpy() == 0)


def test_inverse_identity_and_aliases():
    a = well_conditioned((3, 5, 5), ember.float64)
    A = ember.tensor(a)
    eye = np.broadcast_to(np.eye(5), (3, 5, 5))
    np.testing.assert_allclose((A @ ember.linalg.inv(A)).numpy(), eye, atol=1e-12)
    np.testing.assert_allclose(ember.inverse(A).numpy(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(A.inverse().numpy(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(ember.det(A).numpy(), np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(A.det().numpy(), np.linalg.det(a), rtol=1e-12)
    r = ember.slogdet(A)
    assert type(r).__name__ == "slogdet"
    assert type(A.slogdet()).__name__ == "slogdet"
    assert type(ember.linalg.slogdet(A)).__name__ == "linalg_slogdet"
    np.testing.assert_allclose(r.logabsdet.numpy(), np.linalg.slogdet(a)[1], rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_inputs(dtype):
    a = well_conditioned((4, 4, 4), dtype)
    # transposed and strided views of the same matrices
    A = ember.tensor(a).mT
    close(ember.linalg.inv(A), np.linalg.inv(np.swapaxes(a, -1, -2)), dtype)
    wide = np.concatenate([a, a], axis=-1)
    close(ember.linalg.det(ember.tensor(wide)[..., ::2]), np.linalg.det(wide[..., ::2]), dtype, 10)
    b = rand((4, 4, 2), dtype, 1)
    B = ember.tensor(np.swapaxes(b, -1, -2).copy()).mT
    close(ember.linalg.solve(A, B), np.linalg.solve(np.swapaxes(a, -1, -2), b), dtype)


def test_singular_matrices():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    S = ember.tensor(s)
    assert ember.linalg.det(S).item() == 0
    sign, logabsdet = ember.linalg.slogdet(S)
    assert sign.item() == 0 and logabsdet.item() == -np.inf
    with pytest.raises(LinAlgError, match=r"\[linalg.inv\] The diagonal element 2 is zero, the "
                       r"inversion could not be completed because the input matrix is singular"):
        ember.linalg.inv(S)
    batch = ember.tensor(np.stack([np.eye(2), s]))
    with pytest.raises(LinAlgError, match=r"\(Batch element 1\): The diagonal element 2 is zero"):
        ember.linalg.inv(batch)
    inverse, info = ember.linalg.inv_ex(batch)
    assert info.dtype == ember.int32 and info.tolist() == [0, 2]
    np.testing.assert_allclose(inverse[0].numpy(), np.eye(2))
    with pytest.raises(LinAlgError, match=r"\[linalg.inv_ex\] \(Batch element 1\)"):
        ember.linalg.inv_ex(batch, check_errors=True)
    assert issubclass(LinAlgError, RuntimeError)


def test_logdet():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert ember.logdet(ember.tensor(a)).item() == pytest.approx(np.log(5.0))
    assert ember.tensor(a).logdet().item() == pytest.approx(np.log(5.0))
    assert np.isnan(ember.logdet(ember.tensor([[-1.0, 0.0], [0.0, 1.0]])).item())
    assert ember.logdet(ember.tensor([[0.0, 0.0], [0.0, 1.0]])).item() == -np.inf
    c = well_conditioned((3, 3, 3), ember.complex128)
    np.testing.assert_allclose(ember.logdet(ember.tensor(c)).numpy(), np.log(np.linalg.det(c)),
                               rtol=1e-12)


def test_ill_conditioned_solve_residual():
    n = 8
    hilbert = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)
    b = np.ones((n, 1))
    x = ember.linalg.solve(ember.tensor(hilbert), ember.tensor(b)).numpy()
    np.testing.assert_allclose(x, np.linalg.solve(hilbert, b), rtol=1e-4)
    assert np.abs(hilbert @ x - b).max() < 1e-8


def test_large_and_padded_work_layouts():
    # 512 float64 rows span 4 KiB: the work matrices are padded (linalg_solve.h); results and
    # factors come back in the plain column-major layout.
    a = well_conditioned((512, 512), ember.float64)
    b = rand((512, 3), ember.float64)
    A = ember.tensor(a)
    np.testing.assert_allclose(ember.linalg.solve(A, ember.tensor(b)).numpy(),
                               np.linalg.solve(a, b), rtol=1e-9, atol=1e-12)
    inv = ember.linalg.inv(A)
    assert inv.is_contiguous() or inv.mT.is_contiguous()
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(a), rtol=1e-9, atol=1e-13)
    LU, _ = ember.linalg.lu_factor(A)
    assert LU.stride() == (1, 512)


# ---- solve -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((3, 3), (3, 2)),
        ((3, 3), (3,)),
        ((2, 3, 3), (2, 3)),  # B.shape == A.shape[:-1]: a batch of vectors
        ((2, 3, 3), (3,)),
        ((2, 1, 3, 3), (4, 3, 2)),  # broadcast batch dims
        ((3, 3), (5, 3, 1)),
        ((0, 3, 3), (3, 2)),
        ((0, 0), (0, 4)),
        ((2, 2, 2), (2, 2)),  # vector case wins, as PyTorch's rule
    ],
)
def test_solve_matches_numpy(dtype, a_shape, b_shape):
    a = well_conditioned(a_shape, dtype)
    b = rand(b_shape, dtype, 1)
    X = ember.linalg.solve(ember.tensor(a), ember.tensor(b))
    vector = len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and b_shape == a_shape[:-1])
    expected = (np.linalg.solve(a, b[..., None])[..., 0] if vector else np.linalg.solve(a, b))
    assert X.shape == expected.shape and X.dtype == dtype
    close(X, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_left_false_and_identity(dtype):
    a = well_conditioned((2, 4, 4), dtype)
    b = rand((2, 3, 4), dtype, 1)
    X = ember.linalg.solve(ember.tensor(a), ember.tensor(b), left=False)
    close(ember.tensor(X.numpy() @ a), b, dtype, 10)
    B = rand((2, 4, 3), dtype, 2)
    Y = ember.linalg.solve(ember.tensor(a), ember.tensor(B))
    close(ember.tensor(a) @ Y, B, dtype, 10)


def test_solve_ex_and_errors():
    s = np.stack([np.eye(2), np.zeros((2, 2))])
    result, info = ember.linalg.solve_ex(ember.tensor(s), ember.ones(2, 2, dtype=ember.float64))
    assert info.tolist() == [0, 1] and info.shape == (2,)
    assert type(ember.linalg.solve_ex(ember.eye(2), ember.ones(2))).__name__ == "linalg_solve_ex"
    np.testing.assert_allclose(result[0].numpy(), np.ones(2))
    with pytest.raises(LinAlgError, match=r"\[linalg.solve\] \(Batch element 1\): The solver "
                       r"failed because the input matrix is singular."):
        ember.linalg.solve(ember.tensor(s), ember.ones(2, 2, dtype=ember.float64))
    with pytest.raises(LinAlgError, match=r"\[linalg.solve_ex\]"):
        ember.linalg.solve_ex(ember.tensor(s), ember.ones(2, 2, dtype=ember.float64),
                              check_errors=True)
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation "
                       r"AX = B \(2x2 and 3x1\)"):
        ember.linalg.solve(ember.eye(2), ember.ones(3))
    with pytest.raises(RuntimeError, match=r"equation XA = B \(2x2 and 2x1\)"):
        ember.linalg.solve(ember.eye(2), ember.ones(2), left=False)
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype, but found A "
                       "of type Float and B of type Double instead"):
        ember.linalg.solve(ember.eye(2), ember.ones(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        ember.linalg.solve(ember.ones(3, 2, 2), ember.ones(4, 2, 2))


# ---- errors shared by the family -------------------------------------------------------------

SQUARE_OPS = [
    ("linalg.inv", ember.linalg.inv),
    ("linalg.det", ember.linalg.det),
    ("linalg.slogdet", ember.linalg.slogdet),
    ("linalg.cholesky", ember.linalg.cholesky),
    ("linalg.inv_ex", ember.linalg.inv_ex),
    ("linalg.cholesky_ex", ember.linalg.cholesky_ex),
    ("logdet", ember.logdet),
    ("cholesky_inverse", ember.cholesky_inverse),
]


@pytest.mark.parametrize("name,fn", SQUARE_OPS)
def test_square_matrix_errors(name, fn):
    with pytest.raises(RuntimeError, match=rf"\[{name}\] A must be batches of square matrices, "
                       r"but they are 2 by 3 matrices"):
        fn(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match=rf"\[{name}\] The input tensor A must have at least 2 "
                       "dimensions"):
        fn(ember.ones(3))
    with pytest.raises(NotImplementedError, match=rf"\[{name}\] Expected a floating point or "
                       "complex tensor as input. Got Long"):
        fn(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="Low precision dtypes not supported. Got Half"):
        fn(ember.ones(2, 2, dtype=ember.float16))


def test_out_arguments():
    a = well_conditioned((3, 3), ember.float64)
    A = ember.tensor(a)
    out = ember.empty(0, dtype=ember.float64)
    r = ember.linalg.inv(A, out=out)
    assert r is out and out.shape == (3, 3)
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(a), atol=1e-12)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got "
                       "float instead"):
        ember.linalg.inv(A, out=ember.empty(3, 3))
    sign, logabs = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    r = ember.linalg.slogdet(A, out=(sign, logabs))
    assert type(r).__name__ == "linalg_slogdet_out" and r.sign is sign
    res, info = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32)
    r = ember.linalg.solve_ex(A, A, out=(res, info))
    assert r.result is res and info.shape == ()
    with pytest.raises(RuntimeError, match="dtype int, but got long int"):
        ember.linalg.inv_ex(A, out=(ember.empty(0, dtype=ember.float64),
                                    ember.empty(0, dtype=ember.int64)))
    det = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.det(A, out=det) is det
    L = ember.empty(0, dtype=ember.float64)
    ember.linalg.cholesky(ember.tensor(spd((3, 3), ember.float64)), out=L)
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(spd((3, 3), ember.float64)))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.linalg.inv(A.clone().requires_grad_(), out=ember.empty(0, dtype=ember.float64))


# ---- Cholesky --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_cholesky_matches_numpy(dtype, shape):
    a = spd(shape, dtype)
    A = ember.tensor(a)
    L = ember.linalg.cholesky(A)
    assert L.shape == A.shape and L.dtype == dtype
    close(L, np.linalg.cholesky(a) if a.size else a, dtype)
    U = ember.linalg.cholesky(A, upper=True)
    close(U, np.conj(np.swapaxes(np.linalg.cholesky(a), -1, -2)) if a.size else a, dtype)
    L2, info = ember.linalg.cholesky_ex(A)
    assert info.shape == A.shape[:-2] and info.dtype == ember.int32
    assert np.all(info.numpy() == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_of_non_contiguous_inputs(dtype, upper):
    a = spd((3, 4, 4), dtype)
    expected = np.linalg.cholesky(a)
    if upper:
        expected = np.conj(np.swapaxes(expected, -1, -2))
    A = ember.tensor(np.swapaxes(a, -1, -2).copy()).mT  # a column-major view of a
    assert not A.is_contiguous()
    close(ember.linalg.cholesky(A, upper=upper), expected, dtype)
    padded = np.zeros((3, 4, 8), dtype=a.dtype)
    padded[..., ::2] = a
    strided = ember.tensor(padded)[..., ::2]  # a, every other column of a wider buffer
    close(ember.linalg.cholesky(strided, upper=upper), expected, dtype)


def test_cholesky_reads_one_triangle_only():
    a = spd((4, 4), ember.float64)
    junk_upper = np.tril(a) + np.triu(np.full((4, 4), 7.0), 1)
    junk_lower = np.triu(a) + np.tril(np.full((4, 4), 7.0), -1)
    np.testing.assert_allclose(ember.linalg.cholesky(ember.tensor(junk_upper)).numpy(),
                               np.linalg.cholesky(a), atol=1e-12)
    np.testing.assert_allclose(ember.linalg.cholesky(ember.tensor(junk_lower), upper=True).numpy(),
                               np.linalg.cholesky(a).T, atol=1e-12)


def test_cholesky_not_positive_definite():
    npd = np.array([[1.0, 2.0], [2.0, 1.0]])
    msg = (r"The factorization could not be completed because the input is not "
           r"positive-definite \(the leading minor of order 2 is not positive-definite\)")
    with pytest.raises(LinAlgError, match=r"\[linalg.cholesky\] " + msg):
        ember.linalg.cholesky(ember.tensor(npd))
    batch = ember.tensor(np.stack([np.eye(2), npd, -np.eye(2)]))
    with pytest.raises(LinAlgError, match=r"\(Batch element 1\): " + msg):
        ember.linalg.cholesky(batch)
    L, info = ember.linalg.cholesky_ex(batch)
    assert info.tolist() == [0, 2, 1]
    with pytest.raises(LinAlgError, match=r"\[linalg.cholesky_ex\] \(Batch element 1\)"):
        ember.linalg.cholesky_ex(batch, check_errors=True)
    nan = ember.tensor([[float("nan"), 0.0], [0.0, 1.0]])
    assert ember.linalg.cholesky_ex(nan).info.item() == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(dtype, upper):
    a = spd((2, 4, 4), dtype)
    b = rand((3, 1, 4, 2), dtype, 1)  # broadcasts against the batch of 2
    A = ember.tensor(a)
    F = ember.linalg.cholesky(A, upper=upper)
    X = ember.cholesky_solve(ember.tensor(b), F, upper)
    assert X.shape == (3, 2, 4, 2)
    close(X, np.linalg.solve(a, b), dtype, 10)
    close(ember.tensor(b).cholesky_solve(F, upper), np.linalg.solve(a, b), dtype, 10)
    close(ember.cholesky_inverse(F, upper), np.linalg.inv(a), dtype, 10)
    close(F.cholesky_inverse(upper), np.linalg.inv(a), dtype, 10)
    # row-major factors (a transposed view is used, not copied) give the same results
    Fc = ember.tensor(F.numpy().copy())
    close(ember.cholesky_solve(ember.tensor(b), Fc, upper), np.linalg.solve(a, b), dtype, 10)


def test_cholesky_solve_and_inverse_errors():
    with pytest.raises(RuntimeError, match=r"\[cholesky_solve\] b should have at least 2 "
                       "dimensions, but has 1 dimensions instead"):
        ember.cholesky_solve(ember.ones(2), ember.eye(2))
    with pytest.raises(RuntimeError, match="Expected b and A to have the same dtype, but found b "
                       "of type Float and A of type Double instead."):
        ember.cholesky_solve(ember.ones(2, 2), ember.eye(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for cholesky_solve: each A "
                       "matrix is 2 by 2 but each b matrix is 3 by 2"):
        ember.cholesky_solve(ember.ones(3, 2), ember.eye(2))
    z = ember.zeros(2, 2, 2)
    z[0] = ember.eye(2)
    with pytest.raises(LinAlgError, match=r"\[cholesky_inverse\] \(Batch element 1\): The "
                       "diagonal element 1 is zero"):
        ember.cholesky_inverse(z)
    assert ember.cholesky_inverse(ember.empty(0, 0)).shape == (0, 0)


# ---- triangular solves -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("nrhs", [1, 3])
def test_solve_triangular_matches_numpy(dtype, upper, left, unit, nrhs):
    a = well_conditioned((2, 4, 4), dtype)
    b = rand((3, 1, 4, nrhs) if left else (3, 1, nrhs, 4), dtype, 1)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri[..., np.arange(4), np.arange(4)] = 1
    X = ember.linalg.solve_triangular(ember.tensor(a), ember.tensor(b), upper=upper, left=left,
                                      unitriangular=unit)
    expected = (np.linalg.solve(tri, b) if left
                else np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2),
                                                 np.swapaxes(b, -1, -2)), -1, -2))
    assert X.shape == expected.shape
    close(X, expected, dtype, 10)
    # a column-major A (no transposed view) gives the same result
    Ac = ember.tensor(np.swapaxes(a, -1, -2).copy()).mT
    close(ember.linalg.solve_triangular(Ac, ember.tensor(b), upper=upper, left=left,
                                        unitriangular=unit), expected, dtype, 10)


def test_solve_triangular_errors_and_dtypes():
    with pytest.raises(RuntimeError, match=r"\[linalg.solve_triangular\] The input tensor B must "
                       "have at least 2 dimensions"):
        ember.linalg.solve_triangular(ember.eye(2), ember.ones(2), upper=True)
    with pytest.raises(RuntimeError, match=r"equation AX = B \(2x2 and 3x2\)"):
        ember.linalg.solve_triangular(ember.eye(2), ember.ones(3, 2), upper=True)
    with pytest.raises(RuntimeError, match=r"equation XA = B \(2x2 and 2x3\)"):
        ember.linalg.solve_triangular(ember.eye(2), ember.ones(2, 3), upper=True, left=False)
    with pytest.raises(TypeError):
        ember.linalg.solve_triangular(ember.eye(2), ember.ones(2, 2))  # upper is required
    # PyTorch computes in A's dtype; a complex B with a real A is refused (it would drop imag)
    x = ember.linalg.solve_triangular(ember.eye(2), ember.ones(2, 2, dtype=ember.float64),
                                      upper=True)
    assert x.dtype == ember.float32
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.linalg.solve_triangular(ember.eye(2), ember.ones(2, 2, dtype=ember.complex64),
                                      upper=True)
    # a zero diagonal gives inf/nan, no error (as trsm)
    r = ember.linalg.solve_triangular(ember.zeros(2, 2), ember.ones(2, 2), upper=True)
    assert not np.isfinite(r.numpy()).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_triangular_solve(dtype, transpose, upper):
    a = well_conditioned((2, 3, 3), dtype)
    b = rand((4, 1, 3, 2), dtype, 1)
    tri = np.triu(a) if upper else np.tril(a)
    op = np.swapaxes(tri, -1, -2) if transpose else tri
    r = ember.triangular_solve(ember.tensor(b), ember.tensor(a), upper, transpose)
    assert type(r).__name__ == "triangular_solve"
    close(r.solution, np.linalg.solve(op, b), dtype, 10)
    assert r.cloned_coefficient.shape == (4, 2, 3, 3)
    np.testing.assert_array_equal(r.cloned_coefficient.numpy(), np.broadcast_to(a, (4, 2, 3, 3)))
    r2 = ember.tensor(b).triangular_solve(ember.tensor(a), upper=upper, transpose=transpose)
    close(r2.solution, np.linalg.solve(op, b), dtype, 10)


def test_triangular_solve_errors():
    with pytest.raises(RuntimeError, match="Expected b to have at least 2 dimensions, but it has "
                       "1 dimensions instead"):
        ember.triangular_solve(ember.ones(2), ember.eye(2))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for triangular_solve: each "
                       "A matrix is 2 by 2 but each b matrix is 3 by 2"):
        ember.triangular_solve(ember.ones(3, 2), ember.eye(2))
    with pytest.raises(NotImplementedError):
        ember.triangular_solve(ember.ones(2, 2, dtype=ember.int32), ember.eye(2, dtype=ember.int32))


# ---- parity with PyTorch ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_torch_parity_values(dtype):
    torch = pytest.importorskip("torch")
    a = well_conditioned((3, 5, 5), dtype, 3)
    b = rand((3, 5, 2), dtype, 4)
    s = spd((3, 5, 5), dtype, 5)
    E, T = ember.tensor, torch.tensor
    pairs = [
        (ember.linalg.inv(E(a)), torch.linalg.inv(T(a))),
        (ember.linalg.det(E(a)), torch.linalg.det(T(a))),
        (ember.linalg.slogdet(E(a))[0], torch.linalg.slogdet(T(a))[0]),
        (ember.linalg.solve(E(a), E(b)), torch.linalg.solve(T(a), T(b))),
        (ember.linalg.cholesky(E(s)), torch.linalg.cholesky(T(s))),
        (ember.cholesky_inverse(E(s)), torch.cholesky_inverse(T(s))),
        (ember.linalg.solve_triangular(E(a), E(b), upper=True),
         torch.linalg.solve_triangular(T(a), T(b), upper=True)),
    ]
    for e, t in pairs:
        np.testing.assert_allclose(e.numpy(), t.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
