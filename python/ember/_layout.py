"""ember.layout and ember.strided: the memory layout of a tensor, as torch.layout.

Ember's tensors are dense and strided; there is no sparse or mkldnn layout. Factories accept
``layout=None`` or ``layout=ember.strided`` and refuse anything else with a TypeError naming
the op (bindings/factory_args.cpp), and ``Tensor.layout`` is ``ember.strided``.
"""

from __future__ import annotations


class layout:  # noqa: N801 (PyTorch's name)
    """A tensor memory layout. The only instance is ``ember.strided``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self):
        # Pickles by name, so a loaded layout is the same object.
        return (_by_name, (self._name,))

    def __setattr__(self, name, value):
        raise AttributeError("ember.layout objects are immutable")


def _by_name(name: str) -> layout:
    if name != "strided":
        raise ValueError(f"ember has no layout {name!r}; its tensors are strided")
    return strided


strided = layout("strided")
