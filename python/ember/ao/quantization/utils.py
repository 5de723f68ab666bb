"""Helpers shared by the quantized modules and the workflows."""

import ember

__all__ = ["quantize_weight"]


def quantize_weight(weight, observer):
    """Quantizes a float weight with the (already run) observer's parameters: per tensor, or per
    channel along the observer's ch_axis."""
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme == ember.per_channel_affine_float_qparams:
        return ember.quantize_per_channel(weight, scale.double(), zero_point.float(),
                                          observer.ch_axis, observer.dtype)
    if observer.qscheme in (ember.per_channel_affine, ember.per_channel_symmetric):
        return ember.quantize_per_channel(weight, scale.double(), zero_point.long(),
                                          observer.ch_axis, observer.dtype)
    return ember.quantize_per_tensor(weight, float(scale), int(zero_point), observer.dtype)
