"""OpInfos for the unary elementwise ops (and the ternary where / lerp / clamp) against NumPy.

Binary arithmetic, comparison, logical and bitwise ops are in opdb_elementwise_binary.py; the
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
    lerp_ref,
    lgamma_ref,
    logit_ref,
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


def _float_unary(name, np_fn, dtypes=FLOAT_OPS_ALL, low=-3.0, high=3.0, tol=None, ref=None):
    return OpInfo(
        name,
        ref=ref or f64(np_fn),
        dtypes=dtypes,
        sample=lambda dt, rng: unary(dt, rng, low=low, high=high),
        result_dtype=float_result,
        tol=tol or {},
    )


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


def _erfinv_samples(dt, rng):
    out = unary(dt, rng, low=-1.0, high=1.0)
    a = make_tensor(np.array([-1.0, 1.0, 0.0, 0.999, -0.9999, 1.5, -2.0]), dt)
    out.append(Sample((a,), name="edges"))
    return out


def _complex_view(name):
    return OpInfo(
        name,
        ref=getattr(np, name),
        dtypes=ALL_TYPES if name != "imag" else COMPLEX,
        sample=lambda dt, rng: unary(dt, rng),
        result_dtype=real_result,
    )


def _isreal_ref(a):
    return np.isreal(a) if a.dtype.kind == "c" else np.ones(a.shape, dtype=bool)


OP_DB = [
    # --- exp / log family (vectorised float32 / float64) ---
    _float_unary("exp", np.exp, low=-20, high=20),
    _float_unary("exp2", np.exp2, low=-20, high=20),
    _float_unary("expm1", np.expm1),
    _float_unary("log", np.log, low=0.0, high=10.0),
    _float_unary("log2", np.log2, low=0.0, high=10.0),
    _float_unary("log10", np.log10, low=0.0, high=10.0),
    _float_unary("log1p", np.log1p, low=-1.0, high=5.0),
    _float_unary("sqrt", np.sqrt, low=0.0, high=10.0),
    _float_unary("rsqrt", _rsqrt, low=0.1, high=10.0),
    _float_unary("reciprocal", _reciprocal),
    _float_unary("sigmoid", _sigmoid, low=-10.0, high=10.0),
    # --- trigonometric and hyperbolic ---
    _float_unary("sin", np.sin, low=-10, high=10),
    _float_unary("cos", np.cos, low=-10, high=10),
    _float_unary("tan", np.tan, tol=LOOSE),
    _float_unary("asin", np.arcsin, low=-1, high=1),
    _float_unary("acos", np.arccos, low=-1, high=1),
    _float_unary("atan", np.arctan),
    _float_unary("sinh", np.sinh),
    _float_unary("cosh", np.cosh),
    _float_unary("tanh", np.tanh, low=-10, high=10),
    _float_unary("asinh", np.arcsinh),
    _float_unary("acosh", np.arccosh, low=1.0, high=5.0),
    _float_unary("atanh", np.arctanh, low=-1.0, high=1.0),
    # --- special functions (real only) ---
    _float_unary("erf", None, FLOAT_OPS_REAL, ref=erf_ref),
    _float_unary("erfc", None, FLOAT_OPS_REAL, ref=erfc_ref),
    _float_unary("lgamma", None, FLOAT_OPS_REAL, low=-4.0, high=6.0, ref=lgamma_ref, tol=LOOSE),
    _float_unary("digamma", None, FLOAT_OPS_REAL, low=-4.0, high=6.0, ref=digamma_ref,
                 tol=LOOSE),
    OpInfo("erfinv", ref=erfinv_ref, dtypes=FLOAT_OPS_REAL, sample=_erfinv_samples,
           result_dtype=float_result, tol=LOOSE),
    OpInfo("logit", ref=logit_ref, dtypes=FLOAT_OPS_REAL, sample=_logit_samples,
           result_dtype=float_result, tol=LOOSE),
    # --- sign, magnitude, rounding ---
    OpInfo("neg", ref=np.negative, dtypes=NUMERIC_TYPES, sample=unary, result_dtype=same_result),
    OpInfo("negative", ref=np.negative, dtypes=NUMERIC_TYPES, sample=unary,
           result_dtype=same_result),
    OpInfo("abs", ref=np.abs, dtypes=NUMERIC_TYPES, sample=unary, result_dtype=real_result),
    OpInfo("absolute", ref=np.abs, dtypes=NUMERIC_TYPES, sample=unary,
           result_dtype=real_result),
    OpInfo("sign", ref=sign_ref, dtypes=REAL_AND_BOOL, sample=unary, result_dtype=same_result),
    OpInfo("sgn", ref=sgn_ref, dtypes=ALL_TYPES, sample=unary, result_dtype=same_result),
    OpInfo("square", ref=square_ref, dtypes=ALL_TYPES, sample=unary,
           result_dtype=lambda dt: ember.int64 if dt is ember.bool else dt),
    OpInfo("floor", ref=np.floor, dtypes=REAL, sample=unary, result_dtype=same_result),
    OpInfo("ceil", ref=np.ceil, dtypes=REAL, sample=unary, result_dtype=same_result),
    OpInfo("trunc", ref=np.trunc, dtypes=REAL, sample=unary, result_dtype=same_result),
    OpInfo("fix", ref=np.trunc, dtypes=REAL, sample=unary, result_dtype=same_result),
    OpInfo("round", ref=_round_ref, dtypes=REAL, sample=unary, result_dtype=same_result),
    OpInfo("round_decimals", ref=_round_ref, dtypes=FLOATING, sample=_round_decimals_samples,
           ember_fn=ember.round, result_dtype=same_result,
           tol={ember.float16: (2e-3, 1e-1), ember.bfloat16: (2e-2, 2.0)}),
    OpInfo("frac", ref=quiet(_frac), dtypes=FLOATING, sample=unary, result_dtype=same_result),
    OpInfo("positive", ref=np.positive, dtypes=NUMERIC_TYPES, sample=unary,
           result_dtype=same_result),
    OpInfo("nan_to_num", ref=_nan_to_num_ref, dtypes=ALL_TYPES, sample=_nan_to_num_samples,
           result_dtype=same_result, equal_nan=False),
    OpInfo("clamp", ref=clamp_ref, dtypes=REAL, sample=_clamp_samples, result_dtype=same_result),
    OpInfo("clip", ref=clamp_ref, dtypes=REAL, sample=_clamp_samples, result_dtype=same_result),
    OpInfo("clamp_min", ref=lambda a, min: clamp_ref(a, min=min), dtypes=REAL,
           sample=lambda dt, rng: [Sample(s.args, {"min": 0.5 if dt in FLOATING else 1})
                                   for s in unary(dt, rng)],
           result_dtype=same_result),
    OpInfo("clamp_max", ref=lambda a, max: clamp_ref(a, max=max), dtypes=REAL,
           sample=lambda dt, rng: [Sample(s.args, {"max": -0.5 if dt in FLOATING else 1})
                                   for s in unary(dt, rng)],
           result_dtype=same_result),
    # --- predicates ---
    OpInfo("isnan", ref=np.isnan, dtypes=ALL_TYPES, sample=unary, result_dtype=bool_result),
    OpInfo("isinf", ref=np.isinf, dtypes=ALL_TYPES, sample=unary, result_dtype=bool_result),
    OpInfo("isfinite", ref=np.isfinite, dtypes=ALL_TYPES, sample=unary,
           result_dtype=bool_result),
    OpInfo("isposinf", ref=np.isposinf, dtypes=REAL_AND_BOOL, sample=unary,
           result_dtype=bool_result),
    OpInfo("isneginf", ref=np.isneginf, dtypes=REAL_AND_BOOL, sample=unary,
           result_dtype=bool_result),
    OpInfo("signbit", ref=signbit_ref, dtypes=REAL_AND_BOOL, sample=unary,
           result_dtype=bool_result),
    OpInfo("isreal", ref=_isreal_ref, dtypes=ALL_TYPES, sample=unary, result_dtype=bool_result),
    OpInfo("logical_not", ref=np.logical_not, dtypes=ALL_TYPES, sample=unary,
           result_dtype=bool_result),
    OpInfo("bitwise_not", ref=np.invert, dtypes=BOOL + INTEGRAL, sample=unary,
           result_dtype=same_result),
    # --- complex ---
    _complex_view("real"),
    _complex_view("imag"),
    OpInfo("conj", ref=np.conj, dtypes=ALL_TYPES, sample=unary, result_dtype=same_result),
    OpInfo("conj_physical", ref=np.conj, dtypes=ALL_TYPES, sample=unary,
           result_dtype=same_result),
    OpInfo("angle", ref=angle_ref, dtypes=ALL_TYPES, sample=unary,
           result_dtype=lambda dt: real_result(float_result(dt))),
    # --- ternary ---
    OpInfo("where", ref=np.where, dtypes=ALL_TYPES, sample=_where_samples,
           result_dtype=same_result),
    OpInfo("lerp", ref=lerp_ref, dtypes=FLOAT_AND_COMPLEX, sample=_lerp_samples,
           result_dtype=same_result),
]
