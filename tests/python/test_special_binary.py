"""ember.special's two-argument functions and mvlgamma against SciPy: gammainc / gammaincc
(igamma / igammac), xlog1py, the Hurwitz zeta function and the orthogonal polynomials, with
broadcasting, Python numbers, PyTorch's conventions at the edges, out= and dtype rules."""

import math

import numpy as np
import pytest

import ember

sp = pytest.importorskip("scipy.special")

S = ember.special
NAN, INF = math.nan, math.inf
rng = np.random.default_rng(99)


def _t(x, dtype=ember.float64):
    return ember.tensor(np.asarray(x, dtype=np.float64), dtype=dtype)


# ---- incomplete gamma ------------------------------------------------------------------------


@pytest.mark.parametrize("fn,ref", [(S.gammainc, sp.gammainc), (S.gammaincc, sp.gammaincc)])
def test_incomplete_gamma_against_scipy(fn, ref):
    a = np.concatenate([rng.uniform(0, 50, 20000), np.exp(rng.uniform(-8, 7, 20000))])
    x = np.concatenate([rng.uniform(0, 100, 20000), a[20000:] * np.exp(rng.normal(0, 0.3, 20000))])
    got, want = fn(_t(a), _t(x)).numpy(), ref(a, x)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-14)
    tiny = (want > 1e-300) & (want < 1e-3)  # the tails keep their relative accuracy
    np.testing.assert_allclose(got[tiny], want[tiny], rtol=1e-11)
    # float32: one rounding of the double result
    got32 = fn(_t(a, ember.float32), _t(x, ember.float32)).numpy()
    want32 = ref(a.astype(np.float32).astype(np.float64), x.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(got32, want32.astype(np.float32), rtol=3e-7, atol=1e-30)


def test_incomplete_gamma_edges():
    a = _t([0.0, 0.0, 1.0, 1.0, -1.0, INF, INF, NAN, 2.0, 0.5, 3.0])
    x = _t([0.0, 1.0, 0.0, INF, 1.0, 1.0, INF, 1.0, -1.0, NAN, 0.0])
    np.testing.assert_array_equal(
        S.gammainc(a, x).numpy(), [NAN, 1.0, 0.0, 1.0, NAN, 0.0, NAN, NAN, NAN, NAN, 0.0])
    np.testing.assert_array_equal(
        S.gammaincc(a, x).numpy(), [NAN, 0.0, 1.0, 0.0, NAN, 1.0, NAN, NAN, NAN, NAN, 1.0])
    # P + Q = 1
    a, x = rng.uniform(0.1, 30, 1000), rng.uniform(0, 60, 1000)
    total = (S.gammainc(_t(a), _t(x)) + S.gammaincc(_t(a), _t(x))).numpy()
    np.testing.assert_allclose(total, 1.0, rtol=1e-14)


def test_igamma_top_level_forms_and_dtypes():
    a, x = _t([[0.5], [2.0]]), _t([0.3, 1.0, 4.0])  # broadcast to (2, 3)
    want = sp.gammainc(np.array([[0.5], [2.0]]), np.array([0.3, 1.0, 4.0]))
    np.testing.assert_allclose(ember.igamma(a, x).numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(a.igamma(x).numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(a.igammac(x).numpy(), 1 - want, rtol=1e-13)
    t = _t([0.5, 2.0, 3.0])
    assert t.igamma_(_t([1.0, 1.0, 1.0])) is t
    np.testing.assert_allclose(t.numpy(), sp.gammainc([0.5, 2.0, 3.0], 1.0), rtol=1e-14)
    out = ember.empty(0, dtype=ember.float64)
    assert ember.igammac(a, x, out=out) is out and out.shape == (2, 3)
    # mixed float dtypes promote; integers are refused (as PyTorch)
    assert S.gammainc(_t([1.0], ember.float32), _t([1.0])).dtype == ember.float64
    assert S.gammainc(_t([1.0], ember.float16), _t([1.0], ember.float16)).dtype == ember.float16
    with pytest.raises(NotImplementedError, match="gammainc"):
        S.gammainc(ember.tensor([1]), ember.tensor([1]))
    with pytest.raises(TypeError, match="gammainc"):
        S.gammainc(2.0, _t([1.0]))
    with pytest.raises(TypeError, match="igamma"):
        ember.igamma(_t([1.0]), 2.0)


# ---- xlog1py and zeta ------------------------------------------------------------------------


def test_xlog1py():
    x = np.concatenate([rng.normal(0, 3, 2000), [0.0, 0.0, 0.0, 1.0, 2.0]])
    y = np.concatenate([rng.uniform(-1, 30, 2000), [-1.0, -2.0, NAN, -1.0, INF]])
    got = S.xlog1py(_t(x), _t(y)).numpy()
    np.testing.assert_allclose(got, sp.xlog1py(x, y), rtol=1e-14, equal_nan=True)
    np.testing.assert_array_equal(got[-5:], [0.0, 0.0, NAN, -INF, INF])
    # Python numbers on either side, integer promotion, broadcasting
    np.testing.assert_allclose(S.xlog1py(2, ember.tensor([1])).numpy(), [2 * math.log(2)])
    assert S.xlog1py(2, ember.tensor([1])).dtype == ember.float32
    np.testing.assert_allclose(S.xlog1py(_t([[1.0], [2.0]]), 3.0).numpy(),
                               [[math.log(4)], [2 * math.log(4)]])


def test_zeta_against_scipy():
    s = np.concatenate([rng.uniform(1.001, 60, 20000), rng.integers(2, 12, 2000).astype(float)])
    q = np.concatenate([np.exp(rng.uniform(-5, 8, 20000)), rng.uniform(-30, 0, 2000)])
    got, want = S.zeta(_t(s), _t(q)).numpy(), sp.zeta(s, q)
    np.testing.assert_allclose(got, want, rtol=2e-14)
    got32 = S.zeta(_t(s, ember.float32), _t(q, ember.float32)).numpy()
    want32 = sp.zeta(s.astype(np.float32).astype(float), q.astype(np.float32).astype(float))
    finite = np.isfinite(want32.astype(np.float32))
    np.testing.assert_allclose(got32[finite], want32[finite].astype(np.float32), rtol=3e-7)


def test_zeta_edges_and_numbers():
    s = _t([1.0, 0.5, 2.0, 2.0, 2.0, 3.0, 2.5, NAN, 2.0, INF, 2.0])
    q = _t([1.0, 1.0, 0.0, -1.0, -1.5, -1.5, -1.5, 1.0, -INF, 2.0, INF])
    want = [INF, NAN, INF, INF, 9.379246644989124, 0.11810202582086413, NAN, NAN, INF, 0.0, 0.0]
    np.testing.assert_allclose(S.zeta(s, q).numpy(), want, rtol=1e-14, equal_nan=True)
    np.testing.assert_allclose(S.zeta(2, _t([1.0])).numpy(), [math.pi**2 / 6], rtol=1e-15)
    np.testing.assert_allclose(S.zeta(_t([2.0]), 1).numpy(), [math.pi**2 / 6], rtol=1e-15)
    assert S.zeta(ember.tensor([3], dtype=ember.int32), ember.tensor([3])).dtype == ember.float32
    with pytest.raises(NotImplementedError, match="zeta"):
        S.zeta(_t([2.0], ember.float16), _t([1.0], ember.float16))


# ---- polynomials -----------------------------------------------------------------------------


def _recurrence(kind, x, n):
    """p_n(x) for integer n >= 0 by the textbook three-term recurrence, in float64."""
    if kind in "TUVW":
        first = {"T": x, "U": 2 * x, "V": 2 * x - 1, "W": 2 * x + 1}[kind]
        p, q = np.ones_like(x), first
        if n == 0:
            return p
        for _ in range(1, n):
            p, q = q, 2 * x * q - p
        return q
    raise AssertionError(kind)


POLYS = {
    "chebyshev_polynomial_t": lambda x, n: sp.eval_chebyt(n, x),
    "chebyshev_polynomial_u": lambda x, n: sp.eval_chebyu(n, x),
    "chebyshev_polynomial_v": lambda x, n: _recurrence("V", x, n),
    "chebyshev_polynomial_w": lambda x, n: _recurrence("W", x, n),
    "shifted_chebyshev_polynomial_t": lambda x, n: sp.eval_sh_chebyt(n, x),
    "shifted_chebyshev_polynomial_u": lambda x, n: sp.eval_sh_chebyu(n, x),
    "shifted_chebyshev_polynomial_v": lambda x, n: _recurrence("V", 2 * x - 1, n),
    "shifted_chebyshev_polynomial_w": lambda x, n: _recurrence("W", 2 * x - 1, n),
    "hermite_polynomial_h": lambda x, n: sp.eval_hermite(n, x),
    "hermite_polynomial_he": lambda x, n: sp.eval_hermitenorm(n, x),
    "laguerre_polynomial_l": lambda x, n: sp.eval_laguerre(n, x),
    "legendre_polynomial_p": lambda x, n: sp.eval_legendre(n, x),
}


@pytest.mark.parametrize("name", sorted(POLYS))
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 9, 17, 40])
def test_polynomials_against_references(name, n):
    shifted = name.startswith("shifted")
    x = np.linspace(0.0, 1.0, 401) if shifted else np.linspace(-1.0, 1.0, 401)
    x = np.concatenate([x, np.linspace(-3, 3, 101)]) if name.startswith(("hermite", "lag")) else x
    got = getattr(S, name)(_t(x), _t([float(n)])).numpy()
    want = POLYS[name](x, n)
    scale = np.abs(want).max() if len(want) else 1.0
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * scale)
    # n as a Python number, and float32
    np.testing.assert_allclose(getattr(S, name)(_t(x), n).numpy(), got)
    got32 = getattr(S, name)(_t(x, ember.float32), n).numpy()
    np.testing.assert_allclose(got32, want.astype(np.float32), rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("name", sorted(POLYS))
def test_polynomial_conventions(name):
    fn = getattr(S, name)
    x = _t([0.3, -0.7, 0.0, 1.0, -1.0])
    # n < 0 gives 0; fractional n is truncated toward zero; NaN n acts as negative
    np.testing.assert_array_equal(fn(x, -1).numpy(), np.zeros(5))
    np.testing.assert_array_equal(fn(x, _t([-2.7])).numpy(), np.zeros(5))
    np.testing.assert_array_equal(fn(x, _t([NAN])).numpy(), np.zeros(5))
    np.testing.assert_allclose(fn(x, 3.9).numpy(), fn(x, 3).numpy())
    # n broadcasts as a tensor, elementwise
    ns = _t([[0.0], [1.0], [4.0]])
    got = fn(x, ns)
    assert got.shape == (3, 5)
    np.testing.assert_allclose(got.numpy()[2], fn(x, 4).numpy())
    # the dtype is the promoted float dtype of (input, n)
    assert fn(ember.tensor([1, 2]), ember.tensor([3, 2])).dtype == ember.float32
    assert fn(2.0, ember.tensor([3, 2])).dtype == ember.float32
    assert fn(ember.tensor([1.0]), ember.tensor([3.0], dtype=ember.float64)).dtype == ember.float64
    with pytest.raises(NotImplementedError, match=name):
        fn(_t([0.5], ember.float16), 2)
    # NaN x propagates once n >= 1
    assert math.isnan(fn(_t([NAN]), 3).item())


def test_polynomial_endpoints_and_large_degree():
    n = 1001
    np.testing.assert_allclose(S.chebyshev_polynomial_t(_t([1.0, -1.0]), n).numpy(), [1.0, -1.0])
    np.testing.assert_allclose(S.chebyshev_polynomial_u(_t([1.0, -1.0]), n).numpy(),
                               [n + 1, -(n + 1)])
    np.testing.assert_allclose(S.chebyshev_polynomial_v(_t([1.0, -1.0]), n).numpy(),
                               [1.0, -(2 * n + 1)])
    np.testing.assert_allclose(S.chebyshev_polynomial_w(_t([1.0, -1.0]), n).numpy(),
                               [2 * n + 1, -1.0])
    np.testing.assert_allclose(S.shifted_chebyshev_polynomial_t(_t([1.0, 0.0]), n).numpy(),
                               [1.0, -1.0])
    np.testing.assert_allclose(S.legendre_polynomial_p(_t([1.0, -1.0]), n).numpy(), [1.0, -1.0])
    np.testing.assert_allclose(S.laguerre_polynomial_l(_t([0.0]), n).numpy(), [1.0])
    # |x| < 1: the trigonometric forms stay accurate at high degree
    x = np.linspace(-0.99, 0.99, 301)
    np.testing.assert_allclose(S.chebyshev_polynomial_t(_t(x), 5000).numpy(),
                               np.cos(5000 * np.arccos(x)), atol=1e-10)
    # |x| > 1 overflows to inf, then NaN as PyTorch's recurrence does; it does not hang
    big = S.chebyshev_polynomial_t(_t([3.0]), 10**12).item()
    assert math.isnan(big)
    assert S.hermite_polynomial_h(_t([2.0]), 200).item() == pytest.approx(
        sp.eval_hermite(200, 2.0), rel=1e-10)


def test_polynomial_out_and_noncontiguous():
    base = rng.uniform(-1, 1, (5, 4))
    x = _t(base).t()
    out = ember.empty(0, dtype=ember.float64)
    r = S.legendre_polynomial_p(x, 6, out=out)
    assert r is out and out.shape == (4, 5)
    np.testing.assert_allclose(out.numpy(), sp.eval_legendre(6, base.T), rtol=1e-12, atol=1e-14)
    assert S.hermite_polynomial_he(ember.empty(0, 2), 3).shape == (0, 2)
    assert S.hermite_polynomial_he(_t(0.5), _t(3.0)).shape == ()


# ---- mvlgamma --------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [1, 2, 3, 7])
def test_mvlgamma_against_scipy(p):
    x = rng.uniform((p - 1) / 2 + 0.01, 40, 500)
    want = np.array([sp.multigammaln(v, p) for v in x])
    np.testing.assert_allclose(ember.mvlgamma(_t(x), p).numpy(), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(S.multigammaln(_t(x), p).numpy(), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(_t(x).mvlgamma(p).numpy(), want, rtol=1e-12, atol=1e-13)
    t = _t(x)
    assert t.mvlgamma_(p) is t
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-12, atol=1e-13)


def test_mvlgamma_errors_and_dtypes():
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        ember.mvlgamma(_t([2.0]), 0)
    assert ember.mvlgamma(ember.tensor([3]), 2).dtype == ember.float32
    assert ember.mvlgamma(_t([3.0], ember.bfloat16), 2).dtype == ember.bfloat16
    out = ember.empty(3, dtype=ember.float64)
    assert S.multigammaln(_t([2.0, 3.0, 4.0]), 2, out=out) is out


def test_mvlgamma_refuses_p_whose_cost_would_be_minutes():
    # The CI fuzzer's hang: p = 2^63 - 2 given as a 0-d int64 tensor, on a float16 scalar. p
    # log-gamma terms per element: refused past 2^26 terms in one call, before any work.
    big = ember.tensor(9223372036854775806)
    with pytest.raises(RuntimeError, match=r"\[mvlgamma\] p = 9223372036854775806 over 1 elements"):
        S.multigammaln(ember.tensor(-2.113, dtype=ember.float16), big)
    with pytest.raises(RuntimeError, match="split the input into smaller tensors"):
        ember.mvlgamma(ember.full((1000,), 1e6, dtype=ember.float64), 1 << 17)
    with pytest.raises(RuntimeError, match="split the input"):
        ember.full((2,), 1e30).mvlgamma_(1 << 40)
    # A 0-d integer tensor p is checked against the domain like an int.
    with pytest.raises(RuntimeError, match=r"greater than \(p-1\)/2"):
        ember.mvlgamma(_t([1.0]), ember.tensor(5))
    # Large p within the budget still computes (one element, p = 2^16), against SciPy.
    x = 40000.0
    got = ember.mvlgamma(_t([x]), 1 << 16).item()
    assert got == pytest.approx(sp.multigammaln(x, 1 << 16), rel=1e-9)
