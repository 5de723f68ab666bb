"""OpInfos for the ops of the core skeleton: add, sub, mul, div, sum."""

import numpy as np

import ember
from opinfo import (
    ALL,
    COMPLEX,
    FLOATING,
    NUMERIC,
    OpInfo,
    Sample,
    binary_samples,
    make_array,
    make_tensor,
)


def _sum_samples(dtype, rng):
    out = []
    for shape, kw in [((), {}), ((5,), {}), ((3, 4), {"dim": 1}), ((3, 4), {"dim": (0, 1)}),
                      ((2, 3, 4), {"dim": -1, "keepdim": True}), ((0, 3), {"dim": 0}),
                      ((2, 3, 4), {"dim": (0, 2)})]:
        a = make_tensor(make_array(shape, dtype, rng), dtype)
        out.append(Sample((a,), kw, name=f"{shape}-{kw}"))
    a = make_tensor(make_array((4, 5), dtype, rng), dtype, layout="transposed")
    out.append(Sample((a,), {"dim": 0}, name="transposed"))
    return out


def _np_sum(a, dim=None, keepdim=False):
    axis = dim if not isinstance(dim, list) else tuple(dim)
    res = np.sum(a, axis=axis, keepdims=keepdim)
    return res.astype(np.int64) if a.dtype.kind in "biu" else res


_NOT_BOOL = [d for d in ALL if d is not ember.bool]

def _alpha_samples(dtype, rng):
    out = binary_samples(dtype, rng)
    a = make_tensor(make_array((3, 4), dtype, rng), dtype)
    b = make_tensor(make_array((4,), dtype, rng), dtype)
    out.append(Sample((a, b), {"alpha": 2.5 if not dtype.is_complex else 1 - 2j}, name="alpha"))
    return out


# Gradcheck over the default samples (small and finite), complex too, and double backward.
_GRAD = dict(differentiable=True, grad_complex=True, gradgrad=True)

OP_DB = [
    OpInfo("add", ref=np.add, dtypes=_NOT_BOOL, sample=binary_samples,
           grad_sample=_alpha_samples, **_GRAD),
    OpInfo("sub", ref=np.subtract, dtypes=NUMERIC, sample=binary_samples,
           grad_sample=_alpha_samples, **_GRAD),
    OpInfo("mul", ref=np.multiply, dtypes=_NOT_BOOL, sample=binary_samples, **_GRAD),
    OpInfo("div", ref=np.true_divide, dtypes=FLOATING + COMPLEX,
           sample=lambda dt, rng: binary_samples(dt, rng, rhs_low=0.5, rhs_high=3.0), **_GRAD),
    OpInfo("sum", ref=_np_sum, dtypes=NUMERIC, sample=_sum_samples,
           tol={ember.float16: (1e-2, 1e-2), ember.bfloat16: (3e-2, 5e-2)}, **_GRAD),
]
