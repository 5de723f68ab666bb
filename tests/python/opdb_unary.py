"""OpInfos for the unary elementwise ops (and the ternary where / lerp / clamp) against NumPy.

Binary arithmetic, comparison, logical and bitwise ops are in opdb_binary.py; the
shared references and sample generators in elementwise_refs.py.
"""

import numpy as np

import ember
from elementwise_refs import (
    ALL_TYPES,
    BOOL,
    COMPLEX,
    FLOAT_AND_COMPLEX,
    FLOATING,
    INTEGRAL,
    NUMERIC_TYPES,
    REAL,
    REAL_AND_BOOL,
    angle_ref,
    bool_result,
    clamp_ref,
    digamma_ref,
    erf_ref,
    erfc_ref,
    erfinv_ref,
    f64,
    float_result,
    grad_unary,
    lerp_ref,
    lgamma_ref,
    logit_ref,
    polygamma_ref,
    quiet,
    real_result,
    same_result,
    sgn_ref,
    sign_ref,
    signbit_ref,
    square_ref,
    unary,
    wide,
)
from opinfo import OpInfo, Sample, make_array, make_tensor

# Every dtype: ints and bool promote to float32 (float16 / bfloat16 compute in float).
FLOAT_OPS_ALL = ALL_TYPES
FLOAT_OPS_REAL = BOOL + REAL  # no complex support (erf, lgamma, ...)

# Looser tolerances for functions whose float16 / bfloat16 result is sensitive near poles or
# large arguments (tan, lgamma, digamma: a rounded input moves the result by many ulps).
LOOSE = {
    ember.float16: (5e-3, 5e-3),
    ember.bfloat16: (5e-2, 5e-2),
    ember.float32: (1e-5, 1e-5),
    ember.complex64: (1e-5, 1e-5),
}


def _float_unary(name, np_fn, dtypes=FLOAT_OPS_ALL, low=-3.0, high=3.0, tol=None, ref=None,
                 grad=(-3.0, 3.0), signed=False):
    """`grad`: the value range of the gradcheck samples (where the derivative is moderate);
    `signed`: both signs of it (1 / x away from 0)."""
    return OpInfo(
        name,
        ref=ref or f64(np_fn),
        dtypes=dtypes,
        sample=lambda dt, rng: unary(dt, rng, low=low, high=high),
        result_dtype=float_result,
        tol=tol or {},
        differentiable=True,
        grad_sample=lambda dt, rng: grad_unary(dt, rng, low=grad[0], high=grad[1], signed=signed),
        grad_complex=ember.complex64 in dtypes,
        gradgrad=True,
    )


def _step(name, ref, dtypes=None, sample=unary, **kw):
    """Piecewise-constant ops (floor, sign, ...): recorded with zero gradients, as PyTorch."""
    return OpInfo(name, ref=ref, dtypes=dtypes or REAL, sample=sample, result_dtype=same_result,
                  differentiable=True, grad_sample=lambda dt, rng: grad_unary(dt, rng), **kw)


def _nondiff(op):
    """Ops PyTorch records no gradient for (bool results)."""
    op.differentiable = False
    return op


def _polygamma_samples(dt, rng):
    out = []
    for n in (0, 1, 2, 3, 5):
        # Away from the poles at 0, -1, ... for n >= 1 (float16 overflows within 0.004 of one).
        low = -4.0 if n == 0 else 0.25
        for s in unary(dt, rng, low=low, high=6.0, special=n == 0):
            out.append(Sample((n,) + s.args, name=f"n={n}-{s.name}"))
    if dt in (ember.float32, ember.float64):
        a = make_tensor(make_array((9,), dt, rng, low=-4.0, high=0.0), dt)
        out += [Sample((n, a), name=f"n={n}-negative") for n in (1, 2, 4)]
        edges = make_tensor(np.array([0.0, -1.0, -3.0, np.inf, -np.inf, np.nan, 1e-3, 1e5]), dt)
        out += [Sample((n, edges), name=f"n={n}-edges") for n in (1, 2, 3)]
    return out


def _polygamma_grad_samples(dt, rng):
    out = []
    for n in (0, 1, 2):
        a = make_tensor(make_array((4,), dt, rng, low=0.3, high=5.0), dt)
        b = make_tensor(make_array((3,), dt, rng, low=-2.8, high=-2.2), dt)
        out += [Sample((n, a), name=f"n={n}"), Sample((n, b), name=f"n={n}-negative")]
    return out


