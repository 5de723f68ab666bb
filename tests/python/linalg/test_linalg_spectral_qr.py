"""linalg.qr (modes reduced / complete / r), linalg.householder_product, ember.geqrf, ember.qr
and ember.orgqr: values against numpy.linalg, Q orthonormal and Q R == A, edge cases, errors with
PyTorch's messages, out=, gradients (float64 and complex128, double backward), torch parity."""

import numpy as np
import pytest
from linalg_helpers import DTYPES, adjoint, compare_with_torch, noncontiguous, rand, tol

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


SHAPES = [(1, 1), (4, 4), (6, 3), (3, 6), (2, 5, 4), (2, 3, 4, 5), (0, 3, 2), (3, 0), (0, 4)]


def assert_orthonormal_columns(q, atol):
    c = q.shape[-1]
    want = np.broadcast_to(np.eye(c), q.shape[:-2] + (c, c))
    np.testing.assert_allclose(adjoint(q) @ q, want, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_numpy(dtype, shape, mode):
    a = rand(shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    Q, R = ember.linalg.qr(ember.tensor(a), mode=mode)
    batch = shape[:-2]
    assert R.shape == batch + ((m, n) if mode == "complete" else (k, n)) and R.dtype == dtype
    r = R.numpy()
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    if a.size:
        # R is unique up to the phases of its rows: compare magnitudes with numpy's
        want = np.linalg.qr(a, mode="r")
        np.testing.assert_allclose(np.abs(r[..., :k, :]), np.abs(want), atol=tol(dtype) * 100)
    if mode == "r":
        assert Q.shape == (0,)
        return
    assert Q.shape == batch + ((m, m) if mode == "complete" else (m, k)) and Q.dtype == dtype
    q = Q.numpy()
    assert_orthonormal_columns(q, tol(dtype) * 100)
    np.testing.assert_allclose(q @ r, a, atol=tol(dtype) * 100)


def test_qr_layout_named_tuple_and_empty():
    r = ember.linalg.qr(ember.tensor(rand((2, 5, 3))))
    assert type(r).__name__ == "linalg_qr" and r.Q is r[0] and r.R is r[1]
    assert r.Q.stride() == (15, 1, 5) and r.R.stride() == (9, 1, 3)  # column-major, as PyTorch
    Q, R = ember.linalg.qr(ember.zeros(3, 0), mode="complete")
    np.testing.assert_array_equal(Q.numpy(), np.eye(3))
    assert R.shape == (3, 0)


def test_qr_noncontiguous_rank_deficient_and_batched():
    a = rand((4, 6, 3), ember.complex128, seed=3)
    Q, R = ember.linalg.qr(noncontiguous(a))
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), a, atol=1e-12)
    low_rank = rand((7, 2), seed=1) @ rand((2, 5), seed=2)
    Q, R = ember.linalg.qr(ember.tensor(low_rank))
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), low_rank, atol=1e-12)
    big = rand((300, 12, 12), seed=4)
    Q, R = ember.linalg.qr(ember.tensor(big))
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), big, atol=1e-12)
    large = rand((300, 200), seed=5)
    Q, R = ember.linalg.qr(ember.tensor(large))
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), large, atol=1e-11)


def test_geqrf_and_householder_product():
    a = rand((2, 6, 4), ember.complex128, seed=6)
    g = ember.geqrf(ember.tensor(a))
    assert type(g).__name__ == "geqrf" and g.a.shape == (2, 6, 4) and g.tau.shape == (2, 4)
    Q = ember.linalg.householder_product(g.a, g.tau)
    np.testing.assert_allclose(Q.numpy(), ember.linalg.qr(ember.tensor(a)).Q.numpy(), atol=1e-12)
    np.testing.assert_allclose(ember.orgqr(g.a, g.tau).numpy(), Q.numpy())
    np.testing.assert_allclose(g.a.orgqr(g.tau).numpy(), Q.numpy())
    # fewer reflectors than columns: the trailing columns come from the identity
    Q2 = ember.linalg.householder_product(g.a, g.tau[..., :2]).numpy()
    assert_orthonormal_columns(Q2, 1e-12)
    a2, tau2 = ember.tensor(rand((5, 3), seed=2)).geqrf()
    assert a2.shape == (5, 3) and tau2.shape == (3,)
    out = ember.empty(0, dtype=ember.complex128)
    assert ember.linalg.householder_product(g.a, g.tau, out=out) is out


def test_old_qr_api():
    a = rand((5, 3), seed=3)
    Q, R = ember.qr(ember.tensor(a))
    assert Q.shape == (5, 3) and R.shape == (3, 3)
    r = ember.tensor(a).qr(some=False)
    assert type(r).__name__ == "qr" and r.Q.shape == (5, 5) and r.R.shape == (5, 3)
    np.testing.assert_allclose(r.Q.numpy() @ r.R.numpy(), a, atol=1e-12)


