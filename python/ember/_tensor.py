"""Tensor methods that are naturally Python: printing, conversion to Python objects, iteration."""

from . import _C, _tensor_str
from ._C import Tensor


def _repr(self, *, tensor_contents=None):
    return _tensor_str.tensor_str(self)


Tensor.__repr__ = _repr
Tensor.__str__ = _repr


def _tolist(self):
    if self.dtype is _C.bfloat16:
        return self.float().numpy().tolist()
    return self.numpy().tolist()


def _item(self):
    if self.numel() != 1:
        raise RuntimeError(
            f"[item] a Tensor with {self.numel()} elements cannot be converted to Scalar"
        )
    return _tolist(self.reshape(()))


Tensor.tolist = _tolist
Tensor.item = _item


def _to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, memory_format=None):
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _C.device)):
            device = a
        else:
            raise TypeError(f"[to] received an invalid combination of arguments: {args}")
    if device is not None and _C.device(device).type != "cpu":
        raise RuntimeError(
            f"[to] device '{device}' is not available: this build of Ember has no CUDA "
            "backend loaded (ember.cuda.is_available() is False)"
        )
    return self._to_dtype(dtype if dtype is not None else self.dtype, copy)


Tensor.to = _to
for _name, _dt in [
    ("float", _C.float32), ("double", _C.float64), ("half", _C.float16),
    ("bfloat16", _C.bfloat16), ("int", _C.int32), ("long", _C.int64), ("short", _C.int16),
    ("char", _C.int8), ("byte", _C.uint8), ("bool", _C.bool), ("cfloat", _C.complex64),
    ("cdouble", _C.complex128),
]:
    setattr(Tensor, _name, (lambda dt: lambda self: self._to_dtype(dt))(_dt))
