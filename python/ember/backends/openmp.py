"""ember.backends.openmp."""

__all__ = ["is_available"]


def is_available():
    """Whether Ember is built with OpenMP: True (GNU OpenMP, shared with oneDNN)."""
    return True
