"""The base class of every distribution (PyTorch's torch.distributions.Distribution)."""

import warnings

import ember

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_EMPTY = ember.Size([])


class Distribution:
    """Abstract base class of probability distributions: shapes, argument and sample
    validation, and the defaults (sample via rsample, stddev from variance, ...)."""

    has_rsample = False
    has_enumerate_support = False
    # PyTorch's default: validation on unless Python runs with -O.
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether validation is enabled or disabled by default (initially True)."""
        if value not in [True, False]:
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=_EMPTY, event_shape=_EMPTY, validate_args=None):
        self._batch_shape = (
            batch_shape if type(batch_shape) is ember.Size else ember.Size(batch_shape)
        )
        self._event_shape = (
            event_shape if type(event_shape) is ember.Size else ember.Size(event_shape)
        )
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_args()
        super().__init__()

    def _check_args(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{self.__class__} does not define `arg_constraints`. Please set "
                "`arg_constraints = {}` or initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # skip constraints that cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # skip checking lazily-constructed args
            value = getattr(self, param)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                    f"{constraint!r}, but found invalid values:\n{value}"
                )

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dimensions expanded to `batch_shape` (parameters are
        expanded views, no copy)."""
        raise NotImplementedError(f"{type(self).__name__}.expand is abstract")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """A dict from argument names to the Constraint each must satisfy."""
        raise NotImplementedError(f"{type(self).__name__}.arg_constraints is abstract")

    @property
    def support(self):
        """The Constraint of the distribution's support."""
        raise NotImplementedError(f"{type(self).__name__}.support is abstract")

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=_EMPTY):
        """Samples of shape sample_shape + batch_shape + event_shape, without gradient."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY):
        """Reparameterised samples: differentiable in the parameters."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n):
        warnings.warn(
            "sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2
        )
        return self.sample(ember.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self):
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=_EMPTY):
        """sample_shape + batch_shape + event_shape, as an ember.Size."""
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        return ember.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raises ValueError when `value` is not a tensor, does not broadcast with the
        distribution's shapes, or lies outside the support."""
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs "
                f"{self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                    f"{expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample "
                f"validation. Please "
                "initialize the distribution with `validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"


def expand_probs_logits(src, new, batch_shape, param_shape=None):
    """The shared part of expand() for distributions given by `probs` or `logits`: whichever
    of them `src` holds, expanded to param_shape (batch_shape by default), set on `new`, then
    new's Distribution state."""
    param_shape = batch_shape if param_shape is None else param_shape
    for name in ("probs", "logits"):
        if name in src.__dict__:
            value = getattr(src, name).expand(param_shape)
            setattr(new, name, value)
            new._param = value
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = src._validate_args
    return new
