"""ember.backends.mha: the switch of the fused fast path of nn.MultiheadAttention and
nn.TransformerEncoder(Layer) in evaluation mode. The transformer modules read it through
get_fastpath_enabled() (or _settings.get("mha.fastpath_enabled")) before taking that path."""

from . import _settings

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]


def get_fastpath_enabled():
    """Whether the transformer fast path may be used (True by default). Even when True, the
    fast path runs only when its conditions on the inputs are met."""
    return _settings.get("mha.fastpath_enabled")


def set_fastpath_enabled(value):
    """Allow (True) or forbid (False) the transformer fast path. Like PyTorch, any value is
    accepted; it is stored as ``bool(value)``."""
    _settings.set("mha.fastpath_enabled", bool(value))
