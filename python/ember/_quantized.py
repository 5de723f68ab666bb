"""Quantized tensor functions at the top level (ember.quantize_per_tensor & co.), with PyTorch's
signatures: scales and zero points may be Python numbers or tensors, and lists of tensors are
quantized or dequantized one by one. The work is C++ (ops/quantized/quantize.h)."""

from __future__ import annotations

from . import _C

_Q = _C._quantized

__all__ = [
    "_empty_affine_quantized", "_make_per_channel_quantized_tensor",
    "fake_quantize_per_channel_affine", "fake_quantize_per_tensor_affine",
    "_make_per_tensor_quantized_tensor", "dequantize", "quantize_per_channel",
    "quantize_per_tensor", "quantize_per_tensor_dynamic",
]


def _number(value, what, who, kind=float):
    if isinstance(value, _C.Tensor):
        if value.numel() != 1:
            raise ValueError(f"ember.{who}: {what} must hold one value, got shape "
                             f"{tuple(value.shape)}")
        value = value.item()
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise TypeError(f"ember.{who}: {what} must be an integer, got {value}")
    return kind(value)


def _values(values, what, who, kind=float):
    if isinstance(values, _C.Tensor):
        return [kind(v) for v in values.reshape(-1).tolist()]
    return [kind(v) for v in values]


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantizes a float tensor (or each of a list of them) with one scale and zero point:
    q = clamp(round(x / scale) + zero_point) in dtype's range."""
    if isinstance(input, (list, tuple)):
        scales = scale.tolist() if isinstance(scale, _C.Tensor) else list(scale)
        zps = zero_point.tolist() if isinstance(zero_point, _C.Tensor) else list(zero_point)
        if not len(scales) == len(zps) == len(input):
            raise ValueError(f"ember.quantize_per_tensor: {len(input)} tensors, {len(scales)} "
                             f"scales and {len(zps)} zero points")
        return [quantize_per_tensor(t, s, z, dtype) for t, s, z in zip(input, scales, zps)]
    return _Q.quantize_per_tensor(input, _number(scale, "scale", "quantize_per_tensor"),
                                  _number(zero_point, "zero_point", "quantize_per_tensor", int),
                                  dtype)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantizes a float tensor with one scale and zero point per index along `axis`. Floating
    point zero points (what per_channel_affine_float_qparams observers give, for embedding
    weights) make that scheme: q = round(x / scale + zero_point)."""
    who = "quantize_per_channel"
    if isinstance(zero_points, _C.Tensor) and zero_points.is_floating_point():
        return _Q.quantize_per_channel_float_qparams(input, _values(scales, "scales", who),
                                                     _values(zero_points, "zero_points", who),
                                                     int(axis), dtype)
    return _Q.quantize_per_channel(input, _values(scales, "scales", who),
                                   _values(zero_points, "zero_points", who, int), int(axis),
                                   dtype)


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """Quantizes with the scale and zero point chosen from the input's own range."""
    return _Q.quantize_per_tensor_dynamic(input, dtype, bool(reduce_range))


def dequantize(tensor):
    """The float32 values of a quantized tensor (or of each of a list of them)."""
    if isinstance(tensor, (list, tuple)):
        return [_Q.dequantize(t) for t in tensor]
    return _Q.dequantize(tensor)


def _make_per_tensor_quantized_tensor(input, scale, zero_point):
    """A quantized tensor holding a copy of the integers `input` (int8 -> qint8, uint8 ->
    quint8, int32 -> qint32) with the given scale and zero point."""
    who = "_make_per_tensor_quantized_tensor"
    return _Q._make_per_tensor_quantized_tensor(input, _number(scale, "scale", who),
                                                _number(zero_point, "zero_point", who, int))


def _make_per_channel_quantized_tensor(input, scale, zero_point, axis):
    who = "_make_per_channel_quantized_tensor"
    return _Q._make_per_channel_quantized_tensor(input, _values(scale, "scale", who),
                                                 _values(zero_point, "zero_point", who, int),
                                                 int(axis))


def _empty_affine_quantized(size, *, scale=1.0, zero_point=0, dtype=None, device=None,
                            memory_format=None):
    """A quantized tensor of ``size`` with the given parameters. Its values are those of the
    zero point (0.0): Ember does not hand out uninitialised quantized memory."""
    from . import _C as C

    dtype = C.quint8 if dtype is None else dtype
    storage = {C.qint8: C.int8, C.quint8: C.uint8, C.qint32: C.int32}.get(dtype)
    if storage is None:
        raise TypeError(f"ember._empty_affine_quantized: dtype must be quantized, got {dtype}")
    if isinstance(size, int):
        size = (size,)
    import ember

    ints = ember.full(tuple(size), int(zero_point), dtype=storage)
    return _make_per_tensor_quantized_tensor(ints, scale, zero_point)


