"""OpInfos for the indexing family (gather / scatter / index_* / masked_* / take / nonzero), each
checked against a NumPy reference over dtypes, empty and non-contiguous inputs and negative dims.
The view ops of the family are in opdb_views.py."""

import numpy as np

import ember
from opinfo import (
    ALL,
    BOOL,
    COMPLEX,
    INTEGRAL,
    NUMERIC,
    REAL,
    OpInfo,
    Sample,
    make_array,
    make_tensor,
)

# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def _long(arr, dtype=None):
    """An integer index tensor holding arr (0-d arrays become 0-d tensors)."""
    arr = np.asarray(arr)
    dt = dtype or ember.int64
    if arr.ndim == 0:
        return ember.tensor(int(arr), dtype=dt)
    return ember.tensor(np.ascontiguousarray(arr, dtype=np.int64), dtype=dt)


def _mask(arr):
    arr = np.asarray(arr, dtype=bool)
    if arr.ndim == 0:
        return ember.tensor(bool(arr))
    return ember.tensor(np.ascontiguousarray(arr))


def _t(shape, dtype, rng, layout="contiguous"):
    # (reshape: make_array's bfloat16 rounding can turn a 0-d array into shape (1,))
    return _tensor(make_array(shape, dtype, rng).reshape(shape), dtype, layout)


def _tensor(arr, dtype, layout="contiguous"):
    # 0-d arrays go through a Python scalar so the result is 0-d for every dtype.
    if np.ndim(arr) == 0:
        return ember.tensor(np.asarray(arr).item(), dtype=dtype)
    return make_tensor(arr, dtype, layout=layout)


def _unique_rows(rng, high, shape, dim):
    """Indices along `dim` without repeats along that dim (so plain writes have one winner)."""
    out = np.empty(shape, dtype=np.int64)
    moved = np.moveaxis(out, dim, -1)
    for pos in np.ndindex(moved.shape[:-1]):
        moved[pos] = rng.permutation(high)[: moved.shape[-1]]
    return out


def _cast_like(value, a):
    return np.asarray(value).astype(a.dtype)


# ------------------------------------------------------------------------------------------
# index_select / gather / take / take_along_dim
# ------------------------------------------------------------------------------------------


def _index_select_samples(dtype, rng):
    out = []
    for shape, dim, n in [
        ((5,), 0, 3),
        ((3, 4), 0, 5),
        ((3, 4), 1, 2),
        ((3, 4), -1, 4),
        ((2, 3, 4), 1, 3),
        ((2, 3, 4), -3, 1),
        ((0, 3), 1, 2),
        ((3, 4), 0, 0),
    ]:
        a = _t(shape, dtype, rng)
        size = shape[dim]
        idx = rng.integers(0, max(size, 1), n) if size else np.zeros(0, np.int64)
        out.append(Sample((a, dim, _long(idx)), name=f"{shape}-dim{dim}-n{n}"))
    a = _t((4, 5), dtype, rng, layout="transposed")
    out.append(Sample((a, 1, _long([4, 0, 4])), name="transposed"))
    out.append(Sample((a, 0, _long([1, 2], ember.int32)), name="int32-index"))
    out.append(Sample((_t((3, 4), dtype, rng), 1, _long(2)), name="0d-index"))
    out.append(Sample((_t((), dtype, rng), 0, _long([0])), name="0d-input"))
    return out


def _np_index_select(a, dim, idx):
    if a.ndim == 0:
        return a.copy()
    return np.take(a, np.atleast_1d(idx), axis=dim)


def _gather_samples(dtype, rng):
    out = []
    for shape, dim, ishape in [
        ((5,), 0, (7,)),
        ((3, 4), 0, (2, 4)),
        ((3, 4), 1, (3, 6)),
        ((3, 4), -1, (2, 2)),
        ((2, 3, 4), 1, (2, 5, 3)),
        ((2, 3, 4), -3, (4, 3, 4)),
        ((3, 4), 0, (0, 4)),
        ((0, 3), 1, (0, 2)),
    ]:
        a = _t(shape, dtype, rng)
        d = dim % len(shape)
        idx = rng.integers(0, max(shape[d], 1), ishape) if shape[d] else np.zeros(ishape, np.int64)
        out.append(Sample((a, dim, _long(idx)), name=f"{shape}-dim{dim}-{ishape}"))
    a = _t((4, 5), dtype, rng, layout="transposed")
    idx = _long(rng.integers(0, 5, (5, 4))).t()
    out.append(Sample((a, 1, idx), name="transposed-both"))
    out.append(Sample((a, 0, _long(rng.integers(0, 4, (2, 5)), ember.int32)), name="int32"))
    out.append(Sample((_t((), dtype, rng), 0, _long(0)), name="0d"))
    return out


