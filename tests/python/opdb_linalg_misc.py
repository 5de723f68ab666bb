"""OpInfos for ember.linalg's products, norms and matrix functions: vector_norm, vecdot, cross,
vander, diagonal, multi_dot, matrix_power (positive and negative), matrix_exp, tensorinv,
tensorsolve. References are NumPy's in float64 / complex128 (matrix_exp: a 30-term Taylor series
after scaling, then squaring). Focused tests (errors, edge cases, torch parity) live in
test_linalg_misc.py."""

import numpy as np

import ember
from opinfo import (
    COMPLEX,
    FLOATING,
    INTEGRAL,
    OpInfo,
    Sample,
    make_array,
    make_tensor,
    unary_samples,
)

L = ember.linalg
INF = float("inf")
FLOAT_COMPLEX = [ember.float32, ember.float64] + COMPLEX
NUMERIC = INTEGRAL + FLOATING + COMPLEX
# Products accumulate several terms: float32 and the half types need more room than one op.
PRODUCT_TOL = {
    ember.float16: (2e-3, 5e-3),
    ember.bfloat16: (1.6e-2, 5e-2),
    ember.float32: (1e-5, 1e-4),
    ember.complex64: (1e-5, 1e-4),
}
SOLVE_TOL = {ember.float32: (1e-4, 1e-4), ember.complex64: (1e-4, 1e-4),
             ember.float64: (1e-9, 1e-9), ember.complex128: (1e-9, 1e-9)}


