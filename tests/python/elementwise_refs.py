"""NumPy references and sample generators shared by the elementwise op databases
(opdb_unary.py, opdb_binary.py).

References compute in float64 / complex128 (so float16 and bfloat16 results are compared with a
correctly rounded value) and follow PyTorch's semantics where they differ from NumPy's (sign of
NaN is 0, angle(-0.0) is 0, integer division by zero raises, ...).
"""

from __future__ import annotations

import math

import numpy as np

import ember
from opinfo import (
    BOOL,
    COMPLEX,
    FLOATING,
    INTEGRAL,
    Sample,
    make_array,
    make_tensor,
)

REAL = INTEGRAL + FLOATING
REAL_AND_BOOL = BOOL + REAL
FLOAT_AND_COMPLEX = FLOATING + COMPLEX
ALL_TYPES = BOOL + INTEGRAL + FLOATING + COMPLEX
NUMERIC_TYPES = INTEGRAL + FLOATING + COMPLEX


# --- result dtypes ---------------------------------------------------------------------------


def float_result(dt):
    """Integer and bool inputs give the default float dtype (exp, sqrt, true_divide, ...)."""
    return ember.float32 if (dt is ember.bool or dt in INTEGRAL) else dt


def same_result(dt):
    return dt


def bool_result(dt):
    return ember.bool


def real_result(dt):
    """abs / angle of complex are real; other dtypes as float_result for angle."""
    return {ember.complex64: ember.float32, ember.complex128: ember.float64}.get(dt, dt)


# --- reference helpers -----------------------------------------------------------------------


def wide(a):
    """a in float64 (complex128 for complex) so that the reference is computed precisely."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


def narrow_dtype(*arrays):
    """The NumPy dtype a floating result of these inputs rounds to: the inputs' promoted floating
    or complex dtype, float32 for integer and bool inputs."""
    dt = np.result_type(*[a.dtype for a in arrays])
    return np.dtype(np.float32) if dt.kind in "biu" else dt


def round_to(result, dt):
    """Rounds a float64 / complex128 reference to dt (so that overflow to inf matches)."""
    result = np.asarray(result)
    if result.dtype.kind not in "fc":
        return result
    if result.dtype.kind == "f" and dt.kind == "c":
        dt = np.dtype(np.float32 if dt == np.complex64 else np.float64)
    if result.dtype.kind == "c" and dt.kind == "f":
        dt = np.dtype(np.complex64 if dt == np.float32 else np.complex128)
    with np.errstate(all="ignore"):
        return result.astype(dt)


def f64(fn):
    """Wraps a NumPy function to evaluate on float64 / complex128 copies of its array inputs and
    round the result to the inputs' floating dtype."""

    def ref(*args, **kwargs):
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        with np.errstate(all="ignore"):
            r = fn(*[wide(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
        return round_to(r, narrow_dtype(*arrays)) if arrays else r

    return ref


def quiet(fn):
    """Runs a NumPy reference with floating-point warnings silenced (log(0), 0/0, ...)."""

    def ref(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return ref


def vectorize_math(fn, on_error=math.nan):
    """A float64 reference from a scalar `math` function; ValueError / OverflowError map to
    `on_error` (a value or a callable of x)."""

    def scalar(x):
        x = float(x)
        if math.isnan(x):
            return math.nan
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return on_error(x) if callable(on_error) else on_error

    vec = np.vectorize(scalar, otypes=[np.float64])

    def ref(a):
        a = np.asarray(a, dtype=np.float64)
        return vec(a) if a.size else a.copy()

    return ref


def _lgamma_pole(x):
    return math.inf


lgamma_ref = vectorize_math(math.lgamma, on_error=_lgamma_pole)
erf_ref = vectorize_math(math.erf)
erfc_ref = vectorize_math(math.erfc)


def _erfinv_scalar(y):
    if y <= -1.0:
        return -math.inf if y == -1.0 else math.nan
    if y >= 1.0:
        return math.inf if y == 1.0 else math.nan
    lo, hi = -6.0, 6.0
    for _ in range(200):  # bisection on erf: monotone, converges to full precision
        mid = 0.5 * (lo + hi)
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


erfinv_ref = vectorize_math(_erfinv_scalar)

# Bernoulli numbers B2k / (2k) for the asymptotic digamma series.
_DIGAMMA_SERIES = [1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12]


def _digamma_scalar(x):
    if x == 0:
        return -math.copysign(math.inf, x)
    if x < 0:
        if x == math.floor(x):
            return math.nan
        return _digamma_scalar(1 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 20:
        acc -= 1 / x
        x += 1
    z = 1 / (x * x)
    series = 0.0
    for k, c in enumerate(_DIGAMMA_SERIES):
        series += c * z ** (k + 1)
    return acc + math.log(x) - 0.5 / x - series


digamma_ref = vectorize_math(_digamma_scalar)

# B2k / (2k)! for the asymptotic polygamma series.
_POLYGAMMA_SERIES = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                     -691 / 1307674368000, 1 / 74724249600]


def _polygamma_scalar(n, x):
    """psi_n(x) for n >= 1: the recurrence psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1) moves x
    past 30 + n (negative x included), then the asymptotic series
    (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) + sum_k B2k (2k+n-1)!/((2k)! x^(2k+n))]."""
    if x <= 0 and x == math.floor(x):
        return math.inf if n % 2 else -math.inf
    sign = 1.0 if n % 2 else -1.0
    shift = []
    while x < 30 + n:
        shift.append(math.factorial(n) / x ** (n + 1))
        x += 1
    series = math.factorial(n - 1) / x**n + math.factorial(n) / (2 * x ** (n + 1))
    for k, c in enumerate(_POLYGAMMA_SERIES, start=1):
        series += c * math.factorial(2 * k + n - 1) / x ** (2 * k + n)
    return sign * (math.fsum(shift) + series)


def polygamma_ref(n, a):
    fn = digamma_ref if n == 0 else vectorize_math(lambda x: _polygamma_scalar(n, x))
    r = fn(wide(a))
    return round_to(r, narrow_dtype(np.asarray(a)))


def sign_ref(a):
    """PyTorch's sign: NaN gives 0; bool is itself."""
    if a.dtype == np.bool_:
        return a.copy()
    with np.errstate(all="ignore"):
        return np.where(np.isnan(wide(a)), 0, np.sign(wide(a)))


def sgn_ref(a):
    if a.dtype.kind != "c":
        return sign_ref(a)
    z = wide(a)
    with np.errstate(all="ignore"):
        return np.where(z == 0, 0, z / np.abs(z))


def angle_ref(a):
    if a.dtype.kind == "c":
        return np.angle(wide(a))
    x = wide(a)
    return np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0))


def signbit_ref(a):
    if a.dtype.kind == "f":
        return np.signbit(a)
    if a.dtype.kind == "i":
        return a < 0
    return np.zeros(a.shape, dtype=bool)


def square_ref(a):
    if a.dtype == np.bool_:
        return a.astype(np.int64)
    return f64(np.square)(a) if a.dtype.kind in "fc" else np.square(a)


def xlogy_ref(x, y):
    x, y = wide(x), wide(y)
    with np.errstate(all="ignore"):
        r = x * np.log(y)
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, r))


