"""Module.__call__ when hooks are registered: forward pre-hooks, full backward hooks (through
BackwardHook's identity functions around inputs and outputs), forward hooks, the legacy
non-full backward hooks, and the ``always_call`` forward hooks when forward raises. The order
and return-value rules are PyTorch's (``Module._call_impl``)."""

from __future__ import annotations

import warnings

from ember import Tensor
from ember.utils.hooks import BackwardHook

from . import _global_hooks as _gh
from ._global_hooks import _WrappedHook


def _call_with_hooks(module, forward_call, args, kwargs):
    result = None
    called_always_called_hooks = set()

    def inner():
        nonlocal result, args, kwargs
        full_backward_hooks, non_full_backward_hooks = [], []
        backward_pre_hooks = []
        if module._backward_pre_hooks or _gh._global_backward_pre_hooks:
            backward_pre_hooks = module._get_backward_pre_hooks()
        if module._backward_hooks or _gh._global_backward_hooks:
            full_backward_hooks, non_full_backward_hooks = module._get_backward_hooks()
        if _gh._global_forward_pre_hooks or module._forward_pre_hooks:
            for hook_id, hook in (
                *_gh._global_forward_pre_hooks.items(),
                *module._forward_pre_hooks.items(),
            ):
                if hook_id in module._forward_pre_hooks_with_kwargs:
                    args_kwargs_result = hook(module, args, kwargs)
                    if args_kwargs_result is not None:
                        if (
                            isinstance(args_kwargs_result, tuple)
                            and len(args_kwargs_result) == 2
                        ):
                            args, kwargs = args_kwargs_result
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of "
                                f"(new_args, new_kwargs), but got {args_kwargs_result}."
                            )
                else:
                    args_result = hook(module, args)
                    if args_result is not None:
                        if not isinstance(args_result, tuple):
                            args_result = (args_result,)
                        args = args_result

        bw_hook = None
        if full_backward_hooks or backward_pre_hooks:
            bw_hook = BackwardHook(module, full_backward_hooks, backward_pre_hooks)
            args = bw_hook.setup_input_hook(args)

        result = forward_call(*args, **kwargs)
        if _gh._global_forward_hooks or module._forward_hooks:
            all_hooks = (*_gh._global_forward_hooks.items(), *module._forward_hooks.items())
            for hook_id, hook in all_hooks:
                if (
                    hook_id in module._forward_hooks_always_called
                    or hook_id in _gh._global_forward_hooks_always_called
                ):
                    called_always_called_hooks.add(hook_id)
                if (
                    hook_id in module._forward_hooks_with_kwargs
                    or hook_id in _gh._global_forward_hooks_with_kwargs
                ):
                    hook_result = hook(module, args, kwargs, result)
                else:
                    hook_result = hook(module, args, result)
                if hook_result is not None:
                    result = hook_result

        if bw_hook:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=2,
                )
            result = bw_hook.setup_output_hook(result)

        # Non-full backward hooks are registered on the grad_fn of the first output tensor.
        if non_full_backward_hooks:
            var = result
            while not isinstance(var, Tensor):
                if isinstance(var, dict):
                    var = next(v for v in var.values() if isinstance(v, Tensor))
                else:
                    var = var[0]
            grad_fn = var.grad_fn
            if grad_fn is not None:
                for hook in non_full_backward_hooks:
                    grad_fn.register_hook(_WrappedHook(hook, module))
        return result

    try:
        return inner()
    except Exception:
        # Run the always_call forward hooks that have not run yet, then re-raise.
        for hook_id, hook in _gh._global_forward_hooks.items():
            if (
                hook_id in _gh._global_forward_hooks_always_called
                and hook_id not in called_always_called_hooks
            ):
                try:
                    hook_result = hook(module, args, result)
                    if hook_result is not None:
                        result = hook_result
                except Exception as e:
                    warnings.warn(
                        "global module forward hook with ``always_call=True`` raised an "
                        f"exception that was silenced as another error was raised in forward: "
                        f"{str(e)}",
                        stacklevel=2,
                    )
                    continue
        for hook_id, hook in module._forward_hooks.items():
            if (
                hook_id in module._forward_hooks_always_called
                and hook_id not in called_always_called_hooks
            ):
                try:
                    if hook_id in module._forward_hooks_with_kwargs:
                        hook_result = hook(module, args, kwargs, result)
                    else:
                        hook_result = hook(module, args, result)
                    if hook_result is not None:
                        result = hook_result
                except Exception as e:
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {str(e)}",
                        stacklevel=2,
                    )
                    continue
        raise
