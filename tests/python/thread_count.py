"""A context manager for tests that run the same work at several thread counts."""

import contextlib

import ember


@contextlib.contextmanager
def num_threads(n):
    """ember.set_num_threads(n) for the block; the previous count afterwards."""
    saved = ember.get_num_threads()
    ember.set_num_threads(n)
    try:
        yield
    finally:
        ember.set_num_threads(saved)
