"""``ember.use_deterministic_algorithms`` and its readers (PyTorch 2.x's API). The switch lives in
C++ (core/deterministic.h, two atomics) because the kernels read it: under it, every op whose
result could depend on the thread count or scheduling computes in a fixed order (Note
[Deterministic Algorithms]), and an op with no deterministic implementation raises
RuntimeError, or warns with ``warn_only=True``."""

from ember import _C

__all__ = [
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "get_deterministic_debug_mode",
]

_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ops use deterministic algorithms (``mode=True``): results no longer depend on the
    number of threads or on their scheduling, and an op without such an algorithm raises
    RuntimeError (a UserWarning instead with ``warn_only=True``)."""
    if type(mode) is not bool:
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
            f"{type(mode).__name__}"
        )
    if type(warn_only) is not bool:
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not "
            f"{type(warn_only).__name__}"
        )
    _C._set_deterministic_algorithms(mode, warn_only)


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _C._get_deterministic_algorithms()


def is_deterministic_algorithms_warn_only_enabled():
    """Whether the switch is in its warn-only form (``warn_only=True``)."""
    return _C._get_deterministic_algorithms_warn_only()


def set_deterministic_debug_mode(debug_mode):
    """The same switch by level: "default" / 0 (off), "warn" / 1 (on, warn only), "error" / 2
    (on, raise)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                f"but got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    elif type(debug_mode) is not int:
        raise TypeError(
            f"debug_mode must be str or int, but got {type(debug_mode).__name__}"
        )
    if debug_mode == 0:
        _C._set_deterministic_algorithms(False, False)
    elif debug_mode == 1:
        _C._set_deterministic_algorithms(True, True)
    elif debug_mode == 2:
        _C._set_deterministic_algorithms(True, False)
    else:
        raise RuntimeError(
            f"invalid value of debug mode, expected 0, 1, or 2, but got {debug_mode}"
        )


def get_deterministic_debug_mode():
    """0 when the switch is off, 1 when it only warns, 2 when it raises."""
    if not _C._get_deterministic_algorithms():
        return 0
    return 1 if _C._get_deterministic_algorithms_warn_only() else 2
