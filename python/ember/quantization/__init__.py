"""``ember.quantization``: PyTorch's older name for ``ember.ao.quantization``."""

from ember.ao.quantization import *  # noqa: F401,F403
from ember.ao.quantization import __dict__ as _ao_dict

globals().update({k: v for k, v in _ao_dict.items() if not k.startswith("__")})
