"""Normalisation functions (torch.nn.functional's): batch_norm, instance_norm, layer_norm,
group_norm, rms_norm, each one C++ op with a fused backward (csrc/ops/nn/norm*.cpp), and
local_response_norm, a composite of public ops as in PyTorch."""

import ember

from ._pooling import avg_pool2d
from ._sampling import pad

__all__ = [
    "batch_norm",
    "instance_norm",
    "layer_norm",
    "group_norm",
    "rms_norm",
    "local_response_norm",
]


def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {size}"
        )


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Batch normalisation over the channel dim 1 of an (N, C, ...) input.

    In training the batch statistics normalise the input and, when given, running_mean /
    running_var are updated in place: r = (1 - momentum) * r + momentum * stat (the unbiased
    variance for running_var). A cumulative average (nn.BatchNorm's momentum=None) is
    momentum = 1 / num_batches_tracked. In evaluation the running statistics are used.
    """
    if training:
        _verify_batch_size(input.size())
    return ember.batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, False
    )


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Normalises each (sample, channel) slice of an (N, C, ...) input over its spatial dims."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return ember.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False
    )


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalises over the trailing dims `normalized_shape`, then scales and shifts."""
    return ember.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises groups of C / num_groups channels of an (N, C, ...) input."""
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    _verify_batch_size(
        [input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:])
    )
    return ember.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing dims; eps=None is
    ember.finfo(input.dtype).eps."""
    return ember.rms_norm(input, normalized_shape, weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """AlexNet's local response normalisation of an (N, C, *) input across channels:
    x / (k + alpha / size * sum of x^2 over `size` neighbouring channels) ** beta.

    The window sum is an average pool over C, zero-padded as PyTorch does. PyTorch pools
    4-D and wider inputs with avg_pool3d and a (size, 1, 1) kernel; flattening the trailing
    dims into one and pooling with avg_pool2d and a (size, 1) kernel is the same computation.
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sizes = input.size()
    div = input.mul(input).reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
