"""The legacy tensor-type classes: ``ember.FloatTensor``, ``LongTensor``, ... as PyTorch's.

- ``LongTensor(2, 3)`` (or a ``Size``): an uninitialised tensor of that shape;
  ``LongTensor([1, 2])`` (any sequence or array): a tensor of that data;
  ``LongTensor()``: an empty one; ``LongTensor(t)``: ``t`` itself when it has the type's dtype.
- ``isinstance(t, ember.FloatTensor)`` tests the dtype, and ``t.type(ember.LongTensor)``
  converts, as in PyTorch.
"""

from __future__ import annotations

import ember

__all__ = [
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor",
]


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, ember.Tensor) and not obj.is_quantized and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        if device is not None and ember.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{ember.device(device).type} was passed")
        if not args:
            return ember.empty(0, dtype=cls.dtype)
        if len(args) == 1:
            (arg,) = args
            if isinstance(arg, ember.Tensor):
                if arg.dtype != cls.dtype:
                    raise TypeError(f"expected {cls.__name__[:-6]} (got {arg.dtype})")
                return arg
            if isinstance(arg, ember.Size):
                return ember.empty(tuple(arg), dtype=cls.dtype)
            if isinstance(arg, int) and not isinstance(arg, bool):
                return ember.empty(arg, dtype=cls.dtype)
            return ember.tensor(arg, dtype=cls.dtype)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return ember.empty(args, dtype=cls.dtype)
        raise TypeError(f"{cls.__name__}(): expected a size (ints), a sequence of data or a "
                        f"tensor, got ({', '.join(type(a).__name__ for a in args)})")

    def __repr__(cls):
        return f"<class 'ember.{cls.__name__}'>"


def _make(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "ember",
                                        "is_cuda": False, "is_sparse": False})


FloatTensor = _make("FloatTensor", ember.float32)
DoubleTensor = _make("DoubleTensor", ember.float64)
HalfTensor = _make("HalfTensor", ember.float16)
BFloat16Tensor = _make("BFloat16Tensor", ember.bfloat16)
ByteTensor = _make("ByteTensor", ember.uint8)
CharTensor = _make("CharTensor", ember.int8)
ShortTensor = _make("ShortTensor", ember.int16)
IntTensor = _make("IntTensor", ember.int32)
LongTensor = _make("LongTensor", ember.int64)
BoolTensor = _make("BoolTensor", ember.bool)
