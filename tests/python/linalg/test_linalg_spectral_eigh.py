"""linalg.eigh and linalg.eigvalsh: values against numpy.linalg, identities, edge cases, errors
with PyTorch's messages, out=, gradients (gradcheck / gradgradcheck, float64 and complex128)
and parity with PyTorch."""

import numpy as np
import pytest
from linalg_helpers import (
    DTYPES,
    adjoint,
    compare_with_torch,
    hermitian,
    noncontiguous,
    tol,
)

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


SHAPES = [(1, 1), (2, 2), (5, 5), (3, 4, 4), (2, 3, 6, 6), (0, 3, 3), (0, 0), (2, 0, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_numpy(dtype, shape, uplo):
    a = hermitian(shape, dtype)
    # Only the named triangle is read: garbage in the other one must not matter.
    if shape[-1] > 1:
        ones = np.ones(shape[-2:])
        junk = np.triu(ones, 1) if uplo == "L" else np.tril(ones, -1)
        a = a + 7 * junk.astype(a.dtype)
    L, V = ember.linalg.eigh(ember.tensor(a), UPLO=uplo)
    want = np.linalg.eigvalsh(a, UPLO=uplo)
    single = dtype in (ember.float32, ember.complex64)
    assert L.dtype == (ember.float32 if single else ember.float64)
    assert V.dtype == dtype and V.shape == shape and L.shape == shape[:-1]
    np.testing.assert_allclose(L.numpy(), want, rtol=tol(dtype), atol=tol(dtype) * 10)
    full = np.linalg.eigh(a, UPLO=uplo)
    if shape[-1]:
        # A V = V diag(L) on the Hermitian matrix the triangle defines, V unitary
        tri = np.tril(a) if uplo == "L" else np.triu(a)
        diag = np.real(np.diagonal(a, 0, -2, -1))[..., None, :]
        herm = tri + adjoint(tri) - np.eye(shape[-1]) * diag
        v = V.numpy()
        np.testing.assert_allclose(herm @ v, v * L.numpy()[..., None, :], atol=tol(dtype) * 100)
        np.testing.assert_allclose(
            adjoint(v) @ v, np.broadcast_to(np.eye(shape[-1]), v.shape), atol=tol(dtype) * 100
        )
    np.testing.assert_allclose(
        ember.linalg.eigvalsh(ember.tensor(a), UPLO=uplo).numpy(),
        full[0],
        rtol=tol(dtype),
        atol=tol(dtype) * 10,
    )


def test_eigh_layout_and_named_tuple():
    a = hermitian((2, 4, 4))
    r = ember.linalg.eigh(ember.tensor(a))
    assert type(r).__name__ == "linalg_eigh"
    assert r.eigenvalues is r[0] and r.eigenvectors is r[1]
    assert r.eigenvectors.stride() == (16, 1, 4)  # column-major matrices, as PyTorch


def test_eigh_noncontiguous_and_lowercase_uplo():
    a = hermitian((5, 5), ember.complex128)
    t = noncontiguous(a)
    np.testing.assert_allclose(
        ember.linalg.eigh(t, "u")[0].numpy(), np.linalg.eigvalsh(a, "U"), atol=1e-12
    )
    np.testing.assert_allclose(
        ember.linalg.eigvalsh(t.mT, UPLO="l").numpy(), np.linalg.eigvalsh(a.T), atol=1e-12
    )


def test_eigh_large_matrix_threads():
    # One large matrix runs with LAPACK parallel inside (Note [LAPACK threads]).
    a = hermitian((300, 300))
    L, V = ember.linalg.eigh(ember.tensor(a))
    np.testing.assert_allclose(L.numpy(), np.linalg.eigvalsh(a), atol=1e-9)
    v = V.numpy()
    np.testing.assert_allclose(a @ v, v * L.numpy(), atol=1e-8)


def test_eigh_batched_matches_loop():
    a = hermitian((64, 8, 8), ember.complex64)
    L = ember.linalg.eigvalsh(ember.tensor(a)).numpy()
    for i in range(64):
        np.testing.assert_allclose(L[i], np.linalg.eigvalsh(a[i]), atol=1e-4)


def test_eigh_out():
    a = hermitian((3, 3))
    L, V = ember.empty(0, dtype=ember.float64), ember.empty(0)
    L = ember.empty(0, dtype=ember.float64)
    V = ember.empty(0, dtype=ember.float64)
    r = ember.linalg.eigh(ember.tensor(a), out=(L, V))
    assert r[0] is L and r[1] is V and type(r).__name__ == "linalg_eigh_out"
    np.testing.assert_allclose(L.numpy(), np.linalg.eigvalsh(a), atol=1e-12)
    o = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.eigvalsh(ember.tensor(a), out=o) is o
    with pytest.raises(RuntimeError, match=r"Expected out tensor to have dtype double"):
        ember.linalg.eigvalsh(ember.tensor(a), out=ember.empty(0, dtype=ember.float32))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.linalg.eigh(ember.tensor(a, requires_grad=True), out=(L, V))


def test_eigh_errors():
    with pytest.raises(
        RuntimeError,
        match=r"\[linalg.eigh\] A must be batches of square matrices, "
        "but they are 3 by 4 matrices",
    ):
        ember.linalg.eigh(ember.zeros(3, 4))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        ember.linalg.eigvalsh(ember.zeros(3))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.linalg.eigh(ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        ember.linalg.eigvalsh(ember.zeros(3, 3, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        ember.linalg.eigh(ember.zeros(3, 3), UPLO="X")
    with pytest.raises(RuntimeError, match="Expected UPLO argument"):
        ember.linalg.eigh(ember.zeros(3, 3), UPLO="LU")


def test_eigh_nonfinite_raises_linalg_error():
    a = np.stack([hermitian((3, 3)), np.full((3, 3), np.nan)])
    with pytest.raises(
        ember.linalg.LinAlgError,
        match=r"\[linalg.eigh\] \(Batch element 1\): The algorithm failed to "
        r"converge .* \(error code: \d+\)",
    ):
        ember.linalg.eigh(ember.tensor(a))
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError, match=r"^\[linalg.eigvalsh\] The algorithm"):
        ember.linalg.eigvalsh(ember.tensor(np.full((3, 3), np.nan)))


# ---- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_eigh_gradcheck(dtype):
    a = ember.tensor(hermitian((2, 4, 4), dtype, seed=3) / 2).requires_grad_()

    def values(x):
        return ember.linalg.eigh(x + x.mH)[0]

    def vectors(x):
        # |V| is invariant under the sign / phase of each eigenvector
        return ember.linalg.eigh(x + x.mH)[1].abs()

    def both(x):
        L, V = ember.linalg.eigh(x + x.mH, UPLO="U")
        return (V.abs() * L.unsqueeze(-2)).sum(-1)

    assert gradcheck(values, (a,))
    assert gradcheck(vectors, (a,))
    assert gradcheck(both, (a,))
    assert gradcheck(lambda x: ember.linalg.eigvalsh(x + x.mH), (a,))
    assert gradgradcheck(values, (a,))
    assert gradgradcheck(vectors, (a,))


def test_eigh_grad_fn_names():
    x = ember.tensor(hermitian((3, 3)), requires_grad=True)
    L, V = ember.linalg.eigh(x)
    assert L.grad_fn.name() == "LinalgEighBackward0" and V.grad_fn is L.grad_fn
    assert ember.linalg.eigvalsh(x).grad_fn.name() == "LinalgEighBackward0"


def test_eigh_phase_dependent_loss_raises():
    x = ember.tensor(hermitian((3, 3), ember.complex128), requires_grad=True)
    V = ember.linalg.eigh(x)[1]
    with pytest.raises(
        RuntimeError,
        match=r"\[linalg_eigh_backward\] The eigenvectors in the "
        "complex case are specified up to multiplication by e\\^\\{i phi\\}",
    ):
        V.real.sum().backward()


def test_eigh_repeated_eigenvalues_grad_like_torch():
    # Ill-defined: the eigenvector gradient divides by L_j - L_i = 0 (inf / nan, as PyTorch).
    x = ember.eye(3, dtype=ember.float64).requires_grad_()
    L, V = ember.linalg.eigh(x)
    L.sum().backward()  # the eigenvalue gradient alone stays finite
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-12)
    x.grad = None
    _, V = ember.linalg.eigh(x)
    V.abs().sum().backward()
    assert not np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigh_matches_torch(torch, dtype):
    a = hermitian((2, 5, 5), getattr(ember, dtype), seed=5)
    compare_with_torch(torch, lambda m, x: m.linalg.eigh(x + x.mH)[0], [a])
    compare_with_torch(torch, lambda m, x: m.linalg.eigvalsh(x, UPLO="U"), [a])
    compare_with_torch(torch, lambda m, x: m.linalg.eigh(x + x.mH)[1].abs(), [a], atol=1e-7)


def test_concurrent_large_and_batched_calls():
    # Note [LAPACK threads]: one large matrix raises OpenBLAS's thread count under an exclusive
    # lock while batches run single-threaded under a shared one; calls from several Python
    # threads at once must neither deadlock nor mix results.
    import threading

    a = hermitian((300, 300), seed=21)
    b = hermitian((64, 12, 12), seed=22)
    A, B = ember.tensor(a), ember.tensor(b)
    want_a, want_b = np.linalg.eigvalsh(a), np.linalg.eigvalsh(b)
    errors = []
    saved = ember.get_num_threads()
    ember.set_num_threads(2)

    def run(t, want, times):
        for _ in range(times):
            if np.abs(ember.linalg.eigvalsh(t).numpy() - want).max() > 1e-8:
                errors.append(t.shape)

    threads = [
        threading.Thread(target=run, args=args)
        for args in [(A, want_a, 4), (A, want_a, 4), (B, want_b, 20), (B, want_b, 20)]
    ]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads)
    finally:
        ember.set_num_threads(saved)
    assert errors == []
