"""Anomaly detection (``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``): nodes keep
the Python stack of the forward call that created them, and a backward output with NaN raises
a RuntimeError naming the node and showing that stack."""

from __future__ import annotations

import warnings

from ember._C import _autograd as _ag

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    return _ag.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    return _ag.is_anomaly_check_nan_enabled()


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _ag.is_anomaly_enabled()
        self.prev_check_nan = _ag.is_anomaly_check_nan_enabled()
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        _ag.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _ag.set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off; takes effect at once and, used as a context manager,
    restores the previous setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _ag.is_anomaly_enabled()
        self.prev_check_nan = _ag.is_anomaly_check_nan_enabled()
        _ag.set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _ag.set_anomaly_enabled(self.prev, self.prev_check_nan)
