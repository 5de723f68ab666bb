"""Pooling functions of ember.nn.functional: max, average and adaptive pooling in 1-D and 2-D.

Each is one C++ op with its own backward; return_indices picks the variant that also returns
the argmax indices, as torch's boolean dispatch does.
"""

from ... import _C
from ..._C import _nn
from ._shape_args import _list_with_default

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
]

avg_pool1d = _C.avg_pool1d
avg_pool2d = _nn.avg_pool2d
adaptive_avg_pool1d = _C.adaptive_avg_pool1d


def _stride(stride):
    return () if stride is None else stride


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling returning (values, indices)."""
    return _C.max_pool1d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling over (N, C, L) or (C, L); (values, indices) with return_indices."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling returning (values, indices)."""
    return _nn.max_pool2d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling over (N, C, H, W) or (C, H, W); (values, indices) with return_indices."""
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling; None in output_size keeps the input's size."""
    return _nn.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """1-D adaptive max pooling returning (values, indices)."""
    return _C.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling; (values, indices) with return_indices."""
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, output_size)
    return _C.adaptive_max_pool1d(input, output_size)[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """2-D adaptive max pooling returning (values, indices)."""
    return _nn.adaptive_max_pool2d(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling; (values, indices) with return_indices."""
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, output_size)
    return adaptive_max_pool2d_with_indices(input, output_size)[0]
