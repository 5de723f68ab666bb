"""Padding and resampling functions of ember.nn.functional: pad, interpolate / upsample,
pixel_shuffle / pixel_unshuffle, channel_shuffle.

interpolate is argument handling only (as in PyTorch, it is Python there too); the resampling
itself is one C++ op per call with its own backward.
"""

import math
import numbers
import warnings

import numpy as np

from ... import _C
from ..._C import _nn
from ._pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

__all__ = [
    "pad",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
]

pad = _nn.pad
pixel_shuffle = _C.pixel_shuffle
pixel_unshuffle = _C.pixel_unshuffle

_LINEAR_MODES = {3: "linear", 4: "bilinear", 5: "trilinear"}


def _is_integer(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def channel_shuffle(input, groups):
    """Interleaves the channels of an (N, C, *) input: C viewed as (groups, C / groups) and
    transposed (ShuffleNet's mixing of grouped-convolution outputs). A reshape, so autograd
    flows through it."""
    if not _is_integer(groups):
        raise TypeError(
            "channel_shuffle(): argument 'groups' (position 2) must be int, not "
            f"{type(groups).__name__}"
        )
    sizes = input.size()
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(sizes)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    channels = sizes[1]
    if channels % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {channels} channels and "
            f"{groups} groups."
        )
    # The spatial extent is spelled out: -1 is ambiguous when the input is empty.
    grouped = input.reshape(sizes[0], groups, channels // groups, math.prod(sizes[2:]))
    return grouped.transpose(1, 2).reshape(sizes)


def _cubic_aa_filter(x):
    # Keys' cubic convolution with a = -0.5, the kernel PIL (and PyTorch's antialias) uses.
    a = -0.5
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _linear_aa_filter(x):
    return np.maximum(1.0 - np.abs(x), 0.0)


def _antialias_weights(in_size, out_size, scale_factor, align_corners, mode):
    """The (out_size, in_size) matrix of an anti-aliased 1-D resampling: row i holds the filter
    taps of output pixel i, the filter stretched by the downscaling factor so that it averages
    over every input pixel it covers (PyTorch's and PIL's formulation)."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    elif scale_factor is not None and scale_factor > 0:
        scale = 1.0 / scale_factor
    else:
        scale = in_size / out_size
    interp_size, filt = (4, _cubic_aa_filter) if mode == "bicubic" else (2, _linear_aa_filter)
    support = interp_size * 0.5 * scale if scale >= 1.0 else interp_size * 0.5
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    weights = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = scale * (i + 0.5)
        # int() truncates toward zero, as the C++ reference's casts do.
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        taps = filt((np.arange(lo, hi) - center + 0.5) * invscale)
        total = taps.sum()
        weights[i, lo:hi] = taps / total if total != 0 else taps
    return weights


def _interpolate_antialias(input, output_size, scale_factors, mode, align_corners):
    """Anti-aliased bilinear / bicubic resampling of a 4-D input: a separable filter applied as
    two matrix products, rows (out_h, in_h) @ x @ columns (in_w, out_w). Autograd flows through
    the products; the weights depend only on the sizes."""
    from ... import tensor

    if not input.is_floating_point():
        raise NotImplementedError(
            f'[interpolate] "upsample_{mode}2d_aa" not implemented for dtype {input.dtype} '
            "(anti-aliased resampling needs a floating-point input)"
        )
    in_h, in_w = input.shape[2], input.shape[3]
    out_h, out_w = output_size
    if out_h <= 0 or out_w <= 0:
        raise RuntimeError(
            f"[interpolate] Input and output sizes should be greater than 0, but got input "
            f"(H: {in_h}, W: {in_w}) output (H: {out_h}, W: {out_w})"
        )
    sh, sw = scale_factors if scale_factors is not None else (None, None)
    rows = tensor(_antialias_weights(in_h, out_h, sh, align_corners, mode), dtype=input.dtype)
    cols = tensor(_antialias_weights(in_w, out_w, sw, align_corners, mode).T, dtype=input.dtype)
    return rows.matmul(input).matmul(cols)


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resamples input (N, C, *spatial) to `size` or by `scale_factor` (torch's interpolate).

    Modes: nearest, nearest-exact, linear (3-D input), bilinear (4-D), trilinear (5-D),
    bicubic (4-D) and area (adaptive average pooling, 3-D and 4-D); ``antialias=True`` with
    bilinear and bicubic filters over every input pixel an output pixel covers when downscaling
    (as PyTorch and PIL do).
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False

    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = list(size)
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    # "area" always works from an explicit size.
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(math.floor(float(input.size(i + 2)) * scale_factors[i])) for i in
                       range(dim)]
        scale_factors = None
    if output_size is None:
        # The kernels receive the scale factors too: they decide where output pixels sample.
        output_size = [int(math.floor(float(input.size(i + 2)) * scale_factors[i])) for i in
                       range(dim)]

    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if antialias:
        return _interpolate_antialias(input, output_size, scale_factors, mode, align_corners)

    if mode in ("nearest", "nearest-exact") and 3 <= input.dim() <= 5:
        return _nn._upsample(input, output_size, mode, False, scale_factors)
    if mode == "area":
        if input.dim() == 3:
            return adaptive_avg_pool1d(input, output_size)
        if input.dim() == 4:
            return adaptive_avg_pool2d(input, output_size)
    if mode in ("linear", "bilinear", "trilinear") and _LINEAR_MODES.get(input.dim()) == mode:
        return _nn._upsample(input, output_size, mode, align_corners, scale_factors)
    if mode == "bicubic" and input.dim() == 4:
        return _nn._upsample(input, output_size, mode, align_corners, scale_factors)

    for d, name in _LINEAR_MODES.items():
        if mode == name and input.dim() in _LINEAR_MODES:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {d}D input"
            )
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
        f"trilinear | area | nearest-exact (got {mode})"
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate (warns, as PyTorch)."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
