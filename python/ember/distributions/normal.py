"""Location-scale continuous distributions: Normal, Laplace, Cauchy, Gumbel and Uniform."""

import math
from numbers import Number

import ember

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, euler_constant

__all__ = ["Cauchy", "Gumbel", "Laplace", "Normal", "Uniform"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _batch_shape_of(first, *args):
    if all(isinstance(a, Number) for a in args):
        return ember.Size()
    return first.size()


class _LocScale:
    """Shared construction and expand of the (loc, scale) families."""

    def _init_loc_scale(self, loc, scale, validate_args):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = _batch_shape_of(self.loc, loc, scale)
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def _expand_loc_scale(self, cls, batch_shape, _instance):
        new = self._get_checked_instance(cls, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


class Normal(_LocScale, ExponentialFamily):
    """Normal (Gaussian) distribution with mean `loc` and standard deviation `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self._init_loc_scale(loc, scale, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_loc_scale(Normal, batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -0.5 * (z * z) - self.scale.log() - _HALF_LOG_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _HALF_LOG_2PI + ember.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * ember.log(-math.pi / y)


class Laplace(_LocScale, Distribution):
    """Laplace distribution with location `loc` and scale `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._init_loc_scale(loc, scale, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_loc_scale(Laplace, batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        finfo = ember.finfo(self.loc.dtype)
        # u in (-1, 1): the open interval keeps log1p(-|u|) finite.
        u = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(
            finfo.eps - 1, 1
        )
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * ember.expm1(
            -(value - self.loc).abs() / self.scale
        )

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ember.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + ember.log(2 * self.scale)


class Cauchy(_LocScale, Distribution):
    """Cauchy (Lorentz) distribution with median `loc` and half width `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._init_loc_scale(loc, scale, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_loc_scale(Cauchy, batch_shape, _instance)

    @property
    def mean(self):
        return ember.full(
            self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device
        )

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return ember.full(
            self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device
        )

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """Uniform distribution on the half-open interval [low, high)."""

    arg_constraints = {
        "low": constraints.dependent(is_discrete=False, event_dim=0),
        "high": constraints.dependent(is_discrete=False, event_dim=0),
    }
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = _batch_shape_of(self.low, low, high)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and not bool(ember.lt(self.low, self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = ember.Size(batch_shape)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        rand = ember.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return ember.log(lb.mul(ub)) - ember.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return ember.log(self.high - self.low)


class Gumbel(_LocScale, Distribution):
    """Gumbel (type-I extreme value) distribution with location `loc` and scale `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._init_loc_scale(loc, scale, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_loc_scale(Gumbel, batch_shape, _instance)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        finfo = ember.finfo(self.loc.dtype)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device).clamp(
            min=finfo.tiny, max=1 - finfo.eps
        )
        return self.loc - self.scale * ember.log(-ember.log(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.exp(-ember.exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * ember.log(-ember.log(value))

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
