"""Calls as plain data: a JSON-serialisable spec, a builder that makes its values for ember or for
torch, and a printer that turns it into a standalone reproducer.

A call spec is ``{"fn": path, "args": [value...], "kwargs": {name: value}}``. ``path`` is one of

* ``ember.<name>``, ``ember.nn.functional.<name>``, ``ember.linalg.<name>``: a function (the torch
  side swaps the leading ``ember`` for ``torch``);
* ``Tensor.<name>``: a method (or property) of ``args[0]``, dunder operators included;
* ``ember.nn.<Module>``: a module class; ``ctor`` / ``ckw`` hold the constructor's arguments and
  ``args`` / ``kwargs`` those of its forward call.

A value is a JSON scalar (int, bool, str, None, finite float) or a one-key dict:
``{"f": "nan"}`` (a non-finite float), ``{"c": [re, im]}``, ``{"list": [...]}``,
``{"tuple": [...]}``,
``{"dtype": "float32"}``, ``{"dev": "cpu"}``, ``{"size": [...]}``, ``{"slice": [a, b, c]}``,
``{"ellipsis": 0}``, ``{"ref": i}`` (the very object built for positional argument i: aliasing),
``{"tensor": {"d": dtype, "s": shape, "v": values, "l": layout, "g": requires_grad}}``, whose
optional ``"q": [qdtype, scale, zero_point]`` quantizes the float tensor so described.

A tensor's ``v`` lists its logical values in row-major order (non-finite floats as "nan" / "inf" /
"-inf", complex numbers as [re, im]); the layout says how its memory is laid out: ``C``
contiguous, ``T`` transposed (last two dims), ``S`` every other element of a wider tensor, ``X``
expanded along dim 0 (stride 0: only the first slice of ``v`` is used), ``O`` a view at storage
offset 1.
"""

from __future__ import annotations

import importlib
import math

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# ------------------------------------------------------------------------------------------
# encoding of Python values
# ------------------------------------------------------------------------------------------


