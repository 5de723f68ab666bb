"""Ember: a tensor library with a C++ core and PyTorch's Python API.

    import ember
    x = ember.randn(3, 4)
    y = (x @ x.T).relu().sum()
"""

from . import _load

_load.preload()

from . import _C  # noqa: E402

if _C._cpu_capability_warning():  # EMBER_CPU_CAPABILITY named a level this CPU cannot run
    import warnings as _warnings

    _warnings.warn(_C._cpu_capability_warning(), RuntimeWarning, stacklevel=2)
from ._C import *  # noqa: E402,F401,F403
from ._C import Tensor, device, dtype  # noqa: E402,F401
from ._C import _sample_dirichlet, _standard_gamma, _standard_gamma_grad  # noqa: E402,F401
from ._dtypes import (  # noqa: E402,F401
    bool,
    cdouble,
    cfloat,
    double,
    finfo,
    float,
    half,
    iinfo,
    int,
    long,
    short,
)
from ._size import Size  # noqa: E402,F401
from ._layout import layout, strided  # noqa: E402,F401
from ._tensor_str import get_printoptions, printoptions, set_printoptions  # noqa: E402,F401
from ._functional import broadcast_shapes  # noqa: E402,F401
from . import _tensor  # noqa: E402,F401  (Python-level Tensor methods)
from ._elementwise import where  # noqa: E402,F401
from ._quantized import (  # noqa: E402,F401
    _empty_affine_quantized,
    _make_per_channel_quantized_tensor,
    _make_per_tensor_quantized_tensor,
    dequantize,
    fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine,
    quantize_per_channel,
    quantize_per_tensor,
    quantize_per_tensor_dynamic,
)
from . import return_types  # noqa: E402,F401
from . import __config__  # noqa: E402,F401
from . import cuda, random, utils  # noqa: E402,F401
from . import serialization  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401

__version__ = "0.1.0"
from . import autograd  # noqa: E402,F401
from .autograd.grad_mode import (  # noqa: E402,F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from . import nn  # noqa: E402,F401  (after autograd: nn's hooks use autograd.Function)
from . import ao, quantization  # noqa: E402,F401  (after nn: quantized modules subclass it)
from . import optim  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from ._stft import istft, stft  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401  (torch.vmap is torch.func.vmap)
from . import amp, backends  # noqa: E402,F401
from . import distributed, futures, multiprocessing, profiler  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401  (eager: see _compile.py)
from . import compiler, jit  # noqa: E402,F401
from ._legacy_types import (  # noqa: E402,F401
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from .autograd import profiler as _autograd_profiler  # noqa: E402,F401
from . import cpu  # noqa: E402,F401  (after amp: ember.cpu.amp subclasses ember.amp's names)
from .amp.autocast_mode import (  # noqa: E402,F401
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from .backends._settings import (  # noqa: E402,F401
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from ._deterministic import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)

# Submodules that load on first use (`ember.onnx.export(...)`, `import ember.distributions`), as
# PEP 562 allows: together they took a fifth of `import ember` (benchmarks/bench_import.py), and
# nothing in the rest of the package needs them at import.
_LAZY_SUBMODULES = ("accelerator", "distributions", "hub", "onnx")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
