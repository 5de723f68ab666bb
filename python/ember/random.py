"""ember.random, as torch.random: the global generator's seed and state, and fork_rng."""

import contextlib

from . import _C
from ._C import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cpu"):
    """Restores the global generator's state on exit, so that sampling inside the block does
    not change the random stream seen after it."""
    if not enabled:
        yield
        return
    state = _C.get_rng_state()
    try:
        yield
    finally:
        _C.set_rng_state(state)


__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]
