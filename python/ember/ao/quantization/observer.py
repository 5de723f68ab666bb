"""Observers: modules that watch the values flowing through them and choose quantization
parameters (``torch.ao.quantization.observer``). The arithmetic is PyTorch's, in float32
tensors, so the same calibration gives the same scales and zero points."""

from __future__ import annotations

import functools

import ember
from ember import nn

__all__ = [
    "MinMaxObserver", "MovingAverageMinMaxObserver", "MovingAveragePerChannelMinMaxObserver",
    "ObserverBase", "PerChannelMinMaxObserver", "PlaceholderObserver",
    "default_dynamic_quant_observer", "default_observer", "default_per_channel_weight_observer",
    "default_placeholder_observer", "default_weight_observer",
]


class _PartialWrapper:
    """What ``Observer.with_args(...)`` returns: calling it builds an observer with those
    arguments (PyTorch's _PartialWrapper)."""

    def __init__(self, p):
        self.p = p

    def __call__(self, *args, **keywords):
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__()

    def with_args(self, **kwargs):
        return _PartialWrapper(functools.partial(self.p, **kwargs))


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


_PER_TENSOR = ("per_tensor_affine", "per_tensor_symmetric")
_PER_CHANNEL = ("per_channel_affine", "per_channel_symmetric")
_SYMMETRIC = ("per_tensor_symmetric", "per_channel_symmetric")


class ObserverBase(nn.Module):
    """Base of all observers: ``forward`` records statistics and returns its input unchanged;
    ``calculate_qparams`` turns them into (scale, zero_point)."""

    with_args = classmethod(_with_args)

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic


