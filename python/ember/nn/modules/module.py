"""``ember.nn.Module``: the base class of every layer, with PyTorch's semantics for attribute
routing (parameters, buffers, submodules), state_dict, hooks, dtype conversion and repr."""

from __future__ import annotations

import inspect
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import ember
from ember import Tensor
from ember.nn.parameter import Buffer, Parameter
from ember.utils.hooks import RemovableHandle

from . import _global_hooks as _gh
from ._call_hooks import _call_with_hooks
from ._global_hooks import (  # noqa: F401 (re-exported, as torch.nn.modules.module)
    _WrappedHook,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from ._state_dict import _IncompatibleKeys, _StateDictMixin  # noqa: F401

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_backward_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
    "Module",
]


def _typename(obj) -> str:
    """``torch.typename``: 'ember.FloatTensor' for a tensor, the qualified class name else."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return module + "." + qualname


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _forward_unimplemented(self, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking, memory_format) from Module.to's overloads:
    to(device=None, dtype=None, non_blocking=False), to(dtype, non_blocking=False),
    to(tensor, non_blocking=False), to(memory_format=...)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    tensor = kwargs.pop("tensor", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        tensor = rest.pop(0)
    elif rest and isinstance(rest[0], ember.dtype):
        dtype = rest.pop(0)
    elif rest and (isinstance(rest[0], (str, int, ember.device)) and not isinstance(rest[0], bool)):
        device = rest.pop(0)
        if rest and isinstance(rest[0], ember.dtype):
            dtype = rest.pop(0)
    elif rest and rest[0] is None:
        rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(
            "to() received an invalid combination of arguments - got "
            f"({', '.join(type(a).__name__ for a in args)})"
        )
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    if device is not None and not isinstance(device, ember.device):
        device = ember.device(device)
    if dtype is not None and not isinstance(dtype, ember.dtype):
        raise TypeError(f"to() expected dtype to be an ember.dtype, got {type(dtype).__name__}")
    return device, dtype, non_blocking, memory_format


class Module(_StateDictMixin):
    """Base class for all neural network modules (``torch.nn.Module``)."""

    dump_patches: bool = False
    # Saved in state_dict's ``_metadata`` so that _load_from_state_dict can convert old formats.
    _version: int = 1
    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _backward_pre_hooks: dict[int, Callable]
    _backward_hooks: dict[int, Callable]
    _is_full_backward_hook: bool | None
    _forward_hooks: dict[int, Callable]
    _forward_hooks_with_kwargs: dict[int, bool]
    _forward_hooks_always_called: dict[int, bool]
    _forward_pre_hooks: dict[int, Callable]
    _forward_pre_hooks_with_kwargs: dict[int, bool]
    _state_dict_hooks: dict[int, Callable]
    _load_state_dict_pre_hooks: dict[int, Callable]
    _state_dict_pre_hooks: dict[int, Callable]
    _load_state_dict_post_hooks: dict[int, Callable]
    _modules: dict[str, Module | None]
    call_super_init: bool = False
    _compiled_call_impl: Callable | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        # object.__setattr__ skips Module.__setattr__'s routing for the bookkeeping fields.
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Adds a buffer (state that is not a parameter, e.g. BatchNorm's running_mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        elif not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        elif "." in name:
            raise KeyError('buffer name can\'t contain "."')
        elif name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        elif hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        elif tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(ember Tensor or None required)"
            )
        else:
            for hook in _gh._global_buffer_registration_hooks.values():
                output = hook(self, name, tensor)
                if output is not None:
                    tensor = output
            self._buffers[name] = tensor
            if persistent:
                self._non_persistent_buffers_set.discard(name)
            else:
                self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Adds a parameter (None registers the name without a value, e.g. a disabled bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        elif not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        elif "." in name:
            raise KeyError('parameter name can\'t contain "."')
        elif name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        elif hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(ember.nn.Parameter or None required)"
            )
        elif param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            for hook in _gh._global_parameter_registration_hooks.values():
                output = hook(self, name, param)
                if output is not None:
                    param = output
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Adds a child module, reachable as the attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        elif not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        elif hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        elif "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        elif name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _gh._global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for add_module."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` ('' is self)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replaces (or with strict=False, adds) the submodule at the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn, recurse=True):
        """Applies ``fn`` to every parameter, gradient and buffer. A converted parameter keeps
        its identity (its data is replaced through ``param.data = ...``), as PyTorch does by
        default, so optimizers built before ``.to()`` keep working."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with ember.no_grad():
                param_applied = fn(param)
            param_grad = param.grad
            if param_applied is not param:
                param.data = param_applied
            if param_grad is not None:
                with ember.no_grad():
                    grad_applied = fn(param_grad)
                if grad_applied is not param_grad:
                    param_grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]):
        """Calls ``fn`` on every submodule (children first) and then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse: bool = True):
        return self._apply(lambda t: ember.empty_like(t, device=device), recurse=recurse)

    def to(self, *args, **kwargs):
        """Moves / casts parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``. Only floating point or complex dtypes are
        accepted, and only floating point / complex tensors change dtype."""
        device, dtype, non_blocking, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                    f"dtype={dtype}"
                )
            if dtype.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose design may "
                    "change, and some modules might not work as expected when using complex "
                    "tensors as parameters or buffers.",
                    stacklevel=2,
                )

        def convert(t):
            target = dtype if (t.is_floating_point() or t.is_complex()) else None
            if target is None:
                target = t.dtype
            # A memory format applies to the 4-D / 5-D tensors (conv weights), as PyTorch's.
            layout = {"memory_format": memory_format} if memory_format is not None and \
                t.dim() in (4, 5) else {}
            if device is None:
                return t.to(dtype=target, non_blocking=non_blocking, **layout)
            return t.to(device=device, dtype=target, non_blocking=non_blocking, **layout)

        return self._apply(convert)

    # ------------------------------------------------------------------ hooks
    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> tuple | None`` runs when the gradients with respect
        to the module's outputs are known, and may replace them."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated non-full hook: registered on the grad_fn of the module's output."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> tuple | None`` runs when the gradients with
        respect to the module's inputs are known, and may replace grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _get_backward_hooks(self):
        full_backward_hooks: list[Callable] = []
        if _gh._global_is_full_backward_hook is True:
            full_backward_hooks += _gh._global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full_backward_hooks += self._backward_hooks.values()
        non_full_backward_hooks: list[Callable] = []
        if _gh._global_is_full_backward_hook is False:
            non_full_backward_hooks += _gh._global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full_backward_hooks += self._backward_hooks.values()
        return full_backward_hooks, non_full_backward_hooks

    def _get_backward_pre_hooks(self):
        return [*_gh._global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with with_kwargs) runs
        before forward and may return replacement args (or (args, kwargs))."""
        handle = RemovableHandle(
            self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs
        )
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs after
        forward and may return a replacement output. ``always_call`` runs it even when forward
        raises."""
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        # Fast path: no hooks anywhere.
        if not (
            self._backward_hooks
            or self._backward_pre_hooks
            or self._forward_hooks
            or self._forward_pre_hooks
            or _gh._global_backward_pre_hooks
            or _gh._global_backward_hooks
            or _gh._global_forward_hooks
            or _gh._global_forward_pre_hooks
        ):
            return forward_call(*args, **kwargs)

        return _call_with_hooks(self, forward_call, args, kwargs)

    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__: Callable[..., Any] = _wrapped_call_impl

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        # Modules pickled by older versions may lack the newer hook dicts.
        for name in (
            "_forward_pre_hooks",
            "_forward_pre_hooks_with_kwargs",
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_state_dict_hooks",
            "_state_dict_pre_hooks",
            "_load_state_dict_pre_hooks",
            "_load_state_dict_post_hooks",
            "_backward_pre_hooks",
        ):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: parameters, buffers and submodules live in
        # their own dicts, not in __dict__.
        if "_parameters" in self.__dict__:
            _parameters = self.__dict__["_parameters"]
            if name in _parameters:
                return _parameters[name]
        if "_buffers" in self.__dict__:
            _buffers = self.__dict__["_buffers"]
            if name in _buffers:
                return _buffers[name]
        if "_modules" in self.__dict__:
            modules = self.__dict__["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(
                    self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set
                )
                for hook in _gh._global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(ember.nn.Module or None expected)"
                    )
                for hook in _gh._global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(ember.nn.Buffer, ember.Tensor or None expected)"
                        )
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    if getattr(self.register_buffer, "__func__", None) is Module.register_buffer:
                        self.register_buffer(name, value, persistent)
                    else:
                        sign = inspect.signature(self.register_buffer)
                        if "persistent" in sign.parameters:
                            self.register_buffer(name, value, persistent)
                        else:
                            if not persistent:
                                raise RuntimeError(
                                    "Registering a non-persistent buffer on a Module subclass "
                                    "that implements register_buffer() without the persistent "
                                    "argument is not allowed."
                                )
                            self.register_buffer(name, value)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    # ------------------------------------------------------------------ traversal
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            members = get_members_fn(module)
            for k, v in members:
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                name = module_prefix + ("." if module_prefix else "") + k
                yield name, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module (and, with recurse, of its descendants), each once."""
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a shared parameter appears once unless
        ``remove_duplicate=False``."""
        yield from self._named_members(
            lambda module: module._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(
            lambda module: module._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator[Module]:
        for _name, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """(dotted name, module) for self ('' or ``prefix``) and every descendant, depth
        first; a module reachable twice appears once unless ``remove_duplicate=False``."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode: bool = True):
        """Sets training mode on self and every descendant (Dropout, BatchNorm react)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def compile(self, *args, **kwargs) -> None:
        """Compiles this module's call in place, with ``ember.compile``'s arguments. Ember runs
        eagerly, so the call, its hooks and the state_dict keys stay as they were."""
        from ..._compile import module_compile

        module_compile(self, *args, **kwargs)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all parameters: to None (default) or to zeros."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # ------------------------------------------------------------------ printing
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            # A single-line extra_repr and no children: everything on one line.
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        parameters = list(self._parameters.keys())
        modules = list(self._modules.keys())
        buffers = list(self._buffers.keys())
        keys = module_attrs + attrs + parameters + modules + buffers
        # Names that are not valid Python attributes (Sequential's "0", "1", ...) are left out.
        keys = [key for key in keys if not key[0].isdigit()]
        return sorted(keys)
