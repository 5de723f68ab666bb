"""ember.nn: neural-network layers and their functional forms (torch.nn's API)."""

from . import functional  # noqa: F401
