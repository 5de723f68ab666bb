"""ember.utils: helpers outside the tensor core (dlpack, data, benchmark, ...)."""

from . import data, dlpack  # noqa: F401


def __getattr__(name):
    # ember.utils.benchmark, model_zoo and checkpoint are imported on first use, keeping them
    # out of `import ember` (checkpoint needs ember.autograd, which loads after this package).
    if name in ("benchmark", "checkpoint", "model_zoo"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
