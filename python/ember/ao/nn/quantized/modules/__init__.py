from .linear import Linear, LinearPackedParams
from .quant_dequant import DeQuantize, Quantize

__all__ = ["DeQuantize", "Linear", "LinearPackedParams", "Quantize"]
