"""log_prob, cdf/icdf, entropy and moments of ember.distributions against SciPy closed forms,
over float32 and float64 and broadcast batch shapes."""

import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as st

import ember
import ember.distributions as D

DTYPES = [(ember.float32, np.float32, 2e-5), (ember.float64, np.float64, 1e-10)]

# name -> (builder(params as ember tensors), params as numpy arrays (broadcast), scipy frozen
# factory, sample points builder)
rng = np.random.default_rng(0)
A = rng.uniform(0.5, 3.0, size=(3, 1))
B = rng.uniform(0.5, 3.0, size=(1, 4))
P = rng.uniform(0.1, 0.9, size=(1, 4))

CONTINUOUS = {
    "Normal": (lambda a, b: D.Normal(a - 1.5, b), lambda a, b: st.norm(a - 1.5, b), "real"),
    "Laplace": (lambda a, b: D.Laplace(a, b), lambda a, b: st.laplace(a, b), "real"),
    "Cauchy": (lambda a, b: D.Cauchy(a, b), lambda a, b: st.cauchy(a, b), "real"),
    "Gumbel": (lambda a, b: D.Gumbel(a, b), lambda a, b: st.gumbel_r(a, b), "real"),
    "Uniform": (
        lambda a, b: D.Uniform(a - 3, a + b),
        lambda a, b: st.uniform(a - 3, b + 3),
        "unif",
    ),
    "Gamma": (lambda a, b: D.Gamma(a, b), lambda a, b: st.gamma(a, scale=1 / b), "pos"),
    "Exponential": (
        lambda a, b: D.Exponential(a * b),
        lambda a, b: st.expon(scale=1 / (a * b)),
        "pos",
    ),
    "Beta": (lambda a, b: D.Beta(a, b), lambda a, b: st.beta(a, b), "unit"),
    "StudentT": (lambda a, b: D.StudentT(a + 2, a, b), lambda a, b: st.t(a + 2, a, b), "real"),
    "Chi2": (lambda a, b: D.Chi2(a * b), lambda a, b: st.chi2(a * b), "pos"),
    "LogNormal": (
        lambda a, b: D.LogNormal(a - 1, b),
        lambda a, b: st.lognorm(b, scale=np.exp(a - 1)),
        "pos",
    ),
    "HalfNormal": (lambda a, b: D.HalfNormal(a * b), lambda a, b: st.halfnorm(scale=a * b), "pos"),
}
HAS_CDF = {
    "Normal",
    "Laplace",
    "Cauchy",
    "Gumbel",
    "Uniform",
    "Exponential",
    "LogNormal",
    "HalfNormal",
}
NO_ENTROPY = set()


def points(kind, shape):
    x = rng.uniform(0.05, 0.95, size=(5,) + shape)
    return {"real": (x - 0.5) * 8, "pos": x * 5, "unit": x, "unif": x * 2 - 1}[kind]


