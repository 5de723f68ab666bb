"""ember.cuda.amp: PyTorch's deprecated CUDA-specific AMP names. ``GradScaler(...)`` here is
``ember.amp.GradScaler("cuda", ...)`` and ``autocast(...)`` is ``ember.autocast("cuda", ...)``:
each warns that the form is deprecated (FutureWarning, as PyTorch's does), and without a CUDA
device an enabled one warns again and disables itself, so ``ember.cuda.amp.GradScaler(
enabled=use_amp)`` and ``with ember.cuda.amp.autocast():`` run on a CPU-only machine (the region
then casts nothing). ``custom_fwd`` / ``custom_bwd`` are ember.amp's with device_type='cuda'."""

import functools
import warnings

import ember
from ember.amp import autocast_mode as _autocast_mode
from ember.amp.grad_scaler import GradScaler as _GradScaler
from ember.amp.grad_scaler import OptState  # noqa: F401  (PyTorch keeps this name here too)

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]


def amp_definitely_not_available():
    """Whether CUDA AMP certainly cannot run: True without a CUDA device."""
    return not ember.cuda.is_available()


class GradScaler(_GradScaler):
    """See ember.amp.GradScaler. ``ember.cuda.amp.GradScaler(args...)`` is deprecated; use
    ``ember.amp.GradScaler("cuda", args...)``."""

    _warn_stacklevel = 3

    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        warnings.warn(
            "`ember.cuda.amp.GradScaler(args...)` is deprecated. "
            "Please use `ember.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )


class autocast(_autocast_mode.autocast):
    """See ember.autocast. ``ember.cuda.amp.autocast(args...)`` is deprecated; use
    ``ember.autocast("cuda", args...)``. Without CUDA an enabled region warns and runs
    disabled."""

    def __init__(self, enabled=True, dtype=ember.float16, cache_enabled=True):
        warnings.warn(
            "`ember.cuda.amp.autocast(args...)` is deprecated. "
            "Please use `ember.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: ``ember.amp.custom_fwd(args..., device_type='cuda')``."""
    warnings.warn(
        "`ember.cuda.amp.custom_fwd(args...)` is deprecated. "
        "Please use `ember.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda")(
        fwd=fwd, cast_inputs=cast_inputs
    )


def custom_bwd(bwd):
    """Deprecated: ``ember.amp.custom_bwd(args..., device_type='cuda')``."""
    warnings.warn(
        "`ember.cuda.amp.custom_bwd(args...)` is deprecated. "
        "Please use `ember.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return functools.partial(_autocast_mode.custom_bwd, device_type="cuda")(bwd)
