"""linalg.lstsq (every driver, PyTorch's residuals / rank / singular_values), linalg.pinv,
linalg.matrix_rank and ember.pinverse: values against numpy.linalg, edge cases, errors, gradients
and parity with PyTorch."""

import numpy as np
import pytest
from linalg_helpers import DTYPES, compare_with_torch, noncontiguous, rand, tol

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


DRIVERS = ["gels", "gelsy", "gelsd", "gelss"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shape", [(6, 3), (3, 3), (3, 6)])
def test_lstsq_matches_numpy(dtype, driver, shape):
    m, n = shape
    a = rand(shape, dtype, seed=1)
    b = rand((m, 2), dtype, seed=2)
    r = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
    assert type(r).__name__ == "linalg_lstsq"
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(r.solution.numpy(), x, atol=tol(dtype) * 100)
    assert r.solution.shape == (n, 2) and r.solution.dtype == dtype
    # PyTorch's rules: residuals when m > n and the driver is not gelsy (full rank here)
    if m > n and driver != "gelsy":
        np.testing.assert_allclose(r.residuals.numpy(), res, rtol=tol(dtype) * 100)
    else:
        assert r.residuals.shape == (0,)
    if driver == "gels":
        assert r.rank.shape == (0,) and r.rank.dtype == ember.int64
    else:
        assert r.rank.shape == () and int(r.rank) == rank
    if driver in ("gelsd", "gelss"):
        np.testing.assert_allclose(r.singular_values.numpy(), sv, rtol=tol(dtype) * 100)
    else:
        assert r.singular_values.shape == (0,)


def test_lstsq_vector_case_broadcasting_and_layout():
    a = rand((2, 1, 5, 3), seed=3)
    b = rand((1, 4, 5, 2), seed=4)
    r = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver="gelsd")
    assert r.solution.shape == (2, 4, 3, 2) and r.rank.shape == (2, 4)
    assert r.singular_values.shape == (2, 4, 3) and r.residuals.shape == (2, 4, 2)
    want = np.linalg.pinv(a) @ b
    np.testing.assert_allclose(r.solution.numpy(), want, atol=1e-12)
    assert r.solution.stride()[-2:] == (1, 5)  # a view of the max(m, n)-row LAPACK buffer
    v = ember.linalg.lstsq(ember.tensor(a[0, 0]), ember.tensor(b[0, 0, :, 0]), driver="gels")
    assert v.solution.shape == (3,) and v.residuals.shape == (1,)
    np.testing.assert_allclose(
        v.solution.numpy(), np.linalg.lstsq(a[0, 0], b[0, 0, :, 0], rcond=None)[0], atol=1e-12
    )
    r = ember.linalg.lstsq(noncontiguous(a[0, 0]), ember.tensor(b[0, 0]))
    np.testing.assert_allclose(r.solution.numpy(), np.linalg.pinv(a[0, 0]) @ b[0, 0], atol=1e-12)


def test_lstsq_rank_deficient_and_rcond():
    a = rand((6, 2), seed=5) @ rand((2, 4), seed=6)  # rank 2
    b = rand((6, 3), seed=7)
    for driver in ("gelsy", "gelsd", "gelss"):
        r = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
        assert int(r.rank) == 2
        assert r.residuals.shape == (0,)  # not full rank: no residuals (PyTorch)
        np.testing.assert_allclose(a @ r.solution.numpy(), a @ np.linalg.pinv(a) @ b, atol=1e-10)
    r = ember.linalg.lstsq(
        ember.tensor(rand((5, 3), seed=8)), ember.tensor(b[:5]), rcond=0.99, driver="gelsd"
    )
    assert int(r.rank) == 1
    z = ember.linalg.lstsq(
        ember.zeros(5, 3, dtype=ember.float64), ember.tensor(b[:5]), driver="gelsd"
    )
    assert int(z.rank) == 0 and not z.solution.numpy().any()


