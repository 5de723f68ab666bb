from .activation import ReLU, ReLU6
from .conv import Conv1d, Conv2d
from .embedding_ops import Embedding, EmbeddingBag, EmbeddingPackedParams
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional
from .linear import Linear, LinearPackedParams
from .quant_dequant import DeQuantize, Quantize

__all__ = ["Conv1d", "Conv2d", "DeQuantize", "Embedding", "EmbeddingBag", "EmbeddingPackedParams",
           "FXFloatFunctional", "FloatFunctional", "Linear",
           "LinearPackedParams", "QFunctional", "Quantize", "ReLU", "ReLU6"]
