"""OpInfos for the matmul family: matmul, mm, bmm, mv, dot, vdot, inner, addmm, addmv, addbmm,
baddbmm. References are NumPy's products computed in float64/complex128/int64 (the inputs are
small, so integer results equal PyTorch's wrapping ones)."""

import numpy as np

import ember
from opinfo import COMPLEX, FLOATING, INTEGRAL, OpInfo, Sample, make_array, make_tensor

NUMERIC = INTEGRAL + FLOATING + COMPLEX
# GEMM results accumulate k products, so float32 needs a little more room than elementwise ops.
GEMM_TOL = {
    ember.float16: (2e-3, 2e-3),
    ember.bfloat16: (1.6e-2, 2e-2),
    ember.float32: (1e-5, 1e-4),
    ember.complex64: (1e-5, 1e-4),
}


def wide(a):
    """a in a dtype wide enough that NumPy's product is exact / float64-accurate."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return a.astype(np.int64)


def narrow_like(result, like):
    """Casts an int64 reference back to the input's integer dtype (wrapping like PyTorch)."""
    if like.dtype.kind in "iub":
        return np.asarray(result).astype(like.dtype)
    return result


def _t(shape, dtype, rng, layout="contiguous"):
    t = make_tensor(make_array(shape, dtype, rng), dtype, layout=layout)
    return t.reshape(shape) if shape == () else t  # ember.tensor(0-d array) may come back 1-D


MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (3, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (4, 3, 2)),
    ((0, 3), (3, 4)),
    ((2, 0), (0, 4)),
    ((2, 3), (3, 0)),
    ((0, 2, 3), (3, 4)),
    ((3, 0, 2, 3), (1, 3, 4)),
    ((1, 1), (1, 1)),
    ((9, 17), (17, 33)),
]


def matmul_samples(dtype, rng):
    out = []
    for sa, sb in MATMUL_SHAPES:
        for layout in ("contiguous", "transposed", "strided"):
            if layout != "contiguous" and (len(sa) < 2 or len(sb) < 2):
                continue
            a, b = _t(sa, dtype, rng, layout), _t(sb, dtype, rng, layout)
            out.append(Sample((a, b), name=f"{sa}@{sb}-{layout}"))
    # Batch dims that broadcast through stride-0 views.
    a = _t((1, 4, 3), dtype, rng).expand(3, 4, 3)
    out.append(Sample((a, _t((3, 3, 2), dtype, rng)), name="expanded-batch"))
    # Mixed layouts: one transposed, one strided.
    out.append(Sample((_t((5, 4), dtype, rng, "transposed"), _t((4, 6), dtype, rng, "strided")),
                      name="mixed-layout"))
    return out


def mm_samples(dtype, rng):
    out = []
    for (m, k, n) in [(2, 3, 4), (1, 5, 1), (0, 3, 2), (3, 0, 2), (7, 1, 9), (16, 33, 12)]:
        for la in ("contiguous", "transposed", "strided"):
            out.append(Sample((_t((m, k), dtype, rng, la), _t((k, n), dtype, rng, "transposed")),
                              name=f"{m}x{k}x{n}-{la}"))
    return out


def bmm_samples(dtype, rng):
    out = []
    for (b, m, k, n) in [(3, 2, 4, 5), (1, 1, 1, 1), (0, 2, 3, 4), (2, 0, 3, 4), (2, 3, 0, 4)]:
        for la in ("contiguous", "transposed", "strided"):
            out.append(Sample((_t((b, m, k), dtype, rng, la), _t((b, k, n), dtype, rng)),
                              name=f"{b}x{m}x{k}x{n}-{la}"))
    a = _t((4, 3, 2), dtype, rng).permute(1, 0, 2)  # batch stride smaller than row stride
    out.append(Sample((a, _t((3, 2, 5), dtype, rng)), name="permuted-batch"))
    return out


def mv_samples(dtype, rng):
    out = []
    for (m, k) in [(2, 3), (1, 1), (0, 3), (3, 0), (17, 9)]:
        for la in ("contiguous", "transposed", "strided"):
            out.append(Sample((_t((m, k), dtype, rng, la), _t((k,), dtype, rng)),
                              name=f"{m}x{k}-{la}"))
    vec = make_tensor(np.repeat(make_array((4,), dtype, rng), 2), dtype)[::2]
    out.append(Sample((_t((3, 4), dtype, rng), vec), name="strided-vec"))
    return out


