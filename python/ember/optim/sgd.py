"""Stochastic gradient descent (torch.optim.SGD)."""

import ember
from ember import Tensor

from .. import _C
from .optimizer import (
    Optimizer,
    _as_float,
    _check_not_differentiable,
    _device_dtype_check_for_fused,
    _use_grad_for_differentiable,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    Args:
        params (iterable): parameters (or named parameters) to optimize, or parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        momentum (float, optional): momentum factor (default: 0)
        dampening (float, optional): dampening for momentum (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        nesterov (bool, optional): enables Nesterov momentum (default: False)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        foreach, fused (bool, optional): accepted for PyTorch compatibility; Ember always runs
            one fused C++ update per parameter group.
        differentiable (bool, optional): must be False (see ember.optim docs).
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay=0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")

        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

        if fused:
            self._step_supports_amp_scaling = True
            self._need_device_dtype_check_for_fused = True
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        for p in group["params"]:
            if p.grad is not None:
                if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                    _device_dtype_check_for_fused(p)
                    self._need_device_dtype_check_for_fused = False
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    state = self.state[p]
                    momentum_buffer_list.append(state.get("momentum_buffer"))
        return False

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
            params: list[Tensor] = []
            grads: list[Tensor] = []
            momentum_buffer_list: list = []
            self._init_group(group, params, grads, momentum_buffer_list)

            momentum_buffer_list = sgd(
                params,
                grads,
                momentum_buffer_list,
                weight_decay=group["weight_decay"],
                momentum=group["momentum"],
                lr=group["lr"],
                dampening=group["dampening"],
                nesterov=group["nesterov"],
                maximize=group["maximize"],
                differentiable=group["differentiable"],
            )

            if group["momentum"] != 0:
                # update momentum_buffers in state
                for p, momentum_buffer in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = momentum_buffer

        return loss


def sgd(
    params,
    d_p_list,
    momentum_buffer_list,
    has_sparse_grad: bool = False,
    foreach=None,
    fused=None,
    grad_scale=None,
    found_inf=None,
    *,
    weight_decay: float,
    momentum: float,
    lr,
    dampening: float,
    nesterov: bool,
    maximize: bool,
    differentiable: bool = False,
):
    r"""Functional API that performs the SGD algorithm computation (one fused C++ update).

    Updates ``params`` in place; entries of ``momentum_buffer_list`` that are None are filled
    with new buffers (the list is also returned).
    """
    _check_not_differentiable(differentiable)
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("[sgd] grad_scale and found_inf are not supported")
    new_buffers = _C._optim.sgd_step(
        params,
        d_p_list,
        momentum_buffer_list if momentum != 0 else None,
        lr=_as_float(lr),
        momentum=_as_float(momentum),
        dampening=_as_float(dampening),
        weight_decay=_as_float(weight_decay),
        nesterov=bool(nesterov),
        maximize=bool(maximize),
    )
    if momentum != 0:
        momentum_buffer_list[:] = new_buffers
    return momentum_buffer_list
