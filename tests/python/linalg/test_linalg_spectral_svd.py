"""linalg.svd, linalg.svdvals and ember.svd (the old API): values against numpy.linalg, the
identity U diag(S) Vh == A, shapes of full / reduced factors, edge cases, errors with PyTorch's
messages, out=, gradients (float64 and complex128, double backward) and parity with PyTorch."""

import numpy as np
import pytest
from linalg_helpers import DTYPES, adjoint, compare_with_torch, noncontiguous, rand, tol

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


SHAPES = [
    (1, 1),
    (4, 4),
    (6, 3),
    (3, 6),
    (2, 5, 4),
    (2, 3, 4, 5),
    (0, 3, 2),
    (3, 0),
    (0, 4),
    (0, 0),
]


def assert_orthonormal_columns(q, atol):
    c = q.shape[-1]
    want = np.broadcast_to(np.eye(c), q.shape[:-2] + (c, c))
    np.testing.assert_allclose(adjoint(q) @ q, want, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_matches_numpy(dtype, shape, full):
    a = rand(shape, dtype)
    m, n = shape[-2:]
    k = min(m, n)
    U, S, Vh = ember.linalg.svd(ember.tensor(a), full_matrices=full)
    batch = shape[:-2]
    assert U.shape == batch + ((m, m) if full else (m, k))
    assert Vh.shape == batch + ((n, n) if full else (k, n))
    assert S.shape == batch + (k,) and U.dtype == dtype and Vh.dtype == dtype
    assert S.dtype == (
        ember.float32 if dtype in (ember.float32, ember.complex64) else ember.float64
    )
    want = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(batch + (k,))
    np.testing.assert_allclose(S.numpy(), want, rtol=tol(dtype), atol=tol(dtype) * 10)
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rebuilt, a, atol=tol(dtype) * 100)
    assert_orthonormal_columns(u, tol(dtype) * 100)
    assert_orthonormal_columns(adjoint(vh), tol(dtype) * 100)
    np.testing.assert_allclose(
        ember.linalg.svdvals(ember.tensor(a)).numpy(), want, rtol=tol(dtype), atol=tol(dtype) * 10
    )


def test_svd_layout_named_tuple_and_empty_factors():
    r = ember.linalg.svd(ember.tensor(rand((2, 5, 3))))
    assert type(r).__name__ == "linalg_svd" and r.U is r[0] and r.S is r[1] and r.Vh is r[2]
    assert r.U.stride() == (25, 1, 5) and r.Vh.stride() == (9, 1, 3)  # column-major, as PyTorch
    U, S, Vh = ember.linalg.svd(ember.zeros(3, 0))
    np.testing.assert_array_equal(U.numpy(), np.eye(3))  # as PyTorch: identity factors
    assert S.shape == (0,) and Vh.shape == (0, 0)
    U, S, Vh = ember.linalg.svd(ember.zeros(0, 2))
    np.testing.assert_array_equal(Vh.numpy(), np.eye(2))


def test_svd_noncontiguous_and_batched():
    a = rand((3, 6, 4), ember.complex128, seed=2)
    t = noncontiguous(a)
    np.testing.assert_allclose(
        ember.linalg.svdvals(t).numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12
    )
    np.testing.assert_allclose(
        ember.linalg.svdvals(t.mT).numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12
    )
    big = rand((200, 16, 16), seed=4)
    np.testing.assert_allclose(
        ember.linalg.svdvals(ember.tensor(big)).numpy(),
        np.linalg.svd(big, compute_uv=False),
        atol=1e-12,
    )


def test_svd_large_matrix():
    a = rand((260, 200), seed=6)
    U, S, Vh = ember.linalg.svd(ember.tensor(a), full_matrices=False)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ Vh.numpy(), a, atol=1e-10)


def test_svd_rank_deficient_and_ill_conditioned():
    a = rand((6, 2), seed=1) @ rand((2, 5), seed=2)  # rank 2
    s = ember.linalg.svdvals(ember.tensor(a)).numpy()
    assert s[2:].max() < 1e-12 and s[1] > 1e-3
    h = 1.0 / (np.arange(8)[:, None] + np.arange(8)[None, :] + 1)  # Hilbert matrix
    np.testing.assert_allclose(
        ember.linalg.svdvals(ember.tensor(h)).numpy(),
        np.linalg.svd(h, compute_uv=False),
        rtol=1e-6,
        atol=1e-15,
    )


