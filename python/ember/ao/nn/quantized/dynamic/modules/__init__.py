from .activation import MultiheadAttention
from .linear import Linear

__all__ = ["Linear", "MultiheadAttention"]
