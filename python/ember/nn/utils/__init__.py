"""ember.nn.utils (torch.nn.utils)."""

from . import rnn  # noqa: F401
