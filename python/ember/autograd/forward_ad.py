"""Forward-mode automatic differentiation (``torch.autograd.forward_ad``).

A dual tensor carries a tangent at a dual level; every differentiable op on it also computes the
tangent of its result (the Jacobian-vector product). The work is C++: each op's node holds its
forward derivative (csrc/autograd/forward_ad.h, docs/design/forward-ad.md).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import ember
from ember._C import _forward_ad as _fw
from ember.autograd.grad_mode import _DecoratorContextManager

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

# The open levels, innermost last (levels are process-wide, as PyTorch's).
_levels: list[int] = []
_levels_lock = threading.Lock()


def _current_level() -> int:
    with _levels_lock:
        return _levels[-1] if _levels else -1


def enter_dual_level() -> int:
    """Opens a new dual level and returns its index; dual tensors made at it keep their tangents
    until it is exited."""
    with _levels_lock:
        level = _fw.enter_dual_level()
        _levels.append(level)
        return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Closes ``level`` (the innermost one by default): every tangent at it is dropped."""
    with _levels_lock:
        if level is None:
            if not _levels:
                raise RuntimeError(
                    "Trying to exit a forward AD level that was not the last one that was created. "
                    "This is not supported."
                )
            level = _levels[-1]
        if not _levels or _levels[-1] != level:
            raise RuntimeError(
                "Trying to exit a forward AD level that was not the last one that was created. "
                "This is not supported."
            )
        _fw.exit_dual_level(level)
        _levels.pop()


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level``."""
    if level is None:
        level = _current_level()
    if level < 0:
        raise RuntimeError(
            "To create a dual Tensor, you must first enter a dual level with "
            "ember.autograd.forward_ad.dual_level() (or enter_dual_level())."
        )
    if not isinstance(tensor, ember.Tensor) or not isinstance(tangent, ember.Tensor):
        raise TypeError(
            "make_dual(): expected tensor and tangent to be Tensors, got "
            f"{type(tensor).__name__} and {type(tangent).__name__}"
        )
    return _fw.make_dual(tensor, tangent, level)


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without the level's tangent) and the tangent
    (None when the tensor has none at that level)."""

    primal: ember.Tensor
    tangent: ember.Tensor | None


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """Splits a dual tensor into (primal, tangent) at ``level`` (the innermost by default)."""
    if level is None:
        level = _current_level()
    if level < 0 or not isinstance(tensor, ember.Tensor):
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _fw.unpack_dual(tensor, level)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """``with dual_level():`` opens a level for the block and closes it after, dropping the
    tangents made in it."""

    def __enter__(self):
        self._level = enter_dual_level()
        return self._level

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level(level=self._level)
