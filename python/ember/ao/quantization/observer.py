"""Observers: modules that watch the values flowing through them and choose quantization
parameters (``torch.ao.quantization.observer``). The arithmetic is PyTorch's, in float32
tensors, so the same calibration gives the same scales and zero points."""

from __future__ import annotations

import functools

import ember
from ember import nn

__all__ = [
    "HistogramObserver", "MinMaxObserver", "MovingAverageMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "ObserverBase", "PerChannelMinMaxObserver", "PlaceholderObserver",
    "default_dynamic_quant_observer", "default_observer", "default_per_channel_weight_observer",
    "default_placeholder_observer", "default_weight_observer",
    "default_float_qparams_observer", "default_float_qparams_observer_4bit",
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
_PER_CHANNEL = ("per_channel_affine", "per_channel_symmetric", "per_channel_affine_float_qparams")
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
        if dtype not in (ember.qint8, ember.quint8, ember.qint32, ember.quint4x2):
            raise ValueError(f"{type(self).__name__}: default observers support quint8, qint8, "
                             f"qint32 and quint4x2, got {dtype}")
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
        if self.dtype == ember.quint4x2:
            return 0, 15
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
        if self.qscheme.name == "per_channel_affine_float_qparams":
            # Each row's own [min, max] (not widened to include 0) on [quant_min, quant_max];
            # the zero point is real: -min / scale puts the minimum on 0.
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = ember.where(scale > self.eps, scale, ember.ones_like(scale))
            return scale, -1 * min_val / scale
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
                "PerChannelMinMaxObserver's qscheme only supports per_channel_affine, "
                f"per_channel_symmetric and per_channel_affine_float_qparams, got {qscheme}")
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


