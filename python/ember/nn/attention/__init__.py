"""ember.nn.attention: which backend scaled_dot_product_attention may use (torch.nn.attention).

On the CPU there are two: MATH, the composed reference (softmax of the full score matrix, every
input differentiable, dropout), and FLASH_ATTENTION, the fused blocked kernel that never holds
the L x S scores (``_scaled_dot_product_flash_attention_for_cpu``). EFFICIENT_ATTENTION and
CUDNN_ATTENTION are CUDA kernels; enabling only those on CPU tensors raises "No available
kernel", as in PyTorch. The switches are the ``ember.backends.cuda.enable_*_sdp`` settings,
which PyTorch also uses for the CPU backends."""

import contextlib
import enum

from ember.backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The scaled_dot_product_attention backends, with PyTorch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHES = {
    SDPBackend.MATH: (_cuda.math_sdp_enabled, _cuda.enable_math_sdp),
    SDPBackend.FLASH_ATTENTION: (_cuda.flash_sdp_enabled, _cuda.enable_flash_sdp),
    SDPBackend.EFFICIENT_ATTENTION: (_cuda.mem_efficient_sdp_enabled,
                                     _cuda.enable_mem_efficient_sdp),
    SDPBackend.CUDNN_ATTENTION: (_cuda.cudnn_sdp_enabled, _cuda.enable_cudnn_sdp),
}


def _enabled_backends():
    return [b for b, (get, _) in _SWITCHES.items() if get()]


def _enable_only(backends):
    for b, (_, set_enabled) in _SWITCHES.items():
        set_enabled(b in backends)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only ``backends`` (one
    SDPBackend or a list); the previous choice comes back on exit. ``set_priority`` is accepted
    for PyTorch's signature: on the CPU the fused kernel is always preferred when allowed."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple)) or not all(
        isinstance(b, SDPBackend) for b in backends
    ):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    previous = _enabled_backends()
    try:
        _enable_only(list(backends))
        yield {}
    finally:
        _enable_only(previous)
