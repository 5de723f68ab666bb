from .activation import ReLU, ReLU6
from .linear import Linear, LinearPackedParams
from .quant_dequant import DeQuantize, Quantize

__all__ = ["DeQuantize", "Linear", "LinearPackedParams", "Quantize", "ReLU", "ReLU6"]
