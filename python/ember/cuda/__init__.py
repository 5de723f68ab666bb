"""ember.cuda: the CUDA device API. This build has no CUDA backend, so the queries say so and
anything that needs a GPU raises RuntimeError with the reason (as torch.cuda does on a machine
without a GPU). Seeding functions are no-ops, like torch's lazily queued CUDA seeding, so that
code calling ember.cuda.manual_seed_all(seed) runs unchanged on a CPU-only machine."""

_REASON = (
    "this build of Ember has no CUDA backend loaded (ember.cuda.is_available() is False)"
)


def is_available():
    """Whether a CUDA device can be used: always False without the CUDA backend."""
    return False


def device_count():
    """The number of usable CUDA devices: 0 without the CUDA backend."""
    return 0


def is_initialized():
    return False


def _unavailable(what):
    raise RuntimeError(f"[cuda] {what} needs a CUDA device, which is not available: {_REASON}")


def current_device():
    _unavailable("current_device()")


def set_device(device):
    _unavailable("set_device()")


def get_device_name(device=None):
    _unavailable("get_device_name()")


def synchronize(device=None):
    _unavailable("synchronize()")


def init():
    _unavailable("init()")


def manual_seed(seed):
    """No CUDA generators exist in this build; seeding them is a no-op (as in torch)."""


def manual_seed_all(seed):
    """No CUDA generators exist in this build; seeding them is a no-op (as in torch)."""


def seed():
    """No CUDA generators exist in this build: a no-op."""


def seed_all():
    """No CUDA generators exist in this build: a no-op."""


def __getattr__(name):
    # ember.cuda.amp is imported on first use, so that `import ember` does not pay for it.
    if name == "amp":
        import importlib

        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
