"""Fold and Unfold (``torch.nn.modules.fold``): F.fold / F.unfold (col2im / im2col) as layers.

The arguments are stored as given (an int or a pair each); F.fold / F.unfold expand and check
them on every call, as in PyTorch. Only 2-D spatial input is supported, as in PyTorch.
"""

from ember import Tensor
from ember.nn import functional as F

from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums sliding local blocks (N, C * prod(kernel_size), L) or (C * prod(kernel_size), L)
    back into (N, C, *output_size) or (C, *output_size); overlapping values add up, so
    Fold(Unfold(x)) is x times the number of blocks covering each pixel."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (
            "output_size={output_size}, kernel_size={kernel_size}, "
            "dilation={dilation}, padding={padding}, stride={stride}".format(**self.__dict__)
        )


class Unfold(Module):
    """Extracts sliding local blocks of (N, C, H, W) or (C, H, W) input as the columns of
    (N, C * prod(kernel_size), L) or (C * prod(kernel_size), L)."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            "kernel_size={kernel_size}, dilation={dilation}, padding={padding},"
            " stride={stride}".format(**self.__dict__)
        )
