"""ember.autocast / ember.amp.autocast: automatic mixed precision regions (torch.autocast).

Inside ``with ember.autocast("cpu"):`` the ops on autocast's lists run in a precision chosen per
op, as PyTorch 2.x does on the CPU: matrix products, linear layers and convolutions cast their
floating inputs to the autocast dtype (bfloat16 by default, or float16); losses, linear algebra
decompositions and a few reductions cast float16 / bfloat16 inputs up to float32; every other op
runs in the dtype of its inputs. The casting happens in C++ at the top of each listed op
(csrc/api/autocast.h; docs/design/autocast.md has the lists). The state is thread-local: another
thread does not see this thread's regions.

This module also defines the state functions that ``ember`` exports (``ember.is_autocast_enabled``,
``ember.set_autocast_dtype``, ...), ``custom_fwd`` / ``custom_bwd`` for autograd Functions, and
``is_autocast_available``.
"""

import collections.abc
import functools
import warnings

import ember

from .. import _C

_state = _C._autocast

__all__ = [
    "autocast_decorator",
    "autocast",
    "is_autocast_available",
    "custom_fwd",
    "custom_bwd",
]

_NOT_GIVEN = object()


def _check_device_type_arg(device_type, fn):
    if not isinstance(device_type, str):
        raise TypeError(
            f"{fn}(): argument 'device_type' (position 1) must be str, not "
            f"{type(device_type).__name__}"
        )


# ---- the state (torch.is_autocast_enabled & co.) ------------------------------------------


def is_autocast_available(device_type):
    """Whether autocast can be used on ``device_type`` ('cpu', 'cuda', ...; the ``type`` of an
    ``ember.device``). True for 'cpu' and 'cuda'; False for the other device types PyTorch
    knows (this build has no state for them). An unknown name raises RuntimeError."""
    _check_device_type_arg(device_type, "is_autocast_available")
    return _state.is_available(device_type)


def is_autocast_enabled(device_type=None):
    """Whether autocast is enabled for ``device_type`` on this thread. Without an argument,
    for 'cuda' (PyTorch's older form)."""
    if device_type is None:
        return _state.is_enabled("cuda")
    _check_device_type_arg(device_type, "is_autocast_enabled")
    return _state.is_enabled(device_type)


def set_autocast_enabled(device_type=_NOT_GIVEN, enabled=_NOT_GIVEN):
    """``set_autocast_enabled(device_type, enabled)``; ``set_autocast_enabled(enabled)`` sets
    'cuda' (PyTorch's older form). Prefer the ``autocast`` context manager, which also restores
    the state and manages the cast cache."""
    if enabled is _NOT_GIVEN:
        if device_type is _NOT_GIVEN:
            raise TypeError("set_autocast_enabled() missing required argument 'enabled'")
        device_type, enabled = "cuda", device_type
    _check_device_type_arg(device_type, "set_autocast_enabled")
    _state.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (bfloat16 for 'cpu', float16 for 'cuda'
    unless set)."""
    _check_device_type_arg(device_type, "get_autocast_dtype")
    return _state.get_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    """Sets the dtype autocast casts to on ``device_type``."""
    _check_device_type_arg(device_type, "set_autocast_dtype")
    _state.set_dtype(device_type, dtype)


def _deprecated(old, new):
    warnings.warn(
        f"ember.{old} is deprecated. Please use ember.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def is_autocast_cpu_enabled():
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _state.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _state.set_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated: ``get_autocast_dtype('cpu')``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _state.get_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _state.set_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Deprecated: ``get_autocast_dtype('cuda')``."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _state.get_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _state.set_dtype("cuda", dtype)


def is_autocast_cache_enabled():
    """Whether the casts of parameters are cached inside autocast regions (this thread)."""
    return _state.is_cache_enabled()


def set_autocast_cache_enabled(enabled):
    """Turns the cast cache on or off for this thread."""
    _state.set_cache_enabled(enabled)


def clear_autocast_cache():
    """Drops this thread's cached casts (the outermost autocast region does so on exit)."""
    _state.clear_cache()


