"""Architecture optimisation: quantization, as PyTorch's ``torch.ao``
(docs/design/quantization.md)."""

from . import nn, ns, quantization  # noqa: F401