def _np_gather(a, dim, idx):
    if a.ndim == 0:
        return a.reshape(idx.shape).copy()
    dim %= a.ndim
    window = tuple(slice(None) if d == dim else slice(0, idx.shape[d]) for d in range(a.ndim))
    return np.take_along_axis(a[window], idx.astype(np.int64), axis=dim)


def _take_samples(dtype, rng):
    out = []
    for shape, ishape in [
        ((3, 4), (5,)),
        ((7,), (2, 3)),
        ((2, 3, 4), (3, 2, 2)),
        ((3, 4), (0,)),
        ((), (2,)),
    ]:
        a = _t(shape, dtype, rng)
        n = int(np.prod(shape))
        out.append(Sample((a, _long(rng.integers(-n, n, ishape))), name=f"{shape}-{ishape}"))
    a = _t((4, 5), dtype, rng, layout="transposed")
    out.append(Sample((a, _long([0, 7, -1, 19])), name="transposed"))
    return out


def _take_along_samples(dtype, rng):
    out = []
    for shape, dim, ishape in [
        ((3, 4), 0, (2, 4)),
        ((3, 4), 1, (3, 2)),
        ((3, 4), -1, (1, 5)),
        ((2, 3, 4), 2, (2, 1, 4)),
        ((3, 4), 0, (0, 4)),
    ]:
        a = _t(shape, dtype, rng)
        d = dim % len(shape)
        idx = rng.integers(-shape[d], shape[d], ishape)
        out.append(Sample((a, _long(idx), dim), name=f"{shape}-dim{dim}-{ishape}"))
    a = _t((3, 4), dtype, rng, layout="transposed")
    out.append(Sample((a, _long([[0, 11], [5, 6]])), name="flat"))
    return out


def _np_take_along(a, idx, dim=None):
    if dim is None:
        return np.take_along_axis(a.ravel(), idx.ravel(), 0)
    idx_b, a_b = idx, a
    d = dim % a.ndim
    # Broadcast every dim but `dim` (PyTorch's rule).
    shape_i = list(
        np.broadcast_shapes(
            tuple(a.shape[:d]) + (idx.shape[d],) + tuple(a.shape[d + 1 :]), idx.shape
        )
    )
    idx_b = np.broadcast_to(idx, shape_i)
    shape_a = list(shape_i)
    shape_a[d] = a.shape[d]
    a_b = np.broadcast_to(a, shape_a)
    return np.take_along_axis(a_b, idx_b, axis=d)


# ------------------------------------------------------------------------------------------
# scatter family
# ------------------------------------------------------------------------------------------


def _nanmax(x, y):
    if isinstance(y, float) and np.isnan(y):
        return y
    if isinstance(x, float) and np.isnan(x):
        return x
    return max(x, y)


def _nanmin(x, y):
    if isinstance(y, float) and np.isnan(y):
        return y
    if isinstance(x, float) and np.isnan(x):
        return x
    return min(x, y)


def _np_scatter_general(a, dim, idx, src, reduce=None, include_self=True):
    """Loop reference: out[... idx[p] ...] (op)= src[p] over every position p of idx."""
    out = a.copy()
    dim = dim % max(a.ndim, 1)
    is_bool = a.dtype == bool
    seen, count = {}, {}
    src_arr = np.asarray(src)
    for pos in np.ndindex(idx.shape):
        tgt = list(pos)
        if a.ndim:
            tgt[dim] = int(idx[pos])
        tgt = tuple(tgt)
        v = src_arr[pos] if src_arr.ndim else src_arr[()]
        v = v.item()
        cur = out[tgt].item()
        if reduce is None:
            out[tgt] = v
            continue
        if not include_self and tgt not in seen:
            seen[tgt] = True
            out[tgt] = v
            count[tgt] = 1
            continue
        count[tgt] = count.get(tgt, 1) + 1
        if reduce in ("sum", "mean", "add"):
            out[tgt] = (cur or v) if is_bool else cur + v
        elif reduce in ("prod", "multiply"):
            out[tgt] = (cur and v) if is_bool else cur * v
        elif reduce == "amax":
            out[tgt] = _nanmax(cur, v)
        elif reduce == "amin":
            out[tgt] = _nanmin(cur, v)
    if reduce == "mean":
        for tgt, c in count.items():
            if out.dtype.kind in "iu":
                out[tgt] = out[tgt] // c
            else:
                out[tgt] = out[tgt] / c
    return out


