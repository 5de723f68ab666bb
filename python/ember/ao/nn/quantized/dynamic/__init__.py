"""Dynamically quantized modules (``torch.ao.nn.quantized.dynamic``): int8 weights, activations
quantized per call from their own range."""

from .modules import GRU, LSTM, Linear, MultiheadAttention

__all__ = ["GRU", "LSTM", "Linear", "MultiheadAttention"]
