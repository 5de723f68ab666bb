"""ember.nn.functional: the functional forms of the nn layers (torch.nn.functional)."""

from . import _rnn  # noqa: F401,E402  (sequence functions for nn.RNN / LSTM / GRU)
from ._activation import *  # noqa: F401,F403
from ._attention import *  # noqa: F401,F403
from ._distance import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._sparse import *  # noqa: F401,F403
