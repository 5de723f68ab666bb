"""The state_dict half of ``Module``: saving and loading parameters and persistent buffers by
dotted name, with PyTorch's key layout, ``_metadata`` versions, strictness reporting and hooks.
Module inherits it (module.py); layers override ``_save_to_state_dict`` /
``_load_from_state_dict`` to store custom state or convert old checkpoints."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any

import ember
from ember import Tensor
from ember.nn.parameter import Parameter
from ember.utils.hooks import RemovableHandle

from ._global_hooks import _WrappedHook

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _load_recursive(module, local_state_dict, prefix, metadata, assign, missing_keys,
                    unexpected_keys, error_msgs) -> None:
    """load_state_dict's walk: loads ``module``'s own state, then each child's from the keys
    under its prefix, then runs the module's post-hooks."""
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(
        local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
    )
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            child_state_dict = {
                k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)
            }
            _load_recursive(child, child_state_dict, child_prefix, metadata, assign, missing_keys,
                            unexpected_keys, error_msgs)
    incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
    for hook in module._load_state_dict_post_hooks.values():
        out = hook(module, incompatible_keys)
        if out is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not expected "
                "to return new values, if incompatible_keys need to be modified, it should be "
                "done inplace."
            )


class _StateDictMixin:
    """state_dict / load_state_dict and their hooks (mixed into Module)."""

    def get_extra_state(self) -> Any:
        """Override with set_extra_state to store extra (picklable) state in state_dict."""
        raise RuntimeError(
            "Reached a code path in _StateDictMixin.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError(
            "Reached a code path in _StateDictMixin.set_extra_state() that should never be called."
        )

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after state_dict; it may
        modify the dict in place and must return None."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before state_dict."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        """Saves this module's own parameters and persistent buffers (not its children's).
        Subclasses override it to store custom state."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "get_extra_state", _StateDictMixin.get_extra_state) is not (
            _StateDictMixin.get_extra_state
        ):
            destination[extra_state_key] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (detached
        unless ``keep_vars``), with a ``_metadata`` attribute holding each module's
        ``version``."""
        if len(args) > 0:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(
            hook, self if with_module else None
        )
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module's part is loaded."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after load_state_dict; it may edit the key
        lists in place."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        """Copies this module's own parameters and persistent buffers from ``state_dict``
        (children are loaded by load_state_dict). Subclasses override it to convert old
        formats, using ``local_metadata.get("version")``."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)

        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_name_params = itertools.chain(self._parameters.items(), persistent_buffers.items())
        local_state = {k: v for k, v in local_name_params if v is not None}
        assign_to_params_buffers = local_metadata.get("assign_to_params_buffers", False)

        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                input_param = state_dict[key]
                if not isinstance(input_param, Tensor):
                    error_msgs.append(
                        f'While copying the parameter named "{key}", expected ember.Tensor or '
                        f"Tensor-like object from checkpoint but received {type(input_param)}"
                    )
                    continue
                # A 0-d parameter accepts a 1-element 1-d tensor (old checkpoints).
                if len(param.shape) == 0 and len(input_param.shape) == 1 and (
                    input_param.shape[0] == 1
                ):
                    input_param = input_param[0]
                if input_param.shape != param.shape:
                    error_msgs.append(
                        f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                        f"from checkpoint, the shape in current model is {param.shape}."
                    )
                    continue
                try:
                    with ember.no_grad():
                        if assign_to_params_buffers:
                            if isinstance(param, Parameter):
                                if not isinstance(input_param, Parameter):
                                    input_param = Parameter(
                                        input_param, requires_grad=param.requires_grad
                                    )
                                else:
                                    input_param.requires_grad_(param.requires_grad)
                            setattr(self, name, input_param)
                        else:
                            param.copy_(input_param)
                except Exception as ex:
                    error_msgs.append(
                        f'While copying the parameter named "{key}", whose dimensions in the '
                        f"model are {param.size()} and whose dimensions in the checkpoint are "
                        f"{input_param.size()}, an exception occurred : {ex.args}."
                    )
            elif strict:
                missing_keys.append(key)

        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "set_extra_state", _StateDictMixin.set_extra_state) is not (
            _StateDictMixin.set_extra_state
        ):
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and (extra_state_key in state_dict):
            unexpected_keys.append(extra_state_key)

        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    # A key for a submodule that does not exist, or for a local name that is
                    # neither a parameter nor a persistent buffer.
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False):
        """Copies parameters and buffers from ``state_dict`` into this module and its
        descendants. With ``strict`` the keys must match exactly (RuntimeError listing the
        missing and unexpected keys); with ``assign`` the tensors are assigned instead of
        copied. Returns a NamedTuple (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []

        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        _load_recursive(self, state_dict, "", metadata, assign, missing_keys, unexpected_keys,
                        error_msgs)

        if strict:
            if len(unexpected_keys) > 0:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if len(missing_keys) > 0:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if len(error_msgs) > 0:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    self.__class__.__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)
