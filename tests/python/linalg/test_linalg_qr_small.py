"""The small-matrix QR kernels (linalg_qr_small.h) against LAPACK on the same inputs: float32 /
float64 matrices of at most 64 x 64 run Ember's own Householder kernels for linalg.qr, geqrf,
householder_product and lstsq's gelsy driver; the same values as complex input run LAPACK
(?geqrf, ?ungqr, ?gelsy), and NumPy runs LAPACK's real routines. Also the inputs the kernels hand
back to LAPACK (non-finite, badly scaled, rank-deficient) and non-contiguous layouts."""

import numpy as np
import pytest

import ember


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _lapack_qr(a):
    """Q and R from LAPACK's complex routines (zero imaginary parts: the same reflectors)."""
    q, r = ember.linalg.qr(ember.from_numpy(a.astype(np.complex128)))
    return q.numpy().real, r.numpy().real


@pytest.mark.parametrize("shape", [(256, 32, 32), (5, 64, 64), (3, 40, 7), (1, 1), (9, 1), (4, 4)])
def test_qr_small_matches_lapack(shape):
    a = _rand(shape)
    q, r = ember.linalg.qr(ember.from_numpy(a))
    q_ref, r_ref = _lapack_qr(a)
    np.testing.assert_allclose(q.numpy(), q_ref, atol=1e-12)
    np.testing.assert_allclose(r.numpy(), r_ref, atol=1e-12)
    nq, nr = np.linalg.qr(a)
    np.testing.assert_allclose(q.numpy(), nq, atol=1e-12)
    np.testing.assert_allclose(r.numpy(), nr, atol=1e-12)
    assert q.stride()[-2:] == (1, shape[-2])  # column-major, as PyTorch's
    assert r.stride()[-2:] == (1, shape[-1])


def test_qr_small_float32_and_other_modes():
    a = _rand((8, 16, 12)).astype(np.float32)
    q, r = ember.linalg.qr(ember.from_numpy(a))
    nq, nr = np.linalg.qr(a.astype(np.float64))
    np.testing.assert_allclose(q.numpy(), nq, atol=2e-5)
    np.testing.assert_allclose(r.numpy(), nr, atol=2e-5)
    # complete / r / wide go through the geqrf and orgqr kernels' small paths
    q2, r2 = ember.linalg.qr(ember.from_numpy(a), mode="complete")
    nq2, nr2 = np.linalg.qr(a.astype(np.float64), mode="complete")
    np.testing.assert_allclose(q2.numpy(), nq2, atol=2e-5)
    np.testing.assert_allclose(r2.numpy(), nr2, atol=2e-5)
    _, r3 = ember.linalg.qr(ember.from_numpy(a), mode="r")
    np.testing.assert_allclose(r3.numpy(), np.linalg.qr(a.astype(np.float64), mode="r"), atol=2e-5)
    w = _rand((3, 5, 9))
    qw, rw = ember.linalg.qr(ember.from_numpy(w))
    nqw, nrw = np.linalg.qr(w)
    np.testing.assert_allclose(qw.numpy(), nqw, atol=1e-12)
    np.testing.assert_allclose(rw.numpy(), nrw, atol=1e-12)
    g, tau = ember.geqrf(ember.from_numpy(w))
    h = ember.linalg.householder_product(ember.from_numpy(g.numpy()[..., :5]), tau)
    np.testing.assert_allclose(h.numpy(), nqw, atol=1e-12)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
def test_qr_small_noncontiguous(layout):
    base = _rand((6, 20, 20), seed=1)
    if layout == "transposed":
        a = ember.from_numpy(base).transpose(-2, -1)  # a column-major batch: read as it is
        ref = np.swapaxes(base, -1, -2)
    elif layout == "sliced":
        a = ember.from_numpy(base)[::2, 1:, ::2]
        ref = base[::2, 1:, ::2]
    else:
        a = ember.from_numpy(base[0]).expand(3, 20, 20)
        ref = np.broadcast_to(base[0], (3, 20, 20))
    q, r = ember.linalg.qr(a)
    nq, nr = np.linalg.qr(np.ascontiguousarray(ref))
    np.testing.assert_allclose(q.numpy(), nq, atol=1e-12)
    np.testing.assert_allclose(r.numpy(), nr, atol=1e-12)


@pytest.mark.parametrize("case", ["nan", "inf", "tiny", "huge", "zero_column", "zeros"])
def test_qr_small_fallbacks_and_singular(case):
    a = _rand((4, 6, 5), seed=2)
    if case == "nan":
        a[1, 2, 3] = np.nan
    elif case == "inf":
        a[2, 0, 0] = np.inf
    elif case == "tiny":
        a[1] *= 1e-300
    elif case == "huge":
        a[3] *= 1e300
    elif case == "zero_column":
        a[:, :, 1] = 0
    else:
        a[0] = 0
    q, r = ember.linalg.qr(ember.from_numpy(a))
    nq, nr = np.linalg.qr(a)
    for got, want in ((q.numpy(), nq), (r.numpy(), nr)):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        scale = np.abs(want[finite]).max() if finite.any() else 1.0
        np.testing.assert_allclose(got[finite], want[finite], atol=1e-12 * scale, rtol=1e-12)


def _gelsy_ref(a, b):
    """lstsq through LAPACK's zgelsy: the same system as complex values."""
    s = ember.linalg.lstsq(ember.from_numpy(a.astype(np.complex128)),
                           ember.from_numpy(b.astype(np.complex128)))
    return s.solution.numpy().real, s.rank.numpy()


