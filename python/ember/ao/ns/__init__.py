"""Numeric suite (``torch.ao.ns``): where a quantized model loses accuracy."""

from . import _numeric_suite  # noqa: F401
from ._numeric_suite import (  # noqa: F401
    OutputLogger,
    compare_model_outputs,
    compare_weights,
    compute_sqnr,
    get_matching_activations,
)