def _positive_pair(dt, rng, low=0.5, high=3.0):
    """grad_unary with magnitudes in [low, high] and random signs (derivative defined)."""
    return grad_unary(dt, rng, low=low, high=high, signed=True)


def _rsqrt(a):
    return 1 / np.sqrt(a)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _reciprocal(a):
    return 1 / a


def _frac(a):
    return a - np.trunc(a)


def _round_decimals_samples(dt, rng):
    out = []
    for d in (0, 1, 2, -1):
        for s in unary(dt, rng, low=-300.0, high=300.0, special=d == 0):
            out.append(Sample(s.args, {"decimals": d}, name=f"{s.name}-decimals{d}"))
    return out


def _round_ref(a, decimals=0):
    if a.dtype.kind in "iub":
        return a.copy()
    return np.round(wide(a), decimals)


def _logit_samples(dt, rng):
    out = unary(dt, rng, low=0.0, high=1.0)
    for eps in (None, 0.0, 1e-3, 0.25):
        a = make_tensor(make_array((6,), dt, rng, low=-0.2, high=1.2), dt)
        out.append(Sample((a,), {"eps": eps}, name=f"eps={eps}"))
    return out


def _nan_to_num_samples(dt, rng):
    out = unary(dt, rng)
    for kw in ({"nan": 1.5}, {"posinf": 7.0, "neginf": -8.0}, {"nan": -1.0, "posinf": 2.0}):
        arr = make_array((8,), dt, rng, special=True)
        out.append(Sample((make_tensor(arr, dt),), kw, name=f"kw={kw}"))
    return out


def _nan_to_num_ref(a, nan=0.0, posinf=None, neginf=None):
    if a.dtype.kind in "iub":
        return a.copy()
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


def _clamp_samples(dt, rng):
    out = []
    for lo, hi in ((-1, 2), (None, 1), (0, None), (2, -1), (-1.5, 1.5)):
        if isinstance(lo, float) and dt in INTEGRAL:
            continue  # float bounds on int tensors change the dtype: covered in test_elementwise
        if dt is ember.uint8 and ((lo or 0) < 0 or (hi or 0) < 0):
            continue  # -1 wraps to 255 in uint8 (as PyTorch); NumPy refuses it
        for s in unary(dt, rng, special=True)[:3] + unary(dt, rng)[-1:]:
            out.append(Sample(s.args, {"min": lo, "max": hi}, name=f"{s.name}-[{lo},{hi}]"))
    # Tensor bounds, broadcast.
    a = make_tensor(make_array((3, 4), dt, rng), dt)
    lo_t = make_tensor(make_array((4,), dt, rng, low=-3, high=0), dt)
    hi_t = make_tensor(make_array((3, 1), dt, rng, low=0, high=3), dt)
    # Positional, so that the harness hands the reference NumPy arrays.
    out.append(Sample((a, lo_t, hi_t), name="tensor-bounds"))
    out.append(Sample((a, lo_t), name="tensor-min"))
    out.append(Sample((a, None, hi_t), name="tensor-max"))
    return out


def _where_samples(dt, rng):
    out = []
    for sc, sx, sy in (((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), ()), ((), (2, 3), (3,)),
                       ((0, 2), (1, 2), (0, 1))):
        c = make_tensor(make_array(sc, ember.bool, rng), ember.bool)
        x = make_tensor(make_array(sx, dt, rng), dt)
        y = make_tensor(make_array(sy, dt, rng), dt)
        out.append(Sample((c, x, y), name=f"{sc}-{sx}-{sy}"))
    c = make_tensor(make_array((4, 3), ember.bool, rng), ember.bool, layout="transposed")
    x = make_tensor(make_array((4, 3), dt, rng), dt, layout="strided")
    out.append(Sample((c, x, make_tensor(make_array((3,), dt, rng), dt)), name="noncontig"))
    return out


