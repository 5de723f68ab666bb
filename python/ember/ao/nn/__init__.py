"""Quantized modules (``torch.ao.nn``)."""

from . import intrinsic, qat, quantized  # noqa: F401