def autocast_increment_nesting():
    """Counts one more enclosing autocast region; returns the new depth."""
    return _state.increment_nesting()


def autocast_decrement_nesting():
    """Counts one enclosing autocast region less; returns the new depth."""
    return _state.decrement_nesting()


# ---- the context manager / decorator ------------------------------------------------------


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:
    """A region where ops run in mixed precision, as a context manager or a decorator::

        model = Net()
        optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
        for input, target in data:
            optimizer.zero_grad()
            with ember.autocast(device_type="cpu", dtype=ember.bfloat16):
                output = model(input)            # linear layers and convolutions in bfloat16
                loss = loss_fn(output, target)   # losses in float32
            loss.backward()                      # outside the region, as PyTorch recommends
            optimizer.step()

    Gradients reach the float32 parameters in float32 (the casts are recorded by autograd).
    ``autocast(..., enabled=False)`` inside a region turns autocast off for a subregion; on exit
    each region restores the state it found, also when an exception leaves it. The state is
    thread-local.

    Args:
        device_type (str): 'cpu' or 'cuda'. This build has no CUDA backend: an enabled 'cuda'
            region warns and runs disabled, as PyTorch does without CUDA.
        dtype (ember.dtype, optional): the lower-precision dtype; default
            ``ember.get_autocast_dtype(device_type)`` (bfloat16 on the CPU). The CPU supports
            bfloat16 and float16; another dtype warns and disables the region.
        enabled (bool, default True): whether autocast is on in the region.
        cache_enabled (bool, optional): whether the lower-precision casts of parameters are
            cached for the region (default: ``ember.is_autocast_cache_enabled()``).
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        # (An unknown device name raises RuntimeError here.)
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'"
            )
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        device_supported_dtypes = [ember.bfloat16, ember.float16]
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        device_name = self.device.upper()
        if enabled:
            if self.device == "cuda":
                if not ember.cuda.is_available():
                    warnings.warn(
                        "CUDA is not available. Disabling autocast.",
                        stacklevel=2,
                    )
                    enabled = False
            elif self.fast_dtype not in device_supported_dtypes:
                warnings.warn(
                    f"In {device_name} autocast, but the target dtype is not supported. "
                    "Disabling autocast.\n"
                    f"{device_name} Autocast only supports dtypes of "
                    + ", ".join(map(str, device_supported_dtypes))
                    + " currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Leaving the outermost region drops the cached casts, so that none outlives it.
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with ember.autocast(device_type=...):\n"
                "        output = model(input)"
            )
        return autocast_decorator(self, func)


# ---- autograd.Function helpers --------------------------------------------------------------


def _cast(value, device_type, dtype):
    """Floating tensors of ``device_type`` (float64 excepted) in ``value``, cast to ``dtype``;
    containers are rebuilt, strings and NumPy arrays passed through."""
    if isinstance(value, ember.Tensor):
        eligible = (
            value.is_floating_point()
            and value.device.type == device_type
            and value.dtype is not ember.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        if isinstance(value, (list, tuple)):
            return type(value)(iterable)
        return iterable
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of an ``ember.autograd.Function``. With ``cast_inputs``
    (a dtype), inside an autocast region the floating tensor arguments are cast to it and
    forward runs with autocast off; without it, forward runs under the current autocast state.
    Outside autocast regions it changes nothing. Pair it with ``custom_bwd``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(
                    *_cast(args, device_type, cast_inputs),
                    **_cast(kwargs, device_type, cast_inputs),
                )
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of an ``ember.autograd.Function`` whose forward is
    decorated with ``custom_fwd``: backward runs with the autocast state forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(
            device_type=device_type,
            enabled=args[0]._fwd_used_autocast,
            dtype=args[0]._dtype,
        ):
            return bwd(*args, **kwargs)

    return decorate_bwd
