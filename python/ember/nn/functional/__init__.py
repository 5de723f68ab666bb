"""``ember.nn.functional``: the functional form of every layer, loss and activation
(``torch.nn.functional``).

The functions live in private submodules ``_<family>.py`` (``_linear``, ``_conv``,
``_activation``, ``_loss``, ...), one per op family, each listing its public names in
``__all__``. This package re-exports every submodule it finds, so a family lands by adding its
file; an error inside an existing submodule is not hidden.
"""

import importlib as _importlib
import pkgutil as _pkgutil

__all__ = []


def _load_families():
    names = sorted(
        info.name
        for info in _pkgutil.iter_modules(__path__)
        if info.name.startswith("_") and not info.name.startswith("__")
    )
    for name in names:
        module = _importlib.import_module(f"{__name__}.{name}")
        public = getattr(module, "__all__", None)
        if public is None:
            # No __all__ (a helper file): only the public functions and classes it defines.
            public = [
                n
                for n, v in vars(module).items()
                if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
            ]
        for attr in public:
            globals()[attr] = getattr(module, attr)
            if attr not in __all__:
                __all__.append(attr)


_load_families()
del _load_families
