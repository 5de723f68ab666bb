"""ember.special's one-argument functions against SciPy: float32 and float64 over wide ranges
(tails, poles, negative arguments), NaN/inf, 0-d, empty, non-contiguous, out=, dtype rules, the
aliases of existing ops, and the top-level / Tensor-method forms PyTorch also has (i0)."""

import math

import numpy as np
import pytest

import ember

sp = pytest.importorskip("scipy.special")

S = ember.special
NAN, INF = math.nan, math.inf
rng = np.random.default_rng(1234)


def _signed_logspace(lo, hi, n):
    pos = np.logspace(lo, hi, n)
    return np.concatenate([-pos[::-1], [0.0], pos])


def _pos_logspace(lo, hi, n):
    return np.logspace(lo, hi, n)


# name -> (SciPy reference, domain, float64 rtol, float64 atol). The domains stop where SciPy
# itself is less accurate than Ember (docs/design/special.md): i0 / i1 overflow at 709 in SciPy
# (the true values are finite up to 713), and J, Y, Ai lose their phase in SciPy at large |x|.
UNARY = {
    "i0": (sp.i0, _signed_logspace(-300, np.log10(705), 3000), 1e-14, 0),
    "i0e": (sp.i0e, _signed_logspace(-300, 300, 3000), 1e-14, 0),
    "i1": (sp.i1, _signed_logspace(-300, np.log10(705), 3000), 1e-14, 0),
    "i1e": (sp.i1e, _signed_logspace(-300, 300, 3000), 1e-14, 0),
    "modified_bessel_i0": (sp.i0, _signed_logspace(-3, 2.5, 1000), 1e-14, 0),
    "modified_bessel_i1": (sp.i1, _signed_logspace(-3, 2.5, 1000), 1e-14, 0),
    "modified_bessel_k0": (sp.k0, _pos_logspace(-300, np.log10(700), 3000), 1e-14, 0),
    "modified_bessel_k1": (sp.k1, _pos_logspace(-300, np.log10(700), 3000), 1e-14, 0),
    "scaled_modified_bessel_k0": (sp.k0e, _pos_logspace(-300, 300, 3000), 1e-14, 0),
    "scaled_modified_bessel_k1": (sp.k1e, _pos_logspace(-300, 300, 3000), 1e-14, 0),
    # Oscillating: absolute accuracy near the zeros.
    "bessel_j0": (sp.j0, np.linspace(-200, 200, 8001), 1e-13, 1e-15),
    "bessel_j1": (sp.j1, np.linspace(-200, 200, 8001), 1e-13, 1e-15),
    "bessel_y0": (sp.y0, np.concatenate([_pos_logspace(-300, 0, 500), np.linspace(1, 200, 8000)]),
                  1e-13, 1e-15),
    "bessel_y1": (sp.y1, np.concatenate([_pos_logspace(-300, 0, 500), np.linspace(1, 200, 8000)]),
                  1e-13, 1e-15),
    "spherical_bessel_j0": (lambda x: sp.spherical_jn(0, x), np.linspace(-50, 50, 4001), 1e-14,
                            1e-16),
    "airy_ai": (lambda x: sp.airy(x)[0], np.linspace(-20, 100, 12001), 1e-12, 1e-14),
    # SciPy's ndtr and log_ndtr err by up to ~1e-13 in the far tails (its erfc of the rounded
    # x / sqrt 2); Ember's are within a few ulp there (checked against mpmath).
    "ndtr": (sp.ndtr, np.linspace(-37, 9, 4601), 3e-13, 0),
    "ndtri": (sp.ndtri, np.concatenate([np.linspace(1e-9, 1 - 1e-9, 4001),
                                        _pos_logspace(-300, -1, 300)]), 1e-14, 0),
    "log_ndtr": (sp.log_ndtr, np.concatenate([np.linspace(-1e3, 38, 4001),
                                              -_pos_logspace(3, 150, 100)]), 5e-13, 1e-300),
    "erfcx": (sp.erfcx, np.concatenate([np.linspace(-26, 60, 4001), _pos_logspace(1, 300, 300)]),
              1e-13, 0),
    "entr": (sp.entr, np.concatenate([np.linspace(-2, 50, 2001), _pos_logspace(-300, 300, 300)]),
             1e-15, 0),
}

# Functions PyTorch computes in float16 / bfloat16 as well (through float32).
REDUCED_FLOAT = {"i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "ndtr",
                 "entr"}


