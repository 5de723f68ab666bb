"""Upsample (``torch.nn.modules.upsampling``): F.interpolate as a layer."""

from ember import Tensor
from ember.nn import functional as F

from .module import Module

__all__ = ["Upsample"]


class Upsample(Module):
    """Resizes to ``size`` or by ``scale_factor`` with mode 'nearest', 'linear', 'bilinear' or
    'bicubic' (``align_corners`` for the interpolating modes)."""

    __constants__ = [
        "size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor",
    ]

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info
