"""``ember.nn.utils``: gradient clipping, parameter/vector conversion, (``rnn``) packed
sequences, and weight reparametrizations (``parametrize``, ``parametrizations``, the older
hook-based ``weight_norm`` and ``spectral_norm``)."""

from ember.nn.utils import parametrizations, parametrize, rnn  # noqa: F401
from ember.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from ember.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
    "parametrizations",
    "parametrize",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "weight_norm",
]
