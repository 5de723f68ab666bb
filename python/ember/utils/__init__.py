"""ember.utils: helpers outside the tensor core (dlpack, data, ...)."""

from . import data, dlpack  # noqa: F401
