"""ember.fft: torch.fft's discrete Fourier transforms (any length, float32/64 and complex64/128,
autograd), the sample-frequency helpers and the shifts.

The transforms are the C++ bindings themselves (ember._C._fft, bindings/fft.cpp); fftfreq,
rfftfreq, fftshift and ifftshift are small compositions of ember.arange and ember.roll.
"""

import math

import ember as _ember

from .._C import _fft as _impl

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

fft = _impl.fft
ifft = _impl.ifft
rfft = _impl.rfft
irfft = _impl.irfft
hfft = _impl.hfft
ihfft = _impl.ihfft
fftn = _impl.fftn
ifftn = _impl.ifftn
rfftn = _impl.rfftn
irfftn = _impl.irfftn
hfftn = _impl.hfftn
ihfftn = _impl.ihfftn
fft2 = _impl.fft2
ifft2 = _impl.ifft2
rfft2 = _impl.rfft2
irfft2 = _impl.irfft2
hfft2 = _impl.hfft2
ihfft2 = _impl.ihfft2


def _freq_dtype(dtype, op):
    dtype = _ember.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"[fft.{op}] {op} requires a floating point or complex dtype, got {dtype}"
        )
    return dtype


def _finish_freq(result, out, requires_grad):
    if out is not None:
        out.resize_(result.shape)
        out.copy_(result)
        result = out
    if requires_grad:
        result.requires_grad_(True)
    return result


def _inverse(v):
    # 1 / 0 is inf, as PyTorch's scalar arithmetic (rfftfreq(0) is [nan]).
    return 1.0 / v if v != 0 else math.inf


def _check_length(n, op):
    n = int(n)
    if n < 0:
        raise RuntimeError(f"[fft.{op}] Trying to create tensor with negative dimension {n}: [{n}]")
    return n


def fftfreq(
    n,
    d=1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """The sample frequencies of fft(x) for a signal of n points spaced d apart:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    n = _check_length(n, "fftfreq")
    dtype = _freq_dtype(out.dtype if out is not None and dtype is None else dtype, "fftfreq")
    positive = _ember.arange((n + 1) // 2, dtype=dtype, device=device)
    negative = _ember.arange(-(n // 2), 0, dtype=dtype, device=device)
    result = _ember.cat([positive, negative]) * _inverse(n * d)
    return _finish_freq(result, out, requires_grad)


def rfftfreq(
    n,
    d=1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """The sample frequencies of rfft(x) for a signal of n points spaced d apart:
    [0, 1, ..., n // 2] / (d n)."""
    n = _check_length(n, "rfftfreq")
    dtype = _freq_dtype(out.dtype if out is not None and dtype is None else dtype, "rfftfreq")
    result = _ember.arange(n // 2 + 1, dtype=dtype, device=device) * _inverse(n * d)
    return _finish_freq(result, out, requires_grad)


def _shift(input, dim, inverse, op):
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if not dims:
        raise RuntimeError(f"[fft.{op}] `shifts` required: a 0-d tensor has no dim to shift")
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return _ember.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero-frequency term to the centre: a roll by n // 2 along each of dim (all)."""
    return _shift(input, dim, False, "fftshift")


def ifftshift(input, dim=None):
    """The inverse of fftshift: a roll by (n + 1) // 2 along each of dim (all)."""
    return _shift(input, dim, True, "ifftshift")
