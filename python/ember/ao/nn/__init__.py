"""Quantized modules (``torch.ao.nn``)."""

from . import quantized  # noqa: F401
