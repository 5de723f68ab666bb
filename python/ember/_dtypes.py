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


class finfo:
    """Machine limits of a floating point dtype (ember.finfo(ember.float32).eps, ...)."""

    def __init__(self, type=None):
        if type is None:
            type = _C.get_default_dtype()
        if not isinstance(type, _C.dtype) or not (type.is_floating_point or type.is_complex):
            raise TypeError(f"[finfo] expected a floating point or complex dtype, got {type}")
        if type.is_complex:
            type = type.to_real()
        self.dtype = str(type).replace("ember.", "")
        if type is _C.bfloat16:
            # bfloat16: 8 exponent bits like float32, 7 explicit mantissa bits.
            self.bits = 16
            self.eps = 2.0**-7
            self.max = _builtin_float.fromhex("0x1.fep127")
            self.min = -self.max
            self.tiny = self.smallest_normal = 2.0**-126
            self.resolution = 0.01
        else:
            info = np.finfo(self.dtype)
            self.bits = info.bits
            self.eps = _builtin_float(info.eps)
            self.max = _builtin_float(info.max)
            self.min = _builtin_float(info.min)
            self.tiny = self.smallest_normal = _builtin_float(info.smallest_normal)
            self.resolution = _builtin_float(info.resolution)

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype (ember.iinfo(ember.int32).max, ...)."""

    def __init__(self, type):
        if not isinstance(type, _C.dtype) or type.is_floating_point or type.is_complex:
            raise TypeError(f"[iinfo] expected an integer dtype, got {type}")
        self.dtype = str(type).replace("ember.", "")
        info = np.iinfo(self.dtype) if type is not _C.bool else None
        if info is None:
            raise TypeError("[iinfo] ember.bool is not an integer dtype")
        self.bits = info.bits
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
