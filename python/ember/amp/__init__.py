"""ember.amp: automatic mixed precision (PyTorch's torch.amp). autocast (autocast_mode.py) runs
regions of a program in mixed precision; GradScaler scales the loss and unscales the gradients."""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
