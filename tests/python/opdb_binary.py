"""OpInfos for the binary elementwise ops: arithmetic with rounding, powers, floating binary
functions, comparisons, logical and bitwise ops, isclose / allclose / equal."""

import numpy as np

import ember
from elementwise_refs import (
    ALL_TYPES,
    BOOL,
    COMPLEX,
    FLOATING,
    INTEGRAL,
    NUMERIC_TYPES,
    REAL,
    REAL_AND_BOOL,
    binary,
    bool_result,
    f64,
    float_result,
    grad_binary,
    nonzero,
    quiet,
    same_result,
    scalar_rhs,
    wide,
    xlogy_ref,
)
from opinfo import OpInfo, Sample, make_array, make_tensor


def _int_or_float(np_int_fn, np_float_fn=None):
    """Exact integer reference for integer inputs, float64 (rounded) for floating ones."""
    float_fn = f64(np_float_fn or np_int_fn)

    def ref(a, b):
        if np.asarray(a).dtype.kind in "biu" and np.asarray(b).dtype.kind in "biu":
            return np_int_fn(a, b)
        return float_fn(a, b)

    return ref


def _div_trunc(a, b):
    if a.dtype.kind in "iu":
        q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
        return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)
    with np.errstate(all="ignore"):
        return f64(lambda x, y: np.trunc(x / y))(a, b)


def _div_samples(dt, rng):
    # Integer division by zero raises (tested in test_elementwise.py); avoid zeros here.
    fix = nonzero if dt in INTEGRAL else None
    return binary(dt, rng, rhs_fix=fix, special=True)


def _pow_samples(dt, rng):
    if dt in INTEGRAL:
        out = binary(dt, rng, low=-3, high=3, rhs_low=0, rhs_high=4)
        out += scalar_rhs(dt, rng, [0, 1, 2, 3, True])
        return out
    out = binary(dt, rng, low=0.1, high=3.0, special=True)
    out += binary(dt, rng, low=-3.0, high=3.0, rhs_low=-3, rhs_high=3)[:2]
    out += scalar_rhs(dt, rng, [2, 3, 0.5, -0.5, -1, -2, 2.5, 0, 1, 0.0], low=0.1)
    if dt in COMPLEX:
        out += scalar_rhs(dt, rng, [1j, 2 + 1j])
    return out


def _pow_ref(a, b):
    a_arr = np.asarray(a)
    if isinstance(b, bool):
        b = int(b)
    if a_arr.dtype.kind in "iu" and isinstance(b, int):
        return np.power(a_arr, b)
    if a_arr.dtype.kind in "iu" and isinstance(b, np.ndarray) and b.dtype.kind in "iu":
        return np.power(a_arr, b)
    return f64(np.power)(a, b) if isinstance(b, np.ndarray) else _scalar_pow(a_arr, b)


def _scalar_pow(a, b):
    dt = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float32)
    if isinstance(b, complex) and dt.kind == "f":
        dt = np.dtype(np.complex64 if dt != np.float64 else np.complex128)
    with np.errstate(all="ignore"):
        return np.power(wide(a), b).astype(dt)


def _scalar_base_samples(dt, rng):
    out = []
    for base in (2, 0.5, 1) if dt not in COMPLEX else (2, 1j):
        e = make_tensor(make_array((3, 4), dt, rng, low=0, high=4), dt)
        out.append(Sample((base, e), name=f"base-{base!r}"))
    return out


def _scalar_base_ref(base, e):
    if isinstance(base, int) and e.dtype.kind in "iu":
        return np.power(np.int64(base), e.astype(np.int64)).astype(e.dtype)
    if e.dtype.kind == "b":
        return np.power(base, e.astype(np.int64))
    dt = e.dtype if e.dtype.kind in "fc" else np.dtype(np.float32)
    if isinstance(base, complex) and dt.kind == "f":
        dt = np.dtype(np.complex64)
    return np.power(base, wide(e)).astype(dt)


