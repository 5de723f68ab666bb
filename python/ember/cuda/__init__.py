"""ember.cuda: the CUDA device API (torch.cuda's names).

The CUDA backend is a separate extension module, ``ember._C_cuda``, built when the CUDA toolkit
is present and imported here on first use, so ``import ember`` never needs CUDA. With a GPU it
registers "cuda" as a device: tensors are made there (``.cuda()``, ``.to("cuda")``, factories
with ``device="cuda"``), copied back and forth, filled, and reduced across processes by the
NCCL backend of ember.distributed. Other ops on CUDA tensors raise NotImplementedError naming
the device (docs/design/cuda.md lists what runs). Without a GPU, or without the module, the
queries say so and anything that needs a GPU raises RuntimeError with the reason, as torch.cuda
does. Seeding is a no-op without CUDA generators, so scripts calling
``ember.cuda.manual_seed_all(seed)`` run unchanged.
"""

import os
import threading

_lock = threading.Lock()
_module = None  # ember._C_cuda once imported
_load_error = None  # why it could not be imported (str), once tried
_registered = False  # the backend is registered with the core: "cuda" tensors can be made


def _driver_present():
    """Whether an NVIDIA driver is installed. Without one no GPU can be used, and ember._C_cuda is
    not imported at all: importing it loads the CUDA runtime and NCCL, and a later
    ``import torch`` would then bind to those copies (same sonames) instead of its own newer
    ones, and fail (Note [The CUDA module loads only with a driver])."""
    markers = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg")
    if any(os.path.exists(m) for m in markers):
        return True
    import ctypes

    try:  # the driver library itself (the toolkit's link stub is libcuda.so, not .so.1)
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _try_import():
    global _module, _load_error
    if _module is None and _load_error is None and not _driver_present():
        _load_error = "no CUDA GPU was found (no NVIDIA driver is installed)"
    if _module is None and _load_error is None:
        try:
            # _C first: it registers the types _C_cuda's functions take and return.
            from .. import _C, _C_cuda  # noqa: F401

            _module = _C_cuda
        except ImportError as e:
            _load_error = (f"this build of Ember has no CUDA backend module ({e}); it is "
                           "built when the CUDA toolkit is found")
    return _module


def _load_backend():
    """Imports ember._C_cuda and registers the CUDA device with the core, once; returns whether
    CUDA tensors can be made. The core calls it the first time it meets a "cuda" device."""
    global _registered, _load_error
    with _lock:
        if _registered:
            return True
        module = _try_import()
        if module is None:
            return False
        if module.device_count() == 0:
            _load_error = "no CUDA GPU was found (or its driver is not installed)"
            return False
        _registered = bool(module.register_backend())
        return _registered


def _reason():
    _load_backend()
    return _load_error or "unknown reason"


def is_available():
    """Whether a CUDA device can be used."""
    return _load_backend()


def device_count():
    """The number of usable CUDA devices (0 without the backend or a GPU)."""
    module = _try_import()
    return module.device_count() if module is not None else 0


def is_initialized():
    return _registered


def _backend(what):
    if not _load_backend():
        raise RuntimeError(f"[cuda] {what} needs a CUDA device, which is not available: "
                           f"{_reason()} (ember.cuda.is_available() is False)")
    return _module


def _index(device):
    """A device index from None (the current device), an int, "cuda:N" or an ember.device."""
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        import ember

        device = ember.device(device)
    if getattr(device, "type", None) != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return -1 if device.index is None else device.index


def init():
    _backend("init()")


def current_device():
    return _backend("current_device()").current_device()


def set_device(device):
    _backend("set_device()").set_device(_index(device))


def synchronize(device=None):
    _backend("synchronize()").synchronize(_index(device))


def get_device_properties(device=None):
    props = _backend("get_device_properties()").device_properties(_index(device))
    return _DeviceProperties(**props)


class _DeviceProperties:
    """What torch.cuda.get_device_properties reports: name, major, minor, total_memory,
    multi_processor_count."""

    def __init__(self, name, major, minor, total_memory, multi_processor_count):
        self.name, self.major, self.minor = name, major, minor
        self.total_memory, self.multi_processor_count = total_memory, multi_processor_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    props = get_device_properties(device)
    return (props.major, props.minor)


def memory_allocated(device=None):
    """Bytes held by CUDA tensors on ``device``."""
    return _backend("memory_allocated()").memory_allocated(_index(device))


def max_memory_allocated(device=None):
    return _backend("max_memory_allocated()").max_memory_allocated(_index(device))


def reset_peak_memory_stats(device=None):
    _backend("reset_peak_memory_stats()").reset_peak_memory_stats(_index(device))


def mem_get_info(device=None):
    """(free bytes, total bytes) of the device, as the driver reports them."""
    return tuple(_backend("mem_get_info()").mem_get_info(_index(device)))


def empty_cache():
    """Ember's CUDA tensors return their memory to the driver when they die (there is no caching
    allocator yet), so there is no cache to empty; as in torch, a no-op without CUDA."""


class device:
    """Context manager that makes ``idx`` the current CUDA device inside the block."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


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
