"""ember.nn (minimal: the functional interface; nn-core adds the modules)."""

from . import functional  # noqa: F401
