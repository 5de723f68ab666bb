from .activation import MultiheadAttention
from .linear import Linear
from .rnn import GRU, LSTM

__all__ = ["GRU", "LSTM", "Linear", "MultiheadAttention"]
