"""Gradient clipping (``torch.nn.utils.clip_grad``)."""

import functools
import math
import types
import warnings

import ember
from ember import Tensor

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with ember.no_grad():
            return func(*args, **kwargs)

    return wrapper


def _vector_norm(t: Tensor, ord: float) -> Tensor:
    """The ``ord``-norm of all elements of ``t`` (a 0-d tensor of t's dtype)."""
    linalg = getattr(ember, "linalg", None)
    if linalg is not None and hasattr(linalg, "vector_norm"):
        return linalg.vector_norm(t, ord)
    a = t.abs()
    if ord == math.inf:
        return a.max() if a.numel() > 0 else ember.zeros((), dtype=a.dtype)
    if ord == -math.inf:
        return a.min()
    if ord == 0:
        return (a != 0).sum().to(a.dtype)
    if ord == 1:
        return a.sum()
    if ord == 2:
        return (a * a).sum().sqrt()
    return a.pow(ord).sum().pow(1.0 / ord)


def _as_list(tensors):
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (as if they were concatenated).
    ``foreach`` is accepted for compatibility; the norms are computed one tensor at a time."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return ember.tensor(0.0)
    norms = [_vector_norm(g, norm_type) for g in tensors]
    total_norm = _vector_norm(ember.stack(norms), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scales the gradients of ``parameters`` by min(1, max_norm / (total_norm + 1e-6))."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = ember.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.dtype))


@_no_grad
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Clips the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    is at most ``max_norm``; returns the total norm before clipping (a tensor).
    ``error_if_nonfinite`` raises when that norm is nan or inf."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=3,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps every gradient of ``parameters`` to [-clip_value, clip_value] in place."""
    parameters = _as_list(parameters)
    clip_value = float(clip_value)
    for p in parameters:
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
