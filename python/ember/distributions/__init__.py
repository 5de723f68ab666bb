"""ember.distributions: PyTorch's torch.distributions for Ember tensors: parameterisable
probability distributions with sampling (reparameterised where possible), log densities,
moments, constraints, transforms and KL divergences. See docs/design/distributions.md."""

from . import constraints, transforms
from .categorical import (
    Categorical,
    Multinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from .constraint_registry import biject_to, transform_to
from .discrete import Bernoulli, Binomial, Geometric, NegativeBinomial, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, Exponential, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .normal import Cauchy, Gumbel, Laplace, Normal, Uniform
from .relaxed import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from .transformed import (
    HalfNormal,
    Independent,
    LogisticNormal,
    LogNormal,
    MixtureSameFamily,
    TransformedDistribution,
)
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transforms_all

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "Dirichlet",
    "Distribution",
    "ExpRelaxedCategorical",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "biject_to",
    "constraints",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
] + list(_transforms_all)
