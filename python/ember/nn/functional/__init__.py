"""ember.nn.functional: torch.nn.functional's API, re-exported from one private module per
op family (each lists its public names in ``__all__``)."""

from . import _rnn  # noqa: F401  (sequence functions for nn.RNN / LSTM / GRU)
from ._activation import *  # noqa: F401,F403
from ._attention import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._distance import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._mha import *  # noqa: F401,F403
from ._normalization import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._sampling import *  # noqa: F401,F403
from ._softmax import *  # noqa: F401,F403
from ._sparse import *  # noqa: F401,F403
