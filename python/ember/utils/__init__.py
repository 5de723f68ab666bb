"""ember.utils: helpers outside the tensor core (dlpack, ...)."""

from . import dlpack  # noqa: F401