def logit_ref(a, eps=None):
    x = wide(a)
    if eps is not None:
        x = np.where(np.isnan(x), x, np.clip(x, eps, 1 - eps))
    with np.errstate(all="ignore"):
        return np.log(x / (1 - x))


def clamp_ref(a, min=None, max=None):
    r = wide(a) if a.dtype.kind == "f" else a
    if min is not None:
        r = np.maximum(r, wide(min) if isinstance(min, np.ndarray) else min)
    if max is not None:
        r = np.minimum(r, wide(max) if isinstance(max, np.ndarray) else max)
    return r


def lerp_ref(start, end, weight):
    s, e = wide(start), wide(end)
    w = wide(weight) if isinstance(weight, np.ndarray) else weight
    return s + w * (e - s)


# --- samples ---------------------------------------------------------------------------------


BINARY_CASES = [
    ("same", (3, 4), (3, 4)),
    ("broadcast", (3, 1), (1, 4)),
    ("broadcast-rank", (2, 3, 4), (4,)),
    ("0d-rhs", (3, 4), ()),
    ("0d-lhs", (), (5,)),
    ("0d-both", (), ()),
    ("empty", (0, 4), (1, 4)),
]


def unary(dtype, rng, *, low=-3.0, high=3.0, special=True, kwargs=None):
    """Unary samples: shapes 0-d / 1-d / 2-d / 3-d / empty in contiguous, transposed and strided
    layouts, plus nan / inf / -0.0 for floating and complex dtypes."""
    kwargs = kwargs or {}
    out = []
    shapes = [("0d", ()), ("1d", (7,)), ("2d", (3, 5)), ("3d", (2, 3, 4)), ("empty", (0, 3))]
    for name, shape in shapes:
        for layout in ("contiguous", "transposed", "strided"):
            if layout != "contiguous" and len(shape) < 2:
                continue
            arr = make_array(shape, dtype, rng, low=low, high=high)
            out.append(Sample((make_tensor(arr, dtype, layout=layout),), dict(kwargs),
                              name=f"{name}-{layout}"))
    if special and (dtype.is_floating_point or dtype.is_complex):
        arr = make_array((8,), dtype, rng, low=low, high=high, special=True)
        out.append(Sample((make_tensor(arr, dtype),), dict(kwargs), name="nan-inf"))
    return out


