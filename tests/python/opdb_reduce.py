"""OpInfos for every reduction and scan, checked against NumPy float64 / int64 references.

Samples cover 0-d, 1-d, 2-d and 3-d inputs, empty inputs, dims given as int, negative int, tuple
and None, keepdim, transposed and strided layouts, and NaN / inf for floating dtypes. (`sum`
itself is in opdb_core.py; `sum_all_forms` here adds the wider samples.)
"""

import itertools
import warnings

import numpy as np

import ember
from opinfo import (
    ALL,
    BOOL,
    COMPLEX,
    FLOATING,
    INTEGRAL,
    NUMERIC,
    REAL,
    OpInfo,
    Sample,
    make_array,
    make_tensor,
)

REAL_AND_BOOL = BOOL + REAL
FLOAT_AND_COMPLEX = FLOATING + COMPLEX
INT64 = ember.int64

# Half-precision sums round differently from a float64 reference.
SUM_TOL = {ember.float16: (2e-3, 2e-3), ember.bfloat16: (1.6e-2, 2e-2)}


def _axis(dim, a=None):
    if dim is None or (a is not None and a.ndim == 0):  # 0-d: dim 0 / -1 mean "everything"
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def _quiet(fn):
    """Calls a NumPy reference with its empty-slice / dof warnings silenced."""

    def wrapped(*args, **kwargs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)

    return wrapped


def _wide(a):
    """float64 / complex128 / int64 copies: references compute in the widest type."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return a.astype(np.int64)


def _special_ok(dtype):
    # Complex inf compares unequal in assert_allclose whenever the other part differs by an ulp;
    # complex NaN/inf propagation is covered by test_reduce_torch_parity.py.
    return dtype.is_floating_point


# ---- samples -----------------------------------------------------------------------------


def multi_dim_samples(dtype, rng, *, empty=True, keepdim=True, special=True, nonempty_dims=False,
                      dims_none=True):
    """Reductions taking dim as None / int / tuple."""
    cases = [((), None), ((), 0), ((), -1), ((7,), None), ((7,), 0), ((3, 5), 1), ((3, 5), -2),
             ((3, 5), (0, 1)), ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 0)), ((2, 3, 4), 1),
             ((2, 3, 4), None)]
    if empty:
        cases += [((0, 3), 1), ((3, 0), 0)]
        if not nonempty_dims:
            cases += [((0, 3), 0), ((0,), None)]
    out = []
    for shape, dim in cases:
        if dim is None and not dims_none:
            continue
        arr = make_array(shape, dtype, rng)
        for kd in ([False, True] if keepdim else [False]):
            kw = {"keepdim": kd}
            if dim is not None:
                kw["dim"] = dim
            out.append(Sample((make_tensor(arr, dtype),), kw, name=f"{shape}-{dim}-{kd}"))
    for layout in ("transposed", "strided"):
        arr = make_array((4, 6), dtype, rng)
        for dim in ([0, 1, None] if dims_none else [0, 1]):
            kw = {} if dim is None else {"dim": dim}
            t = make_tensor(arr, dtype, layout=layout)
            out.append(Sample((t,), kw, name=f"{layout}-{dim}"))
    if special and _special_ok(dtype):
        arr = make_array((3, 8), dtype, rng, special=True)
        for dim in [1, 0]:
            out.append(Sample((make_tensor(arr, dtype),), {"dim": dim}, name=f"nan-inf-{dim}"))
    return out


def single_dim_samples(dtype, rng, *, empty=True, keepdim=True, special=True, distinct=False):
    """Reductions and scans along one int dim."""
    cases = [((), 0), ((7,), 0), ((7,), -1), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1),
             ((2, 3, 4), -1)]
    if empty:
        cases += [((0, 3), 1), ((3, 0), 0)]
    out = []
    for shape, dim in cases:
        arr = _distinct(shape, dtype, rng) if distinct else make_array(shape, dtype, rng)
        for kd in ([False, True] if keepdim else [None]):
            kw = {"dim": dim} if kd is None else {"dim": dim, "keepdim": kd}
            out.append(Sample((make_tensor(arr, dtype),), kw, name=f"{shape}-{dim}-{kd}"))
    for layout in ("transposed", "strided"):
        arr = _distinct((4, 6), dtype, rng) if distinct else make_array((4, 6), dtype, rng)
        for dim in (0, 1):
            out.append(Sample((make_tensor(arr, dtype, layout=layout),), {"dim": dim},
                              name=f"{layout}-{dim}"))
    if special and _special_ok(dtype):
        arr = make_array((3, 8), dtype, rng, special=True)
        for dim in [1, 0]:
            out.append(Sample((make_tensor(arr, dtype),), {"dim": dim}, name=f"nan-inf-{dim}"))
    return out


def _distinct(shape, dtype, rng):
    """Values without ties (so that every index is unambiguous), in the dtype's range."""
    n = int(np.prod(shape)) if shape else 1
    if dtype is ember.uint8 or dtype is ember.int8:
        vals = rng.permutation(n) % 100 if n <= 100 else rng.integers(0, 100, n)
    else:
        vals = rng.permutation(n) - n // 2
    if dtype.is_floating_point:
        vals = vals * 0.25 + 0.125
    return np.asarray(vals).reshape(shape).astype(make_array((), dtype, rng).dtype)


