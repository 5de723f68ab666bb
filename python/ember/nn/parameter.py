"""``ember.nn.Parameter`` and ``ember.nn.Buffer``, as ``torch.nn.Parameter`` / ``torch.nn.Buffer``.

A Parameter is a Python subclass of the C++-bound ``ember.Tensor``: ``Tensor._make_subclass``
builds the instance around a detached alias of the data (same storage, no history), so
``Parameter(t)`` shares ``t``'s memory, is a leaf and requires grad by default. Ops on a
Parameter return plain Tensors; in-place ops return the Parameter itself.
"""

from __future__ import annotations

from collections import OrderedDict

import ember
from ember import Tensor

__all__ = ["Parameter", "Buffer"]


class _ParameterMeta(type(Tensor)):
    # A tensor flagged ``_is_param`` (set by a subclass that cannot derive from Parameter)
    # counts as a Parameter, as in PyTorch.
    def __instancecheck__(cls, instance) -> bool:
        if cls is Parameter and isinstance(instance, Tensor):
            if getattr(instance, "_is_param", False):
                return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that is a module parameter: assigning it as a Module attribute registers it in
    ``parameters()``. ``requires_grad`` defaults to True."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): expected data to be an ember.Tensor, got {type(data).__name__}"
            )
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        # Everything is done in __new__; this keeps ember.Tensor.__init__ from running again.
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    # ember.Tensor sets __str__ to its repr; print(p) shows the prefix too, as in PyTorch.
    __str__ = __repr__

    def __reduce_ex__(self, proto):
        state = dict(self.__dict__)
        if not state:
            return (_rebuild_parameter, (self.data, self.requires_grad, OrderedDict()))
        return (
            _rebuild_parameter_with_state,
            (self.data, self.requires_grad, OrderedDict(), state),
        )


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = Parameter(data, requires_grad)
    param.__dict__.update(state)
    return param


class _BufferMeta(type(Tensor)):
    # ``Buffer(t)`` returns a plain Tensor flagged ``_is_buffer``; isinstance sees the flag.
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer and isinstance(instance, Tensor):
            if getattr(instance, "_is_buffer", False):
                return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer when assigned to a Module attribute (``persistent`` says
    whether it enters the state_dict). The result is a detached plain Tensor."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = ember.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
