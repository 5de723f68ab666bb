"""Base optimizer (torch.optim.Optimizer's API and state_dict format).

Parameter groups, per-parameter state keyed by the parameter tensor, state_dict /
load_state_dict with PyTorch's exact structure, zero_grad, add_param_group, and step / state-dict
hooks. Subclasses gather each group's tensors in Python and make one call into the fused C++
step (ember._C._optim; Note [Fused Optimizer Steps] in csrc/ops/optim_steps.cpp).
"""

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import ember
from ember import Tensor

try:  # shared with ember.nn's module hooks when available
    from ember.utils.hooks import RemovableHandle
except ImportError:  # pragma: no cover - fallback while ember.utils.hooks does not exist
    from ._hooks import RemovableHandle

__all__ = [
    "Optimizer",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

_global_optimizer_pre_hooks: "OrderedDict[int, Any]" = OrderedDict()
_global_optimizer_post_hooks: "OrderedDict[int, Any]" = OrderedDict()


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "")
    name = type(obj).__qualname__
    return name if module in ("builtins", "", None) else f"{module}.{name}"


def _use_grad_for_differentiable(func):
    """Runs step() with grad mode set to the optimizer's `differentiable` flag (off by default)."""

    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev_grad = ember.is_grad_enabled()
        try:
            ember.set_grad_enabled(self.defaults["differentiable"])
            return func(self, *args, **kwargs)
        finally:
            ember.set_grad_enabled(prev_grad)

    return _use_grad


def _get_scalar_dtype(is_fused=None):
    """dtype of the `step` (and NAdam `mu_product`) state tensors, as PyTorch."""
    if is_fused:
        return ember.float32
    return ember.float64 if ember.get_default_dtype() == ember.float64 else ember.float32


def _to_scalar(x):
    """A one-element tensor hyperparameter squeezed to 0-d; anything else unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _as_float(x) -> float:
    """A hyperparameter (float or one-element tensor) as the Python float the C++ step takes."""
    return float(x.item()) if isinstance(x, Tensor) else float(x)


def _check_not_differentiable(differentiable: bool) -> None:
    # The fused C++ step writes parameters directly and records no autograd history, so it
    # cannot differentiate through the update.
    if differentiable:
        raise RuntimeError(
            "[optim] differentiable=True is not supported: Ember's optimizer steps are fused C++ "
            "updates that record no autograd history"
        )


def _check_state_steps(state_steps) -> None:
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError(
            "API has changed, `state_steps` argument must contain a list of singleton tensors"
        )


_CAPTURABLE_DEVICES = ["cuda"]


def _check_capturable(capturable: bool, params) -> None:
    if capturable and any(p.device.type not in _CAPTURABLE_DEVICES for p in params):
        raise AssertionError(
            "If capturable=True, params and state_steps must be on supported devices: "
            f"{_CAPTURABLE_DEVICES}."
        )


def _device_dtype_check_for_fused(p: Tensor) -> None:
    supported = ["cpu", "cuda"]
    if not (p.device.type in supported and ember.is_floating_point(p)):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of "
            f"supported devices: {supported} but {p.dtype} and {p.device.type}"
        )


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Register a pre hook common to all optimizers: hook(optimizer, args, kwargs)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Register a post hook common to all optimizers: hook(optimizer, args, kwargs)."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of tensors, of (name, tensor) pairs or of dicts
            (parameter groups). Specifies what Tensors should be optimized.
        defaults (dict): default values of optimization options (used when a parameter group
            doesn't specify them).
    """

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()

        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be "
                "an iterable of Tensors or dicts, but got " + _typename(params)
            )
        elif isinstance(params, set):
            warnings.warn(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a "
                "list instead. This will be an error in a future release.",
                FutureWarning,
                stacklevel=2,
            )

        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]

        for param_group in param_groups:
            self.add_param_group(param_group)

        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    def _accelerator_graph_capture_health_check(self) -> None:
        # Ember has no graph capture: there is nothing to check (PyTorch checks CUDA graphs).
        return None

    def _optimizer_step_code(self) -> None:
        """Entry point for profilers: called after every step()."""

    @staticmethod
    def profile_hook_step(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self, *_ = args
            for pre_hook in chain(
                _global_optimizer_pre_hooks.values(),
                self._optimizer_step_pre_hooks.values(),
            ):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {result}."
                        )

            out = func(*args, **kwargs)
            self._optimizer_step_code()

            for post_hook in chain(
                self._optimizer_step_post_hooks.values(),
                _global_optimizer_post_hooks.values(),
            ):
                post_hook(self, args, kwargs)
            return out

        return wrapper

    def _patch_step_function(self) -> None:
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        r"""Register a hook called before step(): ``hook(optimizer, args, kwargs)``, which may
        return a tuple (new_args, new_kwargs)."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        r"""Register a hook called after step(): ``hook(optimizer, args, kwargs)``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _register_ordered(hooks: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer)``, called before state_dict()."""
        return self._register_ordered(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer, state_dict) -> state_dict or None``, called after
        state_dict()."""
        return self._register_ordered(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer, state_dict) -> state_dict or None``, called before
        load_state_dict()."""
        return self._register_ordered(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        r"""Register ``hook(optimizer)``, called after load_state_dict()."""
        return self._register_ordered(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> dict[str, Any]:
        r"""Return the state of the optimizer as a :class:`dict`.

        It contains two entries: ``state``, mapping parameter indices (their order across all
        groups) to that parameter's state dict, and ``param_groups``, a list of dicts holding
        each group's hyperparameters and the indices of its parameters (``params``).
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        # Save order indices instead of Tensors
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {
                    id(p): i
                    for i, p in enumerate(group["params"], start_index)
                    if id(p) not in param_mappings
                }
            )
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }

        state_dict = {
            "state": packed_state,
            "param_groups": param_groups,
        }

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(
        param: Tensor, value: Tensor, param_id: int, param_groups, key=None
    ) -> Tensor:
        # Floating point state follows the parameter's dtype; `step` keeps its own (float32 when
        # fused or capturable).
        fused = False
        capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=ember.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        r"""Load the optimizer state (an object returned by :meth:`state_dict`)."""
        state_dict = state_dict.copy()

        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])

        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError(
                "loaded state dict contains a parameter group "
                "that doesn't match the size of optimizer's group"
            )

        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def _cast(param, value, param_id, param_groups, key=None):
            """Deep copy of value, casting tensors to the parameter's dtype and device."""
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key
                )
            elif isinstance(value, dict):
                return {
                    k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                    for k, v in value.items()
                }
            elif isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(
                    _cast(param, v, param_id=param_id, param_groups=param_groups) for v in value
                )
            else:
                return value

        # State assigned to params is cast; state that is not is copied as is.
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def zero_grad(self, set_to_none: bool = True) -> None:
        r"""Reset the gradients of all optimized tensors.

        Args:
            set_to_none (bool): set the grads to None instead of zeroing them (default: True).
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        r"""Perform a single optimization step (``closure`` re-evaluates the model and returns
        the loss)."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        r"""Add a param group to the optimizer's `param_groups` (e.g. to unfreeze layers while
        fine-tuning)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)

        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError(
                    "all optimizer params should be with/without names. "
                    "Some param names are missing"
                )

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, "
                    "but one of the params is " + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            else:
                param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )

        param_set: set[int] = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = (
                    "with names" if "param_names" in param_group else "without names"
                )
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current_group_txt} to the optimizer"
                )

        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)
