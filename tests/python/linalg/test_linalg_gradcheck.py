"""Every differentiable function of ember.linalg (and the top-level aliases) in one table:
gradcheck and gradgradcheck in float64 and complex128 on small well-conditioned inputs. The
family test files test each gradient in depth (edge cases, PyTorch parity); this table makes
sure none is missing. Outputs defined only up to a sign or phase (eigenvectors, singular
vectors) enter through their absolute values."""

import numpy as np
import pytest

import ember
import ember.linalg as L
from ember.autograd import gradcheck, gradgradcheck

DTYPES = [ember.float64, ember.complex128]


def T(shape, dt, spd=False, seed=[0]):  # noqa: B006 - a counter: every input differs
    seed[0] += 1
    rng = np.random.default_rng(seed[0])
    a = rng.standard_normal(shape)
    if dt == ember.complex128:
        a = a + 1j * rng.standard_normal(shape)
    if spd:
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    elif len(shape) > 1 and shape[-1] == shape[-2]:
        a = a + 3 * np.eye(shape[-1])
    return ember.tensor(a).requires_grad_()


def E(n, dt):
    return ember.eye(n, dtype=dt)


# name -> dtype -> (function, inputs)
CASES = {
    "cholesky": lambda dt: (lambda a: L.cholesky(a @ a.mH + E(3, dt)), [T((2, 3, 3), dt)]),
    "cholesky_ex": lambda dt: (lambda a: L.cholesky_ex(a @ a.mH + E(3, dt)).L, [T((3, 3), dt)]),
    "inv": lambda dt: (L.inv, [T((2, 3, 3), dt)]),
    "inv_ex": lambda dt: (lambda a: L.inv_ex(a).inverse, [T((3, 3), dt)]),
    "det": lambda dt: (L.det, [T((2, 3, 3), dt)]),
    "slogdet": lambda dt: (lambda a: L.slogdet(a).logabsdet, [T((3, 3), dt)]),
    "eig": lambda dt: (lambda a: (lambda r: (r[0], r[1].abs()))(L.eig(a)), [T((3, 3), dt)]),
    "eigvals": lambda dt: (L.eigvals, [T((3, 3), dt)]),
    "eigh": lambda dt: (
        lambda a: (lambda r: (r[0], r[1].abs()))(L.eigh(a + a.mH)),
        [T((3, 3), dt)],
    ),
    "eigvalsh": lambda dt: (lambda a: L.eigvalsh(a + a.mH), [T((3, 3), dt)]),
    "svd": lambda dt: (
        lambda a: (lambda r: (r[0].abs(), r[1], r[2].abs()))(L.svd(a, full_matrices=False)),
        [T((4, 3), dt)],
    ),
    "svdvals": lambda dt: (L.svdvals, [T((4, 3), dt)]),
    "solve": lambda dt: (L.solve, [T((2, 3, 3), dt), T((3, 2), dt)]),
    "solve_ex": lambda dt: (lambda a, b: L.solve_ex(a, b).result, [T((3, 3), dt), T((3, 2), dt)]),
    "solve_triangular": lambda dt: (
        lambda a, b: L.solve_triangular(a.triu() + E(3, dt) * 3, b, upper=True),
        [T((3, 3), dt), T((3, 2), dt)],
    ),
    "lstsq": lambda dt: (lambda a, b: L.lstsq(a, b).solution, [T((4, 3), dt), T((4, 2), dt)]),
    "qr": lambda dt: (lambda a: L.qr(a), [T((4, 3), dt)]),
    "lu": lambda dt: (lambda a: L.lu(a)[1:], [T((3, 3), dt)]),
    "lu_factor": lambda dt: (lambda a: L.lu_factor(a).LU, [T((3, 3), dt)]),
    "lu_factor_ex": lambda dt: (lambda a: L.lu_factor_ex(a).LU, [T((3, 3), dt)]),
    "lu_solve": lambda dt: (
        lambda a, b: L.lu_solve(*L.lu_factor(a), b),
        [T((3, 3), dt), T((3, 2), dt)],
    ),
    "ldl_solve": lambda dt: (
        lambda b, a=T((3, 3), dt).detach(): L.ldl_solve(*L.ldl_factor(a + a.mH), b),
        [T((3, 2), dt)],
    ),
    "matrix_norm_fro": lambda dt: (lambda a: L.matrix_norm(a), [T((3, 3), dt)]),
    "matrix_norm_nuc": lambda dt: (lambda a: L.matrix_norm(a, "nuc"), [T((3, 3), dt)]),
    "matrix_norm_2": lambda dt: (lambda a: L.matrix_norm(a, 2), [T((3, 3), dt)]),
    "matrix_norm_m2": lambda dt: (lambda a: L.matrix_norm(a, -2), [T((3, 3), dt)]),
    "matrix_norm_1": lambda dt: (lambda a: L.matrix_norm(a, 1), [T((3, 3), dt)]),
    "matrix_norm_inf": lambda dt: (lambda a: L.matrix_norm(a, float("inf")), [T((3, 3), dt)]),
    "vector_norm": lambda dt: (lambda a: L.vector_norm(a, 3, dim=(0,)), [T((3, 3), dt)]),
    "norm": lambda dt: (lambda a: L.norm(a), [T((3, 3), dt)]),
    "pinv": lambda dt: (L.pinv, [T((4, 3), dt)]),
    "pinv_h": lambda dt: (lambda a: L.pinv(a + a.mH, hermitian=True), [T((3, 3), dt)]),
    "cond": lambda dt: (L.cond, [T((3, 3), dt)]),
    "matrix_power": lambda dt: (lambda a: L.matrix_power(a, -2), [T((3, 3), dt)]),
    "matrix_exp": lambda dt: (L.matrix_exp, [T((3, 3), dt)]),
    "multi_dot": lambda dt: (
        lambda a, b, c: L.multi_dot([a, b, c]),
        [T((2, 3), dt), T((3, 4), dt), T((4, 2), dt)],
    ),
    "householder_product": lambda dt: (L.householder_product, [T((4, 3), dt), T((2,), dt)]),
    "cross": lambda dt: (L.cross, [T((2, 3), dt), T((2, 3), dt)]),
    "vecdot": lambda dt: (L.vecdot, [T((2, 3), dt), T((2, 3), dt)]),
    "tensorinv": lambda dt: (lambda a: L.tensorinv(a, ind=2), [T((2, 3, 6), dt)]),
    "tensorsolve": lambda dt: (L.tensorsolve, [T((6, 2, 3), dt), T((6,), dt)]),
    "matmul": lambda dt: (L.matmul, [T((2, 3), dt), T((3, 2), dt)]),
    "diagonal": lambda dt: (L.diagonal, [T((3, 4), dt)]),
    "vander": lambda dt: (L.vander, [T((3,), dt)]),
    "matrix_sqrth": lambda dt: (lambda a: L.matrix_sqrth(a @ a.mH + E(3, dt)), [T((3, 3), dt)]),
    "polar": lambda dt: (L.polar, [T((4, 3), dt)]),
    "det_top": lambda dt: (
        (ember.logdet, [T((3, 3), dt, spd=True)])
        if dt == ember.float64
        else (ember.det, [T((3, 3), dt)])
    ),
    "cholesky_solve": lambda dt: (
        lambda b, l: ember.cholesky_solve(b, l.tril() + 3 * E(3, dt)),
        [T((3, 2), dt), T((3, 3), dt)],
    ),
    "cholesky_inverse": lambda dt: (
        lambda l: ember.cholesky_inverse(l.tril() + 3 * E(3, dt)),
        [T((3, 3), dt)],
    ),
    "triangular_solve": lambda dt: (
        lambda b, a: ember.triangular_solve(b, a.triu() + 3 * E(3, dt)).solution,
        [T((3, 2), dt), T((3, 3), dt)],
    ),
    "lu_unpack": lambda dt: (
        lambda a: ember.lu_unpack(a, ember.tensor([1, 2, 3], dtype=ember.int32))[1:],
        [T((3, 3), dt)],
    ),
    "pinverse": lambda dt: (ember.pinverse, [T((4, 3), dt)]),
    "svd_top": lambda dt: (lambda a: ember.svd(a)[1], [T((4, 3), dt)]),
    "qr_top": lambda dt: (lambda a: ember.qr(a), [T((4, 3), dt)]),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_and_gradgradcheck(name, dtype):
    fn, inputs = CASES[name](dtype)
    assert gradcheck(fn, tuple(inputs))
    assert gradgradcheck(fn, tuple(inputs))


def test_every_public_function_is_covered():
    # Not differentiable in PyTorch either: integer or boolean results, factorizations whose
    # derivative PyTorch does not implement (ldl_factor), and the error class.
    not_differentiable = {"LinAlgError", "matrix_rank", "ldl_factor", "ldl_factor_ex"}
    covered = {name.split("_top")[0] for name in CASES}
    covered |= {name.rsplit("_", 1)[0] for name in CASES if name.startswith("matrix_norm")}
    missing = set(L.__all__) - covered - not_differentiable
    assert missing == set()


def test_ldl_factor_is_not_differentiable():
    a = T((3, 3), ember.float64)
    ld, _ = L.ldl_factor(a + a.mT)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex"):
        ld.sum().backward()


def test_linalg_graphs_are_freed_after_backward():
    # Allocator bytes stay flat over many forward/backward steps through every family: no node,
    # saved tensor or LAPACK work buffer outlives its graph.
    stats = ember._C._allocator_stats
    a = T((3, 5, 5), ember.float64)
    b = T((3, 5, 2), ember.float64)

    def step():
        spd = a @ a.mT + E(5, ember.float64)
        u, s, vh = L.svd(a)
        q, r = L.qr(a)
        loss = (
            L.solve(a, b).sum()
            + L.cholesky(spd).sum()
            + L.eigh(spd).eigenvalues.sum()
            + s.sum()
            + r.abs().sum()
            + L.det(a).sum()
            + L.lstsq(a, b).solution.sum()
            + L.polar(a).H.sum()
            + L.matrix_sqrth(spd).sum()
            + L.inv(a).sum()
            + L.matrix_exp(a / 10).sum()
        )
        loss.backward()

    for _ in range(5):  # warm up: .grad buffers exist from here on
        step()
    before = stats()["current_bytes"]
    for _ in range(100):
        step()
    assert stats()["current_bytes"] == before
