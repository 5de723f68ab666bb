"""ember.cpu.amp: PyTorch's deprecated CPU-specific AMP names, ``autocast(...)`` for
``ember.autocast("cpu", ...)`` and ``GradScaler(...)`` for ``ember.amp.GradScaler("cpu", ...)``.
Each warns that the form is deprecated (FutureWarning, as PyTorch's does) and then works."""

from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast"]
