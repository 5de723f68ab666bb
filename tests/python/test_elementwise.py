"""Elementwise ops: operators (reflected and in-place), Python scalars and type promotion, in-place
on views, out=, and the error class and message of every failure mode. Numerical semantics and
the broadcasting property test are in test_elementwise_semantics.py."""

import operator

import numpy as np
import pytest

import ember

ALL = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
       ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64,
       ember.complex128]
INTS = [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64]
FLOATS = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
COMPLEX = [ember.complex64, ember.complex128]


def t(values, dtype=None):
    return ember.tensor(values, dtype=dtype)


def values(x):
    return x.tolist()


# --- operators -----------------------------------------------------------------------------

BINARY_OPERATORS = [
    (operator.add, ember.add),
    (operator.sub, ember.sub),
    (operator.mul, ember.mul),
    (operator.truediv, ember.true_divide),
    (operator.floordiv, ember.floor_divide),
    (operator.mod, ember.remainder),
    (operator.pow, ember.pow),
    (operator.eq, ember.eq),
    (operator.ne, ember.ne),
    (operator.lt, ember.lt),
    (operator.le, ember.le),
    (operator.gt, ember.gt),
    (operator.ge, ember.ge),
]
INT_OPERATORS = [
    (operator.and_, ember.bitwise_and),
    (operator.or_, ember.bitwise_or),
    (operator.xor, ember.bitwise_xor),
    (operator.lshift, ember.bitwise_left_shift),
    (operator.rshift, ember.bitwise_right_shift),
]


@pytest.mark.parametrize("op,fn", BINARY_OPERATORS + INT_OPERATORS,
                         ids=lambda x: getattr(x, "__name__", str(x)))
def test_binary_operator_matches_function(op, fn):
    a = t([[5, 3, 2], [7, 1, 4]])
    b = t([2, 1, 3])
    assert values(op(a, b)) == values(fn(a, b))
    # tensor op number and the reflected number op tensor
    assert values(op(a, 2)) == values(fn(a, 2))
    assert values(op(3, b)) == values(fn(3, b))


@pytest.mark.parametrize("op,fn", BINARY_OPERATORS[:7], ids=lambda x: getattr(x, "__name__", ""))
def test_float_operators_with_float_scalars(op, fn):
    a = t([1.5, -2.25, 3.0])
    np_a = np.array([1.5, -2.25, 3.0], dtype=np.float32)
    for s in (2.0, -0.5, 3):
        got = op(a, s).numpy()
        with np.errstate(all="ignore"):
            want = op(np_a, np.float32(s))
        np.testing.assert_allclose(got, want, rtol=1e-6)
        got_r = op(s, a).numpy()
        with np.errstate(all="ignore"):
            want_r = op(np.float32(s), np_a)
        np.testing.assert_allclose(got_r, want_r, rtol=1e-6, equal_nan=True)


def test_reflected_comparisons():
    a = t([1, 2, 3])
    assert values(2 < a) == [False, False, True]
    assert values(2 >= a) == [True, True, False]
    assert values(2 == a) == [False, True, False]
    assert values(2.5 > a) == [True, True, False]


def test_comparison_with_non_tensor_objects():
    a = t([1, 2])
    assert (a == None) is False  # noqa: E711  (Python falls back to identity)
    assert (a != None) is True  # noqa: E711
    with pytest.raises(TypeError):
        _ = a < None
    with pytest.raises(TypeError):
        _ = a + "x"


INPLACE_OPERATORS = [
    ("__iadd__", operator.iadd, [4.0, 5.0]),
    ("__isub__", operator.isub, [0.0, 1.0]),
    ("__imul__", operator.imul, [4.0, 6.0]),
    ("__itruediv__", operator.itruediv, [1.0, 1.5]),
    ("__ifloordiv__", operator.ifloordiv, [1.0, 1.0]),
    ("__imod__", operator.imod, [0.0, 1.0]),
    ("__ipow__", operator.ipow, [4.0, 9.0]),
]


@pytest.mark.parametrize("name,op,want", INPLACE_OPERATORS, ids=[x[0] for x in INPLACE_OPERATORS])
def test_inplace_operators_modify_and_return_self(name, op, want):
    a = t([2.0, 3.0])
    version = a._version
    ident = id(a)
    a = op(a, 2)
    assert id(a) == ident
    assert values(a) == want
    assert a._version > version