def test_old_svd_api():
    a = rand((5, 3), seed=3)
    U, S, V = ember.svd(ember.tensor(a))
    assert U.shape == (5, 3) and V.shape == (3, 3)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, a, atol=1e-12)
    U, S, V = ember.svd(ember.tensor(a), some=False)
    assert U.shape == (5, 5) and V.shape == (3, 3)
    r = ember.tensor(a).svd(compute_uv=False)
    assert type(r).__name__ == "svd"
    assert r.U.shape == (5, 5) and r.V.shape == (3, 3) and not r.U.numpy().any()
    np.testing.assert_allclose(r.S.numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    outs = (
        ember.empty(0, dtype=ember.float64),
        ember.empty(0, dtype=ember.float64),
        ember.empty(0, dtype=ember.float64),
    )
    r = ember.svd(ember.tensor(a), out=outs)
    assert r[0] is outs[0] and type(r).__name__ == "svd_out"


def test_svd_out():
    a = rand((4, 3))
    outs = tuple(ember.empty(0, dtype=ember.float64) for _ in range(3))
    r = ember.linalg.svd(ember.tensor(a), out=outs)
    assert all(x is y for x, y in zip(r, outs)) and type(r).__name__ == "linalg_svd_out"
    assert outs[0].shape == (4, 4)
    o = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.svdvals(ember.tensor(a), out=o) is o
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double"):
        ember.linalg.svdvals(ember.tensor(a), out=ember.empty(0, dtype=ember.complex128))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.linalg.svdvals(ember.tensor(a, requires_grad=True), out=o)


def test_svd_errors():
    with pytest.raises(
        RuntimeError,
        match=r"\[linalg.svd\] The input tensor A must have at least "
        "2 dimensions",
    ):
        ember.linalg.svd(ember.zeros(3))
    with pytest.raises(
        NotImplementedError, match="Expected a floating point or complex tensor as input. Got Long"
    ):
        ember.linalg.svd(ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        ember.linalg.svdvals(ember.zeros(3, 3, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="keyword argument `driver=` is only supported on CUDA"):
        ember.linalg.svd(ember.zeros(3, 3), driver="gesvd")
    a = np.stack([rand((3, 3)), np.full((3, 3), np.nan)])
    with pytest.raises(
        ember.linalg.LinAlgError,
        match=r"\[linalg.svd\] \(Batch element 1\): The "
        "algorithm failed to converge because the input matrix contained non-finite",
    ):
        ember.linalg.svd(ember.tensor(a))
    with pytest.raises(ember.linalg.LinAlgError, match=r"\[linalg.svdvals\] The algorithm failed"):
        ember.linalg.svdvals(ember.tensor(np.full((2, 3), np.nan)))
    # inf: LAPACK does not converge, reported as PyTorch does
    with pytest.raises(ember.linalg.LinAlgError, match=r"ill-conditioned or has too many repeated"):
        ember.linalg.svd(ember.tensor(np.full((3, 3), np.inf)))


# ---- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_gradcheck(dtype, shape):
    x = ember.tensor(rand(shape, dtype, seed=7)).requires_grad_()
    k = min(shape[-2:])
    c = ember.tensor(rand(shape, dtype, seed=8))

    def values(a):
        return ember.linalg.svdvals(a)

    def rebuilt(a):
        # invariant under the phases of the singular vectors
        U, S, Vh = ember.linalg.svd(a, full_matrices=False)
        return (U * S.unsqueeze(-2)) @ Vh

    def u_abs(a):
        return ember.linalg.svd(a)[0][..., :k].abs()  # only the first k columns depend on A

    def projector(a):
        U, _, Vh = ember.linalg.svd(a, full_matrices=False)
        return (U @ U.mH) @ c @ (Vh.mH @ Vh)

    for f in (values, rebuilt, u_abs, projector):
        assert gradcheck(f, (x,)), f.__name__
    assert gradgradcheck(values, (x,))
    assert gradgradcheck(rebuilt, (x,))


def test_old_svd_gradcheck():
    x = ember.tensor(rand((5, 3), seed=8)).requires_grad_()
    assert gradcheck(lambda a: (lambda U, S, V: (U * S) @ V.mT)(*ember.svd(a)), (x,))
    assert gradcheck(lambda a: ember.svd(a, compute_uv=False)[1], (x,))


def test_svd_grad_fn_and_phase_error():
    x = ember.tensor(rand((3, 3), ember.complex128), requires_grad=True)
    U, S, Vh = ember.linalg.svd(x)
    assert U.grad_fn.name() == "LinalgSvdBackward0" and S.grad_fn is U.grad_fn
    assert ember.linalg.svdvals(x).grad_fn.name() == "LinalgSvdBackward0"
    with pytest.raises(
        RuntimeError,
        match=r"\[svd_backward\] The singular vectors in the complex "
        "case are specified up to multiplication by e\\^\\{i phi\\}",
    ):
        U.real.sum().backward()


def test_svd_repeated_singular_values_grad():
    # Ill-defined for the singular vectors (division by S_k^2 - S_j^2 = 0), as in PyTorch; the
    # singular values alone stay differentiable.
    x = ember.eye(3, dtype=ember.float64).requires_grad_()
    ember.linalg.svdvals(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-12)
    x.grad = None
    U, _, _ = ember.linalg.svd(x)
    U.abs().sum().backward()
    assert not np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_svd_matches_torch(torch, dtype, shape):
    a = rand(shape, getattr(ember, dtype), seed=9)
    compare_with_torch(torch, lambda m, x: m.linalg.svdvals(x), [a])

    def rebuilt(m, x):
        U, S, Vh = m.linalg.svd(x, full_matrices=False)
        return (U[..., :, :2] * S[..., None, :2]) @ Vh[..., :2, :]

    compare_with_torch(torch, rebuilt, [a])
    compare_with_torch(torch, lambda m, x: m.linalg.svd(x)[2][..., :2, :].abs(), [a], atol=1e-7)