@pytest.mark.parametrize("dtype,np_dtype,tol", DTYPES)
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_against_scipy(name, dtype, np_dtype, tol):
    build, ref, kind = CONTINUOUS[name]
    a, b = np.broadcast_arrays(A, B)
    d = build(ember.tensor(A, dtype=dtype), ember.tensor(B, dtype=dtype))
    r = ref(a, b)
    assert d.batch_shape == ember.Size([3, 4])
    x = points(kind, (3, 4)).astype(np_dtype)
    xe = ember.tensor(x, dtype=dtype)
    rtol = tol * 100 if dtype == ember.float32 else 1e-8
    lp = d.log_prob(xe)
    assert lp.dtype == dtype
    np.testing.assert_allclose(lp.numpy(), r.logpdf(x), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(d.entropy().numpy(), r.entropy(), rtol=rtol, atol=rtol)
    if name != "Cauchy":
        np.testing.assert_allclose(d.mean.numpy(), np.broadcast_to(r.mean(), (3, 4)), rtol=rtol)
        np.testing.assert_allclose(d.variance.numpy(), np.broadcast_to(r.var(), (3, 4)), rtol=rtol)
        np.testing.assert_allclose(d.stddev.numpy(), np.broadcast_to(r.std(), (3, 4)), rtol=rtol)
    if name in HAS_CDF:
        np.testing.assert_allclose(d.cdf(xe).numpy(), r.cdf(x), rtol=rtol, atol=rtol)
        q = rng.uniform(0.05, 0.95, size=(5, 3, 4)).astype(np_dtype)
        icdf = d.icdf(ember.tensor(q, dtype=dtype)).numpy()
        np.testing.assert_allclose(icdf, r.ppf(q), rtol=rtol * 10, atol=rtol * 10)


DISCRETE = {
    "Bernoulli": (
        lambda p, n: D.Bernoulli(p),
        lambda p, n: st.bernoulli(p),
        lambda p, n: rng.integers(0, 2, (5, 3, 4)),
    ),
    "Binomial": (
        lambda p, n: D.Binomial(n, p),
        lambda p, n: st.binom(n, p),
        lambda p, n: rng.integers(0, 6, (5, 3, 4)),
    ),
    "Geometric": (
        lambda p, n: D.Geometric(p),
        lambda p, n: st.geom(p, loc=-1),
        lambda p, n: rng.integers(0, 8, (5, 3, 4)),
    ),
    "Poisson": (
        lambda p, n: D.Poisson(n * p),
        lambda p, n: st.poisson(n * p),
        lambda p, n: rng.integers(0, 8, (5, 3, 4)),
    ),
    "NegativeBinomial": (
        lambda p, n: D.NegativeBinomial(n, p),
        # PyTorch's probs is the failure... success probability of each trial counted: SciPy's
        # nbinom(n, 1 - p) counts the same failures.
        lambda p, n: st.nbinom(n, 1 - p),
        lambda p, n: rng.integers(0, 8, (5, 3, 4)),
    ),
}


@pytest.mark.parametrize("dtype,np_dtype,tol", DTYPES)
@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_against_scipy(name, dtype, np_dtype, tol):
    build, ref, pts = DISCRETE[name]
    n = np.array([[5.0], [6.0], [7.0]])
    p, nn = np.broadcast_arrays(P, n)
    d = build(
        ember.tensor(P, dtype=dtype), ember.tensor(n, dtype=dtype) if name != "Binomial" else 7
    )
    r = ref(p, nn if name != "Binomial" else 7)
    x = pts(p, n).astype(np_dtype)
    rtol = 2e-5 if dtype == ember.float32 else 1e-9
    np.testing.assert_allclose(
        d.log_prob(ember.tensor(x, dtype=dtype)).numpy(), r.logpmf(x), rtol=rtol, atol=rtol
    )
    shape = r.mean().shape  # P alone gives a (1, 4) batch for the one-parameter families
    np.testing.assert_allclose(np.broadcast_to(d.mean.numpy(), shape), r.mean(), rtol=rtol)
    np.testing.assert_allclose(np.broadcast_to(d.variance.numpy(), shape), r.var(), rtol=rtol)
    if name in ("Bernoulli", "Binomial", "Geometric"):
        H = np.broadcast_to(d.entropy().numpy(), shape)
        np.testing.assert_allclose(H, r.entropy(), rtol=rtol * 10, atol=rtol * 10)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_categorical_family(dtype):
    logits = rng.normal(size=(2, 3, 5))
    probs = sps.softmax(logits, -1)
    for d in (
        D.Categorical(logits=ember.tensor(logits, dtype=dtype)),
        D.Categorical(probs=ember.tensor(probs * 3, dtype=dtype)),
    ):
        assert d.batch_shape == (2, 3) and d.event_shape == ()
        idx = rng.integers(0, 5, size=(4, 2, 3))
        want = np.log(np.take_along_axis(np.broadcast_to(probs, (4, 2, 3, 5)), idx[..., None], -1))[
            ..., 0
        ]
        np.testing.assert_allclose(d.log_prob(ember.tensor(idx)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(d.entropy().numpy(), -(probs * np.log(probs)).sum(-1), rtol=1e-5)
        np.testing.assert_allclose(d.probs.numpy(), probs, rtol=1e-5)
        assert d.enumerate_support().shape == (5, 2, 3)
        assert d.enumerate_support(expand=False).shape == (5, 1, 1)
        oh = D.OneHotCategorical(probs=d.probs)
        np.testing.assert_allclose(
            oh.log_prob(ember.nn.functional.one_hot(ember.tensor(idx), 5).to(dtype)).numpy(),
            want,
            rtol=1e-5,
        )
    m = D.Multinomial(6, probs=ember.tensor(probs[0, 0], dtype=dtype))
    counts = np.array([1.0, 0, 2, 3, 0])
    np.testing.assert_allclose(
        m.log_prob(ember.tensor(counts, dtype=dtype)).item(),
        st.multinomial(6, probs[0, 0]).logpmf(counts),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        m.entropy().item(), st.multinomial(6, probs[0, 0]).entropy(), rtol=1e-5
    )


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_dirichlet_and_multivariate(dtype):
    rtol = 1e-5 if dtype == ember.float32 else 1e-10
    alpha = np.array([[0.5, 1.5, 2.0], [3.0, 1.0, 4.0]])
    x = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    d = D.Dirichlet(ember.tensor(alpha, dtype=dtype))
    for i in range(2):
        ref = st.dirichlet(alpha[i])
        np.testing.assert_allclose(
            d.log_prob(ember.tensor(x, dtype=dtype))[i].item(), ref.logpdf(x[i]), rtol=rtol
        )
        np.testing.assert_allclose(d.entropy()[i].item(), ref.entropy(), rtol=rtol)
        np.testing.assert_allclose(d.mean[i].numpy(), ref.mean(), rtol=rtol)
        np.testing.assert_allclose(d.variance[i].numpy(), ref.var(), rtol=rtol)
    A_ = rng.normal(size=(2, 3, 3))
    cov = A_ @ A_.transpose(0, 2, 1) + 3 * np.eye(3)
    loc = rng.normal(size=(2, 3))
    pts = rng.normal(size=(4, 2, 3))
    for kw in ("covariance_matrix", "precision_matrix", "scale_tril"):
        arg = {
            "covariance_matrix": cov,
            "precision_matrix": np.linalg.inv(cov),
            "scale_tril": np.linalg.cholesky(cov),
        }[kw]
        mvn = D.MultivariateNormal(
            ember.tensor(loc, dtype=dtype), **{kw: ember.tensor(arg, dtype=dtype)}
        )
        lp = mvn.log_prob(ember.tensor(pts, dtype=dtype)).numpy()
        for i in range(2):
            ref = st.multivariate_normal(loc[i], cov[i])
            np.testing.assert_allclose(lp[:, i], ref.logpdf(pts[:, i]), rtol=rtol * 10)
            np.testing.assert_allclose(mvn.entropy()[i].item(), ref.entropy(), rtol=rtol * 10)
        np.testing.assert_allclose(
            mvn.covariance_matrix.numpy(), cov, rtol=rtol * 10, atol=rtol * 10
        )
        np.testing.assert_allclose(
            mvn.precision_matrix.numpy(), np.linalg.inv(cov), rtol=rtol * 100, atol=rtol * 100
        )
    W = rng.normal(size=(2, 3, 2))
    Dg = rng.uniform(0.5, 2, size=(2, 3))
    lr = D.LowRankMultivariateNormal(
        ember.tensor(loc, dtype=dtype), ember.tensor(W, dtype=dtype), ember.tensor(Dg, dtype=dtype)
    )
    full = W @ W.transpose(0, 2, 1) + np.stack([np.diag(v) for v in Dg])
    lp = lr.log_prob(ember.tensor(pts, dtype=dtype)).numpy()
    for i in range(2):
        ref = st.multivariate_normal(loc[i], full[i])
        np.testing.assert_allclose(lp[:, i], ref.logpdf(pts[:, i]), rtol=rtol * 10)
        np.testing.assert_allclose(lr.entropy()[i].item(), ref.entropy(), rtol=rtol * 10)
    np.testing.assert_allclose(lr.covariance_matrix.numpy(), full, rtol=rtol * 10)
    np.testing.assert_allclose(
        lr.precision_matrix.numpy(), np.linalg.inv(full), rtol=rtol * 100, atol=rtol * 100
    )
    np.testing.assert_allclose((lr.scale_tril @ lr.scale_tril.mT).numpy(), full, rtol=rtol * 10)


def test_wrappers():
    base = D.Normal(ember.zeros(2, 3, dtype=ember.float64), ember.ones(2, 3, dtype=ember.float64))
    ind = D.Independent(base, 1)
    assert ind.batch_shape == (2,) and ind.event_shape == (3,)
    x = ember.randn(4, 2, 3, dtype=ember.float64)
    np.testing.assert_allclose(
        ind.log_prob(x).numpy(), st.norm().logpdf(x.numpy()).sum(-1), rtol=1e-12
    )
    mix = D.MixtureSameFamily(
        D.Categorical(probs=ember.tensor([0.3, 0.7], dtype=ember.float64)),
        D.Normal(
            ember.tensor([-1.0, 2.0], dtype=ember.float64),
            ember.tensor([0.5, 1.5], dtype=ember.float64),
        ),
    )
    v = np.linspace(-3, 3, 7)
    want = np.log(0.3 * st.norm(-1, 0.5).pdf(v) + 0.7 * st.norm(2, 1.5).pdf(v))
    np.testing.assert_allclose(mix.log_prob(ember.tensor(v)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(mix.mean.item(), 0.3 * -1 + 0.7 * 2, rtol=1e-12)
    var = 0.3 * (0.25 + 1) + 0.7 * (2.25 + 4) - 1.1**2
    np.testing.assert_allclose(mix.variance.item(), var, rtol=1e-12)
    np.testing.assert_allclose(
        mix.cdf(ember.tensor(v)).numpy(),
        0.3 * st.norm(-1, 0.5).cdf(v) + 0.7 * st.norm(2, 1.5).cdf(v),
        rtol=1e-12,
    )
    rb = D.RelaxedBernoulli(
        ember.tensor(0.5, dtype=ember.float64), probs=ember.tensor([0.3, 0.8], dtype=ember.float64)
    )
    y = rb.rsample((3,))
    assert y.shape == (3, 2) and bool(((y > 0) & (y < 1)).all())
    assert bool(rb.log_prob(y).isfinite().all())


def test_relaxed_densities_integrate_to_one():
    # The relaxed Bernoulli density on (0, 1) integrates to 1 (midpoint rule on a fine grid).
    rb = D.RelaxedBernoulli(
        ember.tensor(0.7, dtype=ember.float64), probs=ember.tensor(0.3, dtype=ember.float64)
    )
    grid = (np.arange(200000) + 0.5) / 200000
    dens = np.exp(rb.log_prob(ember.tensor(grid)).numpy())
    np.testing.assert_allclose(dens.mean(), 1.0, rtol=1e-3)


def test_zero_dim_and_scalar_params():
    d = D.Normal(0.0, 1.0)
    assert d.batch_shape == () and d.sample().shape == ()
    assert d.sample((2, 3)).shape == (2, 3)
    np.testing.assert_allclose(
        d.log_prob(ember.tensor(0.5)).item(), st.norm().logpdf(0.5), rtol=1e-6
    )
    g = D.Gamma(2.0, 3.0)
    assert g.rsample().shape == ()
    e = D.Normal(ember.zeros(0), ember.ones(0))
    assert e.sample((2,)).shape == (2, 0) and e.log_prob(e.sample()).shape == (0,)
