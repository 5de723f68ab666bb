"""ember.cpu.amp.autocast: the deprecated form of ember.autocast("cpu", ...)."""

import warnings

import ember
from ember.amp import autocast_mode as _autocast_mode

__all__ = ["autocast"]


class autocast(_autocast_mode.autocast):
    """See ember.autocast. ``ember.cpu.amp.autocast(args...)`` is deprecated; use
    ``ember.autocast("cpu", args...)``."""

    def __init__(self, enabled=True, dtype=ember.bfloat16, cache_enabled=True):
        warnings.warn(
            "`ember.cpu.amp.autocast(args...)` is deprecated. "
            "Please use `ember.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
