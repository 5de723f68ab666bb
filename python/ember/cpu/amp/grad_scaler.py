"""ember.cpu.amp.GradScaler: the deprecated form of ember.amp.GradScaler("cpu", ...)."""

import warnings

from ember.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler"]


class GradScaler(_GradScaler):
    """See ember.amp.GradScaler. ``ember.cpu.amp.GradScaler(args...)`` is deprecated; use
    ``ember.amp.GradScaler("cpu", args...)``."""

    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        warnings.warn(
            "`ember.cpu.amp.GradScaler(args...)` is deprecated. "
            "Please use `ember.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cpu",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