def _scatter_shapes():
    # (self shape, dim, index shape); index never larger than self apart from `dim`.
    return [
        ((5,), 0, (3,)),
        ((3, 4), 0, (2, 4)),
        ((3, 4), 1, (3, 2)),
        ((3, 4), -1, (2, 3)),
        ((2, 3, 4), 1, (2, 2, 4)),
        ((2, 3, 4), -3, (2, 3, 1)),
        ((3, 4), 0, (0, 4)),
    ]


def _scatter_samples(dtype, rng, *, value=False, reduce=None, dup=True, src_extra=0):
    out = []
    for shape, dim, ishape in _scatter_shapes():
        a = _t(shape, dtype, rng)
        d = dim % len(shape)
        if dup:
            idx = rng.integers(0, shape[d], ishape)
        else:
            idx = _unique_rows(rng, shape[d], ishape, d)
        kw = {} if reduce is None else {"reduce": reduce}
        if value:
            v = make_array((), dtype, rng).reshape(()).item()
            out.append(Sample((a, dim, _long(idx), v), kw, name=f"{shape}-dim{dim}-value"))
        else:
            sshape = tuple(s + src_extra for s in ishape)
            out.append(
                Sample((a, dim, _long(idx), _t(sshape, dtype, rng)), kw, name=f"{shape}-dim{dim}")
            )
    # Non-contiguous self and src, int32 index.
    a = _t((4, 3), dtype, rng, layout="transposed")
    idx = _unique_rows(rng, 3, (4, 2), 1) if not dup else rng.integers(0, 3, (4, 2))
    src = _t((4, 2 + src_extra), dtype, rng, layout="transposed")
    kw = {} if reduce is None else {"reduce": reduce}
    out.append(Sample((a, 1, _long(idx, ember.int32), src), kw, name="noncontiguous"))
    return out


def _np_scatter(a, dim, idx, src, reduce=None):
    red = {"add": "add", "multiply": "multiply"}.get(reduce)
    return _np_scatter_general(a, dim, idx, src, red)


def _np_scatter_reduce(a, dim, idx, src, reduce, include_self=True):
    return _np_scatter_general(a, dim, idx, src, reduce, include_self)


def _scatter_reduce_samples(reduce):
    def make(dtype, rng):
        out = []
        for inc in (True, False):
            for s in _scatter_samples(dtype, rng, dup=True, src_extra=1):
                out.append(
                    Sample(s.args + (reduce,), {"include_self": inc}, name=f"{s.name}-{inc}")
                )
        if dtype.is_floating_point and reduce in ("amax", "amin"):
            a = ember.tensor(np.array([1.0, np.nan, 3.0, 4.0], np.float32)).to(dtype)
            src = ember.tensor(np.array([np.nan, 2.0, 5.0], np.float32)).to(dtype)
            out.append(Sample((a, 0, _long([0, 0, 1]), src, reduce), name="nan"))
        return out

    return make


# ------------------------------------------------------------------------------------------
# index_add / index_copy / index_fill / index_put
# ------------------------------------------------------------------------------------------


def _index_along_samples(dtype, rng, *, unique):
    out = []
    for shape, dim, n in [
        ((5,), 0, 3),
        ((3, 4), 0, 5),
        ((3, 4), 1, 2),
        ((3, 4), -1, 4),
        ((2, 3, 4), 1, 3),
        ((3, 4), 0, 0),
    ]:
        a = _t(shape, dtype, rng)
        d = dim % len(shape)
        n_eff = min(n, shape[d]) if unique else n
        idx = rng.permutation(shape[d])[:n_eff] if unique else rng.integers(0, shape[d], n_eff)
        sshape = list(shape)
        sshape[d] = n_eff
        out.append(
            Sample(
                (a, dim, _long(idx), _t(tuple(sshape), dtype, rng)),
                name=f"{shape}-dim{dim}-n{n_eff}",
            )
        )
    a = _t((4, 3), dtype, rng, layout="transposed")
    src = _t((4, 2), dtype, rng, layout="transposed")
    out.append(Sample((a, 1, _long([2, 0]), src), name="transposed"))
    out.append(Sample((_t((), dtype, rng), 0, _long(0), _t((), dtype, rng)), name="0d"))
    return out


