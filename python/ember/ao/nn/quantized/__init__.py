"""Statically quantized modules and the dynamic ones (``torch.ao.nn.quantized``)."""

from . import dynamic  # noqa: F401
from .modules import (
    Conv1d,
    Conv2d,
    DeQuantize,
    Embedding,
    EmbeddingBag,
    EmbeddingPackedParams,
    FloatFunctional,
    FXFloatFunctional,
    Linear,
    LinearPackedParams,
    QFunctional,
    Quantize,
    ReLU,
    ReLU6,
)

__all__ = ["Conv1d", "Conv2d", "DeQuantize", "Embedding", "EmbeddingBag", "EmbeddingPackedParams",
           "FXFloatFunctional", "FloatFunctional", "Linear",
           "LinearPackedParams", "QFunctional", "Quantize", "ReLU", "ReLU6"]