def test_lstsq_empty():
    r = ember.linalg.lstsq(
        ember.zeros(0, 3, dtype=ember.float64),
        ember.zeros(0, 2, dtype=ember.float64),
        driver="gelsd",
    )
    assert r.solution.shape == (3, 2) and not r.solution.numpy().any()
    b = rand((3, 2))
    r = ember.linalg.lstsq(ember.zeros(3, 0, dtype=ember.float64), ember.tensor(b), driver="gelsd")
    assert r.solution.shape == (0, 2)
    np.testing.assert_allclose(r.residuals.numpy(), (b**2).sum(0))
    r = ember.linalg.lstsq(
        ember.zeros(0, 5, 3, dtype=ember.float64), ember.zeros(0, 5, 2, dtype=ember.float64)
    )
    assert r.solution.shape == (0, 3, 2)


def test_lstsq_errors():
    A, B = ember.zeros(5, 3, dtype=ember.float64), ember.zeros(5, 2, dtype=ember.float64)
    lstsq = ember.linalg.lstsq
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        lstsq(ember.zeros(3), B)
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-2\)"):
        lstsq(A, ember.zeros(4, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-1\)"):
        lstsq(A, ember.zeros(4, dtype=ember.float64))
    with pytest.raises(
        RuntimeError,
        match="Expected input and other to have the same dtype, but "
        "got input's dtype Double and other's dtype Float",
    ):
        lstsq(A, ember.zeros(5, 2))
    with pytest.raises(
        RuntimeError,
        match=r"parameter `driver` should be one of \(gels, gelsy, "
        r"gelsd, gelss\)",
    ):
        lstsq(A, B, driver="foo")
    with pytest.raises(
        RuntimeError,
        match=r"input.dim\(\) must be greater or equal to "
        r"other.dim\(\)",
    ):
        lstsq(A, ember.zeros(2, 3, 5, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="doesn't handle types other than float and double"):
        lstsq(ember.zeros(5, 3, dtype=ember.int64), ember.zeros(5, 2, dtype=ember.int64))
    singular = np.stack([rand((3, 3)), np.array([[1.0, 0, 2], [2, 0, 1], [3, 0, 5]])])
    with pytest.raises(
        ember.linalg.LinAlgError,
        match=r"\(Batch element 1\): The least squares "
        "solution could not be computed because the input matrix does not have "
        "full rank",
    ):
        lstsq(
            ember.tensor(singular[:, :3, :]),
            ember.zeros(2, 3, 1, dtype=ember.float64),
            driver="gels",
        )


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5)])
def test_lstsq_gradcheck(dtype, shape):
    a = ember.tensor(rand(shape, dtype, seed=9)).requires_grad_()
    b = ember.tensor(rand((shape[0], 2), dtype, seed=10)).requires_grad_()
    assert gradcheck(lambda x, y: ember.linalg.lstsq(x, y).solution, (a, b))
    assert gradcheck(lambda x, y: ember.linalg.lstsq(x, y[:, 0]).solution, (a, b))
    if shape[0] > shape[1]:
        assert gradcheck(lambda x, y: ember.linalg.lstsq(x, y, driver="gelsd").residuals, (a, b))
    assert gradgradcheck(lambda x, y: ember.linalg.lstsq(x, y).solution, (a, b))
    r = ember.linalg.lstsq(a, b, driver="gelsd")
    assert r.solution.grad_fn.name() == "LinalgLstsqBackward0"
    assert not r.singular_values.requires_grad and not r.rank.requires_grad


# ---- pinv, matrix_rank, pinverse --------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (0, 3), (2, 0, 0)])
def test_pinv_matches_numpy(dtype, shape):
    a = rand(shape, dtype, seed=11)
    p = ember.linalg.pinv(ember.tensor(a))
    assert p.shape == shape[:-2] + (shape[-1], shape[-2]) and p.dtype == dtype
    np.testing.assert_allclose(
        p.numpy(), np.linalg.pinv(a) if a.size else np.zeros(p.shape), atol=tol(dtype) * 1000
    )
    np.testing.assert_allclose(
        ember.pinverse(ember.tensor(a)).numpy(), p.numpy(), atol=tol(dtype) * 100
    )
    if shape[-1] == shape[-2] and a.size:
        h = a + np.swapaxes(a, -1, -2).conj()
        np.testing.assert_allclose(
            ember.linalg.pinv(ember.tensor(h), hermitian=True).numpy(),
            np.linalg.pinv(h, hermitian=True),
            atol=tol(dtype) * 1000,
        )


