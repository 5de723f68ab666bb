"""ember.compiler: PyTorch's torch.compiler queries and decorators for an eager library.

Ember never compiles (ember.compile returns the model ready to run eagerly; see
docs/design/compile-jit.md), so nothing is ever being compiled or exported, and the decorators
that keep code out of a compiled graph return it unchanged.
"""

from __future__ import annotations

from typing import Callable

from .._compile import compile  # noqa: F401  (torch.compiler.compile is torch.compile)

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "disable", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "reset"]


def is_compiling() -> bool:
    """False: Ember code always runs eagerly."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def is_exporting() -> bool:
    return False


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None):
    """``@disable`` or ``@disable(recursive=False)``: keeps ``fn`` out of compilation; Ember
    runs it eagerly as it runs everything."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn: Callable) -> Callable:
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    return fn


def reset() -> None:
    """Clears compilation caches, of which Ember keeps none."""