def enc_float(x: float):
    if math.isfinite(x):
        return x
    return {"f": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def enc_elem(x):
    """A tensor element as JSON: non-finite floats as strings, complex as [re, im]."""
    if isinstance(x, complex):
        return [enc_elem(x.real), enc_elem(x.imag)]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def dec_elem(x):
    if isinstance(x, list):
        return complex(dec_elem(x[0]), dec_elem(x[1]))
    if isinstance(x, str):
        return _NONFINITE[x]
    return x


def is_float_dtype(d: str) -> bool:
    return d in FLOAT_DTYPES or d in COMPLEX_DTYPES


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def junk(dtype: str):
    """The filler stored in the gaps of strided / offset tensors (never read by a correct op)."""
    if dtype == "bool":
        return True
    if dtype in INT_DTYPES:
        return 7
    if dtype in COMPLEX_DTYPES:
        return complex(99.0, -99.0)
    return 99.0


def storage_plan(t: dict):
    """(base values, base shape, post ops) that build the tensor spec t.

    Post ops: ("T",) transpose(-1, -2); ("S",) [..., ::2]; ("X", shape) expand; ("O", shape)
    [1:].reshape(shape); ("O0",) [1] for a 0-d tensor.
    """
    shape = list(t["s"])
    vals = [dec_elem(v) for v in t["v"]]
    layout = t.get("l", "C")
    n = numel(shape)
    if len(vals) < n:  # tolerate short data (mutations): cycle, or zeros
        vals = (vals * (n // max(len(vals), 1) + 1))[:n] if vals else [0] * n
    vals = vals[:n]
    nd = len(shape)
    if layout == "T" and nd >= 2:
        r, c = shape[-2], shape[-1]
        base_shape = shape[:-2] + [c, r]
        base = []
        for b in range(0, n, max(r * c, 1)):
            mat = vals[b : b + r * c]
            base.extend(mat[i * c + j] for j in range(c) for i in range(r))
        return base, base_shape, [("T",)]
    if layout == "S" and nd >= 1:
        fill = junk(t["d"])
        base = []
        for v in vals:
            base.extend((v, fill))
        return base, shape[:-1] + [2 * shape[-1]], [("S",)]
    if layout == "X" and nd >= 1 and shape[0] != 1:
        inner = numel(shape[1:])
        base = vals[:inner] if shape[0] else [junk(t["d"])] * inner
        return base, [1] + shape[1:], [("X", shape)]
    if layout == "O":
        if nd == 0:
            return [junk(t["d"])] + vals, None, [("O0",)]
        return [junk(t["d"])] + vals, None, [("O", shape)]
    return vals, shape, []


# ------------------------------------------------------------------------------------------
# building values for a library
# ------------------------------------------------------------------------------------------


def build_tensor(t: dict, lib):
    dt = getattr(lib, t["d"])
    base, base_shape, post = storage_plan(t)
    if base_shape == []:
        x = lib.tensor(base[0], dtype=dt)
    else:
        x = lib.tensor(base, dtype=dt)
        if base_shape is not None and len(base_shape) != 1:
            x = x.reshape(base_shape)
    if t.get("g") and is_float_dtype(t["d"]):
        x.requires_grad_()
    for op in post:
        if op[0] == "T":
            x = x.transpose(-1, -2)
        elif op[0] == "S":
            x = x[..., ::2]
        elif op[0] == "X":
            x = x.expand(*op[1])
        elif op[0] == "O":
            x = x[1:].reshape(op[1])
        elif op[0] == "O0":
            x = x[1]
    if t.get("q"):  # quantized: [dtype, scale, zero point] of these float values
        qdtype, scale, zero_point = t["q"]
        x = lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, qdtype))
    return x


def build_value(v, lib, env):
    """The value of spec v for lib (the ember or torch module); env: the positional args so far."""
    if not isinstance(v, dict):
        return v
    k, x = next(iter(v.items()))
    if k == "tensor":
        return build_tensor(x, lib)
    if k == "f":
        return _NONFINITE[x]
    if k == "c":
        return complex(build_value(x[0], lib, env), build_value(x[1], lib, env))
    if k == "list":
        return [build_value(e, lib, env) for e in x]
    if k == "tuple":
        return tuple(build_value(e, lib, env) for e in x)
    if k == "dtype":
        return getattr(lib, x)
    if k == "dev":
        return lib.device(x)
    if k == "size":
        return lib.Size(x)
    if k == "slice":
        return slice(*[build_value(e, lib, env) for e in x])
    if k == "ellipsis":
        return Ellipsis
    if k == "ref":
        return env[x]
    raise ValueError(f"unknown value spec {v!r}")


_RESOLVED: dict = {}


def resolve(path: str, lib):
    """The function or class named by an ember path in lib (AttributeError if lib lacks it)."""
    key = (path, lib.__name__)
    if key in _RESOLVED:
        return _RESOLVED[key]
    parts = path.split(".")
    obj = lib
    for i, name in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            obj = importlib.import_module(".".join([lib.__name__] + parts[1 : i + 1]))
    _RESOLVED[key] = obj
    return obj


def build_call(call: dict, lib):
    """(thunk, args, kwargs): thunk() makes the call on freshly built values."""
    args: list = []
    for a in call.get("args", ()):
        args.append(build_value(a, lib, args))
    kwargs = {k: build_value(v, lib, args) for k, v in call.get("kwargs", {}).items()}
    path = call["fn"]
    if path.startswith("Tensor."):
        name = path[7:]
        if not args or not isinstance(args[0], lib.Tensor):
            # A method of a non-tensor self is that object's method, not the library's
            # (2147483647 .__rpow__(2147483647) is Python computing a huge int).
            raise TypeError(f"{path} needs a Tensor as self")

        def thunk():
            attr = getattr(args[0], name)
            if callable(attr):
                return attr(*args[1:], **kwargs)
            if len(args) > 1 or kwargs:
                raise TypeError(f"{type(attr).__name__} object is not callable")
            return attr

        return thunk, args, kwargs
    fn = resolve(path, lib)
    if "ctor" in call:
        cargs: list = []
        for a in call["ctor"]:
            cargs.append(build_value(a, lib, cargs))
        ckw = {k: build_value(v, lib, cargs) for k, v in call.get("ckw", {}).items()}

        def thunk():
            return fn(*cargs, **ckw)(*args, **kwargs)

        return thunk, args, kwargs
    return (lambda: fn(*args, **kwargs)), args, kwargs


def mutates_args(call: dict) -> bool:
    """Whether the call writes into its arguments (in-place method, out=, __setitem__)."""
    name = call["fn"].rsplit(".", 1)[-1]
    if "out" in call.get("kwargs", {}):
        return True
    if name.startswith("__"):
        return name == "__setitem__" or (name.startswith("__i") and name[3:-2] in INPLACE_DUNDERS)
    return name.endswith("_") and call["fn"].startswith("Tensor.")


INPLACE_DUNDERS = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift",
}  # fmt: skip


# ------------------------------------------------------------------------------------------
# reproducer source
# ------------------------------------------------------------------------------------------


def _fmt_float(x: float) -> str:
    if math.isnan(x):
        return "math.nan"
    if math.isinf(x):
        return "math.inf" if x > 0 else "-math.inf"
    return repr(float(x))


def _fmt_elem(x, dtype: str) -> str:
    if isinstance(x, complex):
        return f"complex({_fmt_float(x.real)}, {_fmt_float(x.imag)})"
    if dtype == "bool":
        return repr(bool(x))
    if isinstance(x, float) or dtype in FLOAT_DTYPES:
        return _fmt_float(float(x))
    return repr(x)


def _fmt_shape(shape) -> str:
    return ", ".join(str(s) for s in shape) if shape else "()"


