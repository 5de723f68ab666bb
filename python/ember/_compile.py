"""ember.compile: PyTorch's torch.compile entry point, for an eager library.

Ember has no graph compiler: its ops are already C++ kernels, and the layers that gain most from
fusion (attention, the transformer encoder, conv + bias + activation) are fused by hand. So
``ember.compile`` does what ``torch.compile(..., disable=True)`` does, but keeps the shape of
PyTorch's answer, because programs depend on it:

- a module comes back wrapped in an ``OptimizedModule`` that holds it as ``_orig_mod``, so
  ``state_dict()`` keys gain the ``_orig_mod.`` prefix that PyTorch checkpoints of compiled
  models carry (and that programs such as nanoGPT strip when they load), and attribute reads
  and writes reach the original module;
- a function comes back as a wrapper that calls it, with ``_torchdynamo_orig_callable`` set;
- the arguments are checked as PyTorch checks them.

The results are the eager results, bit for bit. docs/design/compile-jit.md says why there is
no compiler behind this.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from .nn import Module

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _check_arguments(backend, mode, options) -> None:
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"ember.compile: options must be a dict, got {type(options).__name__}")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(
            f"ember.compile: backend must be a name or a callable, got {type(backend).__name__}"
        )


class OptimizedModule(Module):
    """A module returned by ``ember.compile``: it runs ``_orig_mod`` and forwards every
    other attribute to it, as PyTorch's ``torch._dynamo.eval_frame.OptimizedModule``."""

    _own_attributes = frozenset({"_orig_mod", "forward", "__dict__"})

    def __init__(self, mod):
        object.__setattr__(self, "_initialized", False)
        super().__init__()
        self._orig_mod = mod  # registered as the only child
        self.forward = mod.__call__
        object.__setattr__(self, "_initialized", True)

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        if self.__dict__.get("_initialized"):
            self._orig_mod.training = value

    def __getattr__(self, name: str) -> Any:
        # Reached only when normal lookup fails; before _orig_mod is registered there is
        # nothing to forward to.
        original = self.__dict__.get("_modules", {}).get("_orig_mod")
        if original is None:
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        return original if name == "_orig_mod" else getattr(original, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            hasattr(type(self), name)
            or name in self._own_attributes
            or not self.__dict__.get("_initialized")
        ):
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in self._own_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __len__(self) -> int:
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(
                f"{type(self._orig_mod).__name__} does not support len()"
            ) from None

    def __dir__(self):
        own = self._orig_mod.__dir__()
        return own + [a for a in super().__dir__() if a not in own]

    def __reduce__(self):
        return (self.__class__, (self._orig_mod,))


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    name: str | None = None,
    disable: bool = False,
    recompile_limit: int | None = None,
    isolate_recompiles: bool = False,
    dynamic_shapes: Any = None,
):
    """Returns ``model`` ready to call, as ``torch.compile`` does; Ember runs it eagerly.

    A module is wrapped in an ``OptimizedModule`` (its ``_orig_mod`` is ``model``), a function
    in a wrapper that calls it. Used bare (``@ember.compile``) or with arguments
    (``@ember.compile(mode="max-autotune")``) it is a decorator. ``disable=True`` returns
    ``model`` itself, as in PyTorch. ``fullgraph``, ``dynamic``, ``backend``, ``name``,
    ``recompile_limit``, ``isolate_recompiles`` and ``dynamic_shapes`` are PyTorch's and have
    nothing to steer here; an unknown keyword is a TypeError, as in PyTorch.
    """
    if model is None:

        def decorate(fn):
            if fn is None:
                raise RuntimeError("Model can't be None")
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, dynamic_shapes=dynamic_shapes)

        return decorate
    _check_arguments(backend, mode, options)
    if not callable(model):
        raise TypeError(
            f"ember.compile: expected a callable or a Module, got {type(model).__name__}"
        )
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kw):
        return model(*args, **kw)

    compiled._torchdynamo_orig_callable = model
    return compiled


def module_compile(module, *args: Any, **kwargs: Any) -> None:
    """``nn.Module.compile``: compiles the module's call in place (PyTorch's method). In Ember the
    compiled call is the eager call, so the module's outputs, hooks and state_dict keys stay as
    they were."""
    module._compiled_call_impl = compile(module._call_impl, *args, **kwargs)