def wide(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return a.astype(np.int64)


def _t(shape, dtype, rng, layout="contiguous", low=-3.0, high=3.0):
    t = make_tensor(make_array(shape, dtype, rng, low=low, high=high), dtype, layout=layout)
    return t.reshape(shape) if shape == () else t


def _square(shape, dtype, rng, boost, layout="contiguous"):
    """Random matrices plus boost * I (well conditioned), in dtype and layout."""
    a = make_array(shape, dtype, rng, low=-1.0, high=1.0)
    n = shape[-1]
    a = (a + boost * np.eye(n)).astype(a.dtype) if boost else a
    return make_tensor(a, dtype, layout=layout)


# ---- vector_norm ---------------------------------------------------------------------------

def np_vector_norm(x, ord=2, dim=None, keepdim=False):
    a = np.abs(wide(x)).astype(np.float64)
    axis = None if dim is None or dim == () else dim
    with np.errstate(divide="ignore", invalid="ignore"):
        if ord == INF:
            return a.max(axis=axis, keepdims=keepdim)
        if ord == -INF:
            return a.min(axis=axis, keepdims=keepdim)
        if ord == 0:
            return (a != 0).sum(axis=axis, keepdims=keepdim).astype(np.float64)
        return (a**ord).sum(axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _vector_norm_samples(dtype, rng):
    out = []
    for i, s in enumerate(unary_samples(dtype, rng)):
        t = s.args[0]
        ords = [2, 1, 0, 3, 0.5, INF] if t.numel() else [2, 1, 0]
        if t.numel() and t.dim() and all(n for n in t.shape):
            ords = ords + [-1, -INF]
        for ord in ords:
            kw = {"ord": ord}
            if t.dim() >= 2:
                kw.update(dim=(-1, 0) if i % 2 else 1, keepdim=bool(i % 3))
            out.append(Sample((t,), kw, name=f"{s.name}-ord{ord}"))
    return out


def _vector_norm_grad_samples(dtype, rng):
    # distinct, non-zero magnitudes: no ties for the inf norms, no poles for negative orders
    signs = np.where(np.arange(12) % 3, 1, -1)
    base = (np.arange(1, 13) * 0.37 * signs).reshape(3, 4)
    if dtype.is_complex:
        base = base * np.exp(1j * np.arange(12).reshape(3, 4))
    t = ember.tensor(base, dtype=dtype)
    return [Sample((t,), {"ord": o, "dim": d}, name=f"ord{o}")
            for o, d in [(2, None), (3, 1), (1.5, 0), (INF, 1), (-INF, None), (-1, (0, 1))]]


def _real_result(dt):
    return {ember.complex64: ember.float32, ember.complex128: ember.float64}.get(dt, dt)


# ---- vecdot, cross -------------------------------------------------------------------------

def np_vecdot(x, y, dim=-1):
    r = np.conj(wide(x)) * wide(y)
    return r.sum(axis=dim) if r.ndim else r


def _vecdot_samples(dtype, rng):
    cases = [((4,), (4,), -1), ((3, 4), (3, 4), -1), ((3, 1), (1, 4), 0), ((2, 3, 4), (4,), -1),
             ((), (), -1), ((0, 4), (1, 4), 1), ((2, 0), (2, 0), -1)]
    out = [Sample((_t(a, dtype, rng), _t(b, dtype, rng)), {"dim": d}, name=f"{a}-{b}")
           for a, b, d in cases]
    out.append(Sample((_t((4, 3), dtype, rng, "transposed"), _t((4, 3), dtype, rng, "strided")),
                      {"dim": -2}, name="noncontiguous"))
    return out


def _cross_samples(dtype, rng):
    cases = [((3,), (3,), -1), ((4, 3), (4, 3), -1), ((2, 1, 3), (1, 5, 3), -1),
             ((3, 4), (3, 1), 0), ((0, 3), (0, 3), 1)]
    out = [Sample((_t(a, dtype, rng), _t(b, dtype, rng)), {"dim": d}, name=f"{a}-{b}")
           for a, b, d in cases]
    out.append(Sample((_t((3, 4), dtype, rng, "transposed"), _t((3, 4), dtype, rng, "strided")),
                      {"dim": 0}, name="noncontiguous"))
    return out


def np_cross(a, b, dim=-1):
    r = np.cross(wide(a), wide(b), axis=dim)
    return r.astype(a.dtype) if a.dtype.kind in "iu" else r


# ---- vander, diagonal ----------------------------------------------------------------------

def np_vander(x, N=None):
    x = wide(x)
    x = x.reshape(1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    return x[..., None] ** np.arange(n)


def _vander_samples(dtype, rng):
    lo, hi = (-2.0, 2.0)
    out = [Sample((_t((4,), dtype, rng, low=lo, high=hi),), name="1d"),
           Sample((_t((4,), dtype, rng, low=lo, high=hi),), {"N": 6}, name="1d-N6"),
           Sample((_t((2, 3), dtype, rng, low=lo, high=hi),), {"N": 2}, name="2d-N2"),
           Sample((_t((3, 4), dtype, rng, "transposed", lo, hi),), name="transposed"),
           Sample((_t((0,), dtype, rng),), {"N": 3}, name="empty")]
    if dtype.is_floating_point or dtype.is_complex:
        x = _t((4,), dtype, rng)
        x[1] = 0  # cumprod through a zero
        out.append(Sample((x,), {"N": 4}, name="zero"))
    return out


def _diagonal_samples(dtype, rng):
    return [Sample((_t((3, 5), dtype, rng),), name="2d"),
            Sample((_t((2, 3, 4), dtype, rng),), {"offset": 1}, name="3d-offset1"),
            Sample((_t((2, 4, 3), dtype, rng, "transposed"),), {"offset": -1}, name="transposed"),
            Sample((_t((4, 2, 3), dtype, rng),), {"offset": 1, "dim1": 0, "dim2": 2},
                   name="dims"),
            Sample((_t((0, 3, 3), dtype, rng),), name="empty")]


# ---- multi_dot, matrix_power, matrix_exp ---------------------------------------------------

def _multi_dot_samples(dtype, rng):
    chains = [[(3, 4), (4, 5)], [(4,), (4, 5)], [(3, 4), (4,)], [(2, 3), (3, 4), (4, 5)],
              [(5,), (5, 6), (6, 2), (2, 3), (3,)], [(2, 6), (6, 3), (3, 5), (5, 2)],
              [(0, 3), (3, 4)]]
    out = [Sample(tuple(_t(s, dtype, rng, low=-2, high=2) for s in c),
                  name="-".join("x".join(map(str, s)) for s in c)) for c in chains]
    out.append(Sample((_t((4, 3), dtype, rng, "transposed", -2, 2),
                       _t((3, 5), dtype, rng, "strided", -2, 2)), name="noncontiguous"))
    return out


def np_multi_dot(*arrays):
    r = np.linalg.multi_dot([wide(a) for a in arrays])
    return r.astype(arrays[0].dtype) if arrays[0].dtype.kind in "iu" else r


def _matrix_power_samples(dtype, rng):
    out = []
    for n in (0, 1, 2, 3, 5):
        lo, hi = (-2, 2) if dtype.is_floating_point or dtype.is_complex else (-1, 1)
        out.append(Sample((_t((3, 3), dtype, rng, low=lo / 2, high=hi / 2), n), name=f"n{n}"))
    out.append(Sample((_t((2, 3, 3), dtype, rng, "transposed", -1, 1), 4), name="batch-T"))
    out.append(Sample((_t((0, 2, 2), dtype, rng), 3), name="empty"))
    return out


def np_matrix_power(a, n):
    r = np.linalg.matrix_power(wide(a), n)
    return r.astype(a.dtype) if a.dtype.kind in "iu" else r


def _matrix_power_negative_samples(dtype, rng):
    return [Sample((_square((3, 3), dtype, rng, 3), n), name=f"n{n}") for n in (-1, -2, -5)] + [
        Sample((_square((2, 3, 3), dtype, rng, 3, "transposed"), -3), name="batch-T")]


def np_expm(a):
    a = wide(a)
    if a.size == 0:
        return a
    norm = np.abs(a).sum(-2).max()
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0 else 0
    x = a / 2.0**s
    term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).astype(a.dtype)
    result = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


def _matrix_exp_samples(dtype, rng):
    out = []
    for scale in (1e-3, 0.04, 0.3, 1.0, 2.0):
        a = make_array((3, 3), dtype, rng, low=-1, high=1)
        out.append(Sample((make_tensor((a * scale).astype(a.dtype), dtype),), name=f"s{scale}"))
    out.append(Sample((_t((2, 4, 4), dtype, rng, "transposed", -0.5, 0.5),), name="batch-T"))
    out.append(Sample((_t((2, 1, 1), dtype, rng),), name="1x1"))
    out.append(Sample((_t((0, 3, 3), dtype, rng),), name="empty"))
    return out


# ---- tensorinv, tensorsolve ----------------------------------------------------------------

def _tensorinv_samples(dtype, rng):
    a = _square((6, 6), dtype, rng, 4).reshape(2, 3, 6)
    b = _square((6, 6), dtype, rng, 4).reshape(6, 2, 3)
    return [Sample((a,), {"ind": 2}, name="ind2"), Sample((b,), {"ind": 1}, name="ind1")]


def _tensorsolve_samples(dtype, rng):
    a = _square((6, 6), dtype, rng, 4).reshape(2, 3, 6)
    b = _square((6, 6), dtype, rng, 4).reshape(6, 2, 3)
    return [Sample((a, _t((2, 3), dtype, rng)), name="2x3"),
            Sample((b, _t((2, 3), dtype, rng)), {"dims": (0,)}, name="dims")]


def np_tensorsolve(a, b, dims=None):
    return np.linalg.tensorsolve(wide(a), wide(b), axes=dims)


OP_DB = [
    OpInfo("linalg.vector_norm", ref=np_vector_norm, dtypes=FLOATING + COMPLEX,
           sample=_vector_norm_samples, ember_fn=L.vector_norm, result_dtype=_real_result,
           differentiable=True, grad_sample=_vector_norm_grad_samples, grad_complex=True,
           gradgrad=True, tol={ember.float16: (2e-3, 2e-3), ember.bfloat16: (2e-2, 2e-2)}),
    OpInfo("linalg.vecdot", ref=np_vecdot, dtypes=FLOATING + COMPLEX, sample=_vecdot_samples,
           ember_fn=L.vecdot, result_dtype=lambda d: d, differentiable=True, grad_complex=True,
           gradgrad=True, tol=PRODUCT_TOL),
    OpInfo("linalg.cross", ref=np_cross, dtypes=NUMERIC, sample=_cross_samples,
           ember_fn=L.cross, result_dtype=lambda d: d, differentiable=True, grad_complex=True,
           gradgrad=True, tol=PRODUCT_TOL),
    OpInfo("linalg.vander", ref=np_vander,
           dtypes=[ember.float32, ember.float64] + COMPLEX + INTEGRAL, sample=_vander_samples,
           ember_fn=L.vander,
           result_dtype=lambda d: ember.int64 if d in INTEGRAL else d, differentiable=True,
           grad_complex=True, gradgrad=True, tol=PRODUCT_TOL),
    OpInfo("linalg.diagonal", ref=lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(
               a, offset, dim1, dim2), dtypes=[ember.bool] + NUMERIC, sample=_diagonal_samples,
           ember_fn=L.diagonal, result_dtype=lambda d: d, differentiable=True,
           grad_complex=True),
    OpInfo("linalg.multi_dot", ref=np_multi_dot, dtypes=NUMERIC, sample=_multi_dot_samples,
           ember_fn=lambda *ts: L.multi_dot(list(ts)), result_dtype=lambda d: d,
           differentiable=True, grad_complex=True, gradgrad=True, tol=PRODUCT_TOL),
    OpInfo("linalg.matrix_power", ref=np_matrix_power, dtypes=NUMERIC,
           sample=_matrix_power_samples, ember_fn=L.matrix_power, result_dtype=lambda d: d,
           differentiable=True, grad_complex=True, gradgrad=True, grad_args=(0,),
           tol=PRODUCT_TOL),
    OpInfo("linalg.matrix_power(n<0)", ref=np_matrix_power, dtypes=FLOAT_COMPLEX,
           sample=_matrix_power_negative_samples, ember_fn=L.matrix_power,
           result_dtype=lambda d: d, differentiable=True, grad_complex=True, gradgrad=True,
           grad_args=(0,), tol=SOLVE_TOL),
    OpInfo("linalg.matrix_exp", ref=np_expm, dtypes=FLOATING + COMPLEX,
           sample=_matrix_exp_samples, ember_fn=L.matrix_exp, result_dtype=lambda d: d,
           differentiable=True, grad_complex=True, gradgrad=True,
           tol={**PRODUCT_TOL, ember.float64: (1e-12, 1e-12), ember.complex128: (1e-12, 1e-12)}),
    OpInfo("linalg.tensorinv", ref=lambda a, ind=2: np.linalg.tensorinv(wide(a), ind),
           dtypes=FLOAT_COMPLEX, sample=_tensorinv_samples, ember_fn=L.tensorinv,
           result_dtype=lambda d: d, differentiable=True, grad_complex=True, tol=SOLVE_TOL),
    OpInfo("linalg.tensorsolve", ref=np_tensorsolve, dtypes=FLOAT_COMPLEX,
           sample=_tensorsolve_samples, ember_fn=L.tensorsolve, result_dtype=lambda d: d,
           differentiable=True, grad_complex=True, gradgrad=True, tol=SOLVE_TOL),
]
