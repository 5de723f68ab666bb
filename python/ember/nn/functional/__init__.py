"""ember.nn.functional: torch.nn.functional's API, re-exported from one private module per
op family."""

from ._conv import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._sampling import *  # noqa: F401,F403