@pytest.mark.parametrize("op,want", [
    (operator.iand, [2, 2]), (operator.ior, [6, 7]), (operator.ixor, [4, 5]),
    (operator.ilshift, [24, 28]), (operator.irshift, [1, 1]),
])
def test_inplace_bitwise_operators(op, want):
    a = t([6, 7])
    ident = id(a)
    a = op(a, 2) if op not in (operator.ilshift, operator.irshift) else op(a, 2)
    assert id(a) == ident
    assert values(a) == want


def test_unary_operators():
    a = t([1.5, -2.0])
    assert values(-a) == [-1.5, 2.0]
    assert values(abs(a)) == [1.5, 2.0]
    assert values(+a) == [1.5, -2.0]
    assert values(~t([0, 5], ember.int8)) == [-1, -6]
    assert values(~t([True, False])) == [False, True]
    with pytest.raises(TypeError, match=r"only implemented on integer and Boolean-type tensors"):
        ~a  # noqa: B018 (the operator raising is the point)
    with pytest.raises(NotImplementedError, match="Negation, the `-` operator, on a bool tensor"):
        -t([True])
    with pytest.raises(NotImplementedError, match="The `\\+` operator, on a bool tensor"):
        +t([True])


def test_methods_and_inplace_methods_exist():
    a = t([0.5, 0.25])
    for name in ["exp", "log", "sin", "sigmoid", "tanh", "sqrt", "floor", "abs", "neg", "sign",
                 "arcsin", "arctanh", "fix", "negative", "absolute", "square", "reciprocal"]:
        out = getattr(a, name)()
        np.testing.assert_allclose(out.numpy(), getattr(ember, name)(a).numpy())
        b = a.clone()
        assert getattr(b, name + "_")() is b
        np.testing.assert_allclose(b.numpy(), out.numpy())
    for name in ["isnan", "isinf", "isfinite", "signbit", "angle", "isreal"]:
        assert getattr(a, name)().shape == a.shape


# --- Python scalars and type promotion -------------------------------------------------------

def _category(dt):
    if dt is ember.bool:
        return 0
    if dt in INTS:
        return 1
    if dt in FLOATS:
        return 2
    return 3


def expected_scalar_promotion(dtype, scalar):
    """torch.result_type(tensor, scalar): the scalar only matters when of a higher category."""
    kind = {bool: 0, int: 1, float: 2, complex: 3}[type(scalar)]
    if kind <= _category(dtype):
        return dtype
    if kind == 1:
        return ember.int64
    if kind == 2:
        return ember.get_default_dtype()
    # complex scalar: the complex counterpart of a floating tensor, else the default complex
    return ember.complex128 if dtype is ember.float64 else ember.complex64


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("scalar", [True, 2, 2.5, 1 + 1j], ids=repr)
def test_scalar_promotion_of_add_and_mul(dtype, scalar):
    a = ember.ones(3, dtype=dtype)
    want = expected_scalar_promotion(dtype, scalar)
    assert (a + scalar).dtype is want
    assert (scalar + a).dtype is want
    assert (a * scalar).dtype is want
    assert ember.add(a, scalar).dtype is want


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_true_division_promotes_integers_to_float(dtype):
    a = ember.ones(3, dtype=dtype)
    want = dtype if (dtype in FLOATS or dtype in COMPLEX) else ember.float32
    assert (a / 2).dtype is want
    assert (2 / a).dtype is want
    assert ember.exp(a).dtype is want


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_comparisons_give_bool(dtype):
    a = ember.ones(3, dtype=dtype)
    assert (a == 1).dtype is ember.bool
    assert ember.ne(a, a).dtype is ember.bool
    if dtype not in COMPLEX:
        assert (a < 2.5).dtype is ember.bool


