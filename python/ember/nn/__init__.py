"""ember.nn: neural-network layers, functional forms and utilities (torch.nn)."""

from . import (
    functional,  # noqa: F401
    utils,  # noqa: F401
)
