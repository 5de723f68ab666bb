"""OpInfos for the view ops that rearrange or split a tensor (movedim, diagonal, unfold,
unflatten, broadcast_to, T / mT / H / mH, the split family), checked against NumPy over dtypes
and memory layouts. That they are views (shared storage and version counter) is tested in
test_indexing_views.py."""

import numpy as np

import ember
from opdb_indexing import _t
from opinfo import ALL, COMPLEX, OpInfo, Sample

# ------------------------------------------------------------------------------------------
# views
# ------------------------------------------------------------------------------------------


def _view_samples(cases):
    def make(dtype, rng):
        out = []
        for shape, args, kwargs, layout in cases:
            out.append(
                Sample(
                    (_t(shape, dtype, rng, layout),) + args, kwargs, name=f"{shape}-{args}-{layout}"
                )
            )
        return out

    return make


def _np_unfold(a, dimension, size, step):
    if a.ndim == 0:
        return a.reshape(1)[:size] if size else a.reshape(1)[:0]
    d = dimension % a.ndim
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return np.take(w, np.arange(0, w.shape[d], step), axis=d)


def _np_unflatten(a, dim, sizes):
    d = dim % a.ndim
    sizes = list(sizes)
    if -1 in sizes:
        k = sizes.index(-1)
        sizes[k] = a.shape[d] // int(np.prod([s for s in sizes if s != -1]))
    return a.reshape(a.shape[:d] + tuple(sizes) + a.shape[d + 1 :])


