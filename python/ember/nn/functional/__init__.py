"""ember.nn.functional: re-exports the private per-family modules (_<family>.py)."""

from ._loss import *  # noqa: F401,F403
from ._normalization import *  # noqa: F401,F403
from ._softmax import *  # noqa: F401,F403