@pytest.mark.parametrize("shape", [(256, 32, 32, 1), (4, 40, 10, 3), (3, 64, 64, 2), (2, 7, 1, 1)])
def test_lstsq_gelsy_small_matches_lapack(shape):
    *batch, m, n, k = shape
    a = _rand((*batch, m, n), seed=3) + np.sqrt(n) * np.eye(m, n)
    b = _rand((*batch, m, k), seed=4)
    s = ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b))
    x_ref, rank_ref = _gelsy_ref(a, b)
    np.testing.assert_allclose(s.solution.numpy(), x_ref, atol=1e-10)
    np.testing.assert_array_equal(s.rank.numpy(), rank_ref)
    assert s.residuals.shape == (0,) and s.singular_values.shape == (0,)
    want = np.linalg.lstsq(a.reshape(-1, m, n)[0], b.reshape(-1, m, k)[0], rcond=None)[0]
    np.testing.assert_allclose(s.solution.numpy().reshape(-1, n, k)[0], want, atol=1e-10)


def test_lstsq_gelsy_small_float32_and_vector_rhs():
    a = (_rand((5, 12, 6), seed=5) + 3 * np.eye(12, 6)).astype(np.float32)
    b = _rand((5, 12), seed=6).astype(np.float32)
    s = ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b))
    want = np.stack([np.linalg.lstsq(a[i].astype(np.float64), b[i].astype(np.float64),
                                     rcond=None)[0] for i in range(5)])
    np.testing.assert_allclose(s.solution.numpy(), want, atol=1e-4)
    np.testing.assert_array_equal(s.rank.numpy(), [6] * 5)


@pytest.mark.parametrize("case", ["rank_deficient", "wide", "zero", "tiny", "huge_b", "rcond"])
def test_lstsq_gelsy_small_fallbacks(case):
    a = _rand((3, 8, 5), seed=7)
    b = _rand((3, 8, 2), seed=8)
    rcond = None
    if case == "rank_deficient":
        a[1, :, 4] = a[1, :, 0] + a[1, :, 2]
        a[2, :, 3] = 0
    elif case == "wide":
        a = _rand((3, 5, 8), seed=7)
        b = b[:, :5]
    elif case == "zero":
        a[0] = 0
    elif case == "tiny":
        a[2] *= 1e-300
    elif case == "huge_b":
        b[1] *= 1e300
    else:
        rcond = 0.5  # large enough to cut the rank of random matrices
    s = ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b), rcond=rcond)
    sc = ember.linalg.lstsq(ember.from_numpy(a.astype(np.complex128)),
                            ember.from_numpy(b.astype(np.complex128)), rcond=rcond)
    np.testing.assert_array_equal(s.rank.numpy(), sc.rank.numpy())
    want = sc.solution.numpy().real
    scale = np.abs(want).max(axis=(-2, -1), keepdims=True) + 1e-300
    np.testing.assert_allclose(s.solution.numpy() / scale, want / scale, atol=1e-10)


def test_lstsq_gelsy_small_nan_as_lapack():
    a = _rand((2, 6, 4), seed=9)
    b = _rand((2, 6, 1), seed=10)
    a[1, 3, 2] = np.nan
    s = ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b))
    # batch element 0 takes the small path, element 1 LAPACK's (NaN propagates there)
    want = np.linalg.lstsq(a[0], b[0], rcond=None)[0]
    np.testing.assert_allclose(s.solution.numpy()[0], want, atol=1e-12)
    assert np.isnan(s.solution.numpy()[1]).all()


@pytest.mark.parametrize("shape", [(300, 300), (420, 260), (260, 420), (256, 256)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_qr_parallel_blocked_matches_lapack(shape, dtype):
    """One large matrix with 2 threads: the blocked QR with the trailing updates split over
    threads (linalg_qr_parallel.cpp) against NumPy's LAPACK and Ember's own 1-thread path."""
    a = _rand(shape, seed=11).astype(dtype)
    saved = ember.get_num_threads()
    tol = 1e-11 if dtype == np.float64 else 2e-3
    try:
        results = {}
        for threads in (1, 2):
            ember.set_num_threads(threads)
            for mode in ("reduced", "complete"):
                q, r = ember.linalg.qr(ember.from_numpy(a), mode=mode)
                results[threads, mode] = (q.numpy(), r.numpy())
            g, tau = ember.geqrf(ember.from_numpy(a))
            k = min(shape)
            h = ember.linalg.householder_product(ember.from_numpy(g.numpy()[:, :k]), tau)
            results[threads, "householder"] = (h.numpy(), g.numpy())
    finally:
        ember.set_num_threads(saved)
    for mode in ("reduced", "complete"):
        nq, nr = np.linalg.qr(a.astype(np.float64), mode=mode)
        for threads in (1, 2):
            q, r = results[threads, mode]
            np.testing.assert_allclose(q, nq, atol=tol * 10)
            np.testing.assert_allclose(r, nr, atol=tol * 100)
    np.testing.assert_allclose(results[2, "householder"][0], results[1, "householder"][0],
                               atol=tol * 10)
    np.testing.assert_allclose(results[2, "householder"][1], results[1, "householder"][1],
                               atol=tol * 100)


def test_qr_parallel_nonfinite_as_lapack():
    a = _rand((260, 260), seed=12)
    a[5, 7] = np.nan
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        q, r = ember.linalg.qr(ember.from_numpy(a))
    finally:
        ember.set_num_threads(saved)
    nq, nr = np.linalg.qr(a)
    np.testing.assert_array_equal(np.isnan(q.numpy()), np.isnan(nq))
    np.testing.assert_array_equal(np.isnan(r.numpy()), np.isnan(nr))