def _lerp_samples(dt, rng):
    out = []
    for ss, se, sw in (((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((), (), ())):
        s = make_tensor(make_array(ss, dt, rng), dt)
        e = make_tensor(make_array(se, dt, rng), dt)
        w = make_tensor(make_array(sw, dt, rng, low=0, high=1), dt)
        out.append(Sample((s, e, w), name=f"tensor-weight-{ss}"))
    s = make_tensor(make_array((3, 4), dt, rng), dt, layout="transposed")
    e = make_tensor(make_array((3, 4), dt, rng), dt)
    for w in (0.0, 0.3, 0.5, 1.0, 1.7):
        out.append(Sample((s, e, w), name=f"scalar-weight-{w}"))
    return out


def _logit_grad_samples(dt, rng):
    out = grad_unary(dt, rng, low=0.05, high=0.95)
    # eps clamps to [0.2, 0.8]: values on both sides of the bounds (the clamped part has no
    # gradient).
    a = make_tensor(np.array([0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95]), dt)
    out.append(Sample((a,), {"eps": 0.2}, name="eps=0.2"))
    return out


def _clamp_grad_samples(dt, rng):
    """Values away from the bounds (the derivative jumps there; tests/python/
    test_autograd_elementwise.py checks the boundary conventions)."""
    out = []
    for lo, hi in ((-1, 2), (None, 1), (0, None), (2, -1), (-1.5, 1.5)):
        for s in grad_unary(dt, rng):
            out.append(Sample(s.args, {"min": lo, "max": hi}, name=f"{s.name}-[{lo},{hi}]"))
    a = make_tensor(make_array((3, 4), dt, rng), dt)
    lo_t = make_tensor(make_array((4,), dt, rng, low=-3, high=0), dt)
    hi_t = make_tensor(make_array((3, 1), dt, rng, low=0, high=3), dt)
    out.append(Sample((a, lo_t, hi_t), name="tensor-bounds"))
    out.append(Sample((a, lo_t), name="tensor-min"))
    out.append(Sample((a, None, hi_t), name="tensor-max"))
    out.append(Sample((a, hi_t, lo_t), name="tensor-bounds-crossed"))
    return out


def _clamp_one_grad_samples(kw, value):
    def samples(dt, rng):
        out = [Sample(s.args, {kw: value}, name=s.name) for s in grad_unary(dt, rng)]
        a = make_tensor(make_array((3, 4), dt, rng), dt)
        out.append(Sample((a, make_tensor(make_array((4,), dt, rng), dt)), name="tensor-bound"))
        return out

    return samples


# Gradcheck settings shared by several ops.
_LINEAR = dict(differentiable=True, grad_sample=lambda dt, rng: grad_unary(dt, rng),
               grad_complex=True, gradgrad=True)
# |x|, sgn, angle: the derivative is undefined at 0.
_AWAY_FROM_ZERO = dict(differentiable=True, grad_sample=_positive_pair, grad_complex=True,
                       gradgrad=True)
_CLAMP_GRAD = dict(differentiable=True, grad_sample=_clamp_grad_samples, gradgrad=True)


def _erfinv_samples(dt, rng):
    out = unary(dt, rng, low=-1.0, high=1.0)
    a = make_tensor(np.array([-1.0, 1.0, 0.0, 0.999, -0.9999, 1.5, -2.0]), dt)
    out.append(Sample((a,), name="edges"))
    return out


def _complex_view(name):
    # imag has complex dtypes only: its gradcheck samples are complex for the float64 run too.
    def grad_sample(dt, rng):
        return grad_unary(ember.complex128 if name == "imag" else dt, rng)

    return OpInfo(
        name,
        ref=getattr(np, name),
        dtypes=ALL_TYPES if name != "imag" else COMPLEX,
        sample=lambda dt, rng: unary(dt, rng),
        result_dtype=real_result,
        differentiable=True,
        grad_sample=grad_sample,
        grad_complex=True,
        gradgrad=True,
    )


def _isreal_ref(a):
    return np.isreal(a) if a.dtype.kind == "c" else np.ones(a.shape, dtype=bool)


OP_DB = [
    # --- exp / log family (vectorised float32 / float64) ---
    _float_unary("exp", np.exp, low=-20, high=20),
    _float_unary("exp2", np.exp2, low=-20, high=20),
    _float_unary("expm1", np.expm1),
    _float_unary("log", np.log, low=0.0, high=10.0, grad=(0.5, 4.0)),
    _float_unary("log2", np.log2, low=0.0, high=10.0, grad=(0.5, 4.0)),
    _float_unary("log10", np.log10, low=0.0, high=10.0, grad=(0.5, 4.0)),
    _float_unary("log1p", np.log1p, low=-1.0, high=5.0, grad=(-0.5, 3.0)),
    _float_unary("sqrt", np.sqrt, low=0.0, high=10.0, grad=(0.5, 4.0)),
    _float_unary("rsqrt", _rsqrt, low=0.1, high=10.0, grad=(0.5, 4.0)),
    _float_unary("reciprocal", _reciprocal, grad=(0.5, 3.0), signed=True),
    _float_unary("sigmoid", _sigmoid, low=-10.0, high=10.0),
    # --- trigonometric and hyperbolic ---
    _float_unary("sin", np.sin, low=-10, high=10),
    _float_unary("cos", np.cos, low=-10, high=10),
    _float_unary("tan", np.tan, tol=LOOSE, grad=(-1.2, 1.2)),
    _float_unary("asin", np.arcsin, low=-1, high=1, grad=(-0.8, 0.8)),
    _float_unary("acos", np.arccos, low=-1, high=1, grad=(-0.8, 0.8)),
    _float_unary("atan", np.arctan),
    _float_unary("sinh", np.sinh),
    _float_unary("cosh", np.cosh),
    _float_unary("tanh", np.tanh, low=-10, high=10),
    _float_unary("sinc", np.sinc),
    _float_unary("asinh", np.arcsinh),
    _float_unary("acosh", np.arccosh, low=1.0, high=5.0, grad=(1.5, 4.0)),
    _float_unary("atanh", np.arctanh, low=-1.0, high=1.0, grad=(-0.8, 0.8)),
    # --- special functions (real only) ---
    _float_unary("erf", None, FLOAT_OPS_REAL, ref=erf_ref),
    _float_unary("erfc", None, FLOAT_OPS_REAL, ref=erfc_ref),
    _float_unary("lgamma", None, FLOAT_OPS_REAL, low=-4.0, high=6.0, ref=lgamma_ref, tol=LOOSE,
                 grad=(0.3, 5.0)),
    _float_unary("digamma", None, FLOAT_OPS_REAL, low=-4.0, high=6.0, ref=digamma_ref,
                 tol=LOOSE, grad=(0.3, 5.0)),
    OpInfo("polygamma", ref=polygamma_ref, dtypes=FLOAT_OPS_REAL, sample=_polygamma_samples,
           result_dtype=float_result, tol=LOOSE, differentiable=True,
           grad_sample=_polygamma_grad_samples, gradgrad=True),
    OpInfo("erfinv", ref=erfinv_ref, dtypes=FLOAT_OPS_REAL, sample=_erfinv_samples,
           result_dtype=float_result, tol=LOOSE, differentiable=True,
           grad_sample=lambda dt, rng: grad_unary(dt, rng, low=-0.8, high=0.8), gradgrad=True),
    OpInfo("logit", ref=logit_ref, dtypes=FLOAT_OPS_REAL, sample=_logit_samples,
           result_dtype=float_result, tol=LOOSE, differentiable=True,
           grad_sample=_logit_grad_samples, gradgrad=True),
    # --- sign, magnitude, rounding ---
    OpInfo("neg", ref=np.negative, dtypes=NUMERIC_TYPES, sample=unary, result_dtype=same_result,
           **_LINEAR),
    OpInfo("negative", ref=np.negative, dtypes=NUMERIC_TYPES, sample=unary,
           result_dtype=same_result, **_LINEAR),
    OpInfo("abs", ref=np.abs, dtypes=NUMERIC_TYPES, sample=unary, result_dtype=real_result,
           **_AWAY_FROM_ZERO),
    OpInfo("absolute", ref=np.abs, dtypes=NUMERIC_TYPES, sample=unary,
           result_dtype=real_result, **_AWAY_FROM_ZERO),
    _step("sign", sign_ref, REAL_AND_BOOL),
    OpInfo("sgn", ref=sgn_ref, dtypes=ALL_TYPES, sample=unary, result_dtype=same_result,
           **_AWAY_FROM_ZERO),
    OpInfo("square", ref=square_ref, dtypes=ALL_TYPES, sample=unary,
           result_dtype=lambda dt: ember.int64 if dt is ember.bool else dt, **_LINEAR),
    _step("floor", np.floor),
    _step("ceil", np.ceil),
    _step("trunc", np.trunc),
    _step("fix", np.trunc),
    _step("round", _round_ref),
    _step("round_decimals", _round_ref, FLOATING, _round_decimals_samples, ember_fn=ember.round,
          tol={ember.float16: (2e-3, 1e-1), ember.bfloat16: (2e-2, 2.0)}),
    OpInfo("frac", ref=quiet(_frac), dtypes=FLOATING, sample=unary, result_dtype=same_result,
           differentiable=True, grad_sample=lambda dt, rng: grad_unary(dt, rng), gradgrad=True),
    OpInfo("positive", ref=np.positive, dtypes=NUMERIC_TYPES, sample=unary,
           result_dtype=same_result, **_LINEAR),
    OpInfo("nan_to_num", ref=_nan_to_num_ref, dtypes=ALL_TYPES, sample=_nan_to_num_samples,
           result_dtype=same_result, equal_nan=False, **_LINEAR),
    OpInfo("clamp", ref=clamp_ref, dtypes=REAL, sample=_clamp_samples, result_dtype=same_result,
           **_CLAMP_GRAD),
    OpInfo("clip", ref=clamp_ref, dtypes=REAL, sample=_clamp_samples, result_dtype=same_result,
           **_CLAMP_GRAD),
    OpInfo("clamp_min", ref=lambda a, min: clamp_ref(a, min=min), dtypes=REAL,
           sample=lambda dt, rng: [Sample(s.args, {"min": 0.5 if dt in FLOATING else 1})
                                   for s in unary(dt, rng)],
           result_dtype=same_result, differentiable=True, gradgrad=True,
           grad_sample=_clamp_one_grad_samples("min", 0.5)),
    OpInfo("clamp_max", ref=lambda a, max: clamp_ref(a, max=max), dtypes=REAL,
           sample=lambda dt, rng: [Sample(s.args, {"max": -0.5 if dt in FLOATING else 1})
                                   for s in unary(dt, rng)],
           result_dtype=same_result, differentiable=True, gradgrad=True,
           grad_sample=_clamp_one_grad_samples("max", -0.5)),
    # --- predicates (no gradient: bool results) ---
    _nondiff(OpInfo("isnan", ref=np.isnan, dtypes=ALL_TYPES, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("isinf", ref=np.isinf, dtypes=ALL_TYPES, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("isfinite", ref=np.isfinite, dtypes=ALL_TYPES, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("isposinf", ref=np.isposinf, dtypes=REAL_AND_BOOL, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("isneginf", ref=np.isneginf, dtypes=REAL_AND_BOOL, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("signbit", ref=signbit_ref, dtypes=REAL_AND_BOOL, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("isreal", ref=_isreal_ref, dtypes=ALL_TYPES, sample=unary,
                    result_dtype=bool_result)),
    _nondiff(OpInfo("logical_not", ref=np.logical_not, dtypes=ALL_TYPES, sample=unary,
                    result_dtype=bool_result)),
    OpInfo("bitwise_not", ref=np.invert, dtypes=BOOL + INTEGRAL, sample=unary,
           result_dtype=same_result),
    # --- complex ---
    _complex_view("real"),
    _complex_view("imag"),
    OpInfo("conj", ref=np.conj, dtypes=ALL_TYPES, sample=unary, result_dtype=same_result,
           **_LINEAR),
    OpInfo("conj_physical", ref=np.conj, dtypes=ALL_TYPES, sample=unary,
           result_dtype=same_result, **_LINEAR),
    OpInfo("angle", ref=angle_ref, dtypes=ALL_TYPES, sample=unary,
           result_dtype=lambda dt: real_result(float_result(dt)), **_AWAY_FROM_ZERO),
    # --- ternary ---
    OpInfo("where", ref=np.where, dtypes=ALL_TYPES, sample=_where_samples,
           result_dtype=same_result, differentiable=True, grad_complex=True, gradgrad=True),
    OpInfo("lerp", ref=lerp_ref, dtypes=FLOAT_AND_COMPLEX, sample=_lerp_samples,
           result_dtype=same_result, differentiable=True, grad_complex=True, gradgrad=True),
]