class _UniformObserver(ObserverBase):
    """Affine or symmetric uniform quantization over [quant_min, quant_max]."""

    def __init__(self, dtype=ember.quint8, qscheme=ember.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=None,
                 is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme
        if reduce_range and qscheme == ember.per_tensor_symmetric and dtype == ember.quint8:
            raise NotImplementedError(
                "Cannot reduce range for symmetric quantization for quint8: use qint8, or "
                "reduce_range=False")
        if dtype not in (ember.qint8, ember.quint8, ember.qint32):
            raise ValueError(f"{type(self).__name__}: default observers support quint8, qint8 "
                             f"and qint32, got {dtype}")
        self.reduce_range = reduce_range
        eps = ember.finfo(ember.float32).eps if eps is None else eps
        self.register_buffer("eps", ember.tensor([float(eps)]))
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise ValueError(f"{type(self).__name__}: the quantization range must include "
                                 f"0, got [{quant_min}, {quant_max}]")
            if quant_min >= quant_max:
                raise ValueError(f"{type(self).__name__}: quant_min {quant_min} must be less "
                                 f"than quant_max {quant_max}")
        self.quant_min, self.quant_max = self._qmin_qmax(quant_min, quant_max)

    def _qmin_qmax(self, quant_min, quant_max):
        if self.has_customized_qrange:
            if self.reduce_range:
                return quant_min // 2, quant_max // 2
            return quant_min, quant_max
        if self.dtype == ember.qint8:
            return (-64, 63) if self.reduce_range else (-128, 127)
        if self.dtype == ember.quint8:
            return (0, 127) if self.reduce_range else (0, 255)
        return -(2**31), 2**31 - 1

    def _calculate_qparams(self, min_val, max_val):
        """PyTorch's _calculate_qparams: float32 scales, int64 zero points."""
        if min_val.numel() == 0 or (min_val.dim() == 0 and float(min_val) == float("inf")
                                    and float(max_val) == float("-inf")):
            # Nothing observed yet: PyTorch's defaults (it warns; so do we).
            import warnings

            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=3)
            return ember.tensor([1.0]), ember.tensor([0], dtype=ember.int64)
        if not bool((min_val <= max_val).all()):
            raise RuntimeError(f"{type(self).__name__}: min {min_val} should be less than or "
                               f"equal to max {max_val}")
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = ember.minimum(min_val, ember.zeros_like(min_val))
        max_val_pos = ember.maximum(max_val, ember.zeros_like(max_val))
        zero_point = ember.zeros(min_val_neg.shape, dtype=ember.int64)
        if self.qscheme.name in _SYMMETRIC:
            max_val_pos = ember.maximum(-min_val_neg, max_val_pos)
            scale = max_val_pos / (float(quant_max - quant_min) / 2)
            scale = ember.maximum(scale, self.eps)
            if self.dtype == ember.quint8:
                middle = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = ember.full(zero_point.shape, middle, dtype=ember.int64)
        else:
            scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
            scale = ember.maximum(scale, self.eps)
            zero_point = quant_min - ember.round(min_val_neg / scale).to(ember.int32)
            zero_point = ember.clamp(zero_point, quant_min, quant_max).to(ember.int64)
        if scale.dim() == 0:
            scale = ember.tensor([float(scale)])
        if zero_point.dim() == 0:
            zero_point = ember.tensor([int(zero_point)], dtype=ember.int64)
        return scale, zero_point

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MinMaxObserver(_UniformObserver):
    """Running minimum and maximum of everything observed (per tensor)."""

    def __init__(self, dtype=ember.quint8, qscheme=ember.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=None,
                 is_dynamic=False, **kwargs):
        if qscheme.name not in _PER_TENSOR:
            raise NotImplementedError(
                f"MinMaxObserver's qscheme only supports per_tensor_affine and "
                f"per_tensor_symmetric, got {qscheme}: use PerChannelMinMaxObserver")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps,
                         is_dynamic, **kwargs)
        self.register_buffer("min_val", ember.tensor(float("inf")))
        self.register_buffer("max_val", ember.tensor(float("-inf")))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(ember.float32)
        lo, hi = ember.aminmax(x)
        self.min_val.copy_(ember.minimum(lo, self.min_val))
        self.max_val.copy_(ember.maximum(hi, self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def reset_min_max_vals(self):
        self.min_val.fill_(float("inf"))
        self.max_val.fill_(float("-inf"))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving averages of each batch's minimum and maximum."""

    def __init__(self, averaging_constant=0.01, dtype=ember.quint8,
                 qscheme=ember.per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=None, is_dynamic=False, **kwargs):
        self.averaging_constant = averaging_constant
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(ember.float32)
        lo, hi = ember.aminmax(x)
        if bool(ember.isinf(self.min_val)) and bool(ember.isinf(self.max_val)):
            self.min_val.copy_(lo)
            self.max_val.copy_(hi)
        else:
            c = self.averaging_constant
            self.min_val.copy_(self.min_val + c * (lo - self.min_val))
            self.max_val.copy_(self.max_val + c * (hi - self.max_val))
        return x_orig


class PerChannelMinMaxObserver(_UniformObserver):
    """Minimum and maximum per index along ``ch_axis`` (for per-channel weights)."""

    def __init__(self, ch_axis=0, dtype=ember.quint8, qscheme=ember.per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=None, is_dynamic=False, **kwargs):
        if qscheme.name not in _PER_CHANNEL:
            raise NotImplementedError(
                f"PerChannelMinMaxObserver's qscheme only supports per_channel_affine and "
                f"per_channel_symmetric, got {qscheme}")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps,
                         is_dynamic, **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", ember.tensor([]))
        self.register_buffer("max_val", ember.tensor([]))

    def _channel_min_max(self, x):
        axis = self.ch_axis if self.ch_axis >= 0 else self.ch_axis + x.dim()
        if not 0 <= axis < x.dim():
            raise IndexError(f"PerChannelMinMaxObserver: ch_axis {self.ch_axis} is out of range "
                             f"for an input of shape {tuple(x.shape)}")
        y = x.movedim(axis, 0).reshape(x.shape[axis], -1)
        return ember.aminmax(y, dim=1)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        lo, hi = self._channel_min_max(x_orig.detach().to(ember.float32))
        if self.min_val.numel() == 0:
            self.min_val = lo.clone()
            self.max_val = hi.clone()
        else:
            self.min_val = ember.minimum(self.min_val, lo)
            self.max_val = ember.maximum(self.max_val, hi)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def reset_min_max_vals(self):
        self.min_val = ember.tensor([])
        self.max_val = ember.tensor([])


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Exponential moving averages of each channel's minimum and maximum."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=ember.quint8,
                 qscheme=ember.per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=None, is_dynamic=False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme,
                         reduce_range=reduce_range, quant_min=quant_min, quant_max=quant_max,
                         eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        lo, hi = self._channel_min_max(x_orig.detach().to(ember.float32))
        if self.min_val.numel() == 0:
            self.min_val, self.max_val = lo.clone(), hi.clone()
        else:
            c = self.averaging_constant
            self.min_val = self.min_val + c * (lo - self.min_val)
            self.max_val = self.max_val + c * (hi - self.max_val)
        return x_orig


class PlaceholderObserver(ObserverBase):
    """Records nothing: marks where a dynamic quantization (or a float cast) happens, with the
    dtype it will use."""

    def __init__(self, dtype=ember.float32, custom_op_name="", compute_dtype=None,
                 quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = ember.per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max, self.eps = quant_min, quant_max, eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise RuntimeError("calculate_qparams should not be called for PlaceholderObserver: "
                           "its quantization parameters are chosen at run time")

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_weight_observer = MinMaxObserver.with_args(dtype=ember.qint8,
                                                   qscheme=ember.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=ember.quint8,
                                                               is_dynamic=True)
