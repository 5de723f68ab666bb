"""The speed paths of ember.linalg and float64 matmul against their general counterparts and
NumPy: the panelled small-matrix Cholesky (n <= 64) around its panel boundaries and against the
blocked path on the same matrix, and float64 GEMM through OpenBLAS's dgemm (from 8x8x8 up)
against Eigen's (below) on the same products, every operand layout, alpha / beta, batches and
threads."""

import threading

import numpy as np
import pytest
from linalg_helpers import NP_DTYPES as NP
from linalg_helpers import randn as rand

import ember
from ember.linalg import LinAlgError


def tol(dtype):
    return 1e-4 if dtype in (ember.float32, ember.complex64) else 1e-11


def spd(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) / max(n, 1) + np.eye(n)).astype(NP[dtype])


# ---- Cholesky: the panelled small-matrix kernel ------------------------------------------------

CHOL_SIZES = [1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65, 80]


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("n", CHOL_SIZES)
def test_cholesky_panel_boundaries(dtype, n):
    a = spd((3, n, n), dtype, seed=n)
    want = np.linalg.cholesky(a.astype(np.complex128 if dtype.is_complex else np.float64))
    t = tol(dtype) * 10
    L = ember.linalg.cholesky(ember.tensor(a))
    np.testing.assert_allclose(L.numpy(), want, rtol=t, atol=t)
    U = ember.linalg.cholesky(ember.tensor(a), upper=True)
    np.testing.assert_allclose(U.numpy(), np.conj(np.swapaxes(want, -1, -2)), rtol=t, atol=t)
    # column-major (non-contiguous) input takes the other branch of the op
    Lc = ember.linalg.cholesky(ember.tensor(np.swapaxes(a, -1, -2).copy()).mT)
    np.testing.assert_allclose(Lc.numpy(), want, rtol=t, atol=t)


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_cholesky_small_path_matches_blocked_path(dtype):
    # A 64x64 matrix factors on the small-matrix kernel, the same matrix bordered to 65x65 on
    # Eigen's blocked one: the leading 64x64 block of the factor is the same factor.
    a = spd((64, 64), dtype, seed=3)
    big = np.eye(65, dtype=a.dtype)
    big[:64, :64] = a
    small_l = ember.linalg.cholesky(ember.tensor(a)).numpy()
    big_l = ember.linalg.cholesky(ember.tensor(big)).numpy()
    np.testing.assert_allclose(small_l, big_l[:64, :64], rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(big_l[64, :64], 0)


@pytest.mark.parametrize("n", [5, 20, 33, 64])
@pytest.mark.parametrize("bad", ["first", "panel", "trailing", "last"])
def test_cholesky_info_at_every_position(n, bad):
    # The failing minor is reported wherever it lies: first column, inside the first panel, in
    # a trailing panel, or the last column.
    k = {"first": 0, "panel": min(5, n - 1), "trailing": min(17, n - 1), "last": n - 1}[bad]
    a = spd((n, n), ember.float64, seed=1)
    # Make the leading minor of order k + 1 singular-negative: replace row/column k by a
    # combination that drives the Schur complement below zero.
    a[k, k] = a[k, k] - 10.0 * n
    batch = np.stack([spd((n, n), ember.float64, seed=2), a])
    L, info = ember.linalg.cholesky_ex(ember.tensor(batch))
    assert info.tolist() == [0, k + 1]
    with pytest.raises(LinAlgError, match=rf"\(Batch element 1\).*order {k + 1} "):
        ember.linalg.cholesky(ember.tensor(batch))
    Lu, info_u = ember.linalg.cholesky_ex(ember.tensor(batch), upper=True)
    assert info_u.tolist() == [0, k + 1]


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_non_finite(value, upper):
    n = 32
    a = spd((n, n), ember.float64)
    a[20, 20] = value  # on the diagonal, in the third panel
    L, info = ember.linalg.cholesky_ex(ember.tensor(a), upper=upper)
    # NaN and -inf fail the pivot test there; +inf passes it (as in LAPACK: inf > 0), giving an
    # infinite pivot and a zero column below it.
    assert info.item() == (0 if value == np.inf else 21)
    assert np.isfinite(L.numpy()).sum() == n * n - 1
    b = spd((n, n), ember.float64)
    b[25, 3] = b[3, 25] = value  # off the diagonal: the trailing update carries it to pivot 26
    Lb, info_b = ember.linalg.cholesky_ex(ember.tensor(b), upper=upper)
    assert info_b.item() == 26
    assert np.isfinite(Lb.numpy()).sum() == n * n - 29


# ---- float64 GEMM: OpenBLAS dgemm against Eigen -------------------------------------------------

GEMM_SHAPES = [(1, 1, 1), (4, 4, 4), (7, 8, 9), (8, 8, 8), (1, 64, 64), (64, 1, 64), (64, 64, 1),
               (33, 17, 65), (64, 64, 64), (100, 3, 100), (130, 70, 90)]


def _layouts(a, layout):
    if layout == "row":
        return ember.tensor(a)
    if layout == "col":
        return ember.tensor(np.ascontiguousarray(a.T)).mT
    wide = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,))
    wide[..., ::2] = a
    return ember.tensor(wide)[..., ::2]  # strided: copied to a GEMM layout first


