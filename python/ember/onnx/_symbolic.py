"""ONNX translations of Ember's ops, keyed by the name of the binding the tracer saw (the op's
Python name: "linear", "__add__", "view"). Each translation reads the call's arguments, writes
nodes into the graph and binds the call's result tensors to their outputs."""

from __future__ import annotations

import math

import numpy as np

import ember
from ember.onnx._graph import to_numpy
from ember.onnx.errors import UnsupportedOperatorError

SYMBOLICS = {}
INT64_MAX = np.iinfo(np.int64).max


def register(*names):
    def wrap(fn):
        for name in names:
            SYMBOLICS[name] = fn
        return fn

    return wrap


class Call:
    """One traced call: its arguments by position and by name, and its result."""

    def __init__(self, graph, op, is_method, args, names, result):
        self.g = graph
        self.op = op
        self.is_method = is_method
        self.args = list(args)
        self.names = list(names)
        self.result = result

    def arg(self, index, name=None, default=None):
        if name is not None and name in self.names:
            i = self.names.index(name)
            if i < len(self.args):
                return self.args[i]
        if index is not None and index < len(self.args):
            return self.args[index]
        return default

    def fail(self, why):
        raise UnsupportedOperatorError(f"onnx.export: op '{self.op}' {why}")

    def out(self, name, tensor=None):
        return self.g.output(self.result if tensor is None else tensor, name)


def _is_tensor(x):
    return isinstance(x, ember.Tensor)


def operand(g, x, dtype):
    """A value name for x (tensor or Python number) in dtype."""
    if _is_tensor(x):
        v = g.value(x)
        return g.cast(v.name, x.dtype, dtype)
    if isinstance(x, (bool, int, float)):
        return g.scalar(x, dtype)
    raise UnsupportedOperatorError(f"onnx.export: cannot use {type(x).__name__} as an operand")


def tensor_name(g, x):
    return g.value(x).name


def _dims(value, rank):
    if value is None:
        return None
    if isinstance(value, int):
        value = [value]
    return [int(d) % rank if rank else int(d) for d in value]


def _tuple(value, n):
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    return value * n if len(value) == 1 else value


# -- elementwise arithmetic --------------------------------------------------------------------
def _binary(onnx_op, reflected=False, scale_arg=None):
    def emit(c):
        a, b = c.arg(0), c.arg(1, "other")
        if reflected:
            a, b = b, a
        result_dtype = c.result.dtype
        x = operand(c.g, a, result_dtype)
        y = operand(c.g, b, result_dtype)
        if scale_arg is not None:
            alpha = c.arg(2, scale_arg, 1)
            if alpha != 1:
                y = c.g.node("Mul", [y, c.g.scalar(alpha, result_dtype)])
        c.out(c.g.node(onnx_op, [x, y]))

    return emit


register("add", "__add__", "__radd__", "add_", "__iadd__")(_binary("Add", scale_arg="alpha"))
register("sub", "subtract", "__sub__", "sub_", "__isub__")(_binary("Sub", scale_arg="alpha"))
register("__rsub__")(_binary("Sub", reflected=True))
register("mul", "multiply", "__mul__", "__rmul__", "mul_", "__imul__")(_binary("Mul"))
register("maximum", "fmax")(_binary("Max"))
register("minimum", "fmin")(_binary("Min"))


@register("rsub")
def _rsub(c):
    x, other, alpha = c.arg(0), c.arg(1, "other"), c.arg(2, "alpha", 1)
    dtype = c.result.dtype
    a = operand(c.g, x, dtype)
    if alpha != 1:
        a = c.g.node("Mul", [a, c.g.scalar(alpha, dtype)])
    c.out(c.g.node("Sub", [operand(c.g, other, dtype), a]))


def _divide(c, a, b):
    dtype = c.result.dtype
    mode = c.arg(2, "rounding_mode")
    x, y = operand(c.g, a, dtype), operand(c.g, b, dtype)
    q = c.g.node("Div", [x, y])
    if mode == "floor" and dtype.is_floating_point:
        q = c.g.node("Floor", [q])
    elif mode == "trunc" and dtype.is_floating_point:
        q = c.g.node("Mul", [c.g.node("Sign", [q]), c.g.node("Floor", [c.g.node("Abs", [q])])])
    elif mode == "floor":
        c.fail("with rounding_mode='floor' on integers has no ONNX form here; divide floats")
    c.out(q)


@register("div", "divide", "true_divide", "__truediv__", "div_", "__itruediv__")
def _div(c):
    _divide(c, c.arg(0), c.arg(1, "other"))


@register("__rtruediv__")
def _rdiv(c):
    _divide(c, c.arg(1, "other"), c.arg(0))


