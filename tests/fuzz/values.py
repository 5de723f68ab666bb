"""Random value specs: small tensors of every dtype and layout, and pools of hostile scalars."""

from __future__ import annotations

import math

from .spec import COMPLEX_DTYPES, DTYPES, FLOAT_DTYPES, INT_DTYPES, enc_elem, enc_float, numel

INT_RANGE = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

SHAPES = [
    (), (), (0,), (1,), (3,), (5,), (2, 3), (3, 2), (3, 1), (1, 4), (0, 3), (3, 0), (3, 3),
    (4, 4), (2, 3, 4), (2, 1, 3), (1, 2, 3, 4), (2, 2, 2, 2), (1, 1, 5), (2, 3, 3), (1, 3, 8),
    (2, 2, 4, 4), (2, 0, 2), (1, 1, 1, 1, 2),
]  # fmt: skip
LAYOUTS = "CCCCCCTSXO"

# Common dtypes are drawn more often than rare ones.
DTYPE_WEIGHTS = {
    "bool": 1, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 3, "float16": 1,
    "bfloat16": 1, "float32": 5, "float64": 3, "complex64": 1, "complex128": 1,
}  # fmt: skip
_DTYPE_BAG = [d for d in DTYPES for _ in range(DTYPE_WEIGHTS[d])]

SPECIAL_FLOATS = [
    math.nan, math.inf, -math.inf, -0.0, 0.0, 1e30, -1e30, 1e-40, 65504.0, 3.4e38, 1e308, 5e-324,
]  # fmt: skip

SMALL_INTS = [0, 1, 1, 2, 2, 3, -1, -2, 4]
HOSTILE_INTS = [
    2**31, 2**31 - 1, -(2**31), 2**32, 2**62, 2**63 - 1, -(2**63), 2**63, 2**64, -(2**63) - 1,
    10**10, -(10**10), 1 << 40, 255, 256, -129, 65536, -3, 100, 1000000,
]  # fmt: skip
FLOATS = [
    0.0, -0.0, 0.5, 1.5, -1.5, 2.0, 1e10, -1e10, 1e-10, 1e308, 5e-324, math.nan, math.inf,
    -math.inf, 2.0**63, 3.0, -2.5,
]  # fmt: skip
STRINGS = [
    "", "sum", "mean", "none", "max", "min", "linear", "nearest", "bilinear", "bicubic", "area",
    "floor", "trunc", "fro", "nuc", "reflect", "replicate", "circular", "zeros", "constant", "L",
    "U", "reduced", "complete", "r", "cpu", "cuda", "float32", "abc", "ij", "xy",
    "ii->i", "...", "\x00", "é", "same", "valid", "tanh", "batchmean", "ij,jk->ik",
]  # fmt: skip


def pick_dtype(rng) -> str:
    return rng.choice(_DTYPE_BAG)


def rand_elem(rng, dtype: str, special: bool):
    if dtype == "bool":
        return rng.random() < 0.5
    if dtype in INT_DTYPES:
        lo, hi = INT_RANGE[dtype]
        if special and rng.random() < 0.15:
            return rng.choice([lo, hi, 0, hi - 1, lo + 1 if lo else 1])
        return rng.randint(max(lo, -5), min(hi, 9))
    if dtype in COMPLEX_DTYPES:
        return complex(rand_elem(rng, "float64", special), rand_elem(rng, "float64", special))
    if special and rng.random() < 0.2:
        return rng.choice(SPECIAL_FLOATS)
    return round(rng.uniform(-4.0, 4.0), 3)


def rand_tensor(rng, dtype=None, shape=None, layout=None, special=None, grad=None) -> dict:
    """A tensor spec; arguments left None are drawn at random."""
    dtype = dtype or pick_dtype(rng)
    shape = list(rng.choice(SHAPES) if shape is None else shape)
    layout = layout or rng.choice(LAYOUTS)
    if special is None:
        special = rng.random() < 0.3
    n = numel(shape)
    if layout == "X" and shape and shape[0] > 1:  # expanded: every slice along dim 0 alike
        inner = [rand_elem(rng, dtype, special) for _ in range(numel(shape[1:]))]
        vals = inner * shape[0]
    else:
        vals = [rand_elem(rng, dtype, special) for _ in range(n)]
    t = {"d": dtype, "s": shape, "v": [enc_elem(v) for v in vals], "l": layout}
    if grad is None:
        grad = rng.random() < 0.1
    if grad and dtype in FLOAT_DTYPES + COMPLEX_DTYPES:
        t["g"] = True
    elif dtype == "float32" and rng.random() < 0.05:
        # A quantized tensor (of these values): [dtype, scale, zero point].
        qdtype = rng.choice(["qint8", "quint8"])
        t["q"] = [qdtype, rng.choice([0.05, 0.5, 3.0]),
                  rng.choice([0, 5, 127]) if qdtype == "quint8" else rng.choice([0, -5, 100])]
    return {"tensor": t}


def scalar_tensor(rng) -> dict:
    """A one-element tensor (0-d or shape (1,)), as found where ints or floats go."""
    dtype = rng.choice(["int64", "int64", "float32", "float64", "bool", "int32", "complex64"])
    shape = rng.choice([(), (), (1,)])
    return rand_tensor(rng, dtype, shape, "C", special=rng.random() < 0.2, grad=False)


def rand_int(rng, hostile=0.15):
    if rng.random() < hostile:
        return rng.choice(HOSTILE_INTS)
    return rng.choice(SMALL_INTS)


def rand_float(rng):
    return enc_float(rng.choice(FLOATS) if rng.random() < 0.5 else round(rng.uniform(-3, 3), 2))


