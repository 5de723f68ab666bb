"""ember.backends.mkl. Ember's BLAS and LAPACK come from OpenBLAS, not Intel MKL."""

__all__ = ["is_available"]


def is_available():
    """Whether Ember is built with Intel MKL: False (it uses OpenBLAS)."""
    return False
