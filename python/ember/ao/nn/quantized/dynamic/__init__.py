"""Dynamically quantized modules (``torch.ao.nn.quantized.dynamic``): int8 weights, activations
quantized per call from their own range."""

from .modules import GRU, LSTM, GRUCell, Linear, LSTMCell, MultiheadAttention, RNNCell

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "Linear", "MultiheadAttention", "RNNCell"]
