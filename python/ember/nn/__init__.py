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
from ember.nn import parallel  # noqa: E402,F401
from ember.nn.parallel import DataParallel  # noqa: E402

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", "why_not_fastpath",
           "DataParallel", "parallel", *_modules_all]


# PyTorch's deprecated-but-working ``torch.nn.quantized``, ``torch.nn.intrinsic`` and
# ``torch.nn.qat`` (and their submodules, e.g. ``nn.quantized.dynamic``, ``nn.intrinsic.qat``)
# are the ``ember.ao.nn`` packages under a second name: the same module objects, so classes
# keep one identity. Lazily, because ember.ao imports ember.nn: an attribute access imports
# them on first use, and an import finder serves ``import ember.nn.quantized...`` statements.
_AO_ALIASES = ("quantized", "intrinsic", "qat")


def _ao_name(fullname):
    parts = fullname.split(".")
    if len(parts) >= 3 and parts[:2] == ["ember", "nn"] and parts[2] in _AO_ALIASES:
        return ".".join(["ember", "ao", "nn", *parts[2:]])
    return None


class _AOAliasFinder:
    """Finds ``ember.nn.quantized[...]`` & co. as the already-importable ``ember.ao.nn``
    modules (registered under both names)."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        import importlib.util

        if _ao_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, cls)

    @staticmethod
    def create_module(spec):
        import importlib

        module = importlib.import_module(_ao_name(spec.name))
        spec._ember_ao_spec = module.__spec__  # the import system overwrites __spec__ next
        return module

    @staticmethod
    def exec_module(module):
        # Executed under its ember.ao name already; keep that name's spec (for reload & co.).
        module.__spec__ = getattr(module.__spec__, "_ember_ao_spec", module.__spec__)


def __getattr__(name):
    if name in _AO_ALIASES:
        import importlib

        return importlib.import_module(f"ember.nn.{name}")
    raise AttributeError(f"module 'ember.nn' has no attribute {name!r}")


def _install_ao_alias_finder():
    import sys

    if not any(getattr(f, "__name__", None) == "_AOAliasFinder" and
               getattr(f, "__module__", None) == __name__ for f in sys.meta_path):
        sys.meta_path.insert(0, _AOAliasFinder)


_install_ao_alias_finder()