def test_promotion_between_tensors():
    i8 = ember.ones(2, dtype=ember.int8)
    u8 = ember.ones(2, dtype=ember.uint8)
    f16 = ember.ones(2, dtype=ember.float16)
    bf16 = ember.ones(2, dtype=ember.bfloat16)
    assert (i8 + u8).dtype is ember.int16
    assert (f16 + bf16).dtype is ember.float32
    assert (i8 + f16).dtype is ember.float16
    assert (ember.ones(2, dtype=ember.float32) + ember.ones(2, dtype=ember.complex64)).dtype \
        is ember.complex64
    assert (ember.ones(2, dtype=ember.float64) + ember.ones(2, dtype=ember.complex64)).dtype \
        is ember.complex128
    # 0-d tensors count by category only, like Python numbers
    assert (ember.tensor(2.5, dtype=ember.float64) + ember.ones(2)).dtype is ember.float32
    assert (ember.tensor(2.5, dtype=ember.float64) + ember.ones(2, dtype=ember.int32)).dtype \
        is ember.float64
    assert (ember.tensor(2) + i8).dtype is ember.int8


def test_python_integers_wrap_into_small_dtypes():
    u8 = t([1, 44], ember.uint8)
    assert values(u8 + 300) == [45, 88]
    assert values(u8 + (-1)) == [0, 43]
    assert values(u8 * 1000) == [232, 224]
    assert values(t([100, -100], ember.int8) * 2) == [-56, 56]
    assert values(t([3, -2]) + (2**63 - 1)) == [-9223372036854775806, 9223372036854775805]
    assert values(u8 == 300) == [False, True]  # 300 wraps to 44 in uint8, as PyTorch


def test_bool_arithmetic_with_scalars():
    b = t([True, False])
    assert (b + 1).dtype is ember.int64 and values(b + 1) == [2, 1]
    assert (b + True).dtype is ember.bool and values(b + True) == [True, True]
    assert (b * 2.5).dtype is ember.float32
    assert (b + 1j).dtype is ember.complex64


def test_numpy_scalars_are_python_numbers():
    a = ember.ones(2, dtype=ember.float32)
    assert (a + np.float64(2.5)).dtype is ember.float32
    assert (a * np.int64(3)).dtype is ember.float32
    assert (ember.ones(2, dtype=ember.int32) + np.int64(3)).dtype is ember.int32


def test_default_dtype_governs_float_results():
    old = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.exp(t([1, 2])).dtype is ember.float64
        assert (t([1, 2]) * 2.5).dtype is ember.float64
        assert (t([1, 2]) / 2).dtype is ember.float64
    finally:
        ember.set_default_dtype(old)


def test_half_and_bfloat16_compute_in_float():
    for dt in (ember.float16, ember.bfloat16):
        x = ember.tensor([10.0, -3.0, 0.5], dtype=dt)
        got = ember.exp(x).float().numpy()
        want = np.exp(x.float().numpy())
        np.testing.assert_allclose(got, want, rtol=1e-2)
        assert ember.exp(x).dtype is dt
        assert (x * 2).dtype is dt


# --- in-place semantics ----------------------------------------------------------------------

def test_inplace_on_view_writes_base_and_bumps_shared_version():
    base = ember.zeros(3, 4)
    row = base[1]
    v0 = base._version
    row.add_(2)
    assert base._version == v0 + 1 and row._version == base._version
    assert values(base[1]) == [2.0] * 4
    assert values(base[0]) == [0.0] * 4
    col = base.transpose(0, 1)[2]
    col.mul_(3).exp_()
    np.testing.assert_allclose(base.numpy()[:, 2], np.exp([0.0, 6.0, 0.0]), rtol=1e-6)
    strided = base.view(-1)[::5]
    strided.clamp_(max=1.0)
    assert base.numpy().reshape(-1)[::5].max() <= 1.0