def dot_samples(dtype, rng):
    out = []
    for n in [0, 1, 5, 33]:
        out.append(Sample((_t((n,), dtype, rng), _t((n,), dtype, rng)), name=f"n={n}"))
    a = make_tensor(np.repeat(make_array((6,), dtype, rng), 3), dtype)[::3]
    out.append(Sample((a, _t((6,), dtype, rng)), name="strided"))
    return out


def inner_samples(dtype, rng):
    return [
        Sample((_t((3,), dtype, rng), _t((3,), dtype, rng)), name="1d"),
        Sample((_t((2, 3), dtype, rng), _t((4, 3), dtype, rng)), name="2d"),
        Sample((_t((2, 2, 3), dtype, rng, "transposed"), _t((3,), dtype, rng)), name="3d-1d"),
        Sample((_t((), dtype, rng), _t((2, 3), dtype, rng)), name="0d"),
        Sample((_t((0, 3), dtype, rng), _t((2, 3), dtype, rng)), name="empty"),
    ]


def _scale(dtype):
    if dtype.is_complex:
        return {"beta": 0.5 - 1j, "alpha": 2 + 0.5j}
    if dtype.is_floating_point:
        return {"beta": 0.5, "alpha": -1.5}
    return {"beta": 2, "alpha": 3}


def addmm_samples(dtype, rng):
    out = []
    for inp in [(2, 4), (4,), (1, 4), ()]:
        out.append(Sample((_t(inp, dtype, rng), _t((2, 3), dtype, rng), _t((3, 4), dtype, rng)),
                          _scale(dtype), name=f"input{inp}"))
    out.append(Sample((_t((2, 4), dtype, rng, "transposed"), _t((2, 3), dtype, rng, "strided"),
                       _t((3, 4), dtype, rng, "transposed")), name="layouts"))
    nan_in = make_tensor(np.full((2, 4), np.nan if dtype.is_floating_point or dtype.is_complex
                                 else 7).astype(make_array((1,), dtype, rng).dtype), dtype)
    out.append(Sample((nan_in, _t((2, 3), dtype, rng), _t((3, 4), dtype, rng)), {"beta": 0},
                      name="beta0-ignores-input"))
    out.append(Sample((_t((2, 4), dtype, rng), _t((2, 0), dtype, rng), _t((0, 4), dtype, rng)),
                      _scale(dtype), name="k=0"))
    return out


def addmv_samples(dtype, rng):
    return [
        Sample((_t((2,), dtype, rng), _t((2, 3), dtype, rng), _t((3,), dtype, rng)), _scale(dtype),
               name="basic"),
        Sample((_t((1,), dtype, rng), _t((4, 3), dtype, rng, "transposed"), _t((3,), dtype, rng)),
               name="broadcast-input"),
        Sample((_t((2,), dtype, rng), _t((2, 0), dtype, rng), _t((0,), dtype, rng)), _scale(dtype),
               name="k=0"),
    ]


def addbmm_samples(dtype, rng):
    return [
        Sample((_t((2, 4), dtype, rng), _t((5, 2, 3), dtype, rng), _t((5, 3, 4), dtype, rng)),
               _scale(dtype), name="basic"),
        Sample((_t((4,), dtype, rng), _t((3, 2, 3), dtype, rng, "transposed"),
                _t((3, 3, 4), dtype, rng, "strided")), name="layouts"),
        Sample((_t((2, 4), dtype, rng), _t((0, 2, 3), dtype, rng), _t((0, 3, 4), dtype, rng)),
               _scale(dtype), name="no-batches"),
    ]


def baddbmm_samples(dtype, rng):
    return [
        Sample((_t((5, 2, 4), dtype, rng), _t((5, 2, 3), dtype, rng), _t((5, 3, 4), dtype, rng)),
               _scale(dtype), name="basic"),
        Sample((_t((2, 4), dtype, rng), _t((3, 2, 3), dtype, rng, "transposed"),
                _t((3, 3, 4), dtype, rng)), name="broadcast-input"),
        Sample((_t((2, 2, 3), dtype, rng), _t((2, 2, 4), dtype, rng, "transposed"),
                _t((2, 4, 3), dtype, rng)), _scale(dtype), name="small"),
    ]



def np_addmm(inp, a, b, beta=1, alpha=1):
    prod = wide(a) @ wide(b)
    res = prod * alpha if beta == 0 else wide(inp) * beta + prod * alpha
    if a.dtype.kind in "iu":
        return np.asarray(res).astype(np.int64).astype(a.dtype)
    return res


