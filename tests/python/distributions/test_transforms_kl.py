"""Transforms (log|det J| against numerical Jacobians, inverse round trips, biject_to /
transform_to) and KL divergences (closed forms against Monte Carlo and SciPy quadrature)."""

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.distributions import constraints
from ember.distributions import transforms as T


def numerical_jacobian(f, x, h=1e-6):
    x = x.detach().numpy().astype(np.float64)
    y0 = f(ember.tensor(x)).numpy()
    J = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        J[(Ellipsis,) + idx] = (f(ember.tensor(xp)).numpy() - f(ember.tensor(xm)).numpy()) / (2 * h)
    return J


ELEMENTWISE = [
    T.ExpTransform(),
    T.AffineTransform(1.5, -2.0),
    T.AffineTransform(
        ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64),
        ember.tensor([0.5, -2.0, 3.0], dtype=ember.float64),
    ),
    T.SigmoidTransform(),
    T.TanhTransform(),
    T.SoftplusTransform(),
    T.PowerTransform(ember.tensor(2.5, dtype=ember.float64)),
    T.ExpTransform().inv,
    T.ComposeTransform(
        [
            T.ExpTransform(),
            T.AffineTransform(0.5, 3.0),
            T.PowerTransform(ember.tensor(0.5, dtype=ember.float64)),
        ]
    ),
]


@pytest.mark.parametrize("t", ELEMENTWISE, ids=lambda t: type(t).__name__)
def test_elementwise_log_abs_det_jacobian(t):
    x = ember.tensor([0.3, 0.7, 1.4], dtype=ember.float64)
    if t.domain is constraints.real or isinstance(t.domain, type(constraints.real)):
        x = x - 0.5
    y = t(x)
    J = numerical_jacobian(t, x)
    np.testing.assert_allclose(
        t.log_abs_det_jacobian(x, y).numpy(), np.log(np.abs(np.diag(J))), rtol=1e-6, atol=1e-8
    )
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10, atol=1e-12)


def test_stick_breaking_and_vector_transforms():
    t = T.StickBreakingTransform()
    x = ember.tensor([0.3, -1.2, 0.8], dtype=ember.float64)
    y = t(x)
    assert y.shape == (4,)
    np.testing.assert_allclose(y.sum().item(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10)
    # The Jacobian of x -> y[:-1] is square (the last coordinate is determined).
    J = numerical_jacobian(lambda v: t(v)[:-1], x)
    np.testing.assert_allclose(
        t.log_abs_det_jacobian(x, y).item(), np.log(abs(np.linalg.det(J))), rtol=1e-6
    )
    assert t.forward_shape((5, 3)) == (5, 4) and t.inverse_shape((5, 4)) == (5, 3)
    s = T.SoftmaxTransform()
    np.testing.assert_allclose(
        s(x).numpy(), np.exp(x.numpy()) / np.exp(x.numpy()).sum(), rtol=1e-12
    )
    lc = T.LowerCholeskyTransform()
    m = ember.randn(3, 3, dtype=ember.float64)
    L = lc(m)
    assert bool(constraints.lower_cholesky.check(L))
    np.testing.assert_allclose(lc(lc.inv(L)).numpy(), L.numpy(), rtol=1e-12)
    pd = T.PositiveDefiniteTransform()
    P = pd(m)
    assert bool(constraints.positive_definite.check(P))
    np.testing.assert_allclose(pd(pd.inv(P)).numpy(), P.numpy(), rtol=1e-10)
    r = T.ReshapeTransform((6,), (2, 3))
    v = ember.arange(12.0).reshape(2, 6)
    assert r(v).shape == (2, 2, 3) and bool((r.inv(r(v)) == v).all())
    ind = T.IndependentTransform(T.ExpTransform(), 1)
    np.testing.assert_allclose(ind.log_abs_det_jacobian(v, ind(v)).numpy(), v.numpy().sum(-1))


def test_cache_and_inverse_identity():
    t = T.ExpTransform(cache_size=1)
    x = ember.tensor([1.0, 2.0])
    y = t(x)
    assert t.inv(y) is x
    assert t.inv.inv is t
    assert T.ExpTransform() == T.ExpTransform()
    with pytest.raises(ValueError):
        T.ExpTransform(cache_size=2)


@pytest.mark.parametrize(
    "c",
    [
        constraints.real,
        constraints.positive,
        constraints.nonnegative,
        constraints.greater_than(2.0),
        constraints.less_than(-1.0),
        constraints.unit_interval,
        constraints.interval(-2.0, 5.0),
        constraints.half_open_interval(0.0, 3.0),
        constraints.simplex,
        constraints.real_vector,
        constraints.independent(constraints.positive, 1),
    ],
    ids=repr,
)
def test_biject_to_and_transform_to(c):
    x = ember.randn(5, 4, dtype=ember.float64)
    for registry in (D.biject_to, D.transform_to):
        t = registry(c)
        y = t(x)
        assert bool(c.check(y).all())
        if registry is D.biject_to and c is not constraints.simplex:
            np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-8, atol=1e-10)


def test_registry_errors():
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        D.biject_to(constraints.boolean)


def mc_kl(p, q, n=400_000):
    ember.manual_seed(9)
    x = p.sample((n,))
    v = (p.log_prob(x) - q.log_prob(x)).numpy().astype(np.float64)
    return v.mean(0), v.std(0) / np.sqrt(n)


f64 = lambda *v: ember.tensor(v, dtype=ember.float64)  # noqa: E731

