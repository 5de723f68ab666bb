"""Statically quantized modules and the dynamic ones (``torch.ao.nn.quantized``)."""

from . import dynamic  # noqa: F401
from .modules import (
    ELU,
    BatchNorm2d,
    BatchNorm3d,
    Conv1d,
    Conv2d,
    DeQuantize,
    Dropout,
    Embedding,
    EmbeddingBag,
    EmbeddingPackedParams,
    FloatFunctional,
    FXFloatFunctional,
    GroupNorm,
    Hardswish,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LeakyReLU,
    Linear,
    LinearPackedParams,
    QFunctional,
    Quantize,
    ReLU,
    ReLU6,
    Sigmoid,
    Softmax,
)

__all__ = ["BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d", "DeQuantize", "Dropout", "ELU",
           "Embedding", "EmbeddingBag", "EmbeddingPackedParams", "FXFloatFunctional",
           "FloatFunctional", "GroupNorm", "Hardswish", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "LeakyReLU", "Linear", "LinearPackedParams",
           "QFunctional", "Quantize", "ReLU", "ReLU6", "Sigmoid", "Softmax"]
