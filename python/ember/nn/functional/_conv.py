"""Linear layers, convolutions and unfold / fold of ember.nn.functional.

Each function is one C++ op with its own backward (see docs/design/nn-conv.md); the ones
PyTorch exposes as builtins (conv2d, linear, ...) are the bound C++ functions themselves.
"""

from ... import _C
from ..._C import _nn
from ._shape_args import _pair

__all__ = [
    "linear",
    "bilinear",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "unfold",
    "fold",
]

linear = _nn.linear
bilinear = _C.bilinear
conv1d = _C.conv1d
conv2d = _C.conv2d
conv_transpose1d = _C.conv_transpose1d
conv_transpose2d = _C.conv_transpose2d


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C * kh * kw, L) (torch's im2col)."""
    return _nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks back into (N, C, *output_size) (torch's col2im)."""
    return _nn.col2im(
        input,
        _pair(output_size),
        _pair(kernel_size),
        _pair(dilation),
        _pair(padding),
        _pair(stride),
    )
