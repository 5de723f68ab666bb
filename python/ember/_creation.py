"""ember.tensor / as_tensor / asarray: tensors from Python data with PyTorch's dtype inference."""

import builtins

import numpy as np

from . import _C


def _infer_dtype(data):
    """The dtype PyTorch infers for nested Python data: the highest category present."""
    kinds = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, _C.Tensor):
            kinds.add(item.dtype)
        elif isinstance(item, builtins.bool):
            kinds.add("b")
        elif isinstance(item, builtins.int):
            kinds.add("i")
        elif isinstance(item, builtins.float):
            kinds.add("f")
        elif isinstance(item, builtins.complex):
            kinds.add("c")
        elif isinstance(item, np.ndarray):
            kinds.add(np.dtype(item.dtype))
        elif isinstance(item, np.generic):
            kinds.add(np.dtype(type(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            raise TypeError(
                f"[tensor] Could not infer dtype of {type(item).__name__}"
            )
    default = _C.get_default_dtype()
    order = {"b": 0, "i": 1, "f": 2, "c": 3}
    best = None
    for k in kinds:
        if isinstance(k, str):
            cand = {"b": _C.bool, "i": _C.int64, "f": default, "c": default.to_complex()}[k]
        elif isinstance(k, _C.dtype):
            cand = k
        else:
            cand = _C.from_numpy(np.empty(0, dtype=k)).dtype
        best = cand if best is None else _C.promote_types(best, cand)
    del order
    return best if best is not None else default


def _to_numpy(data, dtype):
    if isinstance(data, _C.Tensor):
        return data
    np_dtype = None if dtype is _C.bfloat16 else _np_dtype(dtype)
    arr = np.array(_unwrap(data), dtype=np_dtype)
    return arr


def _unwrap(data):
    if isinstance(data, _C.Tensor):
        return data.numpy() if data.dtype is not _C.bfloat16 else data.float().numpy()
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    return data


def _np_dtype(dtype):
    return np.dtype(str(dtype).replace("ember.", ""))


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested sequences, numbers, NumPy arrays)."""
    if isinstance(data, _C.Tensor):
        out = data.clone()
        return out if dtype is None else out.to(dtype)
    if isinstance(data, np.ndarray):
        native = data if data.dtype.isnative else data.astype(data.dtype.newbyteorder("="))
        src = _C.from_numpy(np.ascontiguousarray(native))
        out = src.clone()
        return out if dtype is None else out.to(dtype)
    inferred = _infer_dtype(data) if dtype is None else dtype
    target = _C.float32 if inferred is _C.bfloat16 else inferred
    arr = np.array(_unwrap(data), dtype=_np_dtype(target))
    out = _C.from_numpy(arr).clone()
    return out if target is inferred else out.to(inferred)


def as_tensor(data, dtype=None, device=None):
    """Converts data to a tensor, sharing memory with a Tensor or NumPy array when possible."""
    if isinstance(data, _C.Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype.isnative:
        t = _C.from_numpy(data)
        return t if dtype is None else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """ember.asarray, following torch.asarray's sharing rules (copy=None shares when possible)."""
    if copy:
        return tensor(obj, dtype=dtype, device=device)
    return as_tensor(obj, dtype=dtype, device=device)
