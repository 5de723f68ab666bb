"""ChannelShuffle (``torch.nn.modules.channelshuffle``): F.channel_shuffle as a layer."""

from ember import Tensor
from ember.nn import functional as F

from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleaves the C channels of (N, C, *) input across ``groups`` (C viewed as
    (groups, C / groups) and transposed), so that a following grouped convolution sees
    channels from every group (ShuffleNet)."""

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