def binary(dtype, rng, *, low=-3.0, high=3.0, rhs_low=None, rhs_high=None, rhs_fix=None,
           special=False, kwargs=None):
    """Binary samples (same dtype on both sides): broadcasting, 0-d, empty, non-contiguous.
    `rhs_fix(array)` adjusts right-hand values (e.g. replaces zeros for integer division)."""
    kwargs = kwargs or {}
    rl = low if rhs_low is None else rhs_low
    rh = high if rhs_high is None else rhs_high

    def rhs(shape):
        arr = make_array(shape, dtype, rng, low=rl, high=rh)
        return rhs_fix(arr) if rhs_fix else arr

    out = []
    for name, sa, sb in BINARY_CASES:
        a = make_tensor(make_array(sa, dtype, rng, low=low, high=high), dtype)
        b = make_tensor(rhs(sb), dtype)
        out.append(Sample((a, b), dict(kwargs), name=name))
    a = make_tensor(make_array((4, 3), dtype, rng, low=low, high=high), dtype, layout="transposed")
    b = make_tensor(rhs((4, 3)), dtype, layout="strided")
    out.append(Sample((a, b), dict(kwargs), name="noncontiguous"))
    if special and (dtype.is_floating_point or dtype.is_complex):
        a = make_tensor(make_array((8,), dtype, rng, low=low, high=high, special=True), dtype)
        b = make_tensor(rhs((8,))[::-1].copy(), dtype)
        out.append(Sample((a, b), dict(kwargs), name="nan-inf"))
        out.append(Sample((b, a), dict(kwargs), name="nan-inf-rhs"))
    return out


def nonzero(arr):
    """Replaces zeros by 1 (integer division samples)."""
    arr = arr.copy()
    arr[arr == 0] = 1
    return arr


def scalar_rhs(dtype, rng, values, *, low=-3.0, high=3.0):
    """tensor op Python-number samples, one per value."""
    out = []
    for v in values:
        a = make_tensor(make_array((3, 4), dtype, rng, low=low, high=high), dtype)
        out.append(Sample((a, v), name=f"scalar-{v!r}"))
    return out


# --- gradcheck samples (Note [Gradcheck Entries] in opinfo.py) -------------------------------


def _signed(arr, rng):
    """arr with random signs (magnitudes stay away from zero when arr's do)."""
    return arr * np.where(rng.random(arr.shape) < 0.5, -1, 1).astype(arr.dtype)


def grad_unary(dtype, rng, *, low=-3.0, high=3.0, signed=False, kwargs=None):
    """Small finite samples for gradcheck: 0-d, 1-d and a transposed 2-d tensor with values in
    [low, high] (either sign when `signed`, so that e.g. abs never sees 0)."""
    out = []
    for name, shape, layout in (("0d", (), "contiguous"), ("1d", (5,), "contiguous"),
                                ("2d-transposed", (3, 4), "transposed")):
        arr = make_array(shape, dtype, rng, low=low, high=high)
        if signed:
            arr = _signed(arr, rng)
        out.append(Sample((make_tensor(arr, dtype, layout=layout),), dict(kwargs or {}), name=name))
    return out


def grad_binary(dtype, rng, *, low=-3.0, high=3.0, rhs_low=None, rhs_high=None, signed=False,
                rhs_signed=False, kwargs=None):
    """Small finite binary samples for gradcheck: same shape, broadcast both ways, 0-d
    right-hand side and a non-contiguous pair."""
    rl = low if rhs_low is None else rhs_low
    rh = high if rhs_high is None else rhs_high

    def lhs(shape):
        arr = make_array(shape, dtype, rng, low=low, high=high)
        return _signed(arr, rng) if signed else arr

    def rhs(shape):
        arr = make_array(shape, dtype, rng, low=rl, high=rh)
        return _signed(arr, rng) if rhs_signed else arr

    out = []
    for name, sa, sb in (("same", (3, 4), (3, 4)), ("broadcast", (3, 1), (1, 4)),
                         ("0d-rhs", (2, 3), ())):
        out.append(Sample((make_tensor(lhs(sa), dtype), make_tensor(rhs(sb), dtype)),
                          dict(kwargs or {}), name=name))
    a = make_tensor(lhs((4, 3)), dtype, layout="transposed")
    b = make_tensor(rhs((4, 3)), dtype, layout="strided")
    out.append(Sample((a, b), dict(kwargs or {}), name="noncontiguous"))
    return out
