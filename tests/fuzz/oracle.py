"""The PyTorch oracle: results reduced to comparable plain data, exception classes normalised, and
the comparison of ember's outcome with torch's (runs inside the child process)."""

from __future__ import annotations

import json
import re

import numpy as np

# Elements compared per tensor; bigger results (huge sizes passed as ints) compare a prefix.
COMPARE_CAP = 200_000

# (rtol, atol) per result dtype.
TOL = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (4e-2, 4e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-10),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-10),
}

# Ops whose results depend on the RNG (their reproducers reseed before the call).
RANDOM_OPS = {
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "normal",
    "bernoulli", "multinomial", "poisson", "uniform", "random", "exponential", "geometric",
    "cauchy", "log_normal", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "feature_dropout", "native_dropout", "rrelu", "gumbel_softmax",
}  # fmt: skip

# Ops whose results are random, uninitialised or not unique (eigenvector signs, driver-dependent
# least squares): only the structure (types, dtypes, shapes) is compared.
STRUCTURE_ONLY = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "rand", "rand_like",
    "randn", "randn_like", "randint", "randint_like", "randperm", "normal", "normal_", "bernoulli",
    "bernoulli_", "multinomial", "poisson", "uniform_", "random_", "exponential_", "geometric_",
    "cauchy_", "log_normal_", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "rrelu", "rrelu_", "gumbel_softmax", "eig", "eigh", "svd", "qr",
    "eigvals", "lstsq", "ldl_factor", "ldl_factor_ex", "svd_lowrank", "pca_lowrank", "lobpcg",
    "data_ptr", "__repr__", "__str__", "__format__", "__hash__", "__sizeof__", "storage",
    "untyped_storage", "grad_fn", "_version", "__dir__", "__reduce_ex__", "__reduce__", "emptylike",
    "ravel_empty", "resize_", "resize_as_", "set_", "new_tensor_empty",
}  # fmt: skip

# Ops whose integer (index) outputs may legitimately differ when the input has ties or NaNs.
TIE_OPS = {
    "sort", "argsort", "topk", "kthvalue", "mode", "median", "nanmedian", "max", "min", "argmax",
    "argmin", "cummax", "cummin", "msort", "unique", "unique_consecutive", "max_pool1d",
    "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "aminmax",
}  # fmt: skip

# Ops that reduce or accumulate (summation order differs between libraries): looser tolerance.
LOOSE_WORDS = (
    "sum", "mean", "prod", "std", "var", "norm", "matmul", "mm", "mv", "bmm", "dot", "einsum",
    "conv", "linear", "bilinear", "cum", "logsumexp", "softmax", "linalg", "det", "inv", "solve",
    "tensordot", "inner", "outer", "kron", "cdist", "pdist", "loss", "entropy", "pool", "trace",
    "interpolate", "upsample", "grid_sample", "affine", "cholesky", "lu", "pinv", "exp",
    "attention", "cosine", "similarity", "distance", "rnn", "lstm", "gru", "pow", "polar", "addr",
    "baddbmm", "addbmm", "addmm", "addmv", "chain", "multi_dot", "vander", "trapz", "trapezoid",
    "histc", "renorm", "nll", "kl_div", "embedding_bag", "layer_norm", "batch_norm",
    "group_norm", "instance_norm", "normalize", "tanh", "sigmoid", "gelu", "silu", "mish", "erf",
    "lgamma", "digamma", "polygamma", "sinc", "log", "atan", "asin", "acos", "sinh", "cosh",
    "tan", "sin", "cos", "rsqrt", "sqrt", "hypot", "logit", "xlog", "reciprocal", "div", "var_mean",
    "std_mean", "cov", "corrcoef", "fmod", "remainder",
)  # fmt: skip


def exc_name(e: BaseException) -> str:
    """An exception's class for comparison; ember.linalg.LinAlgError == torch._C._LinAlgError,
    and an out-of-memory error counts as the RuntimeError it derives from."""
    name = type(e).__name__
    if name in ("_LinAlgError", "LinAlgError"):
        return "LinAlgError"
    if name == "OutOfMemoryError":  # ember's and torch's are RuntimeErrors (torch: CUDA only)
        return "RuntimeError"
    return name


def short_name(path: str) -> str:
    return path.rsplit(".", 1)[-1]


# ------------------------------------------------------------------------------------------
# canonical forms
# ------------------------------------------------------------------------------------------


class Canon:
    """Turns a library's results into nested tuples of plain data and NumPy arrays."""

    def __init__(self, lib):
        self.lib = lib
        self.tensor_type = lib.Tensor
        self.dtype_type = type(lib.float32)
        self.is_torch = lib.__name__ == "torch"

    def tensor(self, x):
        x = x.detach()
        dt = str(x.dtype).rsplit(".", 1)[-1]
        shape = tuple(int(s) for s in x.shape)
        if x.device.type != "cpu":  # meta tensors: structure only
            return ("T", dt, shape, None)
        if self.is_torch:
            x = x.resolve_conj().resolve_neg()
        if x.numel() > COMPARE_CAP:
            x = x.reshape(-1)[:COMPARE_CAP]
        if dt == "bfloat16":
            x = x.float()
        if dt in ("qint8", "quint8", "qint32"):  # quantized: compared by their real values
            x = x.dequantize()
        arr = np.array(x.numpy(), copy=True)
        return ("T", dt, shape, arr)

    def __call__(self, x, depth=0):
        if isinstance(x, self.tensor_type):
            return self.tensor(x)
        if isinstance(x, bool):
            return ("b", x)
        if isinstance(x, int):
            return ("i", x)
        if isinstance(x, float):
            return ("f", x)
        if isinstance(x, complex):
            return ("c", x)
        if x is None:
            return ("N",)
        if isinstance(x, str):
            return ("s", x if self.is_torch else x.replace("ember", "torch"))
        if isinstance(x, (tuple, list)) and depth < 4:
            return ("L", tuple(self(e, depth + 1) for e in list(x)[:64]), len(x))
        if isinstance(x, self.dtype_type):
            return ("d", str(x).rsplit(".", 1)[-1])
        return ("o",)


