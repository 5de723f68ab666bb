"""``ember.nn.utils.parametrize``: tensors of a module computed from other tensors on access, as
``torch.nn.utils.parametrize``.

``register_parametrization(module, "weight", P)`` moves the parameter (or buffer) ``weight`` to
``module.parametrizations.weight.original`` (``original0``, ``original1``, ... when ``P``'s
right_inverse returns several tensors), and gives the module a class of its own,
``Parametrized<Name>``, with a ``weight`` property that returns ``P(original)``. Assigning to
``module.weight`` runs the right inverses instead. The state_dict keys, the class swap and the
checks are PyTorch's, so PyTorch checkpoints of parametrized modules load unchanged.
docs/design/parametrize-checkpoint.md explains the layout.
"""

from __future__ import annotations

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

import ember
from ember import Tensor
from ember.nn.modules.container import ModuleDict, ModuleList
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]

# Inside `cached()`, a parametrized tensor is computed once per (module, name) and reused;
# the counter lets `cached()` nest (the cache is cleared when the outermost block exits).
_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Compute each parametrized tensor at most once inside the block (for a weight used in
    every step of a recurrent loop, say); the values are dropped on exit."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """Give ``dest`` the value (and shape) of ``src`` while keeping the tensor object, so that
    an optimizer holding ``dest`` keeps training it (PyTorch uses ``set_``)."""
    with ember.no_grad():
        dest.data = src.detach()


def _is_tensor_sequence(x) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str) and all(
        isinstance(t, Tensor) for t in x
    )


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, with the original tensor(s) they
    are computed from (``original`` or ``original0``, ``original1``, ...). Made by
    register_parametrization; not meant to be built by hand."""

    original: Tensor
    unsafe: bool

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe

        original_shape = original.shape
        original_dtype = original.dtype

        # original = right_inverse_1(right_inverse_2(... right_inverse_n(value))): the first
        # parametrization's right_inverse gives what is stored.
        with ember.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
                # Without a right_inverse the parametrization is taken as the identity here.

        if not isinstance(new, Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )

        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            # Keep the tensor object (the optimizer may hold it); only its value changes.
            if new is not original:
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(originali).__name__}."
                    )
                # Each new tensor is a parameter if the original was one, with its
                # requires_grad; otherwise a buffer.
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach(), original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)

        if not self.unsafe:
            # The parametrized tensor must keep the shape and dtype of the tensor it replaces
            # (a module's code relies on them); `unsafe=True` turns this check off.
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(z).__name__}."
                )
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {z.dtype}"
                )
            if z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {z.shape}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Store the original tensor(s) whose parametrized value is ``value`` (what assigning
        ``module.<name> = value`` runs): the right inverses are applied last to first."""
        with ember.no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement "
                        "right_inverse."
                    )
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                        f"while `original` has dtype {self.original.dtype}"
                    )
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}."
                    )
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(
                            f"`right_inverse` must return a sequence of tensors. "
                            f"Got element {i} of type {type(tensor).__name__}"
                        )
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                            f"while `original{i}` has dtype {original_i.dtype}"
                        )
                    _maybe_set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}") for i in range(self.ntensors))
            x = self[0](*originals)
        # The remaining parametrizations take one tensor each.
        for i in range(1, len(self)):
            x = self[i](x)
        return x


def _deepcopy_parametrized(self, memo):
    # The class made for one module is not importable, so copy.deepcopy's default (through
    # __reduce_ex__ and __getstate__) cannot rebuild it: copy the instance dict directly.
    obj = memo.get(id(self), None)
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    slots_to_save = copyreg._slotnames(self.__class__)  # type: ignore[attr-defined]
    for slot in slots_to_save:
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _getstate_parametrized(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). "
        "See the state_dict / load_state_dict section of the saving-and-loading tutorial."
    )


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Name>`` (a subclass of its class), to
    hold the properties of its parametrized tensors without touching other instances."""
    cls = module.__class__
    dct = {"__getstate__": _getstate_parametrized}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _deepcopy_parametrized
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), dct)
    module.__class__ = param_cls


def _inject_property(module: Module, tensor_name: str) -> None:
    """The ``tensor_name`` property on the module's own class: reading computes the
    parametrization (once per ``cached()`` block), assigning runs its right inverse."""
    assert not hasattr(module, tensor_name)

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(module), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = parametrization()
                _cache[key] = tensor
            return tensor
        return parametrization()

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the tensor
    now stored there (moved to ``module.parametrizations[tensor_name].original``). Registering
    a second parametrization on the same name chains it after the first.

    ``parametrization`` is a module whose forward takes the original tensor(s); its optional
    ``right_inverse(X)`` gives the original tensor (or a sequence of them) whose image is X,
    used to initialise the originals and when ``module.<tensor_name>`` is assigned. Unless
    ``unsafe``, the parametrized tensor must keep the shape and dtype of the original."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        # Chaining: the new parametrization must accept the current value and keep its type.
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(x).__name__}."
                )
            if x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {x.dtype}"
                )
            if x.shape != y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {x.shape}"
                )
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(
                            f"parametrization.right_inverse must return a tensor. "
                            f"Got: {type(z).__name__}"
                        )
                    if z.dtype != y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            "the same dtype as module.{tensor_name}, unless the `unsafe` flag "
                            "is enabled.\n"
                            f"module.{tensor_name}.dtype: {y.dtype}\n"
                            f"returned dtype: {z.dtype}"
                        )
                    if z.shape != y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same shape as module.{tensor_name}, unless the `unsafe` flag "
                            "is enabled.\n"
                            f"module.{tensor_name}.shape: {y.shape}\n"
                            f"returned shape: {z.shape}"
                        )
        module.parametrizations[tensor_name].append(parametrization)
        # Once unsafe, always unsafe for this tensor.
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        # Built (and checked) before anything on the module changes, so a failing check
        # leaves the module as it was.
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo register_parametrization for ``tensor_name``: it becomes a plain parameter (or
    buffer) again, holding the parametrized value (``leave_parametrized=True``) or the original
    one. With no parametrization left, the module gets its original class back."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")

    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with ember.no_grad():
                t = getattr(module, tensor_name)
            # The original tensor object stays the module's tensor (an optimizer may hold it).
            _maybe_set(original, t)
    else:
        if leave_parametrized:
            # requires_grad comes from the originals, so this is computed with grad enabled.
            t = getattr(module, tensor_name)
            original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
        else:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)

    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before its parametrizations (its own class otherwise)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register ``from_module``'s parametrizations (all, or those of ``tensor_name``) on
    ``to_module`` too, with copies of their original tensors; a tensor ``to_module`` lacks is
    created. Returns ``to_module``."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for param_func in from_module.parametrizations[name]:
                register_parametrization(to_module, name, param_func)
            src = from_module.parametrizations[name]
            dst = to_module.parametrizations[name]
            with ember.no_grad():
                if hasattr(src, "original"):
                    _maybe_set(dst.original, src.original)
                else:
                    i = 0
                    while hasattr(src, f"original{i}"):
                        _maybe_set(getattr(dst, f"original{i}"), getattr(src, f"original{i}"))
                        i += 1
    return to_module