def _np_chunk(a, chunks, dim=0):
    size = a.shape[dim]
    step = -(-size // chunks)
    if step == 0:
        return tuple(np.take(a, np.arange(0), axis=dim) for _ in range(chunks))
    return tuple(
        np.take(a, np.arange(s, min(s + step, size)), axis=dim) for s in range(0, size, step)
    )


def _np_split(a, split_size_or_sections, dim=0):
    size = a.shape[dim]
    if isinstance(split_size_or_sections, int):
        bounds = list(range(split_size_or_sections, size, split_size_or_sections))
    else:
        bounds = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(np.split(a, bounds, axis=dim))


def _np_tensor_split(a, indices_or_sections, dim=0):
    return tuple(np.array_split(a, indices_or_sections, axis=dim))


def _np_narrow(a, dim, start, length):
    start = start % a.shape[dim] if start < 0 else start
    return np.take(a, np.arange(start, start + length), axis=dim)


def _np_unbind(a, dim=0):
    return tuple(np.take(a, i, axis=dim) for i in range(a.shape[dim]))


OP_DB = [
    OpInfo(
        "narrow_copy",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=_np_narrow,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((5, 3), (0, 1, 3), {}, "contiguous"),
                ((3, 5), (1, -3, 2), {}, "transposed"),
                ((2, 3, 4), (-1, 0, 0), {}, "strided"),
                ((4,), (0, 4, 0), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "movedim",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=lambda a, s, d: np.moveaxis(a, s, d),
        dtypes=ALL,
        sample=_view_samples(
            [
                ((2, 3, 4), (0, 2), {}, "contiguous"),
                ((2, 3, 4), ((0, 1), (2, 0)), {}, "contiguous"),
                ((2, 3, 4), (-1, 0), {}, "transposed"),
                ((0, 3), (1, 0), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "moveaxis",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=lambda a, s, d: np.moveaxis(a, s, d),
        dtypes=[ember.float32],
        sample=_view_samples([((2, 3, 4), ((0, -1), (-1, 0)), {}, "strided")]),
    ),
    OpInfo(
        "diagonal",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=lambda a, offset=0, dim1=0, dim2=1: np.diagonal(a, offset, dim1, dim2),
        dtypes=ALL,
        sample=_view_samples(
            [
                ((3, 4), (), {}, "contiguous"),
                ((3, 4), (1,), {}, "transposed"),
                ((2, 3, 4), (-1, 2, 1), {}, "contiguous"),
                ((2, 3, 4), (0, -1, -2), {}, "strided"),
                ((3, 4), (7,), {}, "contiguous"),
                ((0, 3), (), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "unfold",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ember_fn=lambda t, *a: t.unfold(*a),
        ref=_np_unfold,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((7,), (0, 3, 2), {}, "contiguous"),
                ((2, 3, 4), (2, 2, 1), {}, "transposed"),
                ((2, 3, 4), (-2, 3, 1), {}, "contiguous"),
                ((3, 4), (1, 0, 1), {}, "contiguous"),
                ((), (0, 1, 1), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "unflatten",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=_np_unflatten,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((2, 12), (1, (3, 4)), {}, "contiguous"),
                ((2, 12), (-1, (2, -1)), {}, "contiguous"),
                ((6, 5), (0, (3, 2)), {}, "transposed"),
            ]
        ),
    ),
    OpInfo(
        "broadcast_to",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=lambda a, shape: np.broadcast_to(
            a,
            tuple(a.shape[i - len(shape) + a.ndim] if s == -1 else s for i, s in enumerate(shape)),
        ),
        dtypes=ALL,
        sample=_view_samples(
            [
                ((3, 1), ((2, 3, 4),), {}, "contiguous"),
                ((3, 4), ((-1, 4),), {}, "transposed"),
                ((), ((2, 2),), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "T",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ember_fn=lambda t: t.T,
        ref=lambda a: a.T,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((3, 4), (), {}, "contiguous"),
                ((2, 3, 4), (), {}, "transposed"),
                ((5,), (), {}, "contiguous"),
                ((), (), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "mT",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ember_fn=lambda t: t.mT,
        ref=lambda a: np.swapaxes(a, -1, -2),
        dtypes=ALL,
        sample=_view_samples([((3, 4), (), {}, "contiguous"), ((2, 3, 4), (), {}, "transposed")]),
    ),
    OpInfo(
        "mH",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ember_fn=lambda t: t.mH,
        ref=lambda a: np.conj(np.swapaxes(a, -1, -2)),
        dtypes=ALL,
        sample=_view_samples([((2, 3, 4), (), {}, "strided")]),
    ),
    OpInfo(
        "H",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ember_fn=lambda t: t.H,
        ref=lambda a: np.conj(a.T),
        dtypes=ALL,
        sample=_view_samples([((3, 4), (), {}, "contiguous"), ((), (), {}, "contiguous")]),
    ),
    OpInfo(
        "adjoint",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=lambda a: np.conj(np.swapaxes(a, -1, -2)),
        dtypes=COMPLEX + [ember.float32],
        sample=_view_samples([((2, 3, 4), (), {}, "transposed")]),
    ),
    OpInfo(
        "t",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=lambda a: a.T,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((3, 4), (), {}, "contiguous"),
                ((5,), (), {}, "contiguous"),
                ((), (), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "swapaxes",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=np.swapaxes,
        dtypes=[ember.int32, ember.float64],
        sample=_view_samples([((2, 3, 4), (0, -1), {}, "contiguous")]),
    ),
    OpInfo(
        "unbind",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=_np_unbind,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((3, 4), (), {}, "contiguous"),
                ((2, 3, 4), (-1,), {}, "transposed"),
                ((0, 3), (1,), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "split",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=_np_split,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((7, 3), (3,), {}, "contiguous"),
                ((3, 7), (2, 1), {}, "transposed"),
                ((7, 3), ([2, 0, 5],), {}, "contiguous"),
                ((2, 6), ([1, 5], -1), {}, "strided"),
            ]
        ),
    ),
    OpInfo(
        "chunk",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=_np_chunk,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((7, 3), (3,), {}, "contiguous"),
                ((3, 6), (4, 1), {}, "transposed"),
                ((5,), (4,), {}, "contiguous"),
                ((0,), (3,), {}, "contiguous"),
            ]
        ),
    ),
    OpInfo(
        "tensor_split",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=_np_tensor_split,
        dtypes=ALL,
        sample=_view_samples(
            [
                ((7, 3), (3,), {}, "contiguous"),
                ((3, 7), (4, 1), {}, "transposed"),
                ((7,), ([1, 5],), {}, "contiguous"),
                ((7,), ([5, 1, 10],), {}, "contiguous"),
                ((7,), ([-2],), {}, "contiguous"),
                ((2, 6), ([2, 3], -1), {}, "strided"),
            ]
        ),
    ),
    OpInfo(
        "hsplit",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=np.hsplit,
        dtypes=[ember.float32, ember.int64],
        sample=_view_samples(
            [
                ((3, 4), (2,), {}, "contiguous"),
                ((6,), (3,), {}, "contiguous"),
                ((3, 4), ([1, 3],), {}, "transposed"),
            ]
        ),
    ),
    OpInfo(
        "vsplit",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=np.vsplit,
        dtypes=[ember.float32],
        sample=_view_samples(
            [((4, 3), (2,), {}, "contiguous"), ((4, 3), ([1],), {}, "transposed")]
        ),
    ),
    OpInfo(
        "dsplit",
        differentiable=True,
        gradgrad=True,
        grad_complex=True,
        ref=np.dsplit,
        dtypes=[ember.float32],
        sample=_view_samples(
            [((2, 3, 4), (2,), {}, "contiguous"), ((2, 3, 4), ([1, 3],), {}, "strided")]
        ),
    ),
]