# ------------------------------------------------------------------------------------------
# comparison
# ------------------------------------------------------------------------------------------


def _close(a: np.ndarray, b: np.ndarray, dt: str, loose: bool, floor=(0.0, 0.0)):
    """None when the arrays agree, else a short description of the worst element."""
    if a.shape != b.shape:
        return f"shapes {a.shape} vs {b.shape}"
    if a.size == 0:
        return None
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        bad = a != b
        if not bad.any():
            return None
        return _where(bad, a, b)
    rtol, atol = TOL.get(dt, (1e-6, 1e-6))
    rtol, atol = max(rtol, floor[0]), max(atol, floor[1])
    a = a.astype(np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64)
    b = b.astype(a.dtype)
    shown_a, shown_b = a, b
    bad = np.zeros(a.shape, dtype=bool)
    if a.dtype.kind == "c":  # a complex NaN is NaN whichever part holds it
        na, nb = np.isnan(a), np.isnan(b)
        bad |= na != nb
        a, b = np.where(na, 0, a), np.where(nb, 0, b)
        parts = (a.real, b.real, a.imag, b.imag)
    else:
        parts = (a, b)
    for x, y in zip(parts[::2], parts[1::2]):
        with np.errstate(all="ignore"):
            if loose:
                finite = np.abs(y[np.isfinite(y)])
                scale = float(finite.max()) if finite.size else 1.0
                ok = np.isclose(
                    x, y, rtol=10 * rtol, atol=10 * atol * max(1.0, scale), equal_nan=True
                )
            else:
                ok = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        bad |= ~ok
    if not bad.any():
        return None
    return _where(bad, shown_a, shown_b)


def _where(bad, a, b) -> str:
    i = int(np.flatnonzero(bad)[0])
    n = int(bad.sum())
    return f"{n} of {a.size} differ; at flat index {i}: ember {a.flat[i]!r} vs torch {b.flat[i]!r}"


def compare(e, t, *, loose=False, structure_only=False, where="result", floor=(0.0, 0.0)):
    """Mismatches between canonical forms e (ember) and t (torch): a list of (kind, detail)."""
    if e[0] != t[0]:
        return [("type", f"{where}: ember {_kind(e)} vs torch {_kind(t)}")]
    k = e[0]
    if k == "T":
        out = []
        if e[1] != t[1]:
            out.append(("dtype", f"{where}: ember {e[1]} vs torch {t[1]}"))
        if e[2] != t[2]:
            out.append(("shape", f"{where}: ember {e[2]} vs torch {t[2]}"))
        elif not structure_only and e[3] is not None and t[3] is not None:
            d = _close(e[3], t[3], t[1], loose, floor)
            if d:
                out.append(("value", f"{where} ({t[1]}): {d}", e[1]))
        return out
    if k == "L":
        if e[2] != t[2]:
            return [("length", f"{where}: ember {e[2]} items vs torch {t[2]}")]
        out = []
        for i, (x, y) in enumerate(zip(e[1], t[1])):
            sub = f"{where}[{i}]"
            out.extend(
                compare(x, y, loose=loose, structure_only=structure_only, where=sub, floor=floor)
            )
        return out
    if structure_only or k in ("N", "o"):
        return []
    if k in ("f", "c"):
        x, y = np.asarray(e[1]), np.asarray(t[1])
        dt = "float64" if k == "f" else "complex128"
        if _close(x.reshape(1), y.reshape(1), dt, loose, floor):
            return [("value", f"{where}: ember {e[1]!r} vs torch {t[1]!r}")]
        return []
    if e[1] != t[1]:
        return [("value", f"{where}: ember {e[1]!r} vs torch {t[1]!r}")]
    return []


# Input dtypes by the precision a result computed from them can have (integers: float32).
_RANK = {"float16": 0, "bfloat16": 0, "float32": 1, "complex64": 1, "float64": 2,
         "complex128": 2}  # fmt: skip
_RANK_TOL = {0: TOL["bfloat16"], 1: TOL["float32"], 2: (0.0, 0.0)}


def input_floor(call: dict):
    """The tolerance of the least precise tensor input: a result written into a wider out=
    tensor is no more exact than the dtype it was computed in."""
    text = json.dumps(call)
    ranks = [_RANK.get(d, 1) for d in re.findall(r'"d": "(\w+)"', text)]
    return _RANK_TOL[min(ranks)] if ranks else (0.0, 0.0)


def _kind(c) -> str:
    return {
        "T": "Tensor", "b": "bool", "i": "int", "f": "float", "c": "complex", "N": "None",
        "s": "str", "L": "sequence", "d": "dtype", "o": "object",
    }.get(c[0], c[0])  # fmt: skip


def options_for(path: str):
    """(loose, structure_only, ties) for comparing the results of path."""
    name = short_name(path)
    bare = name.strip("_")
    loose = any(w in path for w in LOOSE_WORDS)
    structure = name in STRUCTURE_ONLY or bare in STRUCTURE_ONLY
    ties = name in TIE_OPS or bare in TIE_OPS
    return loose, structure, ties


def filter_ties(mismatches):
    """Drops integer value mismatches (index outputs of ops with ties)."""
    return [m for m in mismatches if not (m[0] == "value" and len(m) > 2 and m[2] == "int64")]
