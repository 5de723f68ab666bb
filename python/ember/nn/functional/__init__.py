"""ember.nn.functional: torch.nn.functional's API, re-exported from one private module per
op family (each lists its public names in ``__all__``)."""

from ._conv import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._normalization import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._sampling import *  # noqa: F401,F403
from ._softmax import *  # noqa: F401,F403