@pytest.mark.parametrize("m,k,n", GEMM_SHAPES)
@pytest.mark.parametrize("la", ["row", "col", "strided"])
@pytest.mark.parametrize("lb", ["row", "col"])
def test_float64_gemm_layouts(m, k, n, la, lb):
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    got = (_layouts(a, la) @ _layouts(b, lb)).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)
    # a non-contiguous result (transposed out=)
    out = ember.zeros(n, m, dtype=ember.float64).transpose(0, 1)
    ember.mm(_layouts(a, la), _layouts(b, lb), out=out)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12, atol=1e-12)


def test_float64_gemm_dgemm_matches_eigen():
    # 4x4x4 runs on Eigen, the same product zero-padded to 8x8x8 on dgemm.
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    pa, pb = np.zeros((8, 8)), np.zeros((8, 8))
    pa[:4, :4], pb[:4, :4] = a, b
    small = (ember.tensor(a) @ ember.tensor(b)).numpy()
    padded = (ember.tensor(pa) @ ember.tensor(pb)).numpy()
    np.testing.assert_allclose(small, padded[:4, :4], rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(padded[4:], 0)


def test_float64_gemm_alpha_beta_and_non_finite():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((20, 30)), rng.standard_normal((30, 10))
    c = rng.standard_normal((20, 10))
    T = ember.tensor
    np.testing.assert_allclose(ember.addmm(T(c), T(a), T(b), beta=0.5, alpha=-2).numpy(),
                               0.5 * c - 2 * (a @ b), rtol=1e-12, atol=1e-12)
    nan = np.full((20, 10), np.nan)
    np.testing.assert_allclose(ember.addmm(T(nan), T(a), T(b), beta=0).numpy(), a @ b,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ember.addmm(T(c), T(a), T(b), beta=1, alpha=0).numpy(), c)
    # alpha = 0 skips the product, NaN in A included, at 20^3 (dgemm-sized) as at 4^3 (Eigen):
    # PyTorch's addmm, addmv and addbmm do (BLAS semantics); its baddbmm multiplies.
    for m in (4, 20):
        an = np.full((m, m), np.nan)
        cm = np.ones((m, m))
        ones = T(np.ones((m, m)))
        np.testing.assert_array_equal(ember.addmm(T(cm), T(an), ones, alpha=0).numpy(), cm)
        np.testing.assert_array_equal(
            ember.addmm(T(cm), T(an), ones, alpha=0, beta=2).numpy(), 2 * cm
        )
        np.testing.assert_array_equal(ember.addmm(T(cm), T(an), ones, alpha=0, beta=0).numpy(), 0)
        np.testing.assert_array_equal(
            ember.addmv(T(cm[0]), T(an), ones[0], alpha=0).numpy(), cm[0]
        )
        np.testing.assert_array_equal(
            ember.addbmm(T(cm), T(an[None]), ones[None], alpha=0).numpy(), cm
        )
        assert np.isnan(ember.baddbmm(T(cm[None]), T(an[None]), ones[None], alpha=0).numpy()).all()
        inplace = T(cm.copy())
        inplace.addmm_(T(an), ones, alpha=0)
        np.testing.assert_array_equal(inplace.numpy(), cm)
    a2 = a.copy()
    a2[3, 4], a2[7, 0] = np.nan, np.inf
    with np.errstate(invalid="ignore"):
        want = a2 @ b
    got = (T(a2) @ T(b)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_float64_gemm_batches_and_threads(threads):
    rng = np.random.default_rng(7)
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(threads)
        for batch, m, k, n in [(64, 16, 16, 16), (3, 200, 150, 100), (1, 400, 300, 200)]:
            a, b = rng.standard_normal((batch, m, k)), rng.standard_normal((batch, k, n))
            np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(b)).numpy(), a @ b,
                                       rtol=1e-11, atol=1e-11)
            # one matrix broadcast over the batch (batch stride 0)
            b0 = rng.standard_normal((k, n))
            np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(b0)).numpy(), a @ b0,
                                       rtol=1e-11, atol=1e-11)
        big = rng.standard_normal((300, 300))
        np.testing.assert_allclose(ember.linalg.matrix_power(ember.tensor(big / 30), 5).numpy(),
                                   np.linalg.matrix_power(big / 30, 5), rtol=1e-10, atol=1e-10)
    finally:
        ember.set_num_threads(saved)


