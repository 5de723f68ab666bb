"""Adadelta (torch.optim.Adadelta)."""

import ember
from ember import Tensor

from .. import _C
from .optimizer import (
    Optimizer,
    _as_float,
    _check_capturable,
    _check_not_differentiable,
    _check_state_steps,
    _get_scalar_dtype,
    _use_grad_for_differentiable,
)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    Args:
        params (iterable): parameters (or named parameters) to optimize, or parameter groups.
        lr (float, Tensor, optional): coefficient that scales delta before it is applied to the
            parameters (default: 1.0)
        rho (float, optional): coefficient of the running average of squared gradients
            (default: 0.9)
        eps (float, optional): term added to the denominator (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach (bool, optional): accepted for PyTorch compatibility.
        capturable (bool, optional): graph capture is not available on the CPU (default: False)
        maximize (bool, optional): maximize the objective (default: False)
        differentiable (bool, optional): must be False.
    """

    def __init__(
        self,
        params,
        lr=1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach=None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")

        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    step_val = float(p_state["step"])
                    p_state["step"] = ember.tensor(step_val, dtype=_get_scalar_dtype())

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)

            state = self.state[p]
            # Lazy state initialization
            if len(state) == 0:
                state["step"] = ember.zeros((), dtype=_get_scalar_dtype())
                state["square_avg"] = ember.zeros_like(p)
                state["acc_delta"] = ember.zeros_like(p)

            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])
        return False

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the
                loss.
        """
        self._accelerator_graph_capture_health_check()

        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()

        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            square_avgs: list[Tensor] = []
            acc_deltas: list[Tensor] = []
            state_steps: list[Tensor] = []

            self._init_group(group, params_with_grad, grads, square_avgs, acc_deltas, state_steps)

            adadelta(
                params_with_grad,
                grads,
                square_avgs,
                acc_deltas,
                state_steps,
                lr=group["lr"],
                rho=group["rho"],
                eps=group["eps"],
                weight_decay=group["weight_decay"],
                foreach=group["foreach"],
                maximize=group["maximize"],
                differentiable=group["differentiable"],
                capturable=group["capturable"],
            )

        return loss


def adadelta(
    params,
    grads,
    square_avgs,
    acc_deltas,
    state_steps,
    capturable: bool = False,
    foreach=None,
    differentiable: bool = False,
    has_complex: bool = False,
    *,
    lr,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
):
    r"""Functional API that performs the Adadelta algorithm computation."""
    _check_not_differentiable(differentiable)
    _check_capturable(capturable, params)
    _check_state_steps(state_steps)
    _C._optim.adadelta_step(
        params,
        grads,
        square_avgs,
        acc_deltas,
        state_steps,
        lr=_as_float(lr),
        rho=_as_float(rho),
        eps=_as_float(eps),
        weight_decay=_as_float(weight_decay),
        maximize=bool(maximize),
    )