def tensor_source(t: dict, lib: str = "ember") -> str:
    base, base_shape, post = storage_plan(t)
    d = t["d"]
    if base_shape == []:
        src = f"{lib}.tensor({_fmt_elem(base[0], d)}, dtype={lib}.{d})"
    else:
        src = f"{lib}.tensor([{', '.join(_fmt_elem(v, d) for v in base)}], dtype={lib}.{d})"
        if base_shape is not None and len(base_shape) != 1:
            src += f".reshape({_fmt_shape(base_shape)})"
    if t.get("g") and is_float_dtype(d):
        src += ".requires_grad_()"
    for op in post:
        if op[0] == "T":
            src += ".transpose(-1, -2)"
        elif op[0] == "S":
            src += "[..., ::2]"
        elif op[0] == "X":
            src += f".expand({_fmt_shape(op[1])})"
        elif op[0] == "O":
            src += f"[1:].reshape({_fmt_shape(op[1])})"
        elif op[0] == "O0":
            src += "[1]"
    if t.get("q"):
        qdtype, scale, zero_point = t["q"]
        src = f"{lib}.quantize_per_tensor({src}, {scale!r}, {zero_point!r}, {lib}.{qdtype})"
    return src


class _Printer:
    def __init__(self, lib: str):
        self.lib = lib
        self.lines: list[str] = []
        self.count = 0

    def tensor_var(self, t: dict) -> str:
        name = f"t{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {tensor_source(t, self.lib)}")
        return name

    def value(self, v, env) -> str:
        lib = self.lib
        if not isinstance(v, dict):
            if isinstance(v, float):
                return _fmt_float(v)
            return repr(v)
        k, x = next(iter(v.items()))
        if k == "tensor":
            return self.tensor_var(x)
        if k == "f":
            return _fmt_float(_NONFINITE[x])
        if k == "c":
            re_, im = (self.value(e, env) for e in x)
            return f"complex({re_}, {im})"
        if k == "list":
            return "[" + ", ".join(self.value(e, env) for e in x) + "]"
        if k == "tuple":
            items = [self.value(e, env) for e in x]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if k == "dtype":
            return f"{lib}.{x}"
        if k == "dev":
            return f"{lib}.device({x!r})"
        if k == "size":
            return f"{lib}.Size({list(x)!r})"
        if k == "slice":
            return "slice(" + ", ".join(self.value(e, env) for e in x) + ")"
        if k == "ellipsis":
            return "Ellipsis"
        if k == "ref":
            return env[x] if x < len(env) else "None"
        raise ValueError(f"unknown value spec {v!r}")

    def call(self, call: dict) -> str:
        env: list[str] = []
        for a in call.get("args", ()):
            env.append(self.value(a, env))
        kw = [f"{k}={self.value(v, env)}" for k, v in call.get("kwargs", {}).items()]
        path = call["fn"]
        if path.startswith("Tensor.") and not env:
            return f"{self.lib}.Tensor.{path[7:]}({', '.join(kw)})"
        if path.startswith("Tensor."):
            name = path[7:]
            if call.get("attr"):
                return f"{env[0]}.{name}"
            return f"{env[0]}.{name}({', '.join(env[1:] + kw)})"
        fn = display_path(path, self.lib)
        if "ctor" in call:
            cenv: list[str] = []
            for a in call["ctor"]:
                cenv.append(self.value(a, cenv))
            ckw = [f"{k}={self.value(v, cenv)}" for k, v in call.get("ckw", {}).items()]
            return f"{fn}({', '.join(cenv + ckw)})({', '.join(env + kw)})"
        return f"{fn}({', '.join(env + kw)})"


def display_path(path: str, lib: str = "ember") -> str:
    if path.startswith("ember.nn.functional."):
        return "F." + path[len("ember.nn.functional.") :]
    return lib + path[len("ember") :]


def to_source(calls, *, lib: str = "ember", threads: int = 0, seeds=None) -> str:
    """A standalone script making the calls in order; all but the last are wrapped in try/except.

    seeds: the RNG seed set before each call (the fuzzer reseeds before every call).
    """
    if isinstance(calls, dict):
        calls = [calls]
    lines = ["import math", "", f"import {lib}", f"import {lib}.nn.functional as F", ""]
    if threads:
        lines.append(f"{lib}.set_num_threads({threads})")
    for i, call in enumerate(calls):
        p = _Printer(lib)
        expr = p.call(call)
        last = i == len(calls) - 1
        body = list(p.lines)
        if seeds is not None:
            body.insert(0, f"{lib}.manual_seed({seeds[i]})")
        body.append(f"print({expr})" if last else expr)
        if last:
            lines.extend(body)
        else:
            lines.append("try:")
            lines.extend("    " + b for b in body)
            lines.append("except Exception:")
            lines.append("    pass")
    return "\n".join(lines) + "\n"