@register("pow", "__pow__", "float_power")
def _pow(c):
    dtype = c.result.dtype
    base, exponent = c.arg(0), c.arg(1, "exponent")
    c.out(c.g.node("Pow", [operand(c.g, base, dtype), operand(c.g, exponent, dtype)]))


@register("__rpow__")
def _rpow(c):
    dtype = c.result.dtype
    c.out(c.g.node("Pow", [operand(c.g, c.arg(1), dtype), operand(c.g, c.arg(0), dtype)]))


@register("remainder", "__mod__")
def _remainder(c):
    dtype = c.result.dtype
    a, b = operand(c.g, c.arg(0), dtype), operand(c.g, c.arg(1, "other"), dtype)
    if dtype.is_floating_point:
        q = c.g.node("Floor", [c.g.node("Div", [a, b])])
        c.out(c.g.node("Sub", [a, c.g.node("Mul", [q, b])]))
    else:
        c.out(c.g.node("Mod", [a, b], fmod=0))


@register("fmod")
def _fmod(c):
    dtype = c.result.dtype
    a, b = operand(c.g, c.arg(0), dtype), operand(c.g, c.arg(1, "other"), dtype)
    c.out(c.g.node("Mod", [a, b], fmod=1 if dtype.is_floating_point else 0))


@register("matmul", "__matmul__", "mm", "bmm")
def _matmul(c):
    dtype = c.result.dtype
    c.out(c.g.node("MatMul", [operand(c.g, c.arg(0), dtype), operand(c.g, c.arg(1), dtype)]))


@register("__rmatmul__")
def _rmatmul(c):
    dtype = c.result.dtype
    c.out(c.g.node("MatMul", [operand(c.g, c.arg(1), dtype), operand(c.g, c.arg(0), dtype)]))


@register("addmm")
def _addmm(c):
    inp, m1, m2 = c.arg(0), c.arg(1, "mat1"), c.arg(2, "mat2")
    beta, alpha = c.arg(3, "beta", 1), c.arg(4, "alpha", 1)
    dtype = c.result.dtype
    c.out(c.g.node("Gemm", [operand(c.g, m1, dtype), operand(c.g, m2, dtype),
                            operand(c.g, inp, dtype)], alpha=float(alpha), beta=float(beta)))


def _transposed_weight(g, w):
    """w.T as a value: a transposed initializer when w is a constant (folded), else a node."""
    if not g.is_traced(w) and g.fold_constants:
        return g.constant(to_numpy(w).T.copy(), "weight_t")
    return g.node("Transpose", [tensor_name(g, w)], perm=[1, 0])


@register("linear")
def _linear(c):
    x, w, b = c.arg(0, "input"), c.arg(1, "weight"), c.arg(2, "bias")
    g = c.g
    if x.dim() == 2:
        inputs = [tensor_name(g, x), tensor_name(g, w)]
        if b is not None:
            inputs.append(tensor_name(g, b))
        c.out(g.node("Gemm", inputs, transB=1))
        return
    y = g.node("MatMul", [tensor_name(g, x), _transposed_weight(g, w)])
    if b is not None:
        y = g.node("Add", [y, tensor_name(g, b)])
    c.out(y)


def _unary(onnx_op):
    def emit(c):
        x = c.arg(0)
        c.out(c.g.node(onnx_op, [operand(c.g, x, c.result.dtype)]))

    return emit


for _name, _op in {
    "neg": "Neg", "negative": "Neg", "__neg__": "Neg", "abs": "Abs", "__abs__": "Abs",
    "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "reciprocal": "Reciprocal", "sin": "Sin",
    "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh",
    "cosh": "Cosh", "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf", "floor": "Floor",
    "ceil": "Ceil", "sign": "Sign", "relu": "Relu", "relu_": "Relu",
    "tanh_": "Tanh", "sigmoid_": "Sigmoid", "exp_": "Exp",
}.items():
    register(_name)(_unary(_op))


@register("round")
def _round(c):
    c.g.require(11, "round")
    if c.arg(1, "decimals", 0):
        c.fail("with decimals has no ONNX form here")
    c.out(c.g.node("Round", [operand(c.g, c.arg(0), c.result.dtype)]))


@register("rsqrt")
def _rsqrt(c):
    c.out(c.g.node("Reciprocal", [c.g.node("Sqrt", [operand(c.g, c.arg(0), c.result.dtype)])]))


@register("log2", "log10", "log1p", "expm1")
def _log_family(c):
    g, dtype = c.g, c.result.dtype
    x = operand(g, c.arg(0), dtype)
    if c.op == "log1p":
        c.out(g.node("Log", [g.node("Add", [x, g.scalar(1, dtype)])]))
    elif c.op == "expm1":
        c.out(g.node("Sub", [g.node("Exp", [x]), g.scalar(1, dtype)]))
    else:
        base = 2.0 if c.op == "log2" else 10.0
        c.out(g.node("Div", [g.node("Log", [x]), g.scalar(math.log(base), dtype)]))