def _np_index_add(a, dim, idx, src, alpha=1):
    out = a.copy()
    if a.ndim == 0:
        return (out + src * alpha).astype(a.dtype) if a.dtype != bool else (out | src)
    moved_src = np.moveaxis(src, dim, 0)
    if alpha != 1:
        moved_src = (moved_src * alpha).astype(a.dtype)
    np.add.at(np.moveaxis(out, dim, 0), np.atleast_1d(idx), moved_src)
    return out


def _index_add_alpha_samples(dtype, rng):
    return [
        Sample(s.args, {"alpha": 2}, name=s.name + "-alpha2")
        for s in _index_along_samples(dtype, rng, unique=False)
    ]


def _np_index_copy(a, dim, idx, src):
    out = a.copy()
    if a.ndim == 0:
        return src.copy()
    np.moveaxis(out, dim, 0)[np.atleast_1d(idx)] = np.moveaxis(src, dim, 0)
    return out


def _index_fill_samples(dtype, rng):
    out = []
    for shape, dim, n in [
        ((5,), 0, 3),
        ((3, 4), 0, 2),
        ((3, 4), -1, 3),
        ((2, 3, 4), 1, 2),
        ((3, 4), 0, 0),
    ]:
        a = _t(shape, dtype, rng)
        d = dim % len(shape)
        idx = rng.integers(-shape[d], shape[d], n)
        v = make_array((), dtype, rng).reshape(()).item()
        out.append(Sample((a, dim, _long(idx), v), name=f"{shape}-dim{dim}"))
    a = _t((4, 3), dtype, rng, layout="transposed")
    v = _t((), dtype, rng)
    out.append(Sample((a, 1, _long(1), v), name="tensor-value"))
    return out


def _np_index_fill(a, dim, idx, value):
    out = a.copy()
    value = np.asarray(value)
    np.moveaxis(out, dim, 0)[np.atleast_1d(idx)] = value.astype(a.dtype)
    return out


def _index_put_samples(dtype, rng, *, accumulate):
    out = []
    cases = [
        ((5,), [(3,)]),
        ((3, 4), [(2,), (2,)]),
        ((3, 4), [(2, 1), (1, 3)]),
        ((2, 3, 4), [(5,)]),
        ((2, 3, 4), [(2,), (2,), (2,)]),
        ((3, 4), [(0,)]),
    ]
    for shape, ishapes in cases:
        a = _t(shape, dtype, rng)
        idx = []
        for k, s in enumerate(ishapes):
            if accumulate:
                idx.append(rng.integers(-shape[k], shape[k], s))
            else:  # distinct targets: one winner per element
                n = int(np.prod(s))
                flat = rng.permutation(shape[k])[: min(n, shape[k])]
                idx.append(np.resize(flat, s) if n <= shape[k] else None)
        if any(i is None for i in idx):
            continue
        rshape = np.broadcast_shapes(*ishapes) + tuple(shape[len(ishapes) :])
        if not accumulate and len(ishapes) > 1:
            # Broadcast indices may repeat a target: keep one index combination per target.
            full = np.broadcast_arrays(*idx)
            keys = list(zip(*(f.ravel() for f in full)))
            if len(set(keys)) != len(keys):
                continue
        values = _t(rshape, dtype, rng)
        out.append(
            Sample(
                (a, tuple(_long(i) for i in idx), values),
                {"accumulate": accumulate},
                name=f"{shape}-{ishapes}",
            )
        )
    a = _t((4, 3), dtype, rng, layout="transposed")
    out.append(
        Sample(
            (a, (_long([3, 1]),), _t((3,), dtype, rng)),
            {"accumulate": accumulate},
            name="broadcast-values",
        )
    )
    mask = rng.random((4, 3)) > 0.5
    out.append(
        Sample(
            (a, (_mask(mask),), _t((int(mask.sum()),), dtype, rng)),
            {"accumulate": accumulate},
            name="mask",
        )
    )
    return out


def _np_index_put(a, indices, values, accumulate=False):
    out = a.copy()
    idx = tuple(
        np.asarray(i) if np.asarray(i).dtype == bool else np.asarray(i, np.int64) for i in indices
    )
    if accumulate:
        np.add.at(out, idx, np.broadcast_to(values, out[idx].shape))
    else:
        out[idx] = values
    return out


# ------------------------------------------------------------------------------------------
# masks and nonzero
# ------------------------------------------------------------------------------------------


