"""OpInfos for the joining and ordering family: cat/stack and friends, flip/roll/rot90,
repeat/tile/repeat_interleave, tril/triu, diag*, trace, sort/argsort/msort/topk/kthvalue,
unique/unique_consecutive, bincount/histc/histogram, searchsorted/bucketize, meshgrid,
cartesian_prod, combinations, outer/ger, cross, kron, tensordot, einsum, cdist."""

import itertools

import numpy as np

import ember
from opinfo import ALL, BOOL, COMPLEX, FLOATING, INTEGRAL, OpInfo, Sample, make_array, make_tensor

REAL = INTEGRAL + FLOATING
NUMERIC = INTEGRAL + FLOATING + COMPLEX
SORTABLE = BOOL + INTEGRAL + FLOATING  # PyTorch's CPU sort has no complex support


def _t(shape, dtype, rng, layout="contiguous", **kw):
    t = make_tensor(make_array(shape, dtype, rng, **kw), dtype, layout=layout)
    return t.reshape(shape) if shape == () else t  # ember.tensor(0-d array) may come back 1-D


def _distinct(shape, dtype, rng):
    """Distinct small integers (exact in every dtype), so orderings have no ties."""
    n = int(np.prod(shape))
    vals = rng.permutation(n) - (0 if dtype in (ember.uint8,) else n // 2)
    return make_tensor(vals.reshape(shape).astype(np.float64), dtype)


def _np(x):
    """Keyword-argument tensors reach references unconverted; convert them here."""
    if isinstance(x, ember.Tensor):
        return x.float().numpy() if x.dtype is ember.bfloat16 else x.numpy()
    return x


def wide(a):
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    if a.dtype.kind == "b":
        return a
    return a.astype(np.int64)


# ---- joining --------------------------------------------------------------------------------

def _np_cat(tensors, dim=0, axis=None):
    arrs = [a for a in tensors if not (a.ndim == 1 and a.shape[0] == 0)]
    if not arrs:
        return np.concatenate(tensors)
    return np.concatenate(arrs, axis=dim if axis is None else axis)


def cat_samples(dtype, rng):
    out = []
    a, b = _t((2, 3), dtype, rng), _t((4, 3), dtype, rng, "transposed")
    out.append(Sample(([a, b],), name="dim0"))
    out.append(Sample(([a, _t((2, 5), dtype, rng, "strided")],), {"dim": -1}, name="dim-1"))
    out.append(Sample(([_t((0, 3), dtype, rng), a, _t((0,), dtype, rng)],), name="empty-parts"))
    out.append(Sample(([_t((2, 3, 4), dtype, rng)] * 3,), {"dim": 1}, name="3d"))
    out.append(Sample(((_t((5,), dtype, rng),),), name="single-tuple"))
    return out


def stack_samples(dtype, rng):
    out = []
    for dim in (0, 1, 2, -1, -3):
        out.append(Sample(([_t((2, 3), dtype, rng), _t((2, 3), dtype, rng, "transposed")],),
                          {"dim": dim}, name=f"dim{dim}"))
    out.append(Sample(([_t((), dtype, rng), _t((), dtype, rng)],), name="0d"))
    out.append(Sample(([_t((0, 2), dtype, rng)] * 2,), name="empty"))
    return out


def multi_stack_samples(dtype, rng):
    out = []
    for shapes in [[(), ()], [(3,), (3,)], [(2, 3), (2, 3)], [(2, 3, 2), (2, 3, 2)], [(0,), (0,)]]:
        out.append(Sample(([_t(s, dtype, rng) for s in shapes],), name=str(shapes)))
    return out


def _np_column_stack(tensors):
    return np.column_stack(tensors)


def _listwise(fn_name):
    """ember.<fn_name> called with a list (the op database samples) or with the tensors as
    separate positional arguments (gradcheck samples: the harness differentiates tensor args)."""
    def call(*args, **kwargs):
        fn = getattr(ember, fn_name)
        if args and isinstance(args[0], (list, tuple)):
            return fn(*args, **kwargs)
        return fn(list(args), **kwargs)
    return call


def _spread(sample_fn):
    """Gradcheck samples of a list op: each list sample's tensors as positional arguments."""
    def samples(dtype, rng):
        out = []
        for s in sample_fn(dtype, rng):
            ts = s.args[0]
            if all(t.numel() <= 40 for t in ts):
                out.append(Sample(tuple(ts), s.kwargs, name=s.name))
        return out
    return samples


# ---- reordering -----------------------------------------------------------------------------

def flip_samples(dtype, rng):
    out = []
    for shape, dims in [((2, 3, 4), (0,)), ((2, 3, 4), (0, 2)), ((3, 4), (-1,)), ((3, 4), ()),
                        ((), (0,)), ((0, 3), (1,))]:
        for layout in ("contiguous", "transposed"):
            out.append(Sample((_t(shape, dtype, rng, layout), dims),
                              name=f"{shape}-{dims}-{layout}"))
    return out


def roll_samples(dtype, rng):
    return [
        Sample((_t((3, 4), dtype, rng), 5), name="flat"),
        Sample((_t((3, 4), dtype, rng, "transposed"), -7, 0), name="dim0"),
        Sample((_t((2, 3, 4), dtype, rng), (1, -2), (0, 2)), name="two-dims"),
        Sample((_t((2, 3), dtype, rng), (1, 2), (1, 1)), name="same-dim-twice"),
        Sample((_t((), dtype, rng), 3), name="0d"),
        Sample((_t((0, 3), dtype, rng), 2, 0), name="empty"),
    ]


def _np_roll(a, shifts, dims=None):
    return np.roll(a, shifts, axis=dims)


def rot90_samples(dtype, rng):
    out = []
    for k in (-1, 0, 1, 2, 3, 6):
        out.append(Sample((_t((2, 3, 4), dtype, rng), k, (2, 0)), name=f"k={k}"))
    out.append(Sample((_t((3, 4), dtype, rng, "transposed"), 1), name="default-dims"))
    return out


def _np_rot90(a, k=1, dims=(0, 1)):
    return np.rot90(a, k, axes=tuple(dims))


def repeat_samples(dtype, rng):
    return [
        Sample((_t((2, 3), dtype, rng), (2, 3)), name="same-rank"),
        Sample((_t((2, 3), dtype, rng, "transposed"), (2, 1, 2)), name="more-dims"),
        Sample((_t((), dtype, rng), (3,)), name="0d"),
        Sample((_t((2, 3), dtype, rng), (2, 0)), name="zero"),
    ]


def tile_samples(dtype, rng):
    return repeat_samples(dtype, rng) + [Sample((_t((2, 3), dtype, rng), (2,)), name="fewer")]


def repeat_interleave_samples(dtype, rng):
    return [
        Sample((_t((2, 3), dtype, rng), 2), name="flat"),
        Sample((_t((2, 3), dtype, rng, "transposed"), 3), {"dim": 1}, name="dim1"),
        Sample((_t((3, 2), dtype, rng), ember.tensor([1, 0, 2])), {"dim": 0}, name="tensor"),
        Sample((_t((3, 2), dtype, rng), ember.tensor([2])), {"dim": -1}, name="tensor-1"),
        Sample((_t((0, 2), dtype, rng), 2), {"dim": 0}, name="empty"),
    ]


def _np_repeat_interleave(a, repeats, dim=None):
    r = repeats
    if isinstance(r, np.ndarray) and r.size == 1:
        r = int(r.reshape(()))
    return np.repeat(a, r, axis=dim)


# ---- triangular / diagonal ------------------------------------------------------------------

def tri_samples(dtype, rng):
    out = []
    for shape in [(3, 4), (4, 3), (2, 3, 3), (0, 3)]:
        for diag in (-5, -1, 0, 2):
            out.append(Sample((_t(shape, dtype, rng, "transposed"), diag), name=f"{shape}-{diag}"))
    return out


def diag_samples(dtype, rng):
    return [Sample((_t((3,), dtype, rng), d), name=f"1d-{d}") for d in (-2, 0, 1)] + [
        Sample((_t((3, 4), dtype, rng, layout), d), name=f"2d-{d}-{layout}")
        for d in (-4, -1, 0, 2, 5) for layout in ("contiguous", "transposed")
    ]


def _np_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n = a.shape[-1] + abs(offset)
    nd = a.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    batch = a.shape[:-1]
    out = np.zeros(batch + (n, n), dtype=a.dtype)
    for i in range(a.shape[-1]):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        out[..., r, c] = a[..., i]
    # the two new dims sit at positions d1 < d2 (or reversed) in the result
    src = [nd - 2, nd - 1] if d1 < d2 else [nd - 1, nd - 2]
    return np.moveaxis(out, src, sorted([d1, d2]))


def diag_embed_samples(dtype, rng):
    return [
        Sample((_t((2, 3), dtype, rng),), name="default"),
        Sample((_t((2, 3), dtype, rng), 1, 0, 2), name="dims0,2"),
        Sample((_t((2, 3), dtype, rng), -1, 2, 0), name="dims2,0"),
        Sample((_t((3,), dtype, rng), 2), name="1d"),
    ]


def diagflat_samples(dtype, rng):
    return [Sample((_t((2, 2), dtype, rng), o), name=f"o={o}") for o in (-1, 0, 2)] + [
        Sample((_t((), dtype, rng),), name="0d")
    ]


def trace_samples(dtype, rng):
    return [Sample((_t(s, dtype, rng, layout),), name=f"{s}-{layout}")
            for s in [(3, 3), (2, 4), (4, 2), (0, 3)] for layout in ("contiguous", "transposed")]


def _np_trace(a):
    return np.trace(wide(a)).astype(np.int64 if a.dtype.kind in "iu" else a.dtype)


# ---- sorting ------------------------------------------------------------------------------------

def _np_sort_indices(a, axis=-1, descending=False):
    """Stable order along axis with NaN last (first when descending), as PyTorch."""
    x = np.moveaxis(np.asarray(a), axis, -1)
    v = x.astype(np.float64)
    nan = np.isnan(v)
    v = np.where(nan, 0.0, v)
    keys = (-v, ~nan) if descending else (v, nan)
    order = np.lexsort(keys, axis=-1)
    return np.moveaxis(order, -1, axis)


def _np_sort(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return a.copy(), np.array(0)
    idx = _np_sort_indices(a, dim, descending)
    return np.take_along_axis(a, idx, axis=dim), idx


def sort_samples(dtype, rng):
    out = []
    for shape, dim in [((7,), -1), ((4, 6), 1), ((4, 6), 0), ((2, 3, 4), -2), ((), 0), ((0, 3), 1)]:
        for desc in (False, True):
            for layout in ("contiguous", "transposed"):
                out.append(Sample((_t(shape, dtype, rng, layout),),
                                  {"dim": dim, "descending": desc, "stable": True},
                                  name=f"{shape}-{dim}-{desc}-{layout}"))
    if dtype.is_floating_point:
        special = _t((12,), dtype, rng, special=True)
        out.append(Sample((special,), {"stable": True}, name="nan-inf"))
        out.append(Sample((special,), {"descending": True, "stable": True}, name="nan-inf-desc"))
    return out


def _np_topk(a, k, dim=-1, largest=True, sorted=True):
    if a.ndim == 0:
        return a.copy(), np.array(0)
    idx = _np_sort_indices(a, dim, descending=largest)
    idx = np.take(idx, np.arange(k), axis=dim)
    return np.take_along_axis(a, idx, axis=dim), idx


def topk_samples(dtype, rng):
    out = []
    for shape, k, dim in [((9,), 3, -1), ((4, 6), 2, 1), ((4, 6), 4, 0), ((3, 5), 0, 1),
                          ((3, 5), 5, 1), ((), 1, 0)]:
        for largest in (True, False):
            out.append(Sample((_distinct(shape, dtype, rng), k, dim, largest),
                              name=f"{shape}-{k}-{dim}-{largest}"))
    if dtype.is_floating_point:
        out.append(Sample((_t((10,), dtype, rng, special=True), 4), name="nan-inf"))
    return out


def _np_kthvalue(a, k, dim=-1, keepdim=False):
    if a.ndim == 0:
        return a.copy(), np.array(0)
    idx = _np_sort_indices(a, dim)
    idx = np.take(idx, [k - 1], axis=dim)
    vals = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        vals, idx = np.squeeze(vals, dim), np.squeeze(idx, dim)
    return vals, idx


def kthvalue_samples(dtype, rng):
    out = []
    for shape, k, dim, keep in [((9,), 3, -1, False), ((4, 6), 2, 1, True), ((4, 6), 4, 0, False),
                                ((), 1, 0, False), ((0, 3), 2, 1, False)]:
        out.append(Sample((_distinct(shape, dtype, rng), k, dim, keep), name=f"{shape}-{k}-{dim}"))
    if dtype.is_floating_point:
        out.append(Sample((_t((10,), dtype, rng, special=True), 9), name="nan-inf"))
    return out


# ---- unique -------------------------------------------------------------------------------------

def _np_unique(a, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        flat = a.reshape(-1)
        vals, inv, cnt = np.unique(flat, return_inverse=True, return_counts=True,
                                   equal_nan=False)
        inv = inv.reshape(a.shape)
    else:
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1)
    res = [vals]
    if return_inverse:
        res.append(inv)
    if return_counts:
        res.append(cnt)
    return tuple(res) if len(res) > 1 else vals


def unique_samples(dtype, rng):
    out = []
    for kw in [{}, {"return_inverse": True}, {"return_counts": True},
               {"return_inverse": True, "return_counts": True}]:
        out.append(Sample((_t((4, 5), dtype, rng, "transposed"),), kw, name=f"flat-{kw}"))
    rows = make_array((3, 4), dtype, rng)
    table = np.concatenate([rows, rows[:2], rows[1:]])
    out.append(Sample((make_tensor(table, dtype),),
                      {"dim": 0, "return_inverse": True, "return_counts": True}, name="dim0"))
    out.append(Sample((make_tensor(table.T.copy(), dtype),),
                      {"dim": 1, "return_inverse": True, "return_counts": True}, name="dim1"))
    out.append(Sample((_t((0, 3), dtype, rng),), {"return_counts": True}, name="empty"))
    if dtype.is_floating_point:
        out.append(Sample((_t((10,), dtype, rng, special=True),), {"return_counts": True},
                          name="nan-inf"))
    return out


def _np_unique_consecutive(a, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        x = a.reshape(-1, 1)
    else:
        x = np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1)
    starts = [i for i in range(len(x)) if i == 0 or not np.array_equal(x[i], x[i - 1])]
    vals = x[starts]
    vals = vals.reshape(-1) if dim is None else np.moveaxis(
        vals.reshape((len(starts),) + tuple(np.delete(a.shape, dim))), 0, dim)
    inv = np.cumsum([i in starts for i in range(len(x))]) - 1
    cnt = np.diff(starts + [len(x)])
    res = [vals]
    if return_inverse:
        res.append(inv.reshape(a.shape) if dim is None else inv)
    if return_counts:
        res.append(cnt)
    return tuple(res) if len(res) > 1 else vals


def unique_consecutive_samples(dtype, rng):
    base = make_array((4,), dtype, rng)
    seq = np.repeat(base, [2, 1, 3, 1])
    rows = np.repeat(make_array((3, 2), dtype, rng), [2, 1, 2], axis=0)
    return [
        Sample((make_tensor(seq, dtype),), {"return_inverse": True, "return_counts": True},
               name="flat"),
        Sample((make_tensor(rows, dtype),), {"dim": 0, "return_inverse": True,
                                               "return_counts": True}, name="dim0"),
        Sample((make_tensor(seq.reshape(1, -1), dtype),), {"return_counts": True}, name="2d"),
    ]


# ---- counting / searching -----------------------------------------------------------------------

def bincount_samples(dtype, rng):
    x = make_tensor(rng.integers(0, 8, 30).astype(np.int64), dtype)
    return [
        Sample((x,), name="plain"),
        Sample((x,), {"minlength": 12}, name="minlength"),
        Sample((x,), {"weights": _t((30,), ember.float32, rng)}, name="weights-f32"),
        Sample((x,), {"weights": _t((30,), ember.float64, rng)}, name="weights-f64"),
        Sample((x,), {"weights": _t((30,), ember.int32, rng)}, name="weights-int"),
        Sample((make_tensor(np.zeros(0, np.int64), dtype),), {"minlength": 3}, name="empty"),
    ]


def _np_bincount(x, weights=None, minlength=0):
    w = None if weights is None else _np(weights).astype(np.float64)
    r = np.bincount(x.astype(np.int64), weights=w, minlength=minlength)
    return r


def histc_samples(dtype, rng):
    # Values at bin centres, exact in every float dtype: bins decided the same way everywhere.
    centres = make_tensor((rng.integers(0, 8, 40) + 0.5).astype(np.float64), dtype)
    out = [
        Sample((centres,), {"bins": 8, "min": 0, "max": 8}, name="range"),
        Sample((centres,), {"bins": 4, "min": 2, "max": 6}, name="clip-range"),
    ]
    if dtype in (ember.float32, ember.float64):
        out.append(Sample((_t((50,), dtype, rng),), {"bins": 7}, name="data-range"))
        out.append(Sample((_t((5, 6), dtype, rng, "transposed"),), {"bins": 3}, name="2d"))
    return out


def _np_histc(a, bins=100, min=0, max=0):
    a = a.reshape(-1).astype(np.float64)
    a = a[~np.isnan(a)]
    lo, hi = (min, max) if not (min == 0 and max == 0) else (a.min(), a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(a, bins=bins, range=(lo, hi))[0].astype(np.float64)


def histogram_samples(dtype, rng):
    x = _t((60,), dtype, rng)
    return [
        Sample((x, 6), name="bins-int"),
        Sample((x, 5), {"range": (-1.0, 2.0), "weight": _t((60,), dtype, rng),
                        "density": True}, name="range-weight-density"),
        Sample((x, make_tensor(np.array([-2.0, -0.5, 0.25, 2.5]), dtype)), name="bins-tensor"),
    ]


def _np_histogram(a, bins, range=None, weight=None, density=False):
    h, e = np.histogram(a.astype(np.float64), bins=_np(bins), range=range, weights=_np(weight),
                        density=density)
    return h, e


def searchsorted_samples(dtype, rng):
    seq = np.sort(make_array((10,), dtype, rng))
    seq2 = np.sort(make_array((3, 10), dtype, rng), axis=-1)
    perm = rng.permutation(10)
    return [
        Sample((make_tensor(seq, dtype), _t((3, 4), dtype, rng)), name="left"),
        Sample((make_tensor(seq, dtype), _t((3, 4), dtype, rng)), {"right": True}, name="right"),
        Sample((make_tensor(seq, dtype), _t((5,), dtype, rng)),
               {"side": "right", "out_int32": True}, name="side"),
        Sample((make_tensor(seq2, dtype), _t((3, 4), dtype, rng)), name="nd"),
        Sample((make_tensor(seq[perm], dtype), _t((6,), dtype, rng)),
               {"sorter": ember.tensor(np.argsort(perm))}, name="sorter"),
    ]


def _np_searchsorted(seq, values, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = seq[_np(sorter)]
    if seq.ndim == 1:
        r = np.searchsorted(seq, values, side=side)
    else:
        r = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
    return r.astype(np.int32 if out_int32 else np.int64)


def bucketize_samples(dtype, rng):
    seq = np.sort(make_array((8,), dtype, rng))
    return [
        Sample((_t((3, 4), dtype, rng), make_tensor(seq, dtype)), name="left"),
        Sample((_t((6,), dtype, rng), make_tensor(seq, dtype)), {"right": True}, name="right"),
    ]


def _np_bucketize(values, boundaries, out_int32=False, right=False):
    return np.searchsorted(boundaries, values, side="right" if right else "left")


# ---- grids ---------------------------------------------------------------------------------

def meshgrid_samples(dtype, rng):
    a, b, c = _t((3,), dtype, rng), _t((2,), dtype, rng), _t((4,), dtype, rng)
    return [
        Sample((a, b, c), {"indexing": "ij"}, name="ij"),
        Sample((a, b, c), {"indexing": "xy"}, name="xy"),
        Sample(([a, b],), {"indexing": "xy"}, name="list"),
        Sample((a,), {"indexing": "ij"}, name="one"),
    ]


def _np_meshgrid(*arrays, indexing="ij"):
    if len(arrays) == 1 and isinstance(arrays[0], list):
        arrays = arrays[0]
    return tuple(np.meshgrid(*arrays, indexing=indexing))


def cartesian_samples(dtype, rng):
    return [
        Sample((_t((3,), dtype, rng), _t((2,), dtype, rng), _t((2,), dtype, rng)), name="three"),
        Sample((_t((3,), dtype, rng), _t((0,), dtype, rng)), name="empty"),
        Sample((_t((3,), dtype, rng),), name="one"),
    ]


def _np_cartesian(*arrays):
    if len(arrays) == 1:
        return arrays[0]
    return np.array(list(itertools.product(*arrays))).reshape(-1, len(arrays)).astype(
        arrays[0].dtype)


def combinations_samples(dtype, rng):
    x = _t((5,), dtype, rng)
    return [
        Sample((x,), name="r2"),
        Sample((x,), {"r": 3}, name="r3"),
        Sample((x,), {"r": 2, "with_replacement": True}, name="replacement"),
        Sample((x,), {"r": 6}, name="r>n"),
    ]


def _np_combinations(a, r=2, with_replacement=False):
    f = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(f(a.tolist(), r))
    return np.array(rows, dtype=a.dtype).reshape(len(rows), r)


# ---- products ------------------------------------------------------------------------------

def outer_samples(dtype, rng):
    return [
        Sample((_t((3,), dtype, rng), _t((4,), dtype, rng)), name="basic"),
        Sample((_t((0,), dtype, rng), _t((4,), dtype, rng)), name="empty"),
    ]


def cross_samples(dtype, rng):
    return [
        Sample((_t((4, 3), dtype, rng), _t((4, 3), dtype, rng)), {"dim": 1}, name="dim1"),
        Sample((_t((3, 5), dtype, rng, "transposed"), _t((3, 5), dtype, rng)), {"dim": -2},
               name="dim-2"),
        Sample((_t((2, 3, 4), dtype, rng), _t((1, 3, 1), dtype, rng)), {"dim": 1},
               name="broadcast"),
        Sample((_t((2, 3), dtype, rng), _t((2, 3), dtype, rng)), name="default-dim"),
    ]


def _np_cross(a, b, dim=None):
    if dim is None:
        dim = [i for i, s in enumerate(np.broadcast_shapes(a.shape, b.shape)) if s == 3][0]
    a, b = np.broadcast_arrays(a, b)
    r = np.cross(wide(a), wide(b), axis=dim)
    return r.astype(a.dtype) if a.dtype.kind in "iu" else r


def kron_samples(dtype, rng):
    return [
        Sample((_t((2, 3), dtype, rng), _t((3, 2), dtype, rng, "transposed")), name="2d"),
        Sample((_t((2,), dtype, rng), _t((2, 3), dtype, rng)), name="rank-mismatch"),
        Sample((_t((), dtype, rng), _t((2, 3), dtype, rng)), name="0d"),
    ]


def tensordot_samples(dtype, rng):
    return [
        Sample((_t((2, 3, 4), dtype, rng), _t((3, 4, 5), dtype, rng)), {"dims": 2}, name="int"),
        Sample((_t((2, 3, 4), dtype, rng), _t((4, 3, 5), dtype, rng)), {"dims": ([1, 2], [1, 0])},
               name="lists"),
        Sample((_t((2, 3), dtype, rng), _t((4,), dtype, rng)), {"dims": 0}, name="outer"),
        Sample((_t((2, 3), dtype, rng, "transposed"), _t((3, 2), dtype, rng)),
               {"dims": ([-1], [0])}, name="negative"),
    ]


def _np_tensordot(a, b, dims=2):
    r = np.tensordot(wide(a), wide(b), axes=dims)
    return r.astype(a.dtype) if a.dtype.kind in "iu" else r


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (1, 3, 4)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    ("i...,i...->...", [(3, 2), (3, 2)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("ij,kj->ikj", [(2, 3), (4, 3)]),
    ("Ab,bA->A", [(2, 3), (3, 2)]),
    (" i j , j -> i ", [(2, 3), (3,)]),
]


def einsum_samples(dtype, rng):
    out = []
    for eq, shapes in EINSUM_CASES:
        ops = [_t(s, dtype, rng, "transposed" if len(s) >= 2 else "contiguous") for s in shapes]
        out.append(Sample((eq, *ops), name=eq))
    return out


def _np_einsum(eq, *ops):
    return np.einsum(eq.replace(" ", ""), *[wide(o) for o in ops])


def cdist_samples(dtype, rng):
    out = []
    for p in (0.0, 1.0, 2.0, 3.0, 0.5, float("inf")):
        out.append(Sample((_t((2, 5, 3), dtype, rng), _t((1, 4, 3), dtype, rng)), {"p": p},
                          name=f"p={p}"))
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist",
                 "use_mm_for_euclid_dist_if_necessary"):
        out.append(Sample((_t((30, 4), dtype, rng), _t((27, 4), dtype, rng, "transposed")),
                          {"compute_mode": mode}, name=mode))
    out.append(Sample((_t((0, 3), dtype, rng), _t((2, 3), dtype, rng)), name="empty"))
    out.append(Sample((_t((2, 0), dtype, rng), _t((3, 0), dtype, rng)), name="no-columns"))
    return out


def _np_cdist(x1, x2, p=2.0, compute_mode=None):
    d = np.abs(x1[..., :, None, :].astype(np.float64) - x2[..., None, :, :].astype(np.float64))
    if p == 0:
        return (d != 0).sum(-1).astype(np.float64)
    if np.isinf(p):
        return d.max(-1, initial=0.0)
    return (d ** p).sum(-1) ** (1.0 / p)


LOOSE = {ember.float16: (1e-2, 1e-2), ember.bfloat16: (3e-2, 5e-2), ember.float32: (1e-5, 1e-4),
         ember.complex64: (1e-5, 1e-4)}

# Gradients (Note [Gradcheck Entries] in opinfo.py): D = differentiable with complex support and
# double backward; the ordering ops are real-only (PyTorch's CPU sort has no complex support).
D = {"differentiable": True, "grad_complex": True, "gradgrad": True}
REAL_D = {"differentiable": True, "gradgrad": True}
NOGRAD = {"differentiable": False}


def _list_op(name, ref, sample, **kw):
    """An OpInfo for a list-taking op, gradchecked with the tensors passed separately."""
    return OpInfo(name, ref=ref, dtypes=ALL, sample=sample, ember_fn=_listwise(name),
                  grad_sample=_spread(sample), **D, **kw)


OP_DB = [
    _list_op("cat", _np_cat, cat_samples),
    _list_op("concat", _np_cat, cat_samples),
    _list_op("concatenate", _np_cat, cat_samples),
    _list_op("stack", lambda t, dim=0: np.stack(t, axis=dim), stack_samples),
    _list_op("hstack", np.hstack, multi_stack_samples),
    _list_op("vstack", np.vstack, multi_stack_samples),
    _list_op("row_stack", np.vstack, multi_stack_samples),
    _list_op("dstack", np.dstack, multi_stack_samples),
    _list_op("column_stack", _np_column_stack, multi_stack_samples),
    OpInfo("flip", ref=lambda a, dims: np.flip(a, axis=dims) if a.ndim else a.copy(), dtypes=ALL,
           sample=flip_samples, **D),
    OpInfo("fliplr", ref=np.fliplr, dtypes=ALL,
           sample=lambda dt, rng: [Sample((_t((3, 4), dt, rng, "transposed"),))], **D),
    OpInfo("flipud", ref=np.flipud, dtypes=ALL,
           sample=lambda dt, rng: [Sample((_t((3, 4), dt, rng, "strided"),))], **D),
    OpInfo("roll", ref=_np_roll, dtypes=ALL, sample=roll_samples, **D),
    OpInfo("rot90", ref=_np_rot90, dtypes=ALL, sample=rot90_samples, **D),
    OpInfo("Tensor.repeat", ref=np.tile, dtypes=ALL, sample=repeat_samples,
           ember_fn=lambda t, reps: t.repeat(*reps), **D),
    OpInfo("tile", ref=np.tile, dtypes=ALL, sample=tile_samples, **D),
    # The repeats-tensor form's backward is an index_add, whose own derivative belongs to the
    # indexing family: no double backward here.
    OpInfo("repeat_interleave", ref=_np_repeat_interleave, dtypes=ALL,
           sample=repeat_interleave_samples, differentiable=True, grad_complex=True),
    OpInfo("tril", ref=np.tril, dtypes=ALL, sample=tri_samples, **D),
    OpInfo("triu", ref=np.triu, dtypes=ALL, sample=tri_samples, **D),
    OpInfo("Tensor.tril_", ref=np.tril, dtypes=ALL, sample=tri_samples,
           ember_fn=lambda t, d: t.clone().tril_(d), **D),
    OpInfo("Tensor.triu_", ref=np.triu, dtypes=ALL, sample=tri_samples,
           ember_fn=lambda t, d: t.clone().triu_(d), **D),
    OpInfo("diag", ref=np.diag, dtypes=ALL, sample=diag_samples, **D),
    OpInfo("diag_embed", ref=_np_diag_embed, dtypes=ALL, sample=diag_embed_samples, **D),
    OpInfo("diagflat", ref=np.diagflat, dtypes=ALL, sample=diagflat_samples, **D),
    OpInfo("trace", ref=_np_trace, dtypes=NUMERIC, sample=trace_samples,
           result_dtype=lambda d: ember.int64 if d in INTEGRAL else d, **D),
    OpInfo("sort", ref=_np_sort, dtypes=SORTABLE, sample=sort_samples, **REAL_D),
    OpInfo("argsort", ref=lambda a, **kw: _np_sort(a, **kw)[1], dtypes=SORTABLE,
           sample=sort_samples, **NOGRAD),
    OpInfo("msort", ref=lambda a: np.sort(a, axis=0), dtypes=SORTABLE,
           sample=lambda dt, rng: [Sample((_t((4, 3), dt, rng, "transposed"),))], **REAL_D),
    OpInfo("topk", ref=_np_topk, dtypes=REAL, sample=topk_samples, **REAL_D),
    OpInfo("kthvalue", ref=_np_kthvalue, dtypes=REAL, sample=kthvalue_samples, **REAL_D),
    OpInfo("unique", ref=_np_unique, dtypes=SORTABLE, sample=unique_samples, **NOGRAD),
    OpInfo("unique_consecutive", ref=_np_unique_consecutive, dtypes=SORTABLE,
           sample=unique_consecutive_samples, **NOGRAD),
    OpInfo("bincount", ref=_np_bincount, dtypes=INTEGRAL, sample=bincount_samples, **NOGRAD),
    OpInfo("histc", ref=_np_histc, dtypes=FLOATING, sample=histc_samples, **NOGRAD),
    OpInfo("histogram", ref=_np_histogram, dtypes=[ember.float32, ember.float64],
           sample=histogram_samples, **NOGRAD),
    OpInfo("searchsorted", ref=_np_searchsorted, dtypes=REAL, sample=searchsorted_samples,
           **NOGRAD),
    OpInfo("bucketize", ref=_np_bucketize, dtypes=REAL, sample=bucketize_samples, **NOGRAD),
    OpInfo("meshgrid", ref=_np_meshgrid, dtypes=ALL, sample=meshgrid_samples, **D),
    OpInfo("cartesian_prod", ref=_np_cartesian, dtypes=ALL, sample=cartesian_samples, **D),
    # Recorded as advanced indexing (IndexBackward0), whose formula is not itself recorded yet.
    OpInfo("combinations", ref=_np_combinations, dtypes=ALL, sample=combinations_samples,
           differentiable=True, grad_complex=True),
    OpInfo("outer", ref=np.outer, dtypes=ALL, sample=outer_samples, tol=LOOSE, **D),
    OpInfo("ger", ref=np.outer, dtypes=ALL, sample=outer_samples, tol=LOOSE, **D),
    OpInfo("cross", ref=_np_cross, dtypes=NUMERIC, sample=cross_samples, tol=LOOSE, **D),
    OpInfo("kron", ref=np.kron, dtypes=ALL, sample=kron_samples, tol=LOOSE, **D),
    OpInfo("tensordot", ref=_np_tensordot, dtypes=NUMERIC, sample=tensordot_samples, tol=LOOSE,
           **D),
    OpInfo("einsum", ref=_np_einsum, dtypes=NUMERIC, sample=einsum_samples, tol=LOOSE, **D),
    OpInfo("cdist", ref=_np_cdist, dtypes=[ember.float32, ember.float64], sample=cdist_samples,
           tol={ember.float32: (1e-4, 1e-4), ember.float64: (1e-7, 1e-7)}, **REAL_D),
]
