"""Hook handles and the Module full-backward-hook machinery, as ``torch.utils.hooks``."""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import Any

import ember

__all__ = ["RemovableHandle", "BackwardHook"]


class RemovableHandle:
    """A handle that removes a hook from the dict(s) it was registered in."""

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra_dict = ref()
            if extra_dict is not None and self.id in extra_dict:
                del extra_dict[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        if state[0] is None:
            # The dict died before pickling: point at a fresh one so remove() is a no-op.
            self.hooks_dict_ref = weakref.ref(OrderedDict())
        else:
            self.hooks_dict_ref = weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:
        self.remove()


class BackwardHookFunction(ember.autograd.Function):
    """Identity on tensors whose backward hands the gradients to a BackwardHook.

    Wrapped around a module's inputs (``side="input"``) its backward sees the gradients with
    respect to the module inputs; around the outputs (``side="output"``) the gradients with
    respect to the outputs.
    """

    @staticmethod
    def forward(ctx, hook, side, *tensors):
        if side == "output":
            # grad_output keeps None for outputs that receive no gradient; grad_input is
            # materialised (zeros for inputs that do not require grad), as in PyTorch, where
            # the hooks see the raw inputs and the materialised outputs of this node.
            ctx.set_materialize_grads(False)
        ctx.hook = hook
        ctx.side = side
        ctx.metadata = [(t.shape, t.dtype) for t in tensors]
        outs = tuple(t.view_as(t) for t in tensors)
        ctx.mark_non_differentiable(*[o for o, t in zip(outs, tensors) if not t.requires_grad])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        if ctx.side == "output":
            grads = ctx.hook._output_grads_ready(grads)
        else:
            # Zeros where nothing arrived (outputs marked non-differentiable get None).
            grads = tuple(
                ember.zeros(shape, dtype=dtype) if g is None else g
                for g, (shape, dtype) in zip(grads, ctx.metadata)
            )
            grads = ctx.hook._input_grads_ready(grads)
        return (None, None, *grads)


class BackwardHook:
    """Runs a module's full backward pre-hooks and hooks (``register_full_backward_hook``).

    The output side records the gradients of the outputs (after the pre-hooks may replace
    them); the input side, which runs once the gradients of all the inputs are known, calls the
    user hooks with (module, grad_input, grad_output) and may replace grad_input.
    """

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _input_grads_ready(self, grad_input):
        if self.grad_outputs is None:
            return grad_input
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, "
                    f"got {len(out)}, but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)

    def _output_grads_ready(self, grad_output):
        self.grad_outputs = self._pack_with_none(
            self.output_tensors_index, grad_output, self.n_outputs
        )
        if self.user_pre_hooks:
            expected_len = len(self.grad_outputs)
            for user_pre_hook in self.user_pre_hooks:
                hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                if hook_grad_outputs is None:
                    continue
                actual_len = len(hook_grad_outputs)
                if actual_len != expected_len:
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {actual_len}, but expected {expected_len}"
                    )
                self.grad_outputs = hook_grad_outputs
        local_grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            # No input requires grad: the input side never runs, so the hooks fire here with
            # all-None grad_input.
            if self.user_hooks:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients. See "
                    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                    "#torch.nn.Module.register_full_backward_hook for more details.",
                    stacklevel=5,
                )
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (
                        isinstance(res, tuple) and all(el is None for el in res)
                    ):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient should "
                            "always return None or None for all gradients."
                        )
            self.grad_outputs = None
        return tuple(local_grad_outputs[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, side, args):
        tensors_idx = []
        tensors = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, ember.Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and ember.is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(self, side, *tensors)
        if len(new_tensors) == 0:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors."
            )
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        if type(args) is tuple:
            out = tuple(arg_list)
        else:
            out = type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        res, input_idx = self._apply_on_tensors("input", args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False
        res, output_idx = self._apply_on_tensors("output", args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        if not is_tuple:
            res = res[0]
        return res
