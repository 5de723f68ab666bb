"""Statically quantized modules and the dynamic ones (``torch.ao.nn.quantized``)."""

from . import dynamic  # noqa: F401
from .modules import DeQuantize, Linear, LinearPackedParams, Quantize, ReLU, ReLU6

__all__ = ["DeQuantize", "Linear", "LinearPackedParams", "Quantize", "ReLU", "ReLU6"]