def all_elements_samples(dtype, rng, *, empty=False, special=True):
    out = []
    for shape in [(), (7,), (3, 5), (2, 3, 4)] + ([(0,)] if empty else []):
        out.append(Sample((make_tensor(make_array(shape, dtype, rng), dtype),), name=str(shape)))
    arr = make_array((4, 6), dtype, rng)
    out.append(Sample((make_tensor(arr, dtype, layout="transposed"),), name="transposed"))
    if special and _special_ok(dtype):
        arr = make_array((8,), dtype, rng, special=True)
        out.append(Sample((make_tensor(arr, dtype),), name="nan-inf"))
    return out


# ---- references ----------------------------------------------------------------------------


def _sum_dtype(a):
    return np.int64 if a.dtype.kind in "biu" else None


@_quiet
def ref_sum(a, dim=None, keepdim=False, dtype=None):
    return np.sum(_wide(a), axis=_axis(dim, a), keepdims=keepdim)


@_quiet
def ref_nansum(a, dim=None, keepdim=False):
    return np.nansum(_wide(a), axis=_axis(dim, a), keepdims=keepdim)


@_quiet
def ref_mean(a, dim=None, keepdim=False):
    return np.mean(_wide(a), axis=_axis(dim, a), keepdims=keepdim)


@_quiet
def ref_nanmean(a, dim=None, keepdim=False):
    return np.nanmean(_wide(a), axis=_axis(dim, a), keepdims=keepdim)


@_quiet
def ref_prod(a, dim=None, keepdim=False):
    if dim is None:
        return np.prod(_wide(a))
    return np.prod(_wide(a), axis=dim, keepdims=keepdim)


@_quiet
def ref_amax(a, dim=None, keepdim=False):
    return np.amax(a, axis=_axis(dim, a), keepdims=keepdim)


@_quiet
def ref_amin(a, dim=None, keepdim=False):
    return np.amin(a, axis=_axis(dim, a), keepdims=keepdim)


def ref_max_dim(a, dim, keepdim=False):
    return np.amax(a, axis=dim, keepdims=keepdim), np.argmax(a, axis=dim, keepdims=keepdim)


def ref_min_dim(a, dim, keepdim=False):
    return np.amin(a, axis=dim, keepdims=keepdim), np.argmin(a, axis=dim, keepdims=keepdim)


def ref_aminmax(a, dim=None, keepdim=False):
    return np.amin(a, axis=dim, keepdims=keepdim), np.amax(a, axis=dim, keepdims=keepdim)


