"""OpInfos for the factories that compute values (arange, linspace, logspace, eye, full, zeros,
ones) against NumPy. Samples carry Python numbers and the dtype keyword; refs map the ember
dtype to NumPy's (bfloat16 results are compared in float32 with bfloat16 tolerances)."""

import numpy as np

import ember
from opinfo import ALL, FLOATING, INTEGRAL, OpInfo, Sample, np_dtype

NUMERIC_NO_BOOL = [d for d in ALL if d is not ember.bool]
REAL_NO_BOOL = INTEGRAL + FLOATING


def _np_kwargs(kwargs):
    kw = dict(kwargs)
    kw["dtype"] = np_dtype(kw["dtype"])
    return kw


def _arange_samples(dtype, rng):
    if dtype.is_floating_point:
        cases = [(0, 10), (2.5, 11, 3), (-5, 5, 0.75), (4, -4, -0.5), (0, 0.25)]
    else:
        hi = 100 if dtype is not ember.uint8 else 90
        cases = [(0, 10), (2, hi, 7), (10, 1, -3), (0, 0), (5, 6)]
        if dtype is ember.uint8:
            cases = [(0, 10), (2, 90, 7), (10, 1, -3), (0, 0)]
    return [Sample(c, {"dtype": dtype}, name=str(c)) for c in cases]


def _np_arange(*args, dtype):
    # Both libraries compute start + i * step in double and round once at the end.
    return np.arange(*args, dtype=np.float64).astype(np_dtype(dtype))


def _linspace_samples(dtype, rng):
    if dtype.is_floating_point or dtype.is_complex:
        cases = [(0, 1, 5), (-3.5, 7.25, 11), (2, -2, 4), (1, 1, 3), (0, 1, 1), (0, 1, 0)]
        if dtype.is_complex:
            cases.append((1 + 2j, -3 - 1j, 6))
    else:
        cases = [(0, 10, 4), (3, 90, 7), (0, 100, 101), (5, 5, 2), (0, 7, 1)]
    return [Sample(c, {"dtype": dtype}, name=str(c)) for c in cases]


def _np_linspace(start, end, steps, dtype):
    nd = np_dtype(dtype)
    ref = np.linspace(start, end, steps, dtype=np.complex128 if nd.kind == "c" else np.float64)
    if nd.kind in "iu":
        return np.trunc(ref).astype(nd)  # non-negative samples: trunc is floor
    return ref.astype(nd)


def _logspace_samples(dtype, rng):
    if dtype.is_floating_point:
        return [Sample((0, 2, 3), {"dtype": dtype}), Sample((-2.5, 3.1, 9), {"dtype": dtype}),
                Sample((0, 3, 4, 2.0), {"dtype": dtype}), Sample((-1, 1, 5, 3.0), {"dtype": dtype}),
                Sample((1, 1, 1), {"dtype": dtype})]
    if dtype.is_complex:
        return [Sample((0, 1 + 1j, 3), {"dtype": dtype}), Sample((-1, 2, 4), {"dtype": dtype})]
    return [Sample((0, 2, 3), {"dtype": dtype}), Sample((0, 6, 7, 2.0), {"dtype": dtype})]


def _np_logspace(start, end, steps, base=10.0, dtype=None):
    nd = np_dtype(dtype)
    work = np.complex128 if nd.kind == "c" else np.float64
    ref = np.power(base, np.linspace(start, end, steps, dtype=work))
    return (np.rint(ref) if nd.kind in "iu" else ref).astype(nd)


def _eye_samples(dtype, rng):
    return [Sample((n,) if m is None else (n, m), {"dtype": dtype}, name=f"{n}x{m}")
            for n, m in [(3, None), (2, 5), (4, 1), (0, None), (3, 0)]]


def _np_eye(n, m=None, dtype=None):
    return np.eye(n, m, dtype=np_dtype(dtype))


def _full_samples(dtype, rng):
    if dtype is ember.bool:
        values = [True, False]
    elif dtype.is_complex:
        values = [1.5 - 2j, 0]
    elif dtype.is_floating_point:
        values = [-2.5, 7, float("inf"), float("nan")]
    else:
        values = [3, 0, 100]
    shapes = [(2, 3), (), (0, 4), (5,)]
    return [Sample((s, v), {"dtype": dtype}, name=f"{s}-{v}") for s in shapes for v in values]


def _np_full(shape, value, dtype):
    return np.full(shape, value, dtype=np_dtype(dtype))


def _sized_samples(dtype, rng):
    out = [Sample(s, {"dtype": dtype}, name=str(s)) for s in [(2, 3), (0,), (4,), (1, 2, 3)]]
    return out + [Sample((s,), {"dtype": dtype}, name=f"seq{s}") for s in [(), [2, 2]]]


def _np_sized(fill):
    def ref(*size, dtype):
        shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
        return np.full(shape, fill, dtype=np_dtype(dtype))

    return ref


def _same(dt):
    return dt


# Factories take no tensor inputs: nothing to differentiate.
OP_DB = [
    OpInfo("arange", ref=_np_arange, dtypes=REAL_NO_BOOL, sample=_arange_samples,
           result_dtype=_same, differentiable=False),
    OpInfo("linspace", ref=_np_linspace, dtypes=NUMERIC_NO_BOOL, sample=_linspace_samples,
           result_dtype=_same, tol={ember.float16: (2e-3, 2e-3), ember.bfloat16: (2e-2, 2e-2)},
           differentiable=False),
    OpInfo("logspace", ref=_np_logspace, dtypes=NUMERIC_NO_BOOL, sample=_logspace_samples,
           result_dtype=_same,
           tol={ember.float32: (1e-5, 1e-5), ember.complex64: (1e-5, 1e-5),
                ember.float16: (2e-3, 2e-3), ember.bfloat16: (2e-2, 2e-2)},
           differentiable=False),
    OpInfo("eye", ref=_np_eye, dtypes=ALL, sample=_eye_samples, result_dtype=_same,
           differentiable=False),
    OpInfo("full", ref=_np_full, dtypes=ALL, sample=_full_samples, result_dtype=_same,
           differentiable=False),
    OpInfo("zeros", ref=_np_sized(0), dtypes=ALL, sample=_sized_samples, result_dtype=_same,
           differentiable=False),
    OpInfo("ones", ref=_np_sized(1), dtypes=ALL, sample=_sized_samples, result_dtype=_same,
           differentiable=False),
]