@register("square")
def _square(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("Mul", [x, x]))


@register("gelu", "gelu_")
def _gelu(c):
    g, dtype = c.g, c.result.dtype
    x = operand(g, c.arg(0), dtype)
    approximate = c.arg(1, "approximate", "none")
    if g.opset >= 20:
        c.out(g.node("Gelu", [x], approximate=approximate))
        return
    half = g.node("Mul", [x, g.scalar(0.5, dtype)])
    if approximate == "tanh":
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.scalar(0.044715, dtype)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.scalar(math.sqrt(2 / math.pi), dtype)])])
    else:
        t = g.node("Erf", [g.node("Mul", [x, g.scalar(1 / math.sqrt(2), dtype)])])
    c.out(g.node("Mul", [half, g.node("Add", [t, g.scalar(1, dtype)])]))


@register("silu", "silu_")
def _silu(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("Mul", [x, c.g.node("Sigmoid", [x])]))


@register("mish", "mish_")
def _mish(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("Mul", [x, c.g.node("Tanh", [c.g.node("Softplus", [x])])]))


@register("softplus")
def _softplus(c):
    g, dtype = c.g, c.result.dtype
    x = operand(g, c.arg(0), dtype)
    beta = c.arg(1, "beta", 1)
    if beta == 1:
        c.out(g.node("Softplus", [x]))
        return
    scaled = g.node("Softplus", [g.node("Mul", [x, g.scalar(beta, dtype)])])
    c.out(g.node("Div", [scaled, g.scalar(beta, dtype)]))


@register("log_sigmoid")
def _log_sigmoid(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("Neg", [c.g.node("Softplus", [c.g.node("Neg", [x])])]))


@register("leaky_relu", "leaky_relu_")
def _leaky_relu(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("LeakyRelu", [x], alpha=float(c.arg(1, "negative_slope", 0.01))))


@register("elu", "elu_")
def _elu(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    alpha = float(c.arg(1, "alpha", 1.0))
    scale = float(c.arg(2, "scale", 1.0))
    input_scale = float(c.arg(3, "input_scale", 1.0))
    if scale != 1.0 or input_scale != 1.0:
        c.fail("with scale or input_scale other than 1 has no ONNX form here")
    c.out(c.g.node("Elu", [x], alpha=alpha))


@register("selu", "selu_")
def _selu(c):
    c.out(c.g.node("Selu", [operand(c.g, c.arg(0), c.result.dtype)]))


@register("celu", "celu_")
def _celu(c):
    c.g.require(12, "celu")
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("Celu", [x], alpha=float(c.arg(1, "alpha", 1.0))))


def _clip(c, x, low, high):
    g, dtype = c.g, c.result.dtype
    name = operand(g, x, dtype)
    if not (_is_tensor(low) or _is_tensor(high)):
        c.out(g.clip(name, low, high, dtype))
        return
    g.require(11, "clamp with tensor bounds")
    inputs = [name, operand(g, low, dtype) if low is not None else ""]
    if high is not None:
        inputs.append(operand(g, high, dtype))
    c.out(g.node("Clip", inputs))


@register("clamp", "clip", "clamp_", "clip_")
def _clamp(c):
    _clip(c, c.arg(0), c.arg(1, "min"), c.arg(2, "max"))


@register("clamp_min", "clamp_min_")
def _clamp_min(c):
    _clip(c, c.arg(0), c.arg(1, "min"), None)


@register("clamp_max", "clamp_max_")
def _clamp_max(c):
    _clip(c, c.arg(0), None, c.arg(1, "max"))


@register("hardtanh", "hardtanh_")
def _hardtanh(c):
    _clip(c, c.arg(0), float(c.arg(1, "min_val", -1.0)), float(c.arg(2, "max_val", 1.0)))


@register("relu6", "relu6_")
def _relu6(c):
    _clip(c, c.arg(0), 0.0, 6.0)


@register("hardsigmoid", "hardsigmoid_")
def _hardsigmoid(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    c.out(c.g.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5))


@register("hardswish", "hardswish_")
def _hardswish(c):
    x = operand(c.g, c.arg(0), c.result.dtype)
    if c.g.opset >= 14:
        c.out(c.g.node("HardSwish", [x]))
    else:
        c.out(c.g.node("Mul", [x, c.g.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)]))


@register("softmax", "log_softmax", "_softmax", "_log_softmax")
def _softmax(c):
    x = c.arg(0)
    dim = c.arg(1, "dim")
    if dim is None:
        dim = 0 if x.dim() in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    op = "LogSoftmax" if "log" in c.op else "Softmax"
    c.out(c.g.softmax(op, operand(c.g, x, c.result.dtype), int(dim), x.dim()))


