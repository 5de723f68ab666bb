"""``ember.optim.swa_utils``: stochastic weight averaging and exponential moving averages of a
model's weights (``AveragedModel``), the SWA learning-rate schedule (``SWALR``) and the
BatchNorm statistics refresh for an averaged model (``update_bn``), as
``torch.optim.swa_utils``. The state_dict of an AveragedModel is PyTorch's: the copied model's
keys under ``module.`` and the ``n_averaged`` buffer."""

from __future__ import annotations

import itertools
import math
from copy import deepcopy

import ember
from ember import Tensor
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import _BatchNorm

from ._lr_scheduler_base import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]


def _is_float_or_complex(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of lists of tensors: ema = decay * ema + (1 - decay) * current."""

    @ember.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if _is_float_or_complex(p_ema):
                p_ema.lerp_(p_model, 1 - decay)
            else:
                # Integer buffers (num_batches_tracked): the same formula, rounded by copy_.
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place update of lists of tensors to the running mean over ``num_averaged + 1``
    models: avg += (current - avg) / (num_averaged + 1)."""

    @ember.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if _is_float_or_complex(p_avg):
                p_avg.lerp_(p_model, 1.0 / (n + 1))
            else:
                p_avg.copy_(p_avg + (p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """ema, current, n -> decay * ema + (1 - decay) * current (returns a new tensor)."""

    @ember.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """avg, current, n -> avg + (current - avg) / (n + 1) (returns a new tensor)."""

    @ember.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers=True``) are an
    average of the ``model``'s over the calls to ``update_parameters``: the equal-weight SWA
    mean by default, or what ``avg_fn(averaged, current, n_averaged) -> new`` or the in-place
    ``multi_avg_fn(averaged_list, current_list, n_averaged)`` computes (e.g.
    ``get_ema_multi_avg_fn(0.999)`` for an EMA). The first call copies the model's values.
    Without ``use_buffers`` the buffers are copied from the model each time (use ``update_bn``
    to recompute BatchNorm statistics for the averaged weights)."""

    n_averaged: Tensor

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with use_buffers) into the
        average and count one more model."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param = self.parameters()
            model_param = model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged.item()) == 0
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if first:
                p_averaged.detach().copy_(p_model_)
        if not first:
            with ember.no_grad():
                if self.avg_fn is not None:
                    for p_avg, p_model in zip(averaged, current):
                        p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
                else:
                    fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                    # Lists of one dtype each, as PyTorch's grouped foreach updates see them
                    # (a multi_avg_fn may branch on the first tensor's dtype).
                    groups: dict = {}
                    for p_avg, p_model in zip(averaged, current):
                        key = (str(p_avg.device), p_avg.dtype)
                        groups.setdefault(key, ([], []))
                        groups[key][0].append(p_avg)
                        groups[key][1].append(p_model)
                    for avg_list, model_list in groups.values():
                        fn(avg_list, model_list, self.n_averaged)
        if not self.use_buffers:
            # The buffers are not averaged: keep them equal to the source model's.
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@ember.no_grad()
def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of every BatchNorm in ``model`` with one pass over
    ``loader`` (its items, or their first element when they are lists / tuples): the statistics
    are reset and accumulated as a cumulative average (momentum None), then the momenta and the
    model's training mode are restored."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module, momentum in momenta.items():
        bn_module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each param group's learning rate to its ``swa_lr`` over ``anneal_epochs`` steps
    (cosine or linear), then keep it there: the schedule used during the averaging phase of
    SWA."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                "anneal_strategy must by one of 'cos' or 'linear', "
                f"instead got {anneal_strategy}"
            )
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else (
            self._linear_anneal
        )
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # The lr the annealing started from, recovered from the current one: the schedule is
        # chainable (another scheduler may have changed group["lr"] in between).
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs)
        ]
