"""``ember.nn.init``: in-place parameter initialisers, as ``torch.nn.init``.

Every function writes into ``tensor`` without recording history and returns it. The random
draws come from ember's generator (the global one, or ``generator=``); the distributions are
PyTorch's, the streams are not (different RNG), so the same recipe gives the same
distributions, not the same numbers.
"""

from __future__ import annotations

import math
import warnings

import ember
from ember import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]


def _no_grad_uniform_(tensor, a, b, generator=None):
    with ember.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    with ember.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _no_grad_fill_(tensor, val):
    with ember.no_grad():
        return tensor.fill_(val)


def _no_grad_zero_(tensor):
    with ember.no_grad():
        return tensor.zero_()


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    # Exact rejection sampling, as PyTorch: when the interval holds much of the mass (p > 0.3),
    # redraw normal samples that fall outside it; otherwise propose uniformly on [a, b] and
    # accept with probability exp(-(x - mean)^2 / (2 std^2)) relative to the density's peak
    # inside the interval.
    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with ember.no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # The bounds as the tensor's dtype rounds them, so no value can land outside.
            lo = ember.tensor(a, dtype=tensor.dtype).item()
            hi = ember.tensor(b, dtype=tensor.dtype).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                redraw = ember.empty_like(result).normal_(mean, std, generator=generator)
                result = ember.where(mask, redraw, result)
            if tensor is not result:
                tensor.copy_(result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2
            candidates = ember.empty_like(tensor)
            accept_buf = ember.empty_like(tensor)
            tensor.uniform_(a, b, generator=generator)
            candidates.copy_(tensor)
            candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
            if pending.any():
                result = tensor
                while True:
                    candidates.uniform_(a, b, generator=generator)
                    result = ember.where(pending, candidates, result)
                    candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                    pending = ember.where(
                        pending,
                        accept_buf.uniform_(generator=generator).log_().gt(candidates),
                        pending,
                    )
                    if not pending.any():
                        break
                tensor.copy_(result)
        return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu, 3/4 for selu."""
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    elif nonlinearity == "tanh":
        return 5.0 / 3
    elif nonlinearity == "relu":
        return math.sqrt(2.0)
    elif nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    elif nonlinearity == "selu":
        return 3.0 / 4
    else:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fills ``tensor`` from U(a, b)."""
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fills ``tensor`` from N(mean, std^2)."""
    return _no_grad_normal_(tensor, mean, std, generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Tensor:
    """Fills ``tensor`` from N(mean, std^2) truncated to [a, b]."""
    return _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _no_grad_fill_(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _no_grad_fill_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return _no_grad_zero_(tensor)


def eye_(tensor: Tensor) -> Tensor:
    """Fills a 2-D tensor with the identity (ones on the main diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with ember.no_grad():
        tensor.zero_()
        tensor.diagonal().fill_(1)
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3-, 4- or 5-D convolution weight with the Dirac delta (identity convolution),
    per group."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with ember.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    fan_in = num_input_fmaps * receptive_field_size
    fan_out = num_output_fmaps * receptive_field_size
    return fan_in, fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _no_grad_uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _no_grad_normal_(tensor, 0.0, std, generator)


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    with ember.no_grad():
        return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He et al., 2015)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    with ember.no_grad():
        return tensor.normal_(0, std, generator=generator)


def _qr(a: Tensor):
    """Reduced QR of a 2-D tensor: ember.linalg.qr when it exists, else NumPy's (LAPACK)."""
    linalg = getattr(ember, "linalg", None)
    if linalg is not None and hasattr(linalg, "qr"):
        if a.dtype in (ember.float16, ember.bfloat16):  # LAPACK has no half precision
            q, r = linalg.qr(a.to(ember.float32))
            return q.to(a.dtype), r.to(a.dtype)
        return linalg.qr(a)
    import numpy as np

    # NumPy has no bfloat16: factor in float64 and convert back.
    q, r = np.linalg.qr(a.to(ember.float64).numpy())
    return ember.from_numpy(q).to(a.dtype), ember.from_numpy(r).to(a.dtype)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fills ``tensor`` (flattened to rows x rest) with a (semi-)orthogonal matrix drawn
    uniformly (Saxe et al., 2013): the Q of a Gaussian matrix's QR, signs fixed by diag(R)."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with ember.no_grad():
        flattened = ember.empty((rows, cols), dtype=tensor.dtype).normal_(
            0, 1, generator=generator
        )
        if rows < cols:
            flattened = flattened.t()
        q, r = _qr(flattened)
        # Make Q uniform over the orthogonal group: multiply column j by sign(R[j, j]).
        q = q * ember.diagonal(r, 0).sign()
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fills a 2-D tensor from N(0, std^2) and zeroes ceil(sparsity * rows) random rows of
    every column (Martens, 2010)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with ember.no_grad():
        tensor.normal_(0, std, generator=generator)
        if num_zeros > 0 and cols > 0:
            # One random permutation of the rows per column, all at once: the ranks of
            # independent uniform keys along dim 0.
            keys = ember.rand((rows, cols), generator=generator)
            zero_rows = keys.argsort(dim=0)[:num_zeros]
            tensor.scatter_(0, zero_rows, 0.0)
    return tensor


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"{old_name}(...): deprecated, use nn.init.{new_name}."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