def test_inplace_result_type_cannot_be_cast():
    i = t([1, 2])
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired "
                                           "output type int64"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type int64"):
        i.exp_()
    with pytest.raises(RuntimeError, match="can't be cast"):
        i /= 2
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clamp_(0.5, 1.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ember.ones(2).mul_(1j)
    assert values(i) == [1, 2]  # untouched


def test_inplace_comparison_and_logical_keep_the_dtype():
    i = t([1, 2])
    assert values(i.lt_(1.5)) == [1, 0] and i.dtype is ember.int64
    f = ember.ones(2)
    assert values(f.logical_and_(ember.zeros(2))) == [0.0, 0.0] and f.dtype is ember.float32
    assert values(ember.ones(2).eq_(ember.ones(2))) == [1.0, 1.0]


def test_inplace_cannot_broadcast_self():
    with pytest.raises(RuntimeError, match="output with shape \\(3, 1\\) doesn't match the "
                                           "broadcast shape \\(3, 4\\)"):
        ember.ones(3, 1).add_(ember.ones(1, 4))
    a = ember.ones(3, 4)
    a.add_(ember.ones(4))  # broadcasting the other operand is fine
    assert values(a[0]) == [2.0] * 4


def test_inplace_on_expanded_tensor_is_refused():
    a = ember.zeros(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        a.add_(1)


# --- out= --------------------------------------------------------------------------------------

def test_out_is_resized_and_returned():
    out = ember.empty(0)
    r = ember.mul(ember.ones(2, 3), 2, out=out)
    assert r is out and tuple(out.shape) == (2, 3) and values(out) == [[2.0] * 3] * 2
    out2 = ember.empty(7)
    ember.exp(ember.zeros(2, 2), out=out2)
    assert tuple(out2.shape) == (2, 2)
    out3 = ember.empty(1)
    ember.where(t([True, False]), 1.0, 2.0, out=out3)
    assert values(out3) == [1.0, 2.0]


def test_out_of_another_dtype_receives_a_cast():
    out = ember.empty(2, dtype=ember.float64)
    ember.add(t([1, 2]), t([3, 4]), out=out)
    assert out.dtype is ember.float64 and values(out) == [4.0, 6.0]
    cmp_out = ember.empty(2, dtype=ember.float32)
    ember.gt(t([1, 5]), 2, out=cmp_out)
    assert values(cmp_out) == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired "
                                           "output type int64"):
        ember.exp(t([1.0]), out=ember.empty(1, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="result type bool can't be cast|can't be cast"):
        ember.add(t([1.0]), 1, out=ember.empty(1, dtype=ember.bool))


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        ember.exp(ember.ones(2), out=[1, 2])
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        ember.mul(ember.ones(2), 2, out=3)


def test_out_bumps_version():
    out = ember.empty(2)
    v = out._version
    ember.sin(ember.ones(2), out=out)
    assert out._version > v


# --- errors --------------------------------------------------------------------------------------

def test_shape_mismatch():
    with pytest.raises(RuntimeError, match=r"\[mul\] The size of tensor a \(3\) must match the "
                                           r"size of tensor b \(4\)"):
        ember.ones(3) * ember.ones(4)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        ember.where(ember.ones(2, dtype=ember.bool), ember.ones(3), 0)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        ember.lerp(ember.ones(2), ember.ones(3), 0.5)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: ember.floor(t([True])), NotImplementedError,
     r"\[floor\] not implemented for dtype bool"),
    (lambda: ember.frac(t([1, 2])), NotImplementedError, "not implemented for dtype int64"),
    (lambda: ember.abs(t([True])), NotImplementedError, "not implemented for dtype bool"),
    (lambda: ember.sign(t([1j])), NotImplementedError, "sign is not intended to support complex"),
    (lambda: ember.sub(t([True]), t([True])), RuntimeError, "Subtraction, the `-` operator, with "
     "two bool tensors"),
    (lambda: ember.bitwise_and(t([1.0]), t([1.0])), NotImplementedError,
     r"\[bitwise_and\] not implemented for dtype float32"),
    (lambda: t([1.0]) << 1, NotImplementedError, "not implemented for dtype float32"),
    (lambda: t([1]) << 1.0, NotImplementedError, "not implemented for dtype float32"),
    (lambda: ember.lt(t([1j]), t([1j])), NotImplementedError, "not implemented for dtype complex"),
    (lambda: ember.minimum(t([1j]), t([1j])), TypeError, "minimum not implemented for complex"),
    (lambda: ember.fmax(t([1j]), t([1j])), TypeError, "fmax not implemented for complex"),
    (lambda: ember.remainder(t([1j]), t([1j])), NotImplementedError, "not implemented"),
    (lambda: ember.floor_divide(t([True]), t([True])), NotImplementedError, "dtype bool"),
    (lambda: ember.imag(t([1.0])), TypeError, "imag is not implemented for tensors with "
     "non-complex dtypes"),
    (lambda: ember.isposinf(t([1j])), TypeError, "isposinf does not support complex inputs"),
    (lambda: ember.signbit(t([1j])), NotImplementedError, "signbit is not implemented for complex"),
    (lambda: ember.erf(t([1j])), NotImplementedError, r"\[erf\] not implemented for dtype "
     "complex64"),
    (lambda: ember.logit(t([1j])), NotImplementedError, "not implemented for dtype complex64"),
    (lambda: ember.hypot(t([1]), t([1])), NotImplementedError, "not implemented for dtype int64"),
    (lambda: ember.lerp(t([1]), t([2]), 0.5), NotImplementedError, "not implemented for dtype"),
    (lambda: ember.lerp(t([1.0]), t([2.0], ember.float64), 0.5), RuntimeError,
     r"\[lerp\] expected dtype float32 for `end` but got dtype float64"),
    (lambda: ember.lerp(t([1.0]), t([2.0]), t([0.5], ember.float64)), RuntimeError,
     "expected dtype float32 for `weight`"),
    (lambda: ember.pow(t([True]), t([True])), NotImplementedError, "dtype bool"),
    (lambda: t([2, 3]) ** -1, RuntimeError, "Integers to negative integer powers are not allowed."),
    (lambda: ember.pow(t([True]), -2), RuntimeError, "Integers to negative integer powers"),
    (lambda: t([1, 2]) // 0, RuntimeError, "ZeroDivisionError"),
    (lambda: t([1, 2]) % t([1, 0]), RuntimeError, "ZeroDivisionError"),
    (lambda: ember.fmod(t([1]), 0), RuntimeError, "ZeroDivisionError"),
    (lambda: ember.div(t([1]), 0, rounding_mode="trunc"), RuntimeError, "ZeroDivisionError"),
    (lambda: ember.div(t([1.0]), 2, rounding_mode="bad"), RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'bad'"),
    (lambda: ember.div(t([1.0]), 2, rounding_mode=3), TypeError, "rounding_mode must be"),
    (lambda: ember.clamp(t([1.0])), RuntimeError, "At least one of 'min' or 'max' must not be "
     "None"),
    (lambda: ember.clamp(t([1j]), 0), NotImplementedError, "clamp is not supported for complex"),
    (lambda: ember.clamp(t([True]), min=True), NotImplementedError, "clamp is not implemented "
     "for dtype bool"),
    (lambda: ember.where(t([1, 0]), 1.0, 2.0), RuntimeError, "where expected condition to be a "
     "boolean tensor, but got a tensor with dtype int64"),
    (lambda: ember.isclose(t([1]), t([1.0])), RuntimeError, r"\[isclose\] int64 did not match "
     "float32"),
    (lambda: ember.isclose(t([1.0]), t([1.0]), rtol=-1), RuntimeError, "rtol must be greater "
     "than or equal to zero, but got -1"),
    (lambda: ember.allclose(t([1.0]), t([1.0]), atol=-1), RuntimeError, "atol must be greater"),
    (lambda: t([1j]).abs_(), RuntimeError, "In-place abs is not supported for complex tensors."),
    (lambda: ember.ones(2).float_power_(2), RuntimeError, "the base given to float_power_ has "
     "dtype float32 but the operation's result requires dtype float64"),
    (lambda: ember.exp([1.0, 2.0]), TypeError, "incompatible function arguments"),
])
def test_error_class_and_message(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_not_implemented_is_a_runtime_error():
    # As in PyTorch, NotImplementedError is a subclass of RuntimeError.
    with pytest.raises(RuntimeError):
        ember.floor(t([True]))


def test_partial_overlap_between_input_and_output_is_refused():
    a = ember.ones(3, 3)
    msg = "some elements of the input tensor and the written-to tensor refer to a single memory"
    with pytest.raises(RuntimeError, match=msg):
        a.add_(a[0])
    with pytest.raises(RuntimeError, match=msg):
        a[1:].add_(a[:-1])
    with pytest.raises(RuntimeError, match=msg):
        a.add_(a.transpose(0, 1))
    with pytest.raises(RuntimeError, match=msg):
        ember.mul(a[0], 2, out=a[0:2].reshape(-1)[1:4])
    # Exact aliases and disjoint views are fine.
    a.add_(a)
    ember.exp(a[0], out=a[0])
    a[:, 0].add_(a[:, 1])
    a[0].mul_(a[2])
    assert values(a[1]) == [4.0, 2.0, 2.0]
