"""``ember.nn.utils``: gradient clipping, parameter/vector conversion and (``rnn``) packed
sequences."""

import importlib.util as _importlib_util

from ember.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
]

# nn.utils.rnn (pack_padded_sequence, ...) is its own file; import it when it is present.
if _importlib_util.find_spec(f"{__name__}.rnn") is not None:
    from ember.nn.utils import rnn  # noqa: F401

    __all__.append("rnn")
