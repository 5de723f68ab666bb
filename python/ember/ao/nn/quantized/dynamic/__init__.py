"""Dynamically quantized modules (``torch.ao.nn.quantized.dynamic``): int8 weights, activations
quantized per call from their own range."""

from .modules import Linear, MultiheadAttention

__all__ = ["Linear", "MultiheadAttention"]
