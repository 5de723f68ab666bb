"""AdamW (torch.optim.AdamW): Adam with weight decay applied to the parameters directly."""

from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Implements the AdamW algorithm: weight decay does not accumulate in the moments.

    Same arguments as :class:`Adam`, with ``weight_decay`` defaulting to 1e-2 and always
    decoupled (``param *= 1 - lr * weight_decay`` before the Adam update).
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    # decoupled_weight_decay is always True for AdamW, whatever state is loaded.
    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    foreach=None,
    capturable: bool = False,
    differentiable: bool = False,
    fused=None,
    grad_scale=None,
    found_inf=None,
    has_complex: bool = False,
    *,
    amsgrad: bool,
    beta1,
    beta2,
    lr,
    weight_decay: float,
    eps: float,
    maximize: bool,
):
    r"""Functional API that performs the AdamW algorithm computation."""
    adam(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        foreach=foreach,
        capturable=capturable,
        differentiable=differentiable,
        fused=fused,
        grad_scale=grad_scale,
        found_inf=found_inf,
        has_complex=has_complex,
        decoupled_weight_decay=True,
        amsgrad=amsgrad,
        beta1=beta1,
        beta2=beta2,
        lr=lr,
        weight_decay=weight_decay,
        eps=eps,
        maximize=maximize,
    )
