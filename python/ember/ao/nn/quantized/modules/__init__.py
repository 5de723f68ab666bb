from .activation import ELU, Hardswish, LeakyReLU, ReLU, ReLU6, Sigmoid, Softmax
from .batchnorm import BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .embedding_ops import Embedding, EmbeddingBag, EmbeddingPackedParams
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional
from .linear import Linear, LinearPackedParams
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm
from .quant_dequant import DeQuantize, Quantize

__all__ = ["BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d", "ConvTranspose1d",
           "ConvTranspose2d", "DeQuantize", "Dropout", "ELU",
           "Embedding", "EmbeddingBag", "EmbeddingPackedParams", "FXFloatFunctional",
           "FloatFunctional", "GroupNorm", "Hardswish", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "LeakyReLU", "Linear", "LinearPackedParams",
           "QFunctional", "Quantize", "ReLU", "ReLU6", "Sigmoid", "Softmax"]