def rand_int_list(rng, hostile=0.1, max_len=4):
    items = [rand_int(rng, hostile) for _ in range(rng.randint(0, max_len))]
    return {"list" if rng.random() < 0.6 else "tuple": items}


def rand_dtype_value(rng) -> dict:
    if rng.random() < 0.05:
        return {"dtype": rng.choice(["qint8", "quint8", "qint32"])}
    return {"dtype": rng.choice(DTYPES)}


def hostile_value(rng, depth=0):
    """Anything at all: the pool used where nothing is known about the argument."""
    r = rng.random()
    if r < 0.25:
        return rand_tensor(rng)
    if r < 0.40:
        return rand_int(rng, 0.4)
    if r < 0.48:
        return rand_float(rng)
    if r < 0.55:
        return scalar_tensor(rng)
    if r < 0.61:
        return rng.choice(STRINGS)
    if r < 0.66:
        return None
    if r < 0.71:
        return rng.random() < 0.5
    if r < 0.78:
        return rand_int_list(rng, 0.3)
    if r < 0.82:
        return rand_dtype_value(rng)
    if r < 0.85:
        return {"c": [rand_float(rng), rand_float(rng)]}
    if r < 0.89 and depth < 2:  # nested / ragged lists, lists of tensors
        return {"list": [hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]}
    if r < 0.92:
        return {"list": [rand_tensor(rng) for _ in range(rng.randint(1, 3))]}
    if r < 0.95:
        return {"dev": rng.choice(["cpu", "cuda"])}
    if r < 0.97:
        return {"size": [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]}
    return {"slice": [rand_int(rng, 0.2), None, rng.choice([None, 1, 2, -1, 0])]}


def hostile_like(rng, v):
    """A hostile replacement for value v, usually of a related kind (an int gets a huge or
    negative int, a float, a one-element tensor, a string...)."""
    if rng.random() < 0.15:
        return hostile_value(rng)
    if isinstance(v, bool):
        return rng.choice([not v, 2, None, scalar_tensor(rng), "true", 1.0])
    if isinstance(v, int):
        r = rng.random()
        if r < 0.45:
            return rng.choice(HOSTILE_INTS)
        if r < 0.6:
            return rng.choice([v + 1, v - 1, -v - 1, 0, -1])
        if r < 0.72:
            return rng.choice([float(v) + 0.5, float(v), enc_float(math.nan), enc_float(math.inf)])
        if r < 0.85:
            return scalar_tensor(rng)
        return rng.choice([None, True, "1", {"list": [v]}, {"list": [v, v]}])
    if isinstance(v, float) or (isinstance(v, dict) and "f" in v):
        return rng.choice(
            [
                enc_float(math.nan),
                enc_float(math.inf),
                enc_float(-math.inf),
                -0.0,
                1e308,
                1e-320,
                0.0,
                -1.0,
                2**63,
                -(2**63),
                10**20,
                True,
                scalar_tensor(rng),
                None,
                "1.0",
            ]  # fmt: skip
        )
    if isinstance(v, str):
        return rng.choice(STRINGS + [None, 0, v.upper(), v + "x"])
    if v is None:
        return rng.choice([0, -1, 2**63 - 1, rand_tensor(rng), "", False, {"list": []}])
    if isinstance(v, dict):
        k, x = next(iter(v.items()))
        if k == "tensor":
            return mutate_tensor(rng, x)
        if k in ("list", "tuple"):
            return mutate_sequence(rng, k, x)
        if k == "dtype":
            return rng.choice([{"dtype": rng.choice(DTYPES)}, "float32", None, 1])
    return hostile_value(rng)


def mutate_tensor(rng, t: dict) -> dict:
    """A variant of tensor spec t: another dtype, layout, shape or values, or not a tensor."""
    r = rng.random()
    t = dict(t)
    if r < 0.25:  # another dtype, values regenerated
        return rand_tensor(rng, pick_dtype(rng), t["s"], t.get("l", "C"))
    if r < 0.40:  # non-contiguous memory
        t["l"] = rng.choice("TSXO")
        if t["l"] == "X" and t["s"] and t["s"][0] > 1:
            inner = numel(t["s"][1:])
            t["v"] = t["v"][:inner] * t["s"][0]
        return {"tensor": t}
    if r < 0.55:  # NaN / inf / extremes sprinkled in
        vals = list(t["v"])
        for _ in range(max(1, len(vals) // 3)):
            if vals:
                vals[rng.randrange(len(vals))] = enc_elem(rand_elem(rng, t["d"], True))
        t["v"] = vals
        return {"tensor": t}
    if r < 0.75:  # 0-d, empty, or one more / one fewer dimension
        shape = list(t["s"])
        choice = rng.random()
        if choice < 0.3:
            shape = []
        elif choice < 0.55:
            shape = shape[:-1] + [0] if shape else [0]
        elif choice < 0.8:
            shape.insert(rng.randint(0, len(shape)), 1)
        else:
            shape = shape[1:]
        return rand_tensor(rng, t["d"], shape, t.get("l", "C"))
    if r < 0.85:
        return scalar_tensor(rng)
    if r < 0.9:
        t["g"] = not t.get("g")
        return {"tensor": t}
    return hostile_value(rng)


def mutate_sequence(rng, kind: str, items: list) -> dict:
    items = list(items)
    r = rng.random()
    if r < 0.4 and items:
        j = rng.randrange(len(items))
        items[j] = hostile_like(rng, items[j])
    elif r < 0.55:
        items = []
    elif r < 0.7:
        items.append(items[-1] if items and rng.random() < 0.5 else rand_int(rng, 0.3))
    elif r < 0.8 and items:
        items.pop(rng.randrange(len(items)))
    elif r < 0.9:
        items = [{"list": list(items)}]
    else:
        return {"tuple" if kind == "list" else "list": items}
    return {kind: items}
