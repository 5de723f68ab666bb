"""ember.backends.cuda: PyTorch's CUDA switches (cuBLAS matmul precision, the linear-algebra
library preference, the scaled-dot-product-attention kernels). Ember's CUDA backend has no
matmul or attention kernels yet (docs/design/cuda.md); the settings are stored with PyTorch's
defaults so that scripts which set them run unchanged and read back what they set.

``matmul.allow_tf32`` is not a separate flag: as in PyTorch it is derived from
ember.get_float32_matmul_precision() (True unless "highest"), and assigning it sets the
precision to "high" (True) or "highest" (False).
"""

import enum
from contextlib import contextmanager

from . import _settings

__all__ = [
    "is_built",
    "matmul",
    "preferred_linalg_library",
    "enable_flash_sdp",
    "flash_sdp_enabled",
    "enable_mem_efficient_sdp",
    "mem_efficient_sdp_enabled",
    "enable_math_sdp",
    "math_sdp_enabled",
    "enable_cudnn_sdp",
    "cudnn_sdp_enabled",
    "allow_fp16_bf16_reduction_math_sdp",
    "fp16_bf16_reduction_math_sdp_allowed",
    "is_flash_attention_available",
    "sdp_kernel",
]


def is_built():
    """Whether this build of Ember has its CUDA backend module (ember._C_cuda), as
    torch.backends.cuda.is_built: a GPU is needed only to use it."""
    from .. import _C

    return bool(_C._build_info()["cuda"])


def _reduction_setting(name, value):
    # A bool, or (allow_reduced_precision[, allow_splitk]), as PyTorch's cuBLASModule accepts.
    if type(value) is bool:
        return (value, True)
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        for which, v in zip(("allow_reduced_precision", "allow_splitk"), value):
            if type(v) is not bool:
                raise TypeError(f"{name} expects a bool for {which}, but got {type(v)!r}")
        allow_reduced, allow_splitk = (value[0], True) if len(value) == 1 else tuple(value)
        if allow_reduced and not allow_splitk:
            raise RuntimeError(
                "allow_splitk=False is not supported when reduced precision reductions are enabled"
            )
        return (allow_reduced, allow_splitk)
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


class _CuBLASModule:
    """``ember.backends.cuda.matmul``: attribute reads and writes go to the settings table."""

    _REDUCTIONS = {
        "allow_fp16_reduced_precision_reduction": (
            "cuda.matmul.allow_fp16_reduced_precision_reduction",
            0,
        ),
        "allow_fp16_reduced_precision_reduction_split_k": (
            "cuda.matmul.allow_fp16_reduced_precision_reduction",
            1,
        ),
        "allow_bf16_reduced_precision_reduction": (
            "cuda.matmul.allow_bf16_reduced_precision_reduction",
            0,
        ),
        "allow_bf16_reduced_precision_reduction_split_k": (
            "cuda.matmul.allow_bf16_reduced_precision_reduction",
            1,
        ),
    }

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _settings.get("float32_matmul_precision") != "highest"
        if name == "allow_fp16_accumulation":
            return _settings.get("cuda.matmul.allow_fp16_accumulation")
        if name in self._REDUCTIONS:
            key, index = self._REDUCTIONS[name]
            return _settings.get(key)[index]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            if type(value) is not bool:
                raise RuntimeError(
                    f"[backends] cuda.matmul.allow_tf32 expects a bool, but got "
                    f"{type(value).__name__}"
                )
            _settings.set("float32_matmul_precision", "high" if value else "highest")
        elif name == "allow_fp16_accumulation":
            _settings.set("cuda.matmul.allow_fp16_accumulation", value)
        elif name in (
            "allow_fp16_reduced_precision_reduction",
            "allow_bf16_reduced_precision_reduction",
        ):
            _settings.set(self._REDUCTIONS[name][0], _reduction_setting(name, value))
        else:
            raise AttributeError("Unknown attribute " + name)

    def __dir__(self):
        return ["allow_tf32", "allow_fp16_accumulation", *self._REDUCTIONS]

    def __repr__(self):
        return "<ember.backends.cuda.matmul>"


matmul = _CuBLASModule()


class _LinalgBackend(enum.Enum):
    """The linear-algebra libraries preferred_linalg_library chooses between (PyTorch's
    torch._C._LinalgBackend: same names, values and repr)."""

    Default = 0
    Cusolver = 1
    Magma = 2

    def __int__(self):
        return self.value


def preferred_linalg_library(backend=None):
    """Get, or set and get, the preferred CUDA linear-algebra library: "default", "cusolver" or
    "magma" (a string or a _LinalgBackend). Stored only: Ember's linalg runs on LAPACK."""
    if backend is None:
        pass
    elif isinstance(backend, str):
        _settings.set("cuda.preferred_linalg_library", backend)
    elif isinstance(backend, _LinalgBackend):
        _settings.set("cuda.preferred_linalg_library", backend.name.lower())
    else:
        raise RuntimeError("Unknown input value type.")
    return _LinalgBackend[_settings.get("cuda.preferred_linalg_library").capitalize()]


def flash_sdp_enabled():
    """Whether the flash scaled-dot-product-attention kernel is enabled."""
    return _settings.get("cuda.sdp.flash")


def enable_flash_sdp(enabled):
    """Enable or disable the flash scaled-dot-product-attention kernel."""
    _settings.set("cuda.sdp.flash", enabled)


def mem_efficient_sdp_enabled():
    """Whether the memory-efficient scaled-dot-product-attention kernel is enabled."""
    return _settings.get("cuda.sdp.mem_efficient")


def enable_mem_efficient_sdp(enabled):
    """Enable or disable the memory-efficient scaled-dot-product-attention kernel."""
    _settings.set("cuda.sdp.mem_efficient", enabled)


def math_sdp_enabled():
    """Whether the math (reference) scaled-dot-product-attention kernel is enabled."""
    return _settings.get("cuda.sdp.math")


def enable_math_sdp(enabled):
    """Enable or disable the math (reference) scaled-dot-product-attention kernel."""
    _settings.set("cuda.sdp.math", enabled)


def cudnn_sdp_enabled():
    """Whether the cuDNN scaled-dot-product-attention kernel is enabled."""
    return _settings.get("cuda.sdp.cudnn")


def enable_cudnn_sdp(enabled):
    """Enable or disable the cuDNN scaled-dot-product-attention kernel."""
    _settings.set("cuda.sdp.cudnn", enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    """Whether the math attention kernel may reduce in float16/bfloat16 (False by default)."""
    return _settings.get("cuda.sdp.fp16_bf16_reduction_math")


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Allow or forbid float16/bfloat16 reductions in the math attention kernel."""
    _settings.set("cuda.sdp.fp16_bf16_reduction_math", enabled)


def is_flash_attention_available():
    """Whether Ember is built with FlashAttention: False."""
    return False


@contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Enable exactly the given scaled-dot-product-attention kernels inside the ``with`` block
    and restore the previous flags afterwards (PyTorch's deprecated form of
    torch.nn.attention.sdpa_kernel)."""
    orig = _settings.update(
        {
            "cuda.sdp.flash": bool(enable_flash),
            "cuda.sdp.math": bool(enable_math),
            "cuda.sdp.mem_efficient": bool(enable_mem_efficient),
            "cuda.sdp.cudnn": bool(enable_cudnn),
        }
    )
    try:
        yield
    finally:
        _settings.update(orig)
