from .activation import MultiheadAttention
from .linear import Linear
from .rnn import GRU, LSTM, GRUCell, LSTMCell, RNNCell

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "Linear", "MultiheadAttention", "RNNCell"]
