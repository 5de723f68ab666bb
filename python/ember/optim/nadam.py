"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum."""

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

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm.

    Args:
        params (iterable): parameters (or named parameters) to optimize, or parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (tuple[float, float], optional): coefficients of the running averages of the
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum_decay (float, optional): momentum decay (default: 4e-3)
        decoupled_weight_decay (bool, optional): apply weight decay to the parameters directly,
            as AdamW (NAdamW) (default: False)
        foreach (bool, optional): accepted for PyTorch compatibility.
        maximize (bool, optional): maximize the objective (default: False)
        capturable (bool, optional): graph capture is not available on the CPU (default: False)
        differentiable (bool, optional): must be False.
    """

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0:
                    if not isinstance(p_state["step"], Tensor):
                        step_val = float(p_state["step"])
                        p_state["step"] = ember.tensor(step_val, dtype=_get_scalar_dtype())
                    if not isinstance(p_state["mu_product"], Tensor):
                        mu_prod_val = p_state["mu_product"]
                        p_state["mu_product"] = ember.tensor(mu_prod_val, dtype=_get_scalar_dtype())

    def _init_group(
        self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps
    ):
        for p in group["params"]:
            if p.grad is not None:
                params_with_grad.append(p)
                grads.append(p.grad)

                state = self.state[p]
                # Lazy state initialization
                if len(state) == 0:
                    state["step"] = ember.tensor(0.0, dtype=_get_scalar_dtype())
                    state["mu_product"] = ember.tensor(1.0, dtype=_get_scalar_dtype())
                    # Exponential moving average of gradient values
                    state["exp_avg"] = ember.zeros_like(p)
                    # Exponential moving average of squared gradient values
                    state["exp_avg_sq"] = ember.zeros_like(p)

                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                mu_products.append(state["mu_product"])
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
            exp_avgs: list[Tensor] = []
            exp_avg_sqs: list[Tensor] = []
            mu_products: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]

            self._init_group(
                group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps
            )

            nadam(
                params_with_grad,
                grads,
                exp_avgs,
                exp_avg_sqs,
                mu_products,
                state_steps,
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                momentum_decay=group["momentum_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                decoupled_weight_decay=group["decoupled_weight_decay"],
                foreach=group["foreach"],
                capturable=group["capturable"],
                differentiable=group["differentiable"],
            )

        return loss


def nadam(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    mu_products,
    state_steps,
    decoupled_weight_decay: bool = False,
    foreach=None,
    capturable: bool = False,
    differentiable: bool = False,
    has_complex: bool = False,
    maximize: bool = False,
    *,
    beta1: float,
    beta2: float,
    lr,
    weight_decay: float,
    momentum_decay: float,
    eps: float,
):
    r"""Functional API that performs the NAdam algorithm computation."""
    _check_not_differentiable(differentiable)
    _check_capturable(capturable, params)
    _check_state_steps(state_steps)
    if not all(isinstance(t, Tensor) for t in mu_products):
        raise RuntimeError(
            "API has changed, `mu_products` argument must contain a list of singleton tensors"
        )
    _C._optim.nadam_step(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        mu_products,
        state_steps,
        lr=_as_float(lr),
        beta1=_as_float(beta1),
        beta2=_as_float(beta2),
        eps=_as_float(eps),
        weight_decay=_as_float(weight_decay),
        momentum_decay=_as_float(momentum_decay),
        decoupled_weight_decay=bool(decoupled_weight_decay),
        maximize=bool(maximize),
    )