def test_float64_gemm_concurrent_with_lapack():
    # Python threads mixing large LAPACK work (the exclusive OpenBLAS scope) and float64
    # products: the products never wait or deadlock, and stay right.
    rng = np.random.default_rng(8)
    mats = [rng.standard_normal((96, 96)) for _ in range(4)]
    big = rng.standard_normal((300, 300))
    results = [None] * 4
    errors = []

    def products(i):
        try:
            t = ember.tensor(mats[i])
            for _ in range(30):
                r = t @ t
            results[i] = r.numpy()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def decompositions():
        for _ in range(3):
            ember.linalg.svdvals(ember.tensor(big))

    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        threads = [threading.Thread(target=products, args=(i,)) for i in range(4)]
        threads.append(threading.Thread(target=decompositions))
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        ember.set_num_threads(saved)
    assert not errors
    for i in range(4):
        np.testing.assert_allclose(results[i], mats[i] @ mats[i], rtol=1e-11, atol=1e-11)


def test_float64_gemm_inside_a_batched_decomposition():
    # Batched ops that run products per matrix inside their own parallel loops (matrix_exp of a
    # batch) use float64 GEMM from worker threads.
    rng = np.random.default_rng(9)
    a = rng.standard_normal((16, 24, 24)) / 10
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        got = ember.linalg.matrix_exp(ember.tensor(a)).numpy()
    finally:
        ember.set_num_threads(saved)
    want = np.stack([_expm(x) for x in a])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def _expm(x):
    # Taylor series: the inputs are small.
    out, term = np.eye(len(x)), np.eye(len(x))
    for i in range(1, 30):
        term = term @ x / i
        out = out + term
    return out


# ---- one large LU solve split by columns over the threads ----------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_large_inverse_and_solve_split_over_threads(dtype):
    # 200^3 is past the column-split threshold: with 2 threads the right-hand sides (the
    # identity's columns for inv) are solved in blocks on different threads; the result must be
    # the 1-thread one (to rounding: the blocks change the solves' blocking) and NumPy's.
    rng = np.random.default_rng(7)
    n = 200
    a = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
    b = rng.standard_normal((n, 150))
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal((n, n))
        b = b + 1j * rng.standard_normal((n, 150))
    previous = ember.get_num_threads()
    try:
        results = {}
        for threads in (1, 2):
            ember.set_num_threads(threads)
            results[threads] = (
                ember.linalg.inv(ember.tensor(a)).numpy(),
                ember.linalg.solve(ember.tensor(a), ember.tensor(b)).numpy(),
                ember.linalg.solve(ember.tensor(a).mT, ember.tensor(b)).numpy(),
            )
    finally:
        ember.set_num_threads(previous)
    for one, two in zip(results[1], results[2]):
        np.testing.assert_allclose(one, two, rtol=1e-12, atol=1e-14)
    inv, x, xt = results[2]
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xt, np.linalg.solve(a.T, b), rtol=1e-10, atol=1e-12)