# -- comparisons and selection -----------------------------------------------------------------
def _compare(onnx_op, negate=False):
    def emit(c):
        a, b = c.arg(0), c.arg(1, "other")
        dtypes = [t.dtype for t in (a, b) if _is_tensor(t)]
        dtype = dtypes[0] if len(dtypes) == 1 else ember.promote_types(*dtypes)
        if not _is_tensor(b) and isinstance(b, float) and not dtype.is_floating_point:
            dtype = ember.float32
        op, flip = onnx_op, negate
        if c.g.opset < 12 and op in ("LessOrEqual", "GreaterOrEqual"):
            op, flip = ("Greater" if op == "LessOrEqual" else "Less"), not flip
        if c.g.opset < 11 and op == "Equal" and dtype.is_floating_point:
            c.g.require(11, "comparing floating-point tensors for equality")
        y = c.g.node(op, [operand(c.g, a, dtype), operand(c.g, b, dtype)])
        c.out(c.g.node("Not", [y]) if flip else y)

    return emit


register("eq", "__eq__")(_compare("Equal"))
register("ne", "__ne__", "not_equal")(_compare("Equal", negate=True))
register("lt", "__lt__", "less")(_compare("Less"))
register("le", "__le__", "less_equal")(_compare("LessOrEqual"))
register("gt", "__gt__", "greater")(_compare("Greater"))
register("ge", "__ge__", "greater_equal")(_compare("GreaterOrEqual"))


def _logical(onnx_op):
    def emit(c):
        a, b = c.arg(0), c.arg(1, "other")
        if c.result.dtype != ember.bool:
            if onnx_op in ("And", "Or", "Xor") and c.op.startswith("__"):
                c.g.require(18, f"{c.op} on integers (bitwise)")
                bitwise = {"And": "BitwiseAnd", "Or": "BitwiseOr", "Xor": "BitwiseXor"}[onnx_op]
                dtype = c.result.dtype
                c.out(c.g.node(bitwise, [operand(c.g, a, dtype), operand(c.g, b, dtype)]))
                return
        y = c.g.node(onnx_op, [operand(c.g, a, ember.bool), operand(c.g, b, ember.bool)])
        c.out(c.g.cast(y, ember.bool, c.result.dtype))

    return emit


register("logical_and", "__and__", "__rand__", "bitwise_and")(_logical("And"))
register("logical_or", "__or__", "__ror__", "bitwise_or")(_logical("Or"))
register("logical_xor", "__xor__", "__rxor__", "bitwise_xor")(_logical("Xor"))


@register("logical_not", "__invert__", "bitwise_not")
def _not(c):
    x = c.arg(0)
    if c.result.dtype != ember.bool and c.op != "logical_not":
        c.fail("on integers (bitwise not) has no ONNX form here")
    c.out(c.g.cast(c.g.node("Not", [operand(c.g, x, ember.bool)]), ember.bool, c.result.dtype))


@register("isnan")
def _isnan(c):
    c.out(c.g.node("IsNaN", [tensor_name(c.g, c.arg(0))]))


@register("isinf")
def _isinf(c):
    c.out(c.g.node("IsInf", [tensor_name(c.g, c.arg(0))]))


@register("where", "_where")
def _where(c):
    cond, x, y = c.arg(0, "condition"), c.arg(1, "input"), c.arg(2, "other")
    if x is None:
        c.fail("with only a condition (nonzero) has a data-dependent shape")
    dtype = c.result.dtype
    c.out(c.g.node("Where", [operand(c.g, cond, ember.bool), operand(c.g, x, dtype),
                             operand(c.g, y, dtype)]))


@register("masked_fill", "masked_fill_")
def _masked_fill(c):
    x, mask, value = c.arg(0), c.arg(1, "mask"), c.arg(2, "value")
    dtype = c.result.dtype
    c.out(c.g.node("Where", [operand(c.g, mask, ember.bool), operand(c.g, value, dtype),
                             operand(c.g, x, dtype)]))


# -- conversions and identities ----------------------------------------------------------------
@register("to", "float", "double", "half", "long", "int", "short", "bool", "byte", "char",
          "type", "type_as", "contiguous", "clone", "detach", "cpu", "positive", "__pos__",
          "alias", "requires_grad_", "dropout", "feature_dropout", "alpha_dropout",
          "feature_alpha_dropout", "dropout_", "_to_copy", "resolve_conj", "resolve_neg")
def _convert(c):
    x = c.arg(0)
    result = c.result
    if not _is_tensor(result):
        c.fail("did not return a tensor")
    if "dropout" in c.op and c.arg(2, "train", c.arg(2, "training", False)):
        c.fail("in training mode: export the model in eval mode (model.eval())")
    c.out(c.g.cast(tensor_name(c.g, x), x.dtype, result.dtype))