def _mask_cases():
    return [
        ((3, 4), (3, 4)),
        ((3, 4), (4,)),
        ((3, 1), (1, 4)),
        ((7,), (7,)),
        ((), ()),
        ((0, 3), (0, 3)),
        ((2, 3, 4), (3, 1)),
    ]


def _masked_fill_samples(dtype, rng):
    out = []
    for sa, sm in _mask_cases():
        v = make_array((), dtype, rng).reshape(()).item()
        out.append(Sample((_t(sa, dtype, rng), _mask(rng.random(sm) > 0.5), v), name=f"{sa}-{sm}"))
    a = _t((4, 5), dtype, rng, layout="transposed")
    v = _t((), dtype, rng)
    out.append(Sample((a, _mask(rng.random((4, 5)) > 0.5), v), name="tensor-value"))
    return out


def _np_masked_fill(a, m, value):
    return np.where(m, np.asarray(value).astype(a.dtype), a)


def _masked_select_samples(dtype, rng):
    out = [
        Sample((_t(sa, dtype, rng), _mask(rng.random(sm) > 0.5)), name=f"{sa}-{sm}")
        for sa, sm in _mask_cases()
    ]
    a = _t((4, 5), dtype, rng, layout="transposed")
    out.append(Sample((a, _mask(rng.random((4, 5)) > 0.5)), name="transposed"))
    a = _t((300, 200), dtype, rng)  # large enough for the parallel compaction
    out.append(Sample((a, _mask(rng.random((300, 200)) > 0.3)), name="large"))
    return out


def _np_masked_select(a, m):
    ab, mb = np.broadcast_arrays(a, m)
    return ab[mb]


def _masked_scatter_samples(dtype, rng):
    out = []
    for sa, sm in _mask_cases():
        n = int(np.prod(np.broadcast_shapes(sa, sm)))
        out.append(
            Sample(
                (_t(sa, dtype, rng), _mask(rng.random(sm) > 0.5), _t((n + 2,), dtype, rng)),
                name=f"{sa}-{sm}",
            )
        )
    a = _t((4, 5), dtype, rng, layout="transposed")
    out.append(Sample((a, _mask(rng.random((4, 5)) > 0.5), _t((4, 6), dtype, rng)), name="2d-src"))
    return out


def _np_masked_scatter(a, m, src):
    ab, mb = np.broadcast_arrays(a, m)
    out = ab.copy()
    out[mb] = src.ravel()[: int(mb.sum())]
    return out


def _nonzero_samples(dtype, rng):
    out = []
    for shape in [(7,), (3, 4), (2, 3, 4), (0, 3), (), (1,)]:
        arr = make_array(shape, dtype, rng).reshape(shape)
        if arr.size:
            arr.reshape(-1)[rng.random(arr.size) > 0.6] = 0
        out.append(Sample((_tensor(arr, dtype),), name=str(shape)))
    arr = make_array((40, 50), dtype, rng)
    arr[rng.random((40, 50)) > 0.5] = 0
    out.append(Sample((make_tensor(arr, dtype, layout="transposed"),), name="transposed"))
    big = make_array((200, 300), dtype, rng)
    big[rng.random((200, 300)) > 0.3] = 0
    out.append(Sample((make_tensor(big, dtype),), name="large"))
    return out


def _np_nonzero_tuple(a):
    return tuple(np.nonzero(a)) if a.ndim else (np.nonzero(np.atleast_1d(a))[0],)


def _take_ref(a, idx):
    return np.take(a.ravel(), idx)


