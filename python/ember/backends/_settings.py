"""The process-wide backend settings behind ember.backends and ember.set_float32_matmul_precision.

One table of named values, global to the process as PyTorch's at::Context flags are (not
per thread). ember.backends.* reads and writes them through get/set/update; code that wants
to honour a setting (the transformer fastpath, a matmul kernel choosing its precision) reads
it with ``_settings.get(name)``. docs/design/backends.md lists the names and their readers.

Reads take no lock: a dict lookup is atomic. Writes go through one re-entrant lock, so that a
compound change (``update`` of several names, the save-and-set of a ``flags()`` context
manager) is seen by other threads either whole or not at all.
"""

import threading

__all__ = [
    "get",
    "set",
    "update",
    "snapshot",
    "reset",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
]

_MATMUL_PRECISIONS = ("highest", "high", "medium")


def _check_bool(name, value):
    # PyTorch's flag setters take a Python bool only (RuntimeError "... expects a bool").
    if type(value) is not bool:
        raise RuntimeError(f"[backends] {name} expects a bool, but got {type(value).__name__}")
    return value


def _check_bool_pair(name, value):
    # (allow_reduced_precision, allow_splitk) of the cuBLAS reduced-precision reductions.
    if not (isinstance(value, tuple) and len(value) == 2 and all(type(v) is bool for v in value)):
        raise TypeError(f"[backends] {name} expects a pair of bools, but got {value!r}")
    return value


def _check_precision(name, value):
    if not isinstance(value, str):
        raise TypeError(
            f"[set_float32_matmul_precision] expects a str, but got {type(value).__name__}"
        )
    if value not in _MATMUL_PRECISIONS:
        raise ValueError(
            f"[set_float32_matmul_precision] {value!r} is not one of 'highest', 'high', or 'medium'"
        )
    return value


def _check_linalg_library(name, value):
    if value not in ("default", "cusolver", "magma"):
        raise RuntimeError("[backends] Unknown input value. Choose from: default, cusolver, magma.")
    return value


def _check_quantized_engine(name, value):
    engines = ("qnnpack", "none", "onednn", "x86", "fbgemm")
    if value not in engines:
        raise RuntimeError(f"[backends.quantized] engine {value!r} is not supported: choose one "
                           f"of {', '.join(engines)} (Ember's int8 kernels are for x86 CPUs)")
    return value


# name -> (default, validator). The defaults are PyTorch's.
_SPECS = {
    # "highest" | "high" | "medium"; backends.cuda.matmul.allow_tf32 is derived from it.
    "float32_matmul_precision": ("highest", _check_precision),
    "cuda.matmul.allow_fp16_reduced_precision_reduction": ((True, True), _check_bool_pair),
    "cuda.matmul.allow_bf16_reduced_precision_reduction": ((True, True), _check_bool_pair),
    "cuda.matmul.allow_fp16_accumulation": (False, _check_bool),
    "cuda.preferred_linalg_library": ("default", _check_linalg_library),
    "cuda.sdp.flash": (True, _check_bool),
    "cuda.sdp.mem_efficient": (True, _check_bool),
    "cuda.sdp.math": (True, _check_bool),
    "cuda.sdp.cudnn": (True, _check_bool),
    "cuda.sdp.fp16_bf16_reduction_math": (False, _check_bool),
    "cudnn.enabled": (True, _check_bool),
    "cudnn.benchmark": (False, _check_bool),
    "cudnn.deterministic": (False, _check_bool),
    "cudnn.allow_tf32": (True, _check_bool),
    "mkldnn.enabled": (True, _check_bool),
    "mkldnn.deterministic": (False, _check_bool),
    "mha.fastpath_enabled": (True, _check_bool),
    "quantized.engine": ("x86", _check_quantized_engine),
}

_lock = threading.RLock()
_values = {name: default for name, (default, _) in _SPECS.items()}


def _spec(name):
    try:
        return _SPECS[name]
    except KeyError:
        raise KeyError(f"[backends] unknown setting {name!r}") from None


def get(name):
    """The current value of setting ``name`` (KeyError for a name that does not exist)."""
    try:
        return _values[name]
    except KeyError:
        raise KeyError(f"[backends] unknown setting {name!r}") from None


def set(name, value):
    """Validate ``value`` and store it; returns the previous value."""
    value = _spec(name)[1](name, value)
    with _lock:
        old = _values[name]
        _values[name] = value
    return old


def update(changes):
    """Set several settings at once, atomically: every value is validated before any is stored,
    and no other thread's update interleaves. Returns the previous values of those names."""
    checked = {name: _spec(name)[1](name, value) for name, value in changes.items()}
    with _lock:
        old = {name: _values[name] for name in checked}
        _values.update(checked)
    return old


def snapshot():
    """A consistent copy of every setting (taken under the lock)."""
    with _lock:
        return dict(_values)


def reset():
    """Restore every setting to its default (for tests and for embedding applications)."""
    with _lock:
        _values.update({name: default for name, (default, _) in _SPECS.items()})


def set_float32_matmul_precision(precision):
    """Set the internal precision of float32 matrix multiplications: "highest" (the default,
    full float32), "high" or "medium" (TensorFloat32 / bfloat16-based algorithms where a backend
    has them). Ember's CPU kernels always compute in float32, so the setting is stored for code
    that reads it, and ``ember.backends.cuda.matmul.allow_tf32`` reflects it as in PyTorch:
    True unless the precision is "highest"."""
    set("float32_matmul_precision", precision)


def get_float32_matmul_precision():
    """The current float32 matmul precision: "highest", "high" or "medium"."""
    return _values["float32_matmul_precision"]
