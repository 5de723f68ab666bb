"""ember.backends.mps: Apple's Metal Performance Shaders. Ember has no MPS backend; scripts that
choose their device with ``ember.backends.mps.is_available()`` get False and fall back."""

__all__ = ["is_available", "is_built"]


def is_available():
    """Whether an MPS device can be used: False."""
    return False


def is_built():
    """Whether Ember is built with MPS support: False."""
    return False
