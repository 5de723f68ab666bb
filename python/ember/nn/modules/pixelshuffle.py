"""PixelShuffle (``torch.nn.modules.pixelshuffle``)."""

from ember import Tensor
from ember.nn import functional as F

from .module import Module

__all__ = ["PixelShuffle"]


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) with r = ``upscale_factor``."""

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"