def _fake_quantize(input, scale, zero_point, quant_min, quant_max):
    """(clamp(round(x * (1 / scale)) + zp, qmin, qmax) - zp) * scale in float32, scale and
    zero_point tensors broadcast against input; the mask of the unclamped elements."""
    import ember

    inv = ember.ones(()) / scale  # float32, as PyTorch's 1.0f / scale
    q = ember.round(input * inv) + zero_point
    inside = (q >= quant_min) & (q <= quant_max)
    return (q.clamp(quant_min, quant_max) - zero_point) * scale, inside


def _fake_quantize_function():
    import ember

    class FakeQuantize(ember.autograd.Function):
        """Fake quantization with the straight-through gradient: the output gradient passes
        where the input was not clamped, and is zero where it was."""

        @staticmethod
        def forward(ctx, input, scale, zero_point, quant_min, quant_max):
            out, inside = _fake_quantize(input, scale, zero_point, quant_min, quant_max)
            ctx.save_for_backward(inside)
            return out

        @staticmethod
        def backward(ctx, grad):
            (inside,) = ctx.saved_tensors
            return grad * inside, None, None, None, None

    return FakeQuantize


_FAKE_QUANTIZE = None


def _check_fake_range(quant_min, quant_max, who):
    if not quant_min <= 0 <= quant_max or quant_min >= quant_max:
        raise ValueError(f"ember.{who}: quant_min {quant_min} and quant_max {quant_max} must "
                         "satisfy quant_min <= 0 <= quant_max and quant_min < quant_max")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """What quantize then dequantize give, in float32, differentiable with the straight-through
    estimator (PyTorch's fake_quantize_per_tensor_affine). scale / zero_point: numbers or
    one-element tensors."""
    global _FAKE_QUANTIZE
    import ember

    who = "fake_quantize_per_tensor_affine"
    if not input.is_floating_point():
        raise TypeError(f"ember.{who}: expected a floating point input, got {input.dtype}")
    _check_fake_range(quant_min, quant_max, who)
    scale_t = ember.tensor(_number(scale, "scale", who), dtype=ember.float32)
    if not float(scale_t) > 0:
        raise ValueError(f"ember.{who}: scale must be positive, got {float(scale_t)}")
    zp = _number(zero_point, "zero_point", who, int)
    if not quant_min <= zp <= quant_max:
        raise ValueError(f"ember.{who}: zero_point {zp} is outside [{quant_min}, {quant_max}]")
    _FAKE_QUANTIZE = _FAKE_QUANTIZE or _fake_quantize_function()
    out = _FAKE_QUANTIZE.apply(input.float(), scale_t, ember.tensor(float(zp)), quant_min,
                               quant_max)
    return out if input.dtype == ember.float32 else out.to(input.dtype)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Per-channel fake quantization along ``axis`` (scale / zero_point: 1-D tensors)."""
    global _FAKE_QUANTIZE
    import ember

    who = "fake_quantize_per_channel_affine"
    if not input.is_floating_point():
        raise TypeError(f"ember.{who}: expected a floating point input, got {input.dtype}")
    _check_fake_range(quant_min, quant_max, who)
    axis = axis + input.dim() if axis < 0 else axis
    if not 0 <= axis < input.dim():
        raise IndexError(f"ember.{who}: axis {axis} is out of range for a {input.dim()}-D input")
    n = input.shape[axis]
    if scale.numel() != n or zero_point.numel() != n:
        raise ValueError(f"ember.{who}: {scale.numel()} scales and {zero_point.numel()} zero "
                         f"points for {n} channels")
    if not bool((scale > 0).all()):
        raise ValueError(f"ember.{who}: every scale must be positive")
    shape = [1] * input.dim()
    shape[axis] = n
    _FAKE_QUANTIZE = _FAKE_QUANTIZE or _fake_quantize_function()
    out = _FAKE_QUANTIZE.apply(input.float(), scale.detach().float().reshape(shape),
                               zero_point.detach().float().reshape(shape), quant_min, quant_max)
    return out if input.dtype == ember.float32 else out.to(input.dtype)
