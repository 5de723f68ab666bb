"""DLPack interchange, as torch.utils.dlpack: zero-copy conversion to and from NumPy, PyTorch
and any other DLPack producer or consumer."""

import enum

from .._C import from_dlpack  # noqa: F401


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLGPU = 2
    kDLCPUPinned = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLExtDev = 12
    kDLOneAPI = 14


def to_dlpack(tensor):
    """A DLPack capsule ("dltensor") sharing tensor's memory; it can be consumed once."""
    return tensor.__dlpack__()


__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