KL_PAIRS = [
    (D.Normal(f64(0.0, 1.0), f64(1.0, 2.0)), D.Normal(f64(1.0, -1.0), f64(2.0, 0.5))),
    (D.Laplace(f64(0.0, 1.0), f64(1.0, 2.0)), D.Laplace(f64(1.0, -1.0), f64(2.0, 0.5))),
    (D.Gamma(f64(2.0, 0.7), f64(1.0, 2.0)), D.Gamma(f64(3.0, 1.5), f64(2.0, 0.5))),
    (D.Beta(f64(2.0, 0.7), f64(1.0, 2.0)), D.Beta(f64(3.0, 1.5), f64(2.0, 0.5))),
    (D.Exponential(f64(2.0, 0.7)), D.Exponential(f64(3.0, 1.5))),
    (D.Exponential(f64(2.0, 0.7)), D.Gamma(f64(3.0, 1.5), f64(2.0, 0.5))),
    (D.Exponential(f64(2.0, 0.7)), D.Normal(f64(3.0, 1.5), f64(2.0, 0.5))),
    (D.Gumbel(f64(0.0, 1.0), f64(1.0, 2.0)), D.Gumbel(f64(1.0, -1.0), f64(2.0, 0.5))),
    (D.Cauchy(f64(0.0, 1.0), f64(1.0, 2.0)), D.Cauchy(f64(1.0, -1.0), f64(2.0, 0.5))),
    (D.Uniform(f64(0.0, 1.0), f64(1.0, 2.0)), D.Normal(f64(1.0, -1.0), f64(2.0, 0.5))),
    (D.Uniform(f64(0.5, 1.0), f64(1.0, 2.0)), D.Gamma(f64(3.0, 1.5), f64(2.0, 0.5))),
    (D.Uniform(f64(0.5, 1.0), f64(1.0, 2.0)), D.Uniform(f64(0.0, 0.5), f64(1.5, 3.0))),
    (D.Normal(f64(0.0, 1.0), f64(1.0, 2.0)), D.Laplace(f64(1.0, -1.0), f64(2.0, 0.5))),
    (D.Bernoulli(f64(0.3, 0.9)), D.Bernoulli(f64(0.6, 0.2))),
    (D.Geometric(f64(0.3, 0.9)), D.Geometric(f64(0.6, 0.2))),
    (D.Poisson(f64(3.0, 0.5)), D.Poisson(f64(1.0, 2.5))),
    (D.Binomial(8, f64(0.3, 0.9)), D.Binomial(8, f64(0.6, 0.2))),
    (D.Categorical(f64(0.2, 0.3, 0.5)), D.Categorical(f64(0.6, 0.1, 0.3))),
    (D.OneHotCategorical(f64(0.2, 0.3, 0.5)), D.OneHotCategorical(f64(0.6, 0.1, 0.3))),
    (D.Dirichlet(f64(0.7, 2.0, 3.0)), D.Dirichlet(f64(1.5, 1.0, 0.5))),
    (D.HalfNormal(f64(1.0, 2.0)), D.HalfNormal(f64(2.0, 0.5))),
    (D.LogNormal(f64(0.0, 1.0), f64(1.0, 2.0)), D.LogNormal(f64(1.0, -1.0), f64(2.0, 0.5))),
    (
        D.Independent(D.Normal(f64(0.0, 1.0), f64(1.0, 2.0)), 1),
        D.Independent(D.Normal(f64(1.0, -1.0), f64(2.0, 0.5)), 1),
    ),
    (
        D.MultivariateNormal(
            f64(0.0, 1.0), ember.tensor([[2.0, 0.3], [0.3, 1.0]], dtype=ember.float64)
        ),
        D.MultivariateNormal(
            f64(1.0, -1.0), ember.tensor([[1.0, -0.2], [-0.2, 0.5]], dtype=ember.float64)
        ),
    ),
    (
        D.LowRankMultivariateNormal(
            f64(0.0, 1.0), ember.tensor([[1.0], [0.5]], dtype=ember.float64), f64(1.0, 2.0)
        ),
        D.MultivariateNormal(
            f64(1.0, -1.0), ember.tensor([[1.0, -0.2], [-0.2, 0.5]], dtype=ember.float64)
        ),
    ),
]


@pytest.mark.parametrize("p,q", KL_PAIRS, ids=lambda d: type(d).__name__)
def test_kl_against_monte_carlo(p, q):
    kl = D.kl_divergence(p, q).numpy()
    assert kl.shape == tuple(p.batch_shape)
    mean, se = mc_kl(p, q)
    assert np.all(np.abs(kl - mean) <= 5 * se + 1e-9), (kl, mean, se)


def test_kl_infinite_and_registry():
    p, q = D.Uniform(f64(0.0), f64(2.0)), D.Uniform(f64(0.5), f64(3.0))
    assert np.isinf(D.kl_divergence(p, q).item())
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Binomial(3, ember.tensor(0.5)))

    class MyNormal(D.Normal):
        pass

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0

    @D.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return ember.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 42.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_expfamily_bregman_entropy_matches_closed_form():
    # ExponentialFamily.entropy (autograd of the log normaliser) equals each closed form.
    for d in (D.Normal(f64(0.3), f64(1.7)), D.Gamma(f64(2.5), f64(0.7)), D.Exponential(f64(1.3))):
        np.testing.assert_allclose(
            D.ExponentialFamily.entropy(d).numpy(), d.entropy().numpy(), rtol=1e-10
        )