def test_qr_out():
    a = rand((4, 3))
    Q, R = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    r = ember.linalg.qr(ember.tensor(a), out=(Q, R))
    assert r[0] is Q and r[1] is R and type(r).__name__ == "linalg_qr_out"
    np.testing.assert_allclose(Q.numpy() @ R.numpy(), a, atol=1e-12)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double"):
        ember.linalg.qr(ember.tensor(a), out=(ember.empty(0), R))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.linalg.qr(ember.tensor(a, requires_grad=True), out=(Q, R))


def test_qr_errors():
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        ember.linalg.qr(ember.zeros(3))
    with pytest.raises(
        RuntimeError,
        match="qr received unrecognized mode 'x' but expected one of "
        "'reduced' \\(default\\), 'r', or 'complete'",
    ):
        ember.linalg.qr(ember.zeros(3, 3), mode="x")
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex tensor"):
        ember.linalg.qr(ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        ember.linalg.qr(ember.zeros(3, 3, dtype=ember.float16))


def test_householder_product_errors():
    hp = ember.linalg.householder_product
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        hp(ember.zeros(5), ember.zeros(2))
    with pytest.raises(
        RuntimeError,
        match=r"input.shape\[-2\] must be greater than or equal to "
        r"input.shape\[-1\]",
    ):
        hp(ember.zeros(3, 5), ember.zeros(2))
    with pytest.raises(
        RuntimeError,
        match=r"input.shape\[-1\] must be greater than or equal to "
        r"tau.shape\[-1\]",
    ):
        hp(ember.zeros(5, 3), ember.zeros(4))
    with pytest.raises(
        RuntimeError,
        match="Expected tau to have one dimension less than input, "
        "but got tau.ndim equal to 2 and input.ndim is equal to 2",
    ):
        hp(ember.zeros(5, 3), ember.zeros(2, 2))
    with pytest.raises(
        RuntimeError,
        match=r"Expected batch dimensions of tau to be equal to "
        r"input.shape\[:-2\], but got \[3\]",
    ):
        hp(ember.zeros(2, 5, 3), ember.zeros(3, 2))
    with pytest.raises(RuntimeError, match="tau dtype Double does not match input dtype Float"):
        hp(ember.zeros(5, 3), ember.zeros(2, dtype=ember.float64))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        hp(ember.zeros(5, 3, dtype=ember.int64), ember.zeros(2, dtype=ember.int64))


# ---- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_qr_gradcheck(dtype, shape):
    x = ember.tensor(rand(shape, dtype, seed=7)).requires_grad_()
    assert gradcheck(lambda a: ember.linalg.qr(a)[0], (x,))
    assert gradcheck(lambda a: ember.linalg.qr(a)[1], (x,))
    assert gradcheck(lambda a: (lambda q, r: q @ r)(*ember.linalg.qr(a)), (x,))
    assert gradgradcheck(lambda a: ember.linalg.qr(a)[0], (x,))
    if shape[-2] <= shape[-1]:
        assert gradcheck(lambda a: ember.linalg.qr(a, mode="complete")[0], (x,))


def test_qr_backward_errors_as_torch():
    x = ember.tensor(rand((5, 3)), requires_grad=True)
    Q, R = ember.linalg.qr(x, mode="r")
    assert R.grad_fn.name() == "LinalgQrBackward0"
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        R.sum().backward()
    Q, R = ember.linalg.qr(x, mode="complete")
    with pytest.raises(
        RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"
    ):
        R.sum().backward()
    a, tau = ember.geqrf(x)
    assert a.grad_fn.name() == "GeqrfBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented"):
        a.sum().backward()


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_householder_product_gradcheck(dtype):
    a, tau = ember.geqrf(ember.tensor(rand((2, 5, 3), dtype, seed=8)))
    a.requires_grad_()
    tau.requires_grad_()
    hp = ember.linalg.householder_product
    assert gradcheck(hp, (a, tau))
    assert gradgradcheck(hp, (a, tau))
    assert gradcheck(lambda x, t: hp(x, t[..., :2]), (a, tau))
    assert hp(a, tau).grad_fn.name() == "LinalgHouseholderProductBackward0"


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_qr_matches_torch(torch, dtype, shape):
    a = rand(shape, getattr(ember, dtype), seed=9)
    compare_with_torch(torch, lambda m, x: m.linalg.qr(x)[0], [a])
    compare_with_torch(torch, lambda m, x: m.linalg.qr(x)[1], [a])
    if shape[0] < shape[1]:
        return
    g = np.linalg.qr(a, mode="raw")
    h, tau = np.ascontiguousarray(g[0].T), g[1]
    compare_with_torch(torch, lambda m, x, t: m.linalg.householder_product(x, t), [h, tau])
