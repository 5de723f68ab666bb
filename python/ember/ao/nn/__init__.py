"""Quantized modules (``torch.ao.nn``)."""

from . import intrinsic, quantized  # noqa: F401
