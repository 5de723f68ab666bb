"""Python-level Tensor methods: only what is naturally Python (printing). Conversions, the
number protocol, pickling and the NumPy / DLPack protocols are bound in C++
(csrc/bindings/conversion.cpp, numpy_interop.cpp, dlpack.cpp)."""

from . import _tensor_str
from ._C import Tensor


def _repr(self, *, tensor_contents=None):
    return _tensor_str.tensor_str(self)


Tensor.__repr__ = _repr
Tensor.__str__ = _repr
