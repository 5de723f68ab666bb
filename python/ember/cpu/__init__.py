"""ember.cpu: torch.cpu's device API for device-agnostic code. There is one CPU device, it is
always available, and there is nothing to wait for: synchronize() returns at once, streams and
events are placeholders. ``ember.cpu.amp`` holds PyTorch's deprecated CPU autocast names."""

from contextlib import AbstractContextManager

from . import amp  # noqa: F401  (ember.cpu.amp, as torch.cpu.amp)

__all__ = [
    "is_available",
    "is_initialized",
    "synchronize",
    "current_device",
    "current_stream",
    "stream",
    "set_device",
    "device_count",
    "Stream",
    "StreamContext",
    "Event",
]


def is_available():
    """Whether the CPU can be used: always True."""
    return True


def is_initialized():
    """Whether the CPU is initialized: always True."""
    return True


def synchronize(device=None):
    """Waits for the work queued on the CPU: ops run eagerly, so there is none. ``device`` is
    ignored (there is one CPU device)."""


def current_device():
    """The current CPU device: always 'cpu'."""
    return "cpu"


def set_device(device):
    """Sets the current device: a no-op on the CPU."""


def device_count():
    """The number of CPU devices (not cores): always 1."""
    return 1


class Stream:
    """A placeholder stream (the CPU runs ops in order, eagerly)."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """A placeholder event: always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device=None):
    """The current stream (``device`` is ignored)."""
    return _current_stream


class StreamContext(AbstractContextManager):
    """Makes ``stream`` the current stream for the block."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream = _current_stream
        _current_stream = self.stream

    def __exit__(self, exc_type, exc_value, traceback):
        global _current_stream
        if self.stream is None:
            return
        _current_stream = self.prev_stream


def stream(stream):
    """``with ember.cpu.stream(s):`` makes ``s`` the current stream for the block."""
    return StreamContext(stream)