def ref_argmax(a, dim=None, keepdim=False):
    return np.argmax(a, axis=dim, keepdims=keepdim)


def ref_argmin(a, dim=None, keepdim=False):
    return np.argmin(a, axis=dim, keepdims=keepdim)


def _var(a, dim, correction, keepdim):
    return np.var(_wide(a), axis=_axis(dim, a), ddof=correction, keepdims=keepdim)


@_quiet
def ref_var(a, dim=None, keepdim=False, correction=1):
    return _var(a, dim, correction, keepdim)


@_quiet
def ref_std(a, dim=None, keepdim=False, correction=1):
    return np.sqrt(_var(a, dim, correction, keepdim))


@_quiet
def ref_var_mean(a, dim=None, keepdim=False, correction=1):
    mean = np.mean(_wide(a), axis=_axis(dim, a), keepdims=keepdim)
    return _var(a, dim, correction, keepdim), mean


@_quiet
def ref_std_mean(a, dim=None, keepdim=False, correction=1):
    return (np.sqrt(_var(a, dim, correction, keepdim)),
            np.mean(_wide(a), axis=_axis(dim, a), keepdims=keepdim))


@_quiet
def ref_norm(a, p="fro", dim=None, keepdim=False):
    x = np.abs(_wide(a))
    ax = _axis(dim)
    if p == "fro" or p == 2:
        return np.sqrt(np.sum(x * x, axis=ax, keepdims=keepdim))
    if p == np.inf:
        return np.max(x, axis=ax, keepdims=keepdim)
    if p == -np.inf:
        return np.min(x, axis=ax, keepdims=keepdim)
    if p == 0:
        return np.sum(x != 0, axis=ax, keepdims=keepdim).astype(np.float64)
    return np.sum(x**p, axis=ax, keepdims=keepdim) ** (1.0 / p)


@_quiet
def ref_logsumexp(a, dim, keepdim=False):
    x = _wide(a)
    if x.dtype.kind == "c":
        return np.log(np.sum(np.exp(x), axis=_axis(dim, a), keepdims=keepdim))
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    if x.ndim == 0:
        return x.copy()
    return np.logaddexp.reduce(x, axis=_axis(dim, a), keepdims=keepdim)


def ref_all(a, dim=None, keepdim=False):
    r = np.all(a, axis=_axis(dim, a), keepdims=keepdim)
    return r.astype(np.uint8) if a.dtype == np.uint8 else r


def ref_any(a, dim=None, keepdim=False):
    r = np.any(a, axis=_axis(dim, a), keepdims=keepdim)
    return r.astype(np.uint8) if a.dtype == np.uint8 else r


def ref_count_nonzero(a, dim=None):
    if a.ndim == 0:
        return np.int64(a != 0)
    return np.asarray(np.count_nonzero(a, axis=_axis(dim, a)), dtype=np.int64)


def _scan_axis(a, dim):
    return a.reshape(1) if a.ndim == 0 else a, (lambda r: r.reshape(()) if a.ndim == 0 else r)


def ref_cumsum(a, dim):
    x, back = _scan_axis(_wide(a), dim)
    return back(np.cumsum(x, axis=dim))


def ref_cumprod(a, dim):
    x, back = _scan_axis(_wide(a), dim)
    return back(np.cumprod(x, axis=dim))


def _log_add_exp_complex(x, y):
    """PyTorch's complex log(exp(x) + exp(y)): the larger real part factored out, so the
    imaginary part lands on the same branch as ember's."""
    swap = y.real < x.real
    lo, hi = np.where(swap, y, x), np.where(swap, x, y)
    return np.log1p(np.exp(lo - hi)) + hi