def _scalar_base_dtype(dt):
    return dt  # 2 ** int tensor stays int; 2.5 ** int tensor is float (not sampled for ints)


def _float_power_ref(a, b):
    if np.asarray(a).dtype.kind == "c" or np.asarray(b).dtype.kind == "c":
        return np.power(np.asarray(a, np.complex128), np.asarray(b, np.complex128))
    with np.errstate(all="ignore"):
        return np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))


def _shift_samples(dt, rng):
    bits = np.dtype(str(dt).replace("ember.", "")).itemsize * 8
    return binary(dt, rng, low=-9, high=9, rhs_low=0, rhs_high=min(bits - 1, 9))


def _isclose_samples(dt, rng):
    out = []
    for kw in ({}, {"rtol": 0.1, "atol": 0.5}, {"rtol": 0, "atol": 0}, {"equal_nan": True}):
        for s in binary(dt, rng, special=True, low=-2, high=2):
            out.append(Sample(s.args, dict(kw), name=f"{s.name}-{kw}"))
    a = make_tensor(make_array((5,), dt, rng), dt)
    out.append(Sample((a, a), name="identical"))
    return out


def _isclose_ref(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    if a.dtype.kind == "b":
        a, b = a.astype(np.float64), b.astype(np.float64)
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _allclose_ref(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return bool(np.all(_isclose_ref(a, b, rtol, atol, equal_nan)))


def _equal_samples(dt, rng):
    a = make_tensor(make_array((3, 4), dt, rng), dt)
    b = make_tensor(make_array((3, 4), dt, rng), dt)
    c = make_tensor(make_array((4, 3), dt, rng).T.copy(), dt)
    return [Sample((a, a), name="same"), Sample((a, b), name="different"),
            Sample((a, c), name="transposed-values"),
            Sample((a, make_tensor(make_array((4,), dt, rng), dt)), name="shape-mismatch")]


def _equal_ref(a, b):
    return a.shape == b.shape and bool(np.all(a == b))


def _compare(name, np_fn, dtypes=ALL_TYPES):
    # Bool results: PyTorch records no gradient.
    return OpInfo(name, ref=quiet(np_fn), dtypes=dtypes,
                  sample=lambda dt, rng: binary(dt, rng, special=True) +
                  scalar_rhs(dt, rng, [1, 0.5] if dt not in BOOL else [True]),
                  result_dtype=bool_result, differentiable=False)


def _float_binary(name, np_fn, dtypes, grad=None, **kw):
    """`grad`: grad_binary keywords (value ranges where the derivative is moderate)."""
    return OpInfo(name, ref=f64(np_fn), dtypes=dtypes,
                  sample=lambda dt, rng: binary(dt, rng, special=True, **kw),
                  result_dtype=float_result, differentiable=True, gradgrad=True,
                  grad_sample=lambda dt, rng: grad_binary(dt, rng, **(grad or {})))


def _grad(**kw):
    """Gradcheck settings: grad_binary samples with these keywords."""
    return dict(differentiable=True, gradgrad=True,
                grad_sample=lambda dt, rng: grad_binary(dt, rng, **kw))


# Right-hand sides away from 0 (division, remainders).
_RHS_AWAY_FROM_ZERO = dict(rhs_low=0.5, rhs_high=3.0, rhs_signed=True)


def _pow_grad_samples(dt, rng):
    # Positive bases (the derivative in the exponent is a ** b * log(a)); Python-number
    # exponents take the PowBackward0 path.
    out = grad_binary(dt, rng, low=0.5, high=2.5, rhs_low=-2.0, rhs_high=2.0)
    for e in (2, 3, 0.5, -1, 2.5, 0, 1j if dt.is_complex else -2.5):
        a = make_tensor(make_array((3, 4), dt, rng, low=0.5, high=2.5), dt)
        out.append(Sample((a, e), name=f"scalar-{e!r}"))
    return out


def _scalar_base_grad_samples(dt, rng):
    out = []
    for base in (2, 0.5, 3.5) if not dt.is_complex else (2, 1j + 1):
        e = make_tensor(make_array((3, 4), dt, rng, low=-2, high=2), dt)
        out.append(Sample((base, e), name=f"base-{base!r}"))
    return out


OP_DB = [
    # --- division and remainders ---
    OpInfo("true_divide", ref=f64(np.true_divide), dtypes=ALL_TYPES, sample=_div_samples,
           result_dtype=float_result, grad_complex=True, **_grad(**_RHS_AWAY_FROM_ZERO)),
    OpInfo("divide", ref=f64(np.true_divide), dtypes=ALL_TYPES, sample=_div_samples,
           result_dtype=float_result, grad_complex=True, **_grad(**_RHS_AWAY_FROM_ZERO)),
    # A rounded quotient is piecewise constant: recorded with zero gradients, as PyTorch.
    OpInfo("div_trunc", ref=_div_trunc, dtypes=REAL, sample=_div_samples,
           ember_fn=lambda a, b: ember.div(a, b, rounding_mode="trunc"), result_dtype=same_result,
           **_grad(**_RHS_AWAY_FROM_ZERO)),
    OpInfo("div_floor", ref=_int_or_float(np.floor_divide), dtypes=REAL, sample=_div_samples,
           ember_fn=lambda a, b: ember.div(a, b, rounding_mode="floor"), result_dtype=same_result,
           **_grad(**_RHS_AWAY_FROM_ZERO)),
    # PyTorch records floor_divide with a node that raises in backward; Ember records none.
    OpInfo("floor_divide", ref=_int_or_float(np.floor_divide), dtypes=REAL, sample=_div_samples,
           result_dtype=same_result, differentiable=False),
    OpInfo("remainder", ref=_int_or_float(np.remainder), dtypes=REAL, sample=_div_samples,
           result_dtype=same_result, **_grad(**_RHS_AWAY_FROM_ZERO)),
    OpInfo("fmod", ref=_int_or_float(np.fmod), dtypes=REAL, sample=_div_samples,
           result_dtype=same_result, **_grad(**_RHS_AWAY_FROM_ZERO)),
    # Complex NaN / inf products differ between libraries (PyTorch's a - b of complex(nan, 0) is
    # nan+nanj, NumPy's keeps the imaginary part): specials only for real dtypes.
    OpInfo("multiply", ref=_int_or_float(np.multiply), dtypes=NUMERIC_TYPES,
           sample=lambda dt, rng: binary(dt, rng, special=dt not in COMPLEX),
           result_dtype=same_result, grad_complex=True, **_grad()),
    OpInfo("subtract", ref=_int_or_float(np.subtract), dtypes=NUMERIC_TYPES,
           sample=lambda dt, rng: binary(dt, rng, special=dt not in COMPLEX),
           result_dtype=same_result, grad_complex=True, **_grad()),
    # --- powers ---
    OpInfo("pow", ref=_pow_ref, dtypes=NUMERIC_TYPES, sample=_pow_samples,
           tol={ember.float16: (2e-3, 2e-3), ember.bfloat16: (3e-2, 3e-2)},
           differentiable=True, grad_sample=_pow_grad_samples, grad_complex=True, gradgrad=True),
    OpInfo("pow_scalar_base", ref=_scalar_base_ref, dtypes=NUMERIC_TYPES,
           sample=_scalar_base_samples, ember_fn=ember.pow,
           tol={ember.float16: (2e-3, 2e-3), ember.bfloat16: (3e-2, 3e-2)},
           differentiable=True, grad_sample=_scalar_base_grad_samples, grad_complex=True,
           gradgrad=True),
    OpInfo("float_power", ref=_float_power_ref, dtypes=NUMERIC_TYPES,
           sample=lambda dt, rng: binary(dt, rng, low=0.1, high=3.0, rhs_low=-2, rhs_high=3),
           result_dtype=lambda dt: ember.complex128 if dt in COMPLEX else ember.float64,
           grad_complex=True, **_grad(low=0.5, high=2.5, rhs_low=-2.0, rhs_high=2.0)),
    # --- floating binary functions ---
    _float_binary("atan2", np.arctan2, REAL_AND_BOOL),
    _float_binary("arctan2", np.arctan2, FLOATING),
    _float_binary("hypot", np.hypot, FLOATING),
    _float_binary("logaddexp", np.logaddexp, FLOATING),
    _float_binary("logaddexp2", np.logaddexp2, FLOATING),
    # copysign's derivative jumps at 0: magnitudes away from it.
    _float_binary("copysign", np.copysign, REAL_AND_BOOL,
                  grad=dict(low=0.5, high=3.0, signed=True)),
    OpInfo("xlogy", ref=xlogy_ref, dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: binary(dt, rng, special=True, low=-1, high=3, rhs_low=0),
           result_dtype=float_result, **_grad(low=-1.0, high=3.0, rhs_low=0.5, rhs_high=3.0)),
    # Random values never tie (test_autograd_elementwise.py checks ties and NaN).
    OpInfo("minimum", ref=quiet(np.minimum), dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: binary(dt, rng, special=True), result_dtype=same_result,
           **_grad()),
    OpInfo("maximum", ref=quiet(np.maximum), dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: binary(dt, rng, special=True), result_dtype=same_result,
           **_grad()),
    OpInfo("fmin", ref=quiet(np.fmin), dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: binary(dt, rng, special=True), result_dtype=same_result,
           **_grad()),
    OpInfo("fmax", ref=quiet(np.fmax), dtypes=REAL_AND_BOOL,
           sample=lambda dt, rng: binary(dt, rng, special=True), result_dtype=same_result,
           **_grad()),
    # --- comparisons (complex only for == and !=) ---
    _compare("eq", np.equal),
    _compare("ne", np.not_equal),
    _compare("not_equal", np.not_equal),
    _compare("lt", np.less, REAL_AND_BOOL),
    _compare("less", np.less, REAL_AND_BOOL),
    _compare("le", np.less_equal, REAL_AND_BOOL),
    _compare("less_equal", np.less_equal, REAL_AND_BOOL),
    _compare("gt", np.greater, REAL_AND_BOOL),
    _compare("greater", np.greater, REAL_AND_BOOL),
    _compare("ge", np.greater_equal, REAL_AND_BOOL),
    _compare("greater_equal", np.greater_equal, REAL_AND_BOOL),
    # --- logical and bitwise ---
    _compare("logical_and", np.logical_and),
    _compare("logical_or", np.logical_or),
    _compare("logical_xor", np.logical_xor),
    OpInfo("bitwise_and", ref=np.bitwise_and, dtypes=BOOL + INTEGRAL, sample=binary,
           result_dtype=same_result),
    OpInfo("bitwise_or", ref=np.bitwise_or, dtypes=BOOL + INTEGRAL, sample=binary,
           result_dtype=same_result),
    OpInfo("bitwise_xor", ref=np.bitwise_xor, dtypes=BOOL + INTEGRAL, sample=binary,
           result_dtype=same_result),
    OpInfo("bitwise_left_shift", ref=np.left_shift, dtypes=INTEGRAL, sample=_shift_samples,
           result_dtype=same_result),
    OpInfo("bitwise_right_shift", ref=np.right_shift, dtypes=INTEGRAL, sample=_shift_samples,
           result_dtype=same_result),
    # --- closeness and equality ---
    OpInfo("isclose", ref=_isclose_ref, dtypes=ALL_TYPES, sample=_isclose_samples,
           result_dtype=bool_result, differentiable=False),
    OpInfo("allclose", ref=_allclose_ref, dtypes=ALL_TYPES, sample=_isclose_samples,
           differentiable=False),
    OpInfo("equal", ref=_equal_ref, dtypes=ALL_TYPES, sample=_equal_samples,
           differentiable=False),
]
