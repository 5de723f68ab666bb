"""Padding and resampling functions of ember.nn.functional: pad, interpolate / upsample,
pixel_shuffle / pixel_unshuffle.

interpolate is argument handling only (as in PyTorch, it is Python there too); the resampling
itself is one C++ op per call with its own backward.
"""

import math
import numbers
import warnings

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
]

pad = _nn.pad
pixel_shuffle = _C.pixel_shuffle
pixel_unshuffle = _C.pixel_unshuffle

_LINEAR_MODES = {3: "linear", 4: "bilinear", 5: "trilinear"}


def _is_integer(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


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
    bicubic (4-D) and area (adaptive average pooling, 3-D and 4-D).
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
        raise NotImplementedError("[interpolate] antialias=True is not supported by Ember")

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
