"""Architecture optimisation: quantization, as PyTorch's ``torch.ao``
(docs/design/quantization.md)."""

from . import nn, quantization  # noqa: F401