@_quiet
def ref_logcumsumexp(a, dim):
    x, back = _scan_axis(_wide(a), dim)
    if x.dtype.kind != "c":
        return back(np.logaddexp.accumulate(x, axis=dim))
    x = np.moveaxis(x, dim, -1)
    out = np.empty_like(x)
    acc = np.full(x.shape[:-1], -np.inf + 0j)
    for i in range(x.shape[-1]):
        acc = _log_add_exp_complex(x[..., i], acc)
        out[..., i] = acc
    return back(np.moveaxis(out, -1, dim))


def _cum_extremum(a, dim, is_max):
    x, back = _scan_axis(a, dim)
    x = np.moveaxis(x, dim, -1)
    vals = np.empty_like(x)
    idx = np.zeros(x.shape, dtype=np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        line = x[pos]
        best, bi = None, 0
        for i, v in enumerate(line):
            nan = v != v
            if best is None or nan or (v >= best if is_max else v <= best):
                if best is None or not (best != best) or nan:
                    best, bi = v, i
            vals[pos + (i,)] = best
            idx[pos + (i,)] = bi
    return back(np.moveaxis(vals, -1, dim)), back(np.moveaxis(idx, -1, dim))


def ref_cummax(a, dim):
    return _cum_extremum(a, dim, True)


def ref_cummin(a, dim):
    return _cum_extremum(a, dim, False)


def _line_apply(a, dim, keepdim, fn):
    """fn(line) -> (value, index) for every line of a along dim."""
    x = a.reshape(1) if a.ndim == 0 else a
    moved = np.moveaxis(x, dim, -1)
    vals = np.empty(moved.shape[:-1], dtype=a.dtype)
    idx = np.empty(moved.shape[:-1], dtype=np.int64)
    for pos in np.ndindex(moved.shape[:-1]):
        vals[pos], idx[pos] = fn(moved[pos])
    if a.ndim == 0:
        return vals.reshape(()), idx.reshape(())
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _median_line(line, ignore_nan):
    nan = np.isnan(line) if line.dtype.kind == "f" else np.zeros(line.shape, bool)
    if nan.any() and not ignore_nan:
        i = int(np.argmax(nan))
        return line[i], i
    valid = np.flatnonzero(~nan)
    if valid.size == 0:
        return np.nan, 0
    order = valid[np.argsort(line[valid], kind="stable")]
    i = int(order[(valid.size - 1) // 2])
    return line[i], i


def ref_median_dim(a, dim, keepdim=False):
    return _line_apply(a, dim, keepdim, lambda line: _median_line(line, False))


def ref_nanmedian_dim(a, dim, keepdim=False):
    return _line_apply(a, dim, keepdim, lambda line: _median_line(line, True))


@_quiet
def ref_median(a):
    if a.size == 0:
        return np.float64(np.nan)
    flat = a.reshape(-1)
    if flat.dtype.kind == "f" and np.isnan(flat).any():
        return np.float64(np.nan)
    return np.sort(flat)[(flat.size - 1) // 2]


@_quiet
def ref_nanmedian(a):
    flat = a.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.float64(np.nan)
    return np.sort(flat)[(flat.size - 1) // 2]


def _mode_line(line):
    vals, counts = np.unique(line, return_counts=True)
    v = vals[np.argmax(counts)]  # np.unique sorts: the smallest of the most frequent
    return v, int(np.flatnonzero(line == v)[-1])


def ref_mode(a, dim=-1, keepdim=False):
    return _line_apply(a, dim, keepdim, _mode_line)


def _ref_quantile(fn):
    @_quiet
    def ref(a, q, dim=None, keepdim=False, interpolation="linear"):
        return fn(_wide(a), np.asarray(q, dtype=np.float64), axis=dim, keepdims=keepdim,
                  method=interpolation)

    return ref


# ---- sample builders per op ------------------------------------------------------------------


def _with(samples_fn, **extra):
    def build(dtype, rng):
        out = samples_fn(dtype, rng)
        for s in out:
            s.kwargs.update(extra)
        return out

    return build


def _no_keepdim_without_dim(samples):
    return [s for s in samples if "dim" in s.kwargs or not s.kwargs.get("keepdim")]


def var_samples(dtype, rng):
    out = multi_dim_samples(dtype, rng)
    arr = make_array((4, 5), dtype, rng)
    for corr in (0, 2, 7):  # 7 >= N: inf / nan as PyTorch
        out.append(Sample((make_tensor(arr, dtype),), {"dim": 1, "correction": corr},
                          name=f"correction={corr}"))
    return out


def norm_samples(dtype, rng):
    out = []
    arr = make_array((3, 5), dtype, rng)
    special = make_array((3, 8), dtype, rng, special=True)
    for p in ["fro", 2, 1, 3.0, 0.5, 0, np.inf, -np.inf]:
        for dim, kd in [(None, False), (1, False), ((0, 1), True), (-2, True)]:
            kw = {"p": p, "keepdim": kd}
            if dim is not None:
                kw["dim"] = dim
            out.append(Sample((make_tensor(arr, dtype),), kw, name=f"p={p}-{dim}-{kd}"))
        out.append(Sample((make_tensor(special, dtype),), {"p": p, "dim": 1}, name=f"special-{p}"))
    out.append(Sample((make_tensor(make_array((), dtype, rng), dtype),), {}, name="0d"))
    out.append(Sample((make_tensor(make_array((0, 3), dtype, rng), dtype),), {"dim": 0},
                      name="empty"))
    out.append(Sample((make_tensor(arr, dtype, layout="transposed"),), {"p": 1, "dim": 0},
                      name="transposed"))
    return out


def mode_samples(dtype, rng):
    out = []
    for shape, dim in [((), 0), ((9,), 0), ((4, 9), 1), ((9, 4), 0), ((2, 3, 9), -1), ((0, 3), 1)]:
        if dtype is ember.bool:
            arr = rng.random(shape) > 0.5
        elif dtype.is_floating_point:
            arr = rng.integers(-2, 3, size=shape).astype(np.float32) * 0.5
        else:
            arr = rng.integers(0, 4, size=shape)
        t = ember.tensor(arr).to(dtype) if arr.ndim else ember.tensor(arr.item(), dtype=dtype)
        for kd in (False, True):
            out.append(Sample((t,), {"dim": dim, "keepdim": kd}, name=f"{shape}-{dim}-{kd}"))
    return out


def median_samples(dtype, rng):
    return single_dim_samples(dtype, rng, distinct=True, special=dtype.is_floating_point)


def quantile_samples(dtype, rng):
    out = []
    # q values whose rank q * (n - 1) is never exactly half-way, so 'nearest' is unambiguous.
    for shape, dim in [((), None), ((9,), None), ((9,), 0), ((4, 7), 1), ((4, 7), 0),
                       ((2, 3, 7), -1), ((2, 3, 5), None)]:
        arr = make_array(shape, dtype, rng)
        for q, interp, kd in itertools.product(
            [0.0, 0.37, 1.0, [0.13, 0.62, 0.9]],
            ["linear", "lower", "higher", "midpoint", "nearest"],
            [False, True],
        ):
            qa = ember.tensor(q, dtype=dtype) if isinstance(q, list) else q
            kw = {"keepdim": kd, "interpolation": interp}
            if dim is not None:
                kw["dim"] = dim
            out.append(Sample((make_tensor(arr, dtype), qa), kw, name=f"{shape}-{dim}-{q}"))
    special = make_array((3, 8), dtype, rng, special=True)
    out.append(Sample((make_tensor(special, dtype), 0.41), {"dim": 1}, name="nan-inf"))
    out.append(Sample((make_tensor(make_array((4, 6), dtype, rng), dtype, layout="transposed"),
                       0.7), {"dim": 0}, name="transposed"))
    return out


def nanquantile_samples(dtype, rng):
    out = quantile_samples(dtype, rng)
    arr = make_array((4, 9), dtype, rng)
    arr[0, :3] = np.nan
    arr[1, :] = np.nan  # all NaN: nan
    for interp in ["linear", "lower", "higher", "midpoint", "nearest"]:
        out.append(Sample((make_tensor(arr, dtype), 0.41), {"dim": 1, "interpolation": interp},
                          name=f"nan-rows-{interp}"))
    return out


# ---- gradcheck samples (Note [Gradcheck Entries] in opinfo.py) -----------------------------


def _finite_small(sample):
    """The default gradcheck filter: at most 40 elements per tensor, no NaN / inf."""
    for a in sample.args:
        if isinstance(a, ember.Tensor) and a.numel():
            if a.numel() > 40 or not bool(ember.isfinite(a).all()):
                return False
    return True


def var_grad_samples(dtype, rng):
    # Finite results only: a variance of one element (0-d input) or with correction >= N is
    # inf / nan, where the derivative is undefined.
    return [s for s in var_samples(dtype, rng)
            if _finite_small(s) and s.args[0].dim() > 0 and s.kwargs.get("correction", 1) < 5]


def mode_grad_samples(dtype, rng):
    # Ties make mode discontinuous; with distinct values the mode is the smallest value.
    out = []
    for shape, dim in [((), 0), ((9,), 0), ((4, 9), 1), ((9, 4), 0), ((2, 3, 9), -1)]:
        t = make_tensor(_distinct(shape, dtype, rng), dtype)
        for kd in (False, True):
            out.append(Sample((t,), {"dim": dim, "keepdim": kd}, name=f"{shape}-{dim}-{kd}"))
    return out


def _interior_q(sample):
    q = sample.args[1]
    vals = q.tolist() if isinstance(q, ember.Tensor) else q
    return all(0 < v < 1 for v in (vals if isinstance(vals, list) else [vals]))


def quantile_grad_samples(samples_fn):
    # q strictly inside (0, 1): gradcheck perturbs q, and q * (n - 1) is never an integer in
    # these samples, so every interpolation mode is differentiable there.
    def build(dtype, rng):
        return [s for s in samples_fn(dtype, rng) if _finite_small(s) and _interior_q(s)]

    return build


def _same(dt):
    return dt


def _int64_for_ints(dt):
    return INT64 if dt is ember.bool or dt in INTEGRAL else dt


def _real_of(dt):
    return {ember.complex64: ember.float32, ember.complex128: ember.float64}.get(dt, dt)


def _logical_dtype(dt):
    return ember.uint8 if dt is ember.uint8 else ember.bool


def _float_for_ints(dt):
    return ember.float32 if dt is ember.bool or dt in INTEGRAL else dt


def _pair(f, g):
    return lambda dt: (f(dt), g(dt))


OP_DB = [
    OpInfo("sum_all_forms", ref=ref_sum, dtypes=ALL, ember_fn=ember.sum,
           sample=multi_dim_samples, result_dtype=_int64_for_ints, tol=SUM_TOL,
           differentiable=True, grad_complex=True, gradgrad=True),
    OpInfo("nansum", ref=ref_nansum, dtypes=BOOL + REAL, sample=multi_dim_samples,
           result_dtype=_int64_for_ints, tol=SUM_TOL, differentiable=True, gradgrad=True),
    OpInfo("mean", ref=ref_mean, dtypes=FLOAT_AND_COMPLEX, sample=multi_dim_samples,
           result_dtype=_same, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("nanmean", ref=ref_nanmean, dtypes=FLOATING, sample=multi_dim_samples,
           result_dtype=_same, tol=SUM_TOL, differentiable=True, gradgrad=True),
    OpInfo("prod", ref=ref_prod, dtypes=ALL,
           sample=lambda dt, rng: [s for s in single_dim_samples(dt, rng)]
           + all_elements_samples(dt, rng, empty=True),
           result_dtype=_int64_for_ints, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("amax", ref=ref_amax, dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: multi_dim_samples(dt, rng, nonempty_dims=True),
           result_dtype=_same, differentiable=True, gradgrad=True),
    OpInfo("amin", ref=ref_amin, dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: multi_dim_samples(dt, rng, nonempty_dims=True),
           result_dtype=_same, differentiable=True, gradgrad=True),
    OpInfo("max_dim", ref=ref_max_dim, dtypes=REAL_AND_BOOL, ember_fn=ember.max,
           sample=lambda dt, rng: [s for s in single_dim_samples(dt, rng, distinct=True)
                                   if s.name != "(3, 0)-0-False" and s.name != "(3, 0)-0-True"],
           result_dtype=None, differentiable=True, gradgrad=True),
    OpInfo("min_dim", ref=ref_min_dim, dtypes=REAL_AND_BOOL, ember_fn=ember.min,
           sample=lambda dt, rng: [s for s in single_dim_samples(dt, rng, distinct=True)
                                   if not s.name.startswith("(3, 0)-0")],
           differentiable=True, gradgrad=True),
    OpInfo("max", ref=lambda a: np.amax(a), dtypes=REAL_AND_BOOL,
           sample=all_elements_samples, result_dtype=_same, differentiable=True, gradgrad=True),
    OpInfo("min", ref=lambda a: np.amin(a), dtypes=REAL_AND_BOOL,
           sample=all_elements_samples, result_dtype=_same, differentiable=True, gradgrad=True),
    OpInfo("aminmax", ref=ref_aminmax, dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: all_elements_samples(dt, rng)
           + [s for s in single_dim_samples(dt, rng) if not s.name.startswith("(3, 0)-0")],
           differentiable=True, gradgrad=True),
    OpInfo("argmax", ref=ref_argmax, dtypes=REAL,
           sample=lambda dt, rng: all_elements_samples(dt, rng)
           + [Sample(s.args, {"keepdim": True}, name="keepdim-all")
              for s in all_elements_samples(dt, rng)[1:3]]
           + [s for s in single_dim_samples(dt, rng, distinct=True)
              if not s.name.startswith("(3, 0)-0")],
           result_dtype=lambda dt: INT64, differentiable=False),
    OpInfo("argmin", ref=ref_argmin, dtypes=REAL,
           sample=lambda dt, rng: all_elements_samples(dt, rng)
           + [s for s in single_dim_samples(dt, rng, distinct=True)
              if not s.name.startswith("(3, 0)-0")],
           result_dtype=lambda dt: INT64, differentiable=False),
    OpInfo("var", ref=ref_var, dtypes=FLOAT_AND_COMPLEX, sample=var_samples,
           result_dtype=_real_of, tol=SUM_TOL, differentiable=True, grad_sample=var_grad_samples,
           grad_complex=True, gradgrad=True),
    OpInfo("std", ref=ref_std, dtypes=FLOAT_AND_COMPLEX, sample=var_samples,
           result_dtype=_real_of, tol=SUM_TOL, differentiable=True, grad_sample=var_grad_samples,
           grad_complex=True, gradgrad=True),
    OpInfo("var_mean", ref=ref_var_mean, dtypes=FLOAT_AND_COMPLEX,
           sample=lambda dt, rng: [s for s in var_samples(dt, rng)
                                   if not s.name.startswith("nan-inf")], tol=SUM_TOL,
           differentiable=True, grad_sample=var_grad_samples, grad_complex=True, gradgrad=True),
    OpInfo("std_mean", ref=ref_std_mean, dtypes=FLOAT_AND_COMPLEX,
           sample=lambda dt, rng: [s for s in var_samples(dt, rng)
                                   if not s.name.startswith("nan-inf")], tol=SUM_TOL,
           differentiable=True, grad_sample=var_grad_samples, grad_complex=True, gradgrad=True),
    OpInfo("norm", ref=ref_norm, dtypes=FLOAT_AND_COMPLEX, sample=norm_samples,
           result_dtype=_real_of, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("logsumexp", ref=ref_logsumexp, dtypes=ALL,
           sample=lambda dt, rng: multi_dim_samples(dt, rng, dims_none=False,
                                                    special=not dt.is_complex),
           result_dtype=_float_for_ints, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("all", ref=ref_all, dtypes=ALL, sample=multi_dim_samples, result_dtype=_logical_dtype,
           differentiable=False),
    OpInfo("any", ref=ref_any, dtypes=ALL, sample=multi_dim_samples, result_dtype=_logical_dtype,
           differentiable=False),
    OpInfo("count_nonzero", ref=ref_count_nonzero, dtypes=ALL,
           sample=lambda dt, rng: _no_keepdim_without_dim(
               [Sample(s.args, {k: v for k, v in s.kwargs.items() if k != "keepdim"}, s.name)
                for s in multi_dim_samples(dt, rng, keepdim=False)]),
           result_dtype=lambda dt: INT64, differentiable=False),
    OpInfo("cumsum", ref=ref_cumsum, dtypes=ALL,
           sample=lambda dt, rng: single_dim_samples(dt, rng, keepdim=False),
           result_dtype=_int64_for_ints, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("cumprod", ref=ref_cumprod, dtypes=ALL,
           sample=lambda dt, rng: single_dim_samples(dt, rng, keepdim=False),
           result_dtype=_int64_for_ints, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("cummax", ref=ref_cummax, dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: single_dim_samples(dt, rng, keepdim=False),
           differentiable=True, gradgrad=True),
    OpInfo("cummin", ref=ref_cummin, dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: single_dim_samples(dt, rng, keepdim=False),
           differentiable=True, gradgrad=True),
    OpInfo("logcumsumexp", ref=ref_logcumsumexp, dtypes=FLOAT_AND_COMPLEX,
           sample=lambda dt, rng: single_dim_samples(dt, rng, keepdim=False,
                                                     special=not dt.is_complex),
           result_dtype=_same, tol=SUM_TOL, differentiable=True, grad_complex=True,
           gradgrad=True),
    OpInfo("median", ref=ref_median, dtypes=REAL,
           sample=lambda dt, rng: all_elements_samples(dt, rng, empty=dt.is_floating_point),
           result_dtype=_same, differentiable=True, gradgrad=True),
    OpInfo("nanmedian", ref=ref_nanmedian, dtypes=REAL,
           sample=lambda dt, rng: all_elements_samples(dt, rng, empty=dt.is_floating_point),
           result_dtype=_same, differentiable=True, gradgrad=True),
    OpInfo("median_dim", ref=ref_median_dim, dtypes=REAL, ember_fn=ember.median,
           sample=lambda dt, rng: [s for s in median_samples(dt, rng)
                                   if not s.name.startswith("(3, 0)-0")],
           differentiable=True, gradgrad=True),
    OpInfo("nanmedian_dim", ref=ref_nanmedian_dim, dtypes=REAL, ember_fn=ember.nanmedian,
           sample=lambda dt, rng: [s for s in median_samples(dt, rng)
                                   if not s.name.startswith("(3, 0)-0")],
           differentiable=True, gradgrad=True),
    OpInfo("mode", ref=ref_mode, dtypes=REAL_AND_BOOL, sample=mode_samples, differentiable=True,
           grad_sample=mode_grad_samples, gradgrad=True),
    OpInfo("quantile", ref=_ref_quantile(np.quantile), dtypes=[ember.float32, ember.float64],
           sample=quantile_samples, result_dtype=_same, differentiable=True,
           grad_sample=quantile_grad_samples(quantile_samples)),
    OpInfo("nanquantile", ref=_ref_quantile(np.nanquantile), dtypes=[ember.float32, ember.float64],
           sample=nanquantile_samples, result_dtype=_same, differentiable=True,
           grad_sample=quantile_grad_samples(nanquantile_samples)),
]

# Keep the imports that document the dtype sets used above.
_ = (NUMERIC, COMPLEX)