def _check(name, x, dtype):
    ref, _, rtol, atol = UNARY[name]
    if dtype == "float32":
        with np.errstate(over="ignore"):
            x = x[np.abs(x) < 3e38].astype(np.float32)
            keep = np.isfinite(ref(x.astype(np.float64)).astype(np.float32))
        x = x[keep]
    got = getattr(S, name)(ember.tensor(x)).numpy()
    want = ref(x.astype(np.float64))
    if dtype == "float32":
        with np.errstate(under="ignore"):
            want = want.astype(np.float32)
        # One rounding of the double result, plus the reference's own rounding.
        np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=max(atol, 1e-38) * 1e8)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_against_scipy(name, dtype):
    _check(name, UNARY[name][1], dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_random_points_against_scipy(name):
    domain = UNARY[name][1]
    x = rng.uniform(domain.min(), domain.max(), 2000) if name != "ndtri" else rng.random(2000)
    _check(name, x, "float64")


# Values at the edges, float64. Where Ember differs from PyTorch (PyTorch returns NaN for i0(inf),
# J0(inf), Ai(inf), ...), Ember gives the limits SciPy gives: docs/design/special.md.
EDGES = {
    #  name: (inputs, expected)
    "i0": ([0.0, -0.0, INF, -INF, NAN], [1.0, 1.0, INF, INF, NAN]),
    "i0e": ([0.0, INF, -INF, NAN], [1.0, 0.0, 0.0, NAN]),
    "i1": ([0.0, INF, -INF, NAN], [0.0, INF, -INF, NAN]),
    "i1e": ([0.0, INF, -INF, NAN], [0.0, 0.0, -0.0, NAN]),
    "bessel_j0": ([0.0, INF, -INF, NAN], [1.0, 0.0, 0.0, NAN]),
    "bessel_j1": ([0.0, INF, -INF, NAN], [0.0, 0.0, 0.0, NAN]),
    "bessel_y0": ([0.0, -1.0, INF, NAN], [-INF, NAN, 0.0, NAN]),
    "bessel_y1": ([0.0, -1.0, INF, NAN], [-INF, NAN, 0.0, NAN]),
    "modified_bessel_k0": ([0.0, -1.0, INF, NAN], [INF, NAN, 0.0, NAN]),
    "modified_bessel_k1": ([0.0, -1.0, INF, NAN], [INF, NAN, 0.0, NAN]),
    "scaled_modified_bessel_k0": ([0.0, -1.0, INF, NAN], [INF, NAN, 0.0, NAN]),
    "scaled_modified_bessel_k1": ([0.0, -1.0, INF, NAN], [INF, NAN, 0.0, NAN]),
    "spherical_bessel_j0": ([0.0, INF, -INF, NAN], [1.0, 0.0, 0.0, NAN]),
    "airy_ai": ([0.0, INF, -INF, NAN, 200.0], [0.3550280538878172, 0.0, 0.0, NAN, 0.0]),
    "ndtr": ([0.0, INF, -INF, NAN, -50.0], [0.5, 1.0, 0.0, NAN, 0.0]),
    "ndtri": ([0.0, 0.5, 1.0, -0.1, 1.1, NAN], [-INF, 0.0, INF, NAN, NAN, NAN]),
    "log_ndtr": ([0.0, INF, -INF, NAN], [-math.log(2), 0.0, -INF, NAN]),
    "erfcx": ([0.0, INF, -INF, NAN, -30.0, 1e300],
              [1.0, 0.0, INF, NAN, INF, 5.641895835477563e-301]),
    "entr": ([0.0, 1.0, -1.0, INF, NAN], [0.0, -0.0, -INF, -INF, NAN]),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_values(name):
    x, want = EDGES[name]
    got = getattr(S, name)(ember.tensor(x, dtype=ember.float64)).numpy()
    np.testing.assert_allclose(got, np.array(want), rtol=1e-14, equal_nan=True)


def test_odd_functions_keep_the_sign_of_zero():
    z = ember.tensor([-0.0], dtype=ember.float64)
    assert math.copysign(1, S.bessel_j1(z).item()) == -1


@pytest.mark.parametrize("name", sorted(UNARY))
def test_layouts_and_out(name):
    ref = UNARY[name][0]
    base = np.abs(rng.standard_normal((4, 6))) * 0.4 + 0.05  # inside every domain
    x = ember.tensor(base)
    # 0-d and empty
    assert getattr(S, name)(ember.tensor(0.3, dtype=ember.float64)).shape == ()
    np.testing.assert_allclose(getattr(S, name)(ember.tensor(0.3, dtype=ember.float64)).item(),
                               ref(0.3), rtol=1e-13)
    empty = getattr(S, name)(ember.empty(0, 3))
    assert empty.shape == (0, 3) and empty.dtype == ember.float32
    # non-contiguous (transposed and strided)
    nc = x.t()[::2]
    np.testing.assert_allclose(getattr(S, name)(nc).numpy(), ref(base.T[::2]), rtol=1e-13)
    # out=, resized from empty
    out = ember.empty(0, dtype=ember.float64)
    r = getattr(S, name)(x, out=out)
    assert r is out and out.shape == (4, 6)
    np.testing.assert_allclose(out.numpy(), ref(base), rtol=1e-13)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_dtype_rules(name):
    fn = getattr(S, name)
    assert fn(ember.tensor([1, 2])).dtype == ember.float32
    assert fn(ember.tensor([True])).dtype == ember.float32
    assert fn(ember.tensor([0.5], dtype=ember.float64)).dtype == ember.float64
    with pytest.raises(NotImplementedError, match=name):
        fn(ember.tensor([1 + 1j]))
    for dt in (ember.float16, ember.bfloat16):
        x = ember.tensor([0.25, 0.5], dtype=dt)
        if name in REDUCED_FLOAT:
            got = fn(x)
            assert got.dtype == dt
            want = UNARY[name][0](x.float().numpy().astype(np.float64))
            np.testing.assert_allclose(got.float().numpy(), want, rtol=1e-2)
        else:
            with pytest.raises(NotImplementedError, match=name):
                fn(x)


def test_input_must_be_a_tensor():
    with pytest.raises(TypeError, match="i1e"):
        S.i1e(1.0)


def test_i0_top_level_method_and_inplace():
    x = np.array([-3.0, 0.0, 0.5, 12.0])
    np.testing.assert_allclose(ember.i0(ember.tensor(x)).numpy(), sp.i0(x), rtol=1e-6)
    np.testing.assert_allclose(ember.tensor(x).i0().numpy(), sp.i0(x), rtol=1e-6)
    t = ember.tensor(x, dtype=ember.float64)
    assert t.i0_() is t
    np.testing.assert_allclose(t.numpy(), sp.i0(x), rtol=1e-14)
    assert S.i0 is ember.i0
    with pytest.raises(RuntimeError, match="can't be cast"):  # i0_ keeps the input's dtype
        ember.tensor([1, 2]).i0_()


ALIASES = {
    "digamma": "digamma", "psi": "digamma", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv",
    "exp2": "exp2", "expit": "sigmoid", "expm1": "expm1", "gammaln": "lgamma",
    "log1p": "log1p", "logit": "logit", "polygamma": "polygamma", "sinc": "sinc",
    "xlogy": "xlogy", "gammainc": "igamma", "gammaincc": "igammac", "multigammaln": "mvlgamma",
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_aliases_compute_the_same_op(name):
    a = ember.tensor([0.3, 1.7, 4.0], dtype=ember.float64)
    b = ember.tensor([0.9, 2.5, 0.1], dtype=ember.float64)
    top = getattr(ember, ALIASES[name])
    fn = getattr(S, name)
    if name in ("xlogy", "gammainc", "gammaincc"):
        np.testing.assert_array_equal(fn(a, b).numpy(), top(a, b).numpy())
    elif name == "polygamma":
        np.testing.assert_array_equal(fn(2, a).numpy(), top(2, a).numpy())
    elif name == "multigammaln":
        np.testing.assert_array_equal(fn(a + 2, 3).numpy(), top(a + 2, 3).numpy())
    else:
        np.testing.assert_array_equal(fn(a / 5).numpy(), top(a / 5).numpy())


def test_gammaln_digamma_values():
    x = np.linspace(-4.5, 30, 357)
    np.testing.assert_allclose(S.gammaln(ember.tensor(x)).numpy(), sp.gammaln(x), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(S.psi(ember.tensor(x)).numpy(), sp.psi(x), rtol=1e-12, atol=1e-13)


def test_reductions_and_round():
    x = ember.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    np.testing.assert_allclose(S.softmax(x, 1).numpy(), ember.softmax(x, 1).numpy())
    assert S.log_softmax(x, 0, dtype=ember.float64).dtype == ember.float64
    np.testing.assert_allclose(S.logsumexp(x, 1).numpy(),
                               np.log(np.exp(x.numpy().astype(np.float64)).sum(1)), rtol=1e-6)
    assert S.logsumexp(x, 1, keepdim=True).shape == (2, 1)
    np.testing.assert_allclose(S.round(ember.tensor([1.2345, -2.5]), decimals=2).numpy(),
                               [1.23, -2.5], rtol=1e-6)
    out = ember.empty(2)
    S.round(ember.tensor([0.5, 1.5]), out=out)
    np.testing.assert_array_equal(out.numpy(), [0.0, 2.0])
    np.testing.assert_allclose(S.logit(ember.tensor([0.0, 0.25]), eps=0.1).numpy(),
                               sp.logit(np.array([0.1, 0.25])), rtol=1e-6)


def test_all_names_exist():
    torch_names = [
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
        "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
        "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
        "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
        "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
        "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
        "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
        "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
        "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
    ]
    assert sorted(S.__all__) == sorted(torch_names)
    for n in torch_names:
        assert callable(getattr(S, n)), n


def test_large_tensor_matches_small_calls():
    # Parallel chunks (and the GIL released) give the same values as element-by-element calls.
    x = rng.uniform(-30, 30, 200_000)
    got = S.i1e(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, sp.i1e(x), rtol=1e-14)
    np.testing.assert_array_equal(got[:5], [S.i1e(ember.tensor([v])).item() for v in x[:5]])