def np_addbmm(inp, a, b, beta=1, alpha=1):
    prod = (wide(a) @ wide(b)).sum(axis=0)
    res = prod * alpha if beta == 0 else wide(inp) * beta + prod * alpha
    return narrow_like(res, a)


def np_baddbmm(inp, a, b, beta=1, alpha=1):
    prod = wide(a) @ wide(b)
    res = prod * alpha if beta == 0 else wide(inp) * beta + prod * alpha
    return narrow_like(res, a)


# Every product is differentiable, for complex inputs too, with a double backward (Note
# [Gradcheck Entries] in opinfo.py).
D = {"differentiable": True, "grad_complex": True, "gradgrad": True}

OP_DB = [
    OpInfo("matmul", ref=lambda a, b: narrow_like(wide(a) @ wide(b), a), dtypes=NUMERIC,
           sample=matmul_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("mm", ref=lambda a, b: narrow_like(wide(a) @ wide(b), a), dtypes=NUMERIC,
           sample=mm_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("bmm", ref=lambda a, b: narrow_like(wide(a) @ wide(b), a), dtypes=NUMERIC,
           sample=bmm_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("mv", ref=lambda a, b: narrow_like(wide(a) @ wide(b), a), dtypes=NUMERIC,
           sample=mv_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("dot", ref=lambda a, b: narrow_like(np.dot(wide(a), wide(b)), a), dtypes=NUMERIC,
           sample=dot_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("vdot", ref=lambda a, b: narrow_like(np.vdot(wide(a), wide(b)), a), dtypes=NUMERIC,
           sample=dot_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("inner", ref=lambda a, b: narrow_like(np.inner(wide(a), wide(b)), a), dtypes=NUMERIC,
           sample=inner_samples, tol=GEMM_TOL, result_dtype=lambda d: d, **D),
    OpInfo("addmm", ref=np_addmm, dtypes=NUMERIC, sample=addmm_samples, tol=GEMM_TOL,
           result_dtype=lambda d: d, **D),
    OpInfo("addmv", ref=np_addmm, dtypes=NUMERIC, sample=addmv_samples, tol=GEMM_TOL,
           result_dtype=lambda d: d, **D),
    OpInfo("addbmm", ref=np_addbmm, dtypes=NUMERIC, sample=addbmm_samples, tol=GEMM_TOL,
           result_dtype=lambda d: d, **D),
    OpInfo("baddbmm", ref=np_baddbmm, dtypes=NUMERIC, sample=baddbmm_samples, tol=GEMM_TOL,
           result_dtype=lambda d: d, **D),
    # Method and operator forms run through the same samples.
    OpInfo("Tensor.__matmul__", ref=lambda a, b: narrow_like(wide(a) @ wide(b), a),
           dtypes=NUMERIC, sample=matmul_samples, tol=GEMM_TOL, ember_fn=lambda a, b: a @ b, **D),
    OpInfo("Tensor.addmm_", ref=np_addmm, dtypes=NUMERIC,
           sample=lambda dt, rng: [s for s in addmm_samples(dt, rng) if s.args[0].shape == (2, 4)],
           tol=GEMM_TOL, ember_fn=lambda i, a, b, **kw: i.clone().addmm_(a, b, **kw), **D),
    OpInfo("Tensor.addmv_", ref=np_addmm, dtypes=NUMERIC,
           sample=lambda dt, rng: [s for s in addmv_samples(dt, rng) if s.args[0].shape == (2,)],
           tol=GEMM_TOL, ember_fn=lambda i, a, b, **kw: i.clone().addmv_(a, b, **kw), **D),
    OpInfo("Tensor.addbmm_", ref=np_addbmm, dtypes=NUMERIC,
           sample=lambda dt, rng: [s for s in addbmm_samples(dt, rng)
                                   if s.args[0].shape == (2, 4)],
           tol=GEMM_TOL, ember_fn=lambda i, a, b, **kw: i.clone().addbmm_(a, b, **kw), **D),
    OpInfo("Tensor.baddbmm_", ref=np_baddbmm, dtypes=NUMERIC,
           sample=lambda dt, rng: [s for s in baddbmm_samples(dt, rng)
                                   if s.args[0].dim() == 3],
           tol=GEMM_TOL, ember_fn=lambda i, a, b, **kw: i.clone().baddbmm_(a, b, **kw), **D),
]