OP_DB = [
    OpInfo(
        "index_select",
        ref=_np_index_select,
        dtypes=ALL,
        sample=_index_select_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "gather",
        ref=_np_gather,
        dtypes=ALL,
        sample=_gather_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "take",
        ref=_take_ref,
        dtypes=ALL,
        sample=_take_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "take_along_dim",
        ref=_np_take_along,
        dtypes=ALL,
        sample=_take_along_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "scatter",
        ref=_np_scatter,
        dtypes=ALL,
        sample=lambda dt, rng: _scatter_samples(dt, rng, dup=False, src_extra=1),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "scatter_value",
        ember_fn=ember.scatter,
        ref=_np_scatter,
        dtypes=ALL,
        sample=lambda dt, rng: _scatter_samples(dt, rng, value=True, dup=True),
        differentiable=True,
        # The "noncontiguous" sample writes a src tensor through repeated indices (which write
        # wins is unspecified, so no gradient exists there): only the value samples.
        grad_sample=lambda dt, rng: [
            s
            for s in _scatter_samples(dt, rng, value=True, dup=True)
            if not isinstance(s.args[3], ember.Tensor)
        ],
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "scatter_reduce_add",
        ember_fn=ember.scatter,
        ref=_np_scatter,
        dtypes=ALL,
        sample=lambda dt, rng: _scatter_samples(dt, rng, reduce="add"),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "scatter_reduce_multiply",
        ember_fn=ember.scatter,
        ref=_np_scatter,
        dtypes=ALL,
        sample=lambda dt, rng: _scatter_samples(dt, rng, reduce="multiply", value=True),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "scatter_add",
        ref=lambda a, d, i, s: _np_scatter_general(a, d, i, s, "add"),
        dtypes=ALL,
        sample=lambda dt, rng: _scatter_samples(dt, rng, dup=True, src_extra=1),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "scatter_reduce_sum",
        ember_fn=ember.scatter_reduce,
        ref=_np_scatter_reduce,
        dtypes=ALL,
        sample=_scatter_reduce_samples("sum"),
        differentiable=True,
        gradgrad=True,
    ),
    OpInfo(
        "scatter_reduce_prod",
        ember_fn=ember.scatter_reduce,
        ref=_np_scatter_reduce,
        dtypes=ALL,
        sample=_scatter_reduce_samples("prod"),
        tol={ember.bfloat16: (3e-2, 5e-2), ember.float16: (3e-3, 3e-3)},
        differentiable=True,
        gradgrad=True,
    ),
    OpInfo(
        "scatter_reduce_mean",
        ember_fn=ember.scatter_reduce,
        ref=_np_scatter_reduce,
        dtypes=NUMERIC,
        sample=_scatter_reduce_samples("mean"),
        differentiable=True,
        gradgrad=True,
    ),
    OpInfo(
        "scatter_reduce_amax",
        ember_fn=ember.scatter_reduce,
        ref=_np_scatter_reduce,
        dtypes=REAL + BOOL,
        sample=_scatter_reduce_samples("amax"),
        differentiable=True,
        gradgrad=True,
    ),
    OpInfo(
        "scatter_reduce_amin",
        ember_fn=ember.scatter_reduce,
        ref=_np_scatter_reduce,
        dtypes=REAL + BOOL,
        sample=_scatter_reduce_samples("amin"),
        differentiable=True,
        gradgrad=True,
    ),
    OpInfo(
        "index_add",
        ref=_np_index_add,
        dtypes=ALL,
        sample=lambda dt, rng: _index_along_samples(dt, rng, unique=False),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "index_add_alpha",
        ember_fn=ember.index_add,
        ref=_np_index_add,
        dtypes=INTEGRAL + [ember.float32, ember.float64] + COMPLEX,
        sample=_index_add_alpha_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "index_copy",
        ref=_np_index_copy,
        dtypes=ALL,
        sample=lambda dt, rng: _index_along_samples(dt, rng, unique=True),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "index_fill",
        ref=_np_index_fill,
        dtypes=ALL,
        sample=_index_fill_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "index_put",
        ref=_np_index_put,
        dtypes=ALL,
        sample=lambda dt, rng: _index_put_samples(dt, rng, accumulate=False),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "index_put_accumulate",
        ember_fn=ember.index_put,
        ref=_np_index_put,
        dtypes=ALL,
        sample=lambda dt, rng: _index_put_samples(dt, rng, accumulate=True),
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "masked_fill",
        ref=_np_masked_fill,
        dtypes=ALL,
        sample=_masked_fill_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "masked_select",
        ref=_np_masked_select,
        dtypes=ALL,
        sample=_masked_select_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo(
        "masked_scatter",
        ref=_np_masked_scatter,
        dtypes=ALL,
        sample=_masked_scatter_samples,
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
    ),
    OpInfo("nonzero", ref=np.argwhere, dtypes=ALL, sample=_nonzero_samples, differentiable=False),
    OpInfo(
        "nonzero_as_tuple",
        ember_fn=lambda t: ember.nonzero(t, as_tuple=True),
        ref=_np_nonzero_tuple,
        dtypes=ALL,
        sample=_nonzero_samples,
        differentiable=False,
    ),
    OpInfo("argwhere", ref=np.argwhere, dtypes=ALL, sample=_nonzero_samples, differentiable=False),
]
