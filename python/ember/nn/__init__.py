"""``ember.nn``: layers, losses, containers and the Module system (``torch.nn``)."""

from ember.nn.parameter import Buffer, Parameter  # noqa: I001 (order matters: see below)

# functional first: the layer files import it; modules next; then init and utils, which
# use both.
from ember.nn import functional  # noqa: F401
from ember.nn.modules import *  # noqa: F401,F403
from ember.nn.modules import __all__ as _modules_all
from ember.nn import init, utils  # noqa: F401
from ember.nn.modules.module import (  # noqa: F401
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)

from ember.nn.modules._fastpath import why_not_fastpath  # noqa: E402

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", "why_not_fastpath",
           *_modules_all]
