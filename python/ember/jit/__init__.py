"""ember.jit: PyTorch's torch.jit names, with the meaning they have when TorchScript is off.

Ember has no TorchScript compiler (docs/design/compile-jit.md). Every name here behaves as
``torch.jit`` does in a PyTorch process started with ``PYTORCH_JIT=0``, PyTorch's own switch for
running scripted code as plain Python:

- ``script``, ``trace`` and ``trace_module`` return what they were given, so a scripted
  function or module runs eagerly and gives the eager results;
- the decorators that steer the compiler (``ignore``, ``unused``, ``export``, ``interface``,
  ``script_if_tracing``, ``_overload_method``) return the function unchanged;
- ``is_scripting()`` and ``is_tracing()`` are False, ``annotate`` returns its value,
  ``Attribute`` its value, ``fork`` runs the call and returns a completed Future.

What needs a TorchScript archive cannot work and raises, saying what to do instead: ``save``
(ember.save of a state_dict, or ember.onnx.export) and ``load`` (a TorchScript archive holds
code, and Ember never runs code from a file it loads).
"""

from __future__ import annotations

import builtins
import typing
from typing import Any, Callable

__all__ = ["Attribute", "Error", "Final", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "fork", "freeze", "ignore", "interface",
           "is_scripting", "is_tracing", "isinstance", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "save", "script", "script_if_tracing", "trace",
           "trace_module", "unused", "wait"]

Final = typing.Final


class Error(RuntimeError):
    """torch.jit.Error: the exception TorchScript raises."""


def _nn_module():
    from ..nn import Module

    return Module


class ScriptModule:
    """The type of a scripted module. Ember never makes one (``script`` returns the module
    itself), so ``isinstance(m, ember.jit.ScriptModule)`` is False, as with ``PYTORCH_JIT=0``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "ember.jit.ScriptModule: Ember has no TorchScript; subclass ember.nn.Module instead"
        )


class ScriptFunction:
    """The type of a scripted function; Ember never makes one (``script`` returns the function)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("ember.jit.ScriptFunction: Ember has no TorchScript; call the function")


def _check_scriptable(obj, where: str) -> None:
    if not callable(obj):
        raise RuntimeError(
            f"{where}: expected a function or a Module, got {type(obj).__name__}"
        )


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function, a Module or a class) to run as Python: PyTorch's
    ``torch.jit.script`` when TorchScript is off."""
    if not builtins.isinstance(obj, type):
        _check_scriptable(obj, "ember.jit.script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs: bool = True):
    """Returns ``func`` to run as Python: ``torch.jit.trace`` when TorchScript is off. To record
    a graph of a model, use ember.onnx.export."""
    _check_scriptable(func, "ember.jit.trace")
    return func


def trace_module(mod, inputs, optimize=None, check_trace: bool = True, check_inputs=None,
                 check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
                 _module_class=None, _compilation_unit=None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True):
    """Returns ``mod``: ``torch.jit.trace_module`` when TorchScript is off."""
    if not builtins.isinstance(mod, _nn_module()):
        raise AttributeError("expected torch.nn.Module as the first argument")
    return mod


def script_if_tracing(fn: Callable) -> Callable:
    return fn


def ignore(drop=False, **kwargs):
    """``@ignore`` or ``@ignore(drop=True)``: the function stays Python, which it already is."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    return fn


def export(fn: Callable) -> Callable:
    return fn


def interface(obj):
    return obj


def _overload(fn: Callable) -> Callable:
    return fn


def _overload_method(fn: Callable) -> Callable:
    return fn


def is_scripting() -> bool:
    """False: Ember code always runs as Python."""
    return False


def is_tracing() -> bool:
    """False: ember.jit.trace records nothing (ember.onnx.export has its own tracing flag)."""
    return False


def annotate(the_type, the_value):
    return the_value


def Attribute(value, type):  # noqa: A002 (PyTorch's parameter name)
    return value


def _matches(obj, target) -> bool:
    origin = typing.get_origin(target)
    if origin is None:
        if target is Any:
            return True
        if target is None or target is type(None):
            return obj is None
        return builtins.isinstance(obj, target)
    args = typing.get_args(target)
    if origin is typing.Union:
        return builtins.any(_matches(obj, a) for a in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return builtins.all(_matches(x, args[0]) for x in obj) if args else True
    if origin is dict:
        if not args:
            return True
        return builtins.all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if not args:
            return True
        if builtins.len(args) == 2 and args[1] is Ellipsis:
            return builtins.all(_matches(x, args[0]) for x in obj)
        return builtins.len(obj) == builtins.len(args) and builtins.all(
            _matches(x, a) for x, a in builtins.zip(obj, args))
    return True


def isinstance(obj, target_type) -> bool:
    """``torch.jit.isinstance``: ``isinstance`` that also checks the element types of
    ``List[...]``, ``Dict[...]``, ``Tuple[...]`` and ``Optional[...]``."""
    return _matches(obj, target_type)


def fork(func: Callable, *args: Any, **kwargs: Any):
    """Runs ``func(*args, **kwargs)`` and returns a completed ember.futures.Future of its result
    (its exception, if it raised), which ``wait`` unpacks."""
    from ..futures import Future

    future = Future()
    try:
        future.set_result(func(*args, **kwargs))
    except Exception as error:  # delivered by wait(), as a forked task's error is
        future.set_exception(error)
    return future


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """Returns ``mod`` after PyTorch's checks: it must be a Module in eval mode."""
    if not builtins.isinstance(mod, _nn_module()):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use torch.jit.script or "
            "torch.jit.trace to script your 'nn.Module'."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. Please call .eval() "
            "on your module before freezing."
        )
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Returns ``mod`` in eval mode: Ember's inference fastpaths need no rewriting."""
    if not builtins.isinstance(mod, _nn_module()):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule or nn.Module as input."
        )
    return mod.eval()


_onednn_fusion = False


def enable_onednn_fusion(enabled: bool) -> None:
    """Records the flag; Ember's oneDNN fusions (conv, linear epilogues) are always on."""
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _onednn_fusion


def save(m, f, _extra_files=None) -> None:
    raise RuntimeError(
        "ember.jit.save: Ember has no TorchScript, so there is no scripted archive to write. "
        "Save the weights with ember.save(model.state_dict(), f), or the graph with "
        "ember.onnx.export(model, args, f)."
    )


def load(f, map_location=None, _extra_files=None, _restore_shapes: bool = False):
    raise RuntimeError(
        "ember.jit.load: a TorchScript archive holds code, and Ember never runs code from a "
        "file it loads. Load a state_dict with ember.load(f) and model.load_state_dict(...)."
    )
