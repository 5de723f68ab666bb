"""Adagrad (torch.optim.Adagrad)."""

import ember
from ember import Tensor

from .. import _C
from .optimizer import (
    Optimizer,
    _as_float,
    _check_not_differentiable,
    _check_state_steps,
    _device_dtype_check_for_fused,
    _get_scalar_dtype,
    _use_grad_for_differentiable,
)

__all__ = ["Adagrad", "adagrad"]


def _initial_sum(p: Tensor, initial_accumulator_value: float) -> Tensor:
    init_value = (
        complex(initial_accumulator_value, initial_accumulator_value)
        if p.is_complex()
        else initial_accumulator_value
    )
    return ember.full_like(p, init_value)


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    Args:
        params (iterable): parameters (or named parameters) to optimize, or parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the sum of squares of
            gradients (default: 0)
        eps (float, optional): term added to the denominator (default: 1e-10)
        foreach, fused (bool, optional): accepted for PyTorch compatibility; Ember always runs
            one fused C++ update per parameter group.
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach=None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")

        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            self._need_device_dtype_check_for_fused = True
            self._step_supports_amp_scaling = True

        # Adagrad's state exists from construction on (PyTorch does the same).
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = ember.tensor(0.0, dtype=_get_scalar_dtype(is_fused=group["fused"]))
                state["sum"] = _initial_sum(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        fused = None
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            fused = group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    step_val = float(p_state["step"])
                    p_state["step"] = ember.tensor(
                        step_val, dtype=_get_scalar_dtype(is_fused=fused)
                    )

        state_values = list(self.state.values())
        step_is_tensor = (len(state_values) != 0) and isinstance(state_values[0]["step"], Tensor)
        if not step_is_tensor:
            for s in state_values:
                s["step"] = ember.tensor(float(s["step"]), dtype=_get_scalar_dtype(is_fused=fused))

    def share_memory(self) -> None:
        """Calls tensor.share_memory_() on the state sum tensors (where supported)."""
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                share = getattr(state["sum"], "share_memory_", None)
                if share is not None:
                    share()

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is not None:
                if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                    _device_dtype_check_for_fused(p)
                    self._need_device_dtype_check_for_fused = False
                params_with_grad.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    if group["fused"]:
                        _device_dtype_check_for_fused(p)
                    state["step"] = ember.tensor(
                        0.0, dtype=_get_scalar_dtype(is_fused=group["fused"])
                    )
                    state["sum"] = _initial_sum(p, self.defaults["initial_accumulator_value"])
                state_sums.append(state["sum"])
                state_steps.append(state["step"])
        return False, False

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the
                loss.
        """
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()

        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            state_sums: list[Tensor] = []
            state_steps: list[Tensor] = []

            self._init_group(group, params_with_grad, grads, state_sums, state_steps)

            adagrad(
                params_with_grad,
                grads,
                state_sums,
                state_steps,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"],
                eps=group["eps"],
                foreach=group["foreach"],
                maximize=group["maximize"],
                differentiable=group["differentiable"],
                fused=group["fused"],
            )

        return loss


def adagrad(
    params,
    grads,
    state_sums,
    state_steps,
    fused=None,
    grad_scale=None,
    found_inf=None,
    has_sparse_grad: bool = False,
    foreach=None,
    differentiable: bool = False,
    has_complex: bool = False,
    *,
    lr,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
):
    r"""Functional API that performs the Adagrad algorithm computation."""
    _check_not_differentiable(differentiable)
    _check_state_steps(state_steps)
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("[adagrad] grad_scale and found_inf are not supported")
    _C._optim.adagrad_step(
        params,
        grads,
        state_sums,
        state_steps,
        lr=_as_float(lr),
        lr_decay=_as_float(lr_decay),
        weight_decay=_as_float(weight_decay),
        eps=_as_float(eps),
        maximize=bool(maximize),
    )
