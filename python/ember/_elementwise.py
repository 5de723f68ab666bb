"""Elementwise entry points that are naturally Python: `where`'s one- and three-argument forms."""

from . import _C
from ._C import Tensor

__all__ = ["where"]


def where(condition, input=None, other=None, *, out=None):
    """where(condition, input, other, *, out=None) -> Tensor

    Elements of `input` where `condition` is True and of `other` elsewhere (broadcast together;
    either may be a Python number). `where(condition)` is `nonzero(condition, as_tuple=True)`.
    """
    if input is None and other is None:
        if out is not None:
            raise TypeError("[where] where(condition) does not take out=")
        import ember  # nonzero belongs to the indexing family; resolved at call time

        return ember.nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("[where] where expected both `input` and `other`, or neither")
    return _C._where(condition, input, other, out=out)


def _tensor_where(self, condition, y):
    return _C._where(condition, self, y)


Tensor.where = _tensor_where
