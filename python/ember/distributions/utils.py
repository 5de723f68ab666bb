"""Helpers shared by the distributions: argument broadcasting, probs/logits conversion and the
lazily computed properties (PyTorch's torch.distributions.utils)."""

import numbers
from functools import update_wrapper

import ember

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060


def _default_float():
    return ember.get_default_dtype()


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape; numbers become tensors of the dtype of the
    first tensor argument (or the default dtype). Already-broadcast tensors are returned as is,
    so the common case costs a shape comparison only."""
    tensors = [v for v in values if isinstance(v, ember.Tensor)]
    if len(tensors) == len(values):
        shape = values[0].shape
        if all(v.shape == shape for v in values[1:]):
            return values
        return ember.broadcast_tensors(*values)
    for v in values:
        if not isinstance(v, (ember.Tensor, numbers.Number)) and not hasattr(
            v, "__ember_function__"
        ):
            raise ValueError(
                "Input arguments must all be instances of numbers.Number, ember.Tensor or objects "
                f"implementing __ember_function__, got {type(v).__name__}"
            )
    if tensors:
        like = tensors[0]
        dtype, device = like.dtype, like.device
    else:
        dtype, device = _default_float(), None
    out = [
        v if isinstance(v, ember.Tensor) else ember.tensor(v, dtype=dtype, device=device)
        for v in values
    ]
    return ember.broadcast_tensors(*out)


def _standard_normal(shape, dtype, device):
    return ember.randn(shape, dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[: value.dim() - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Logits (unnormalised log-probabilities) to probabilities: sigmoid for a binary variable,
    softmax over the last dimension for a categorical one."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities to [eps, 1 - eps] so that their logits are finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to logits: log(p) - log1p(-p) for a binary variable, log(p) for a
    categorical one (clamped so that a zero probability gives a large finite logit)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance, replacing the
    descriptor (so later reads are plain attribute reads). Under grad mode the first access is
    computed with the graph, as PyTorch does."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


class _lazy_property_and_property(lazy_property, property):
    """The class-level view of a lazy_property: a property, so tools that document classes see
    one."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (offset `diag`) of the last two dims of `mat`, row-major, as a vector."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows = ember.arange(n, device=mat.device)
    mask = rows.unsqueeze(-1) - rows >= -diag
    return mat[..., mask]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a (..., n, n) matrix whose lower triangle (offset
    `diag`) holds `vec` and the rest zeros."""
    m = vec.shape[-1]

    def count(n):  # entries of the triangle with offset diag of an n x n matrix
        return sum(max(0, min(n, i + 1 + diag)) for i in range(n))

    n = 0
    while count(n) < m:
        n += 1
    if count(n) != m:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as the lower "
            "triangular part of a square D x D matrix."
        )
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    rows = ember.arange(n, device=vec.device)
    mask = rows.unsqueeze(-1) - rows >= -diag
    mat[..., mask] = vec
    return mat