def _histc(x, bins, lo, hi):
    """torch.histc over float32 values: ``bins`` equal bins on [lo, hi] (widened by 1 on each side
    when lo == hi), values outside ignored, hi itself in the last bin."""
    import numpy as np

    lo, hi = float(lo), float(hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    x = x[(x >= lo) & (x <= hi)]
    idx = np.floor((x.astype(np.float64) - lo) * bins / (hi - lo)).astype(np.int64)
    np.clip(idx, 0, bins - 1, out=idx)
    return np.bincount(idx, minlength=bins).astype(np.float32)


class HistogramObserver(_UniformObserver):
    """A running histogram of the values seen (``bins`` bins over their running range); the
    quantization range is the one that minimises the L2 quantization error of that histogram
    (PyTorch's non-linear search, after Caffe2's NormMinimization), so that outliers do not
    stretch the scale. Per tensor only."""

    def __init__(self, bins=2048, dtype=ember.quint8, qscheme=ember.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=None, is_dynamic=False, **kwargs):
        if qscheme.name not in _PER_TENSOR:
            raise NotImplementedError("HistogramObserver's qscheme only support "
                                      "per_tensor_symmetric and per_tensor_affine")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps,
                         is_dynamic, **kwargs)
        self.bins = bins
        self.register_buffer("histogram", ember.zeros(bins))
        self.register_buffer("min_val", ember.tensor(float("inf")))
        self.register_buffer("max_val", ember.tensor(float("-inf")))
        self.dst_nbins = 2 ** (32 if dtype == ember.qint32 else 8)
        self.upsample_rate = 16  # sub-bins per bin when an old histogram moves to a new range

    def _rebinned(self, hist, lo, hi, new_lo, new_hi):
        """The old histogram (range [lo, hi]) moved onto ``bins`` bins over [new_lo, new_hi]:
        each old bin split into upsample_rate equal parts placed by their midpoints."""
        import numpy as np

        n = self.bins * self.upsample_rate
        parts = np.repeat(hist, self.upsample_rate) / self.upsample_rate
        width = (hi - lo) / n
        mids = np.linspace(lo, hi, n + 1, dtype=np.float32)[:-1] + 0.5 * width
        edges = np.linspace(new_lo, new_hi, self.bins + 1, dtype=np.float32)
        idx = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, self.bins - 1)
        return np.bincount(idx, weights=parts, minlength=self.bins).astype(np.float32)

    def forward(self, x_orig):
        import warnings

        import numpy as np

        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(ember.float32).reshape(-1).numpy()
        if np.isinf(x).any():
            warnings.warn("inf detected in input tensor, ignoring those values", stacklevel=2)
            x = x[~np.isinf(x)]
            if x.size == 0:
                return x_orig
        x_min, x_max = np.float32(x.min()), np.float32(x.max())
        cur_min, cur_max = np.float32(self.min_val.item()), np.float32(self.max_val.item())
        if cur_min == np.inf or cur_max == -np.inf:
            hist, lo, hi = _histc(x, self.bins, x_min, x_max), x_min, x_max
        else:
            lo, hi = min(cur_min, x_min), max(cur_max, x_max)
            hist = _histc(x, self.bins, lo, hi)
            old = self.histogram.numpy()
            if lo == cur_min and hi == cur_max:
                hist = hist + old
            elif cur_min == cur_max:  # the old values were all one value
                hist = hist + _histc(np.array([cur_min], np.float32), self.bins, lo, hi) * \
                    old.sum()
            else:
                hist = hist + self._rebinned(old, cur_min, cur_max, lo, hi)
        self.histogram = ember.from_numpy(hist.astype(np.float32))
        self.min_val = ember.tensor(float(lo))
        self.max_val = ember.tensor(float(hi))
        return x_orig

    def _quantization_error(self, hist, bin_width, start_bin, end_bin):
        """The L2 error of quantizing the histogram's values with [start_bin, end_bin + 1) as
        the range: each source bin's mass spread uniformly, against dst_nbins equal bins."""
        import numpy as np

        dst_width = bin_width * (end_bin - start_bin + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        src = np.arange(self.bins, dtype=np.float64)
        begin = (src - start_bin) * bin_width
        end = begin + bin_width
        dst_begin = np.clip(np.floor(begin / dst_width), 0, self.dst_nbins - 1)
        dst_end = np.clip(np.floor(end / dst_width), 0, self.dst_nbins - 1)
        density = hist / bin_width

        def norm(a, b):
            return density * (b * b * b - a * a * a) / 3

        half = dst_width / 2
        total = norm(begin - (dst_begin + 0.5) * dst_width, half)
        total += (dst_end - dst_begin - 1) * norm(-half, half)
        total += norm(-half, end - (dst_end * dst_width + half))
        return float(total.sum())

    def _range_search(self):
        """Shrinks [min_val, max_val] from either side, one quantile step (1e-5) at a time,
        while the quantization error keeps falling."""
        import numpy as np

        hist = self.histogram.numpy().astype(np.float64)
        lo, hi = np.float32(self.min_val.item()), np.float32(self.max_val.item())
        bin_width = np.float32((hi - lo) / np.float32(self.bins))
        total = hist.sum()
        csum = np.cumsum(hist)
        step, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        width = float(hi) - float(lo)
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            # first bin from start_bin whose cumulative mass reaches next_alpha of the total;
            # last bin down from end_bin whose cumulative mass is within next_beta of it
            left = start_bin + int(np.searchsorted(csum[start_bin:end_bin], next_alpha * total))
            right = start_bin + int(np.searchsorted(csum[start_bin + 1:end_bin + 1],
                                                    next_beta * total, side="right"))
            next_start, next_end = start_bin, end_bin
            if left - start_bin > end_bin - right:
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            err = self._quantization_error(hist, width / self.bins, next_start, next_end)
            if err > norm_min:
                break
            norm_min, start_bin, end_bin = err, next_start, next_end
        new_min = ember.tensor(float(lo + bin_width * np.float32(start_bin)))
        new_max = ember.tensor(float(lo + bin_width * np.float32(end_bin + 1)))
        return new_min, new_max

    def calculate_qparams(self):
        if float(self.min_val) == float("inf") and float(self.max_val) == float("-inf"):
            return self._calculate_qparams(self.min_val, self.max_val)  # warns, defaults
        return self._calculate_qparams(*self._range_search())

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}, bins={self.bins}"

# Per-row observers of embedding weights: real zero points, 8-bit and 4-bit.
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.quint8, qscheme=ember.per_channel_affine_float_qparams, ch_axis=0)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=ember.quint4x2, qscheme=ember.per_channel_affine_float_qparams, ch_axis=0)


class FixedQParamsObserver(ObserverBase):
    """Observes nothing: its scale and zero point are fixed at construction. For activations
    whose output range is known in advance (sigmoid and hardsigmoid in [0, 1], tanh in
    [-1, 1]), where PyTorch's quantized kernels fix the output parameters rather than take
    calibrated ones; observing them would only give a scale that convert() cannot use."""

    def __init__(self, scale, zero_point, dtype=ember.quint8, qscheme=ember.per_tensor_affine,
                 quant_min=0, quant_max=255, is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.register_buffer("scale", ember.tensor([float(scale)], dtype=ember.float32))
        self.register_buffer("zero_point", ember.tensor([int(zero_point)], dtype=ember.int32))
        self.qscheme = qscheme

    def forward(self, X):
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point


# PyTorch's quantized sigmoid / hardsigmoid (and softmax) output: [0, 1) in 256 steps; tanh:
# [-1, 1) in 256 steps around 128.
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=ember.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=ember.quint8, quant_min=0, quant_max=255)
# PyTorch's older names.
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer

__all__ += [
    "FixedQParamsObserver", "default_affine_fixed_qparams_observer",
    "default_fixed_qparams_range_0to1_observer", "default_fixed_qparams_range_neg1to1_observer",
    "default_symmetric_fixed_qparams_observer",
]
