"""Build configuration, as torch.__config__."""

from . import _C


def show():
    """A human-readable summary of how this Ember was built."""
    info = _C._build_info()
    lines = ["Ember built with:"]
    lines += [f"  - {k}: {v}" for k, v in info.items()]
    return "\n".join(lines)
