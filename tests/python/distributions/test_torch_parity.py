"""Parity with torch.distributions (skipped without PyTorch): the same formulas give the same
values to rounding, and the same shapes, supports and flags."""

import numpy as np
import pytest

import ember
import ember.distributions as ED

torch = pytest.importorskip("torch")
TD = torch.distributions

rng = np.random.default_rng(3)
A = rng.uniform(0.5, 2.5, size=(2, 3))
B = rng.uniform(0.5, 2.5, size=(2, 3))
P = rng.uniform(0.1, 0.9, size=(2, 3))
V = rng.uniform(0.1, 0.9, size=(2, 3))

CASES = {
    "Normal": (lambda m, a, b, p: m.Normal(a, b), lambda v: v * 4 - 2),
    "Laplace": (lambda m, a, b, p: m.Laplace(a, b), lambda v: v * 4 - 2),
    "Cauchy": (lambda m, a, b, p: m.Cauchy(a, b), lambda v: v * 4 - 2),
    "Gumbel": (lambda m, a, b, p: m.Gumbel(a, b), lambda v: v * 4 - 2),
    "Gamma": (lambda m, a, b, p: m.Gamma(a, b), lambda v: v * 3),
    "Chi2": (lambda m, a, b, p: m.Chi2(a), lambda v: v * 3),
    "Beta": (lambda m, a, b, p: m.Beta(a, b), lambda v: v),
    "Exponential": (lambda m, a, b, p: m.Exponential(a), lambda v: v * 3),
    "StudentT": (lambda m, a, b, p: m.StudentT(a, b, a), lambda v: v * 4 - 2),
    "LogNormal": (lambda m, a, b, p: m.LogNormal(a, b), lambda v: v * 3),
    "HalfNormal": (lambda m, a, b, p: m.HalfNormal(a), lambda v: v * 3),
    "Uniform": (lambda m, a, b, p: m.Uniform(-a, b), lambda v: v - 0.4),
    "Bernoulli": (lambda m, a, b, p: m.Bernoulli(p), lambda v: (v > 0.5) * 1.0),
    "Binomial": (lambda m, a, b, p: m.Binomial(7, p), lambda v: np.floor(v * 7)),
    "Geometric": (lambda m, a, b, p: m.Geometric(p), lambda v: np.floor(v * 7)),
    "NegativeBinomial": (lambda m, a, b, p: m.NegativeBinomial(a, p), lambda v: np.floor(v * 7)),
    "Poisson": (lambda m, a, b, p: m.Poisson(a), lambda v: np.floor(v * 7)),
    "RelaxedBernoulli": (lambda m, a, b, p: m.RelaxedBernoulli(a[0, 0], p), lambda v: v),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name, dtype):
    build, pts = CASES[name]
    e_args = [ember.tensor(x, dtype=getattr(ember, dtype)) for x in (A, B, P)]
    t_args = [torch.tensor(x, dtype=getattr(torch, dtype)) for x in (A, B, P)]
    e, t = build(ED, *e_args), build(TD, *t_args)
    x = pts(V)
    rtol = 1e-5 if dtype == "float32" else 1e-11
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    assert type(e.support).__name__ == type(t.support).__name__
    xe, xt = (
        ember.tensor(x, dtype=getattr(ember, dtype)),
        torch.tensor(x, dtype=getattr(torch, dtype)),
    )
    np.testing.assert_allclose(e.log_prob(xe).numpy(), t.log_prob(xt).numpy(), rtol=rtol, atol=rtol)
    for attr in ("mean", "variance", "mode", "stddev"):
        try:
            want = getattr(t, attr).numpy()
        except NotImplementedError:
            continue
        np.testing.assert_allclose(getattr(e, attr).numpy(), want, rtol=rtol, atol=rtol)
    for fn in ("entropy", "cdf", "icdf"):
        try:
            arg = (
                ()
                if fn == "entropy"
                else ((xt,) if fn == "cdf" else (torch.tensor(V, dtype=xt.dtype),))
            )
            want = getattr(t, fn)(*arg).numpy()
        except NotImplementedError:
            continue
        earg = (
            ()
            if fn == "entropy"
            else ((xe,) if fn == "cdf" else (ember.tensor(V, dtype=xe.dtype),))
        )
        np.testing.assert_allclose(
            getattr(e, fn)(*earg).numpy(), want, rtol=rtol * 10, atol=rtol * 10
        )


def test_parity_kl_and_multivariate():
    loc = rng.normal(size=(2, 3))
    m = rng.normal(size=(2, 3, 3))
    cov = m @ m.transpose(0, 2, 1) + np.eye(3)
    e = ED.MultivariateNormal(ember.tensor(loc), ember.tensor(cov))
    t = TD.MultivariateNormal(torch.tensor(loc), torch.tensor(cov))
    x = rng.normal(size=(4, 2, 3))
    np.testing.assert_allclose(
        e.log_prob(ember.tensor(x)).numpy(), t.log_prob(torch.tensor(x)).numpy(), rtol=1e-10
    )
    e2 = ED.MultivariateNormal(
        ember.tensor(loc[::-1].copy()), scale_tril=ember.tensor(np.linalg.cholesky(cov))
    )
    t2 = TD.MultivariateNormal(
        torch.tensor(loc[::-1].copy()), scale_tril=torch.tensor(np.linalg.cholesky(cov))
    )
    np.testing.assert_allclose(
        ED.kl_divergence(e, e2).numpy(), TD.kl_divergence(t, t2).numpy(), rtol=1e-10
    )
    for build in (
        lambda m, a, b: (m.Gamma(a, b), m.Gamma(b, a)),
        lambda m, a, b: (m.Beta(a, b), m.Beta(b, a)),
        lambda m, a, b: (m.Normal(a, b), m.Normal(b, a)),
        lambda m, a, b: (m.Dirichlet(a), m.Dirichlet(b)),
        lambda m, a, b: (m.Exponential(a), m.Gamma(b, a)),
        lambda m, a, b: (m.Uniform(a - 3, a), m.Normal(b, a)),
    ):
        pe, qe = build(ED, ember.tensor(A), ember.tensor(B))
        pt, qt = build(TD, torch.tensor(A), torch.tensor(B))
        np.testing.assert_allclose(
            ED.kl_divergence(pe, qe).numpy(), TD.kl_divergence(pt, qt).numpy(), rtol=1e-10
        )


def test_parity_transforms_and_errors():
    x = rng.normal(size=(2, 4))
    for name in (
        "ExpTransform",
        "SigmoidTransform",
        "TanhTransform",
        "SoftplusTransform",
        "StickBreakingTransform",
    ):
        te, tt = getattr(ED.transforms, name)(), getattr(TD.transforms, name)()
        ye, yt = te(ember.tensor(x)), tt(torch.tensor(x))
        np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-12)
        np.testing.assert_allclose(
            te.log_abs_det_jacobian(ember.tensor(x), ye).numpy(),
            tt.log_abs_det_jacobian(torch.tensor(x), yt).numpy(),
            rtol=1e-10,
        )
    with pytest.raises(ValueError) as ee:
        ED.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))
    with pytest.raises(ValueError) as et:
        TD.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
    assert str(ee.value).split("(")[0] == str(et.value).split("(")[0]
