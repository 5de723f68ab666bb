"""dtype aliases and numeric limits (ember.finfo / ember.iinfo), as in PyTorch."""

import builtins

import numpy as np

from . import _C

float = _C.float32
double = _C.float64
half = _C.float16
cfloat = _C.complex64
cdouble = _C.complex128
short = _C.int16
int = _C.int32
long = _C.int64
uint8 = _C.uint8
bool = _C.bool

_builtin_float = builtins.float


def _as_dtype(type, who):
    if type is None:
        return _C.get_default_dtype()
    if type in (builtins.float, builtins.int, builtins.bool, builtins.complex):
        return {builtins.float: _C.float64, builtins.int: _C.int64, builtins.bool: _C.bool,
                builtins.complex: _C.complex128}[type]
    if not isinstance(type, _C.dtype):
        got = builtins.type(type).__name__
        raise TypeError(f"ember.{who}() expected an ember.dtype, got {got}")
    return type


class finfo:
    """Machine limits of a floating point (or complex: its real part) dtype, as torch.finfo:
    bits, eps, max, min, tiny / smallest_normal, resolution and dtype (a name string)."""

    def __init__(self, type=None):
        type = _as_dtype(type, "finfo")
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(
                "ember.finfo() requires a floating point input type. Use ember.iinfo to handle "
                "'ember.finfo'"
            )
        if type.is_complex:
            type = type.to_real()
        self.dtype = type._name
        if type is _C.bfloat16:
            # 8 exponent bits like float32 and 7 explicit mantissa bits.
            self.bits = 16
            self.eps = 2.0**-7
            self.max = _builtin_float.fromhex("0x1.fep127")
            self.min = -self.max
            self.tiny = self.smallest_normal = 2.0**-126
            self.resolution = 0.01
        else:
            info = np.finfo(self.dtype)
            self.bits = builtins.int(info.bits)
            self.eps = _builtin_float(info.eps)
            self.max = _builtin_float(info.max)
            self.min = _builtin_float(info.min)
            self.tiny = self.smallest_normal = _builtin_float(info.smallest_normal)
            # 10 ** -digits10, as PyTorch (NumPy's own resolution is rounded to the dtype).
            self.resolution = 10.0 ** -builtins.int(info.precision)

    def _key(self):
        return (self.dtype, self.bits, self.eps, self.max, self.min, self.tiny, self.resolution)

    def __eq__(self, other):
        return isinstance(other, finfo) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype, as torch.iinfo: bits, min, max and dtype (a name string)."""

    def __init__(self, type):
        type = _as_dtype(type, "iinfo")
        if type is _C.bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError(
                "ember.iinfo() requires an integer input type. Use ember.finfo to handle "
                "'ember.iinfo'"
            )
        self.dtype = type._name
        info = np.iinfo(self.dtype)
        self.bits = builtins.int(info.bits)
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)

    def __eq__(self, other):
        return isinstance(other, iinfo) and (self.dtype, self.bits) == (other.dtype, other.bits)

    def __hash__(self):
        return hash((self.dtype, self.bits))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