def test_pinv_tolerances():
    a = rand((6, 2), seed=1) @ rand((2, 4), seed=2)
    want = np.linalg.pinv(a, rcond=1e-10)
    for p in (
        ember.linalg.pinv(ember.tensor(a), rtol=1e-10),
        ember.linalg.pinv(ember.tensor(a), 1e-10),
        ember.linalg.pinv(ember.tensor(a), atol=1e-8),
        ember.tensor(a).pinverse(rcond=1e-10),
    ):
        np.testing.assert_allclose(p.numpy(), want, atol=1e-10)
    big = ember.linalg.pinv(ember.tensor(a), atol=100.0)
    assert not big.numpy().any()
    with pytest.raises(RuntimeError, match="expected a tensor with 2 or more dimensions of float"):
        ember.linalg.pinv(ember.zeros(3))
    with pytest.raises(RuntimeError, match="atol tensor of complex type is not supported"):
        ember.linalg.pinv(ember.tensor(a), atol=ember.tensor(1j))


def test_matrix_rank():
    a = rand((3, 6, 2), seed=1) @ rand((3, 2, 5), seed=2)
    r = ember.linalg.matrix_rank(ember.tensor(a))
    assert r.dtype == ember.int64 and r.tolist() == [2, 2, 2]
    np.testing.assert_array_equal(r.numpy(), np.linalg.matrix_rank(a))
    h = a[0] @ a[0].T
    assert int(ember.linalg.matrix_rank(ember.tensor(h), hermitian=True)) == 2
    assert int(ember.linalg.matrix_rank(ember.tensor(rand((4, 4))), atol=10.0)) == 0
    assert int(ember.linalg.matrix_rank(ember.tensor(rand((4, 4))), 10.0)) == 0
    assert int(ember.linalg.matrix_rank(ember.tensor(rand((4, 4))), rtol=0.999)) == 1
    assert ember.linalg.matrix_rank(ember.zeros(2, 0, 3)).tolist() == [0, 0]
    o = ember.empty(0, dtype=ember.int64)
    assert ember.linalg.matrix_rank(ember.tensor(a), out=o) is o
    x = ember.tensor(a, requires_grad=True)
    assert not ember.linalg.matrix_rank(x).requires_grad
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        ember.linalg.matrix_rank(ember.zeros(3))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_pinv_gradcheck(dtype):
    for shape in [(4, 3), (3, 4), (3, 3)]:
        x = ember.tensor(rand(shape, dtype, seed=12)).requires_grad_()
        assert gradcheck(ember.linalg.pinv, (x,))
    h = rand((3, 3), dtype, seed=13)
    x = ember.tensor(h + h.conj().T + 4 * np.eye(3)).requires_grad_()
    assert gradcheck(lambda a: ember.linalg.pinv(a + a.mH, hermitian=True), (x,))
    assert gradgradcheck(ember.linalg.pinv, (ember.tensor(rand((4, 3), dtype)).requires_grad_(),))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_lstsq_pinv_match_torch(torch, dtype):
    a = rand((5, 3), getattr(ember, dtype), seed=14)
    b = rand((5, 2), getattr(ember, dtype), seed=15)
    compare_with_torch(torch, lambda m, x, y: m.linalg.lstsq(x, y).solution, [a, b])
    compare_with_torch(
        torch, lambda m, x, y: m.linalg.lstsq(x, y, driver="gelsd").residuals, [a, b]
    )
    compare_with_torch(torch, lambda m, x: m.linalg.pinv(x), [a])
    e = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver="gelss")
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gelss")
    for x, y in zip(e, t):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-10)
