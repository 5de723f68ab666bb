"""Gradients of the elementwise ops beyond the op database: values against PyTorch (ties,
boundaries, NaN, special points), node names, in-place and view forms, broadcasting, complex
inputs, double backward, ops that record nothing, polygamma, and the autograd error cases."""

import itertools
import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

NAN, INF = math.nan, math.inf


# --- helpers that run the same code on ember and (when installed) torch ------------------------


def _leaves(lib, arrays, dtype):
    return [lib.tensor(np.asarray(a), dtype=getattr(lib, dtype)).requires_grad_() for a in arrays]


def _to_numpy(t):
    if t is None:
        return None
    t = t.detach()
    if getattr(t, "_is_zerotensor", lambda: False)():  # PyTorch's symbolic zeros
        return np.zeros(tuple(t.shape), dtype=np.complex128 if t.is_complex() else np.float64)
    return t.resolve_conj().numpy()


def _node_name(t):
    # PyTorch spells the engine's own nodes with their C++ namespace.
    return None if t.grad_fn is None else t.grad_fn.name().replace("torch::autograd::", "")


def run_backward(lib, fn, arrays, dtype="float64", grad_out=None):
    """fn(lib, *leaves) -> output; backward with grad_out (default ones). Returns the output's
    values, its node name and each leaf's gradient (None when it got none)."""
    leaves = _leaves(lib, arrays, dtype)
    out = fn(lib, *leaves)
    g = lib.ones_like(out) if grad_out is None else lib.tensor(grad_out, dtype=out.dtype)
    out.backward(g)
    return _to_numpy(out), _node_name(out), [_to_numpy(x.grad) for x in leaves]


def run_double_backward(lib, fn, arrays, dtype="float64"):
    """d/dx sum(grad of sum(fn) w.r.t. every leaf): second derivatives through create_graph."""
    leaves = _leaves(lib, arrays, dtype)
    out = fn(lib, *leaves)
    first = lib.autograd.grad(out.sum(), leaves, create_graph=True)
    total = sum(g.sum() for g in first)
    second = lib.autograd.grad(total, leaves, allow_unused=True)
    return [_to_numpy(g) for g in second]


def assert_same(ember_result, torch_result, what, rtol=1e-10):
    """Outputs, node names and gradients agree. PyTorch's trigamma (digamma's derivative) is
    accurate to about 1e-9 only: cases that use it pass a looser rtol."""
    e_out, e_name, e_grads = ember_result
    t_out, t_name, t_grads = torch_result
    np.testing.assert_allclose(e_out, t_out, rtol=rtol, atol=1e-12, equal_nan=True,
                               err_msg=f"{what}: forward")
    assert e_name == t_name, f"{what}: node {e_name}, torch {t_name}"
    assert len(e_grads) == len(t_grads)
    for i, (eg, tg) in enumerate(zip(e_grads, t_grads)):
        if tg is None:
            assert eg is None, f"{what}: input {i} got a gradient, torch none"
            continue
        assert eg is not None, f"{what}: input {i} got no gradient"
        assert eg.shape == tg.shape, f"{what}: input {i} gradient shape"
        np.testing.assert_allclose(eg, tg, rtol=rtol, atol=1e-12, equal_nan=True,
                                   err_msg=f"{what}: gradient of input {i}")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


# --- parity cases: (id, fn(lib, *leaves), arrays) --------------------------------------------

X6 = [-1.0, 0.0, 0.5, 1.0, 2.0, NAN]
Y7 = [0.0, 0.0, 1.0, 1.0, NAN, 0.0, NAN]  # ties and NaN on either side (and both)

BINARY_CASES = [
    ("pow-tensor", lambda L, a, b: L.pow(a, b),
     [[0.0, 0.0, -1.0, 2.0, 0.0, 1.5, 3.0], [2.0, 0.0, 2.0, 0.5, -1.0, -0.5, 0.0]]),
    ("pow-square", lambda L, a: a ** 2, [[0.0, -1.0, 2.0, 0.5]]),
    ("pow-zero", lambda L, a: L.pow(a, 0.0), [[0.0, -1.0, 2.0]]),
    ("pow-negative", lambda L, a: a.pow(-1.0), [[0.0, -1.0, 2.0]]),
    ("pow-fractional", lambda L, a: L.pow(a, 2.5), [[0.0, 1.0, 2.0]]),
    ("pow-int-exponent", lambda L, a: L.pow(a, 3), [[0.0, -1.5, 2.0]]),
    ("rpow", lambda L, b: 2.0 ** b, [[0.0, 1.0, -1.0, 2.0]]),
    ("rpow-zero-base", lambda L, b: 0.0 ** b, [[0.0, 1.0, -1.0, 2.0]]),
    ("rpow-negative-base", lambda L, b: (-2.0) ** b, [[0.0, 1.0, 2.5]]),
    ("square", lambda L, a: L.square(a), [[0.0, -1.5, 2.0]]),
    ("float_power", lambda L, a, b: L.float_power(a, b), [[0.5, 2.0, 3.0], [2.0, -1.0, 0.5]]),
    ("float_power-scalar", lambda L, a: L.float_power(a, 2), [[0.5, -2.0, 3.0]]),
    ("float_power-base", lambda L, b: L.float_power(2, b), [[0.5, -2.0, 3.0]]),
    ("atan2", lambda L, a, b: L.atan2(a, b), [[0.0, 1.0, 0.0, -2.0], [0.0, 1.0, 1.0, 0.0]]),
    ("arctan2", lambda L, a, b: L.arctan2(a, b), [[0.5, -1.0], [2.0, -3.0]]),
    ("maximum-ties-nan", lambda L, a, b: L.maximum(a, b), [X6, [0.0, 0.0, 1.0, 1.0, NAN, 0.0]]),
    ("minimum-ties-nan", lambda L, a, b: L.minimum(a, b), [X6, [0.0, 0.0, 1.0, 1.0, NAN, 0.0]]),
    ("fmax-ties-nan", lambda L, a, b: L.fmax(a, b), [X6 + [NAN], Y7]),
    ("fmin-ties-nan", lambda L, a, b: L.fmin(a, b), [X6 + [NAN], Y7]),
    ("hypot", lambda L, a, b: L.hypot(a, b), [[0.0, 3.0, -1.0], [0.0, 4.0, 2.0]]),
    ("logaddexp", lambda L, a, b: L.logaddexp(a, b), [[1.0, -2.0, 30.0], [1.0, 3.0, -30.0]]),
    ("logaddexp2", lambda L, a, b: L.logaddexp2(a, b), [[1.0, -2.0, 30.0], [1.0, 3.0, -30.0]]),
    ("xlogy", lambda L, a, b: L.xlogy(a, b),
     [[0.0, 0.0, 1.0, 0.0, 2.0, -1.0], [0.0, -1.0, 0.0, 2.0, 3.0, 0.5]]),
    ("xlogy-scalar-other", lambda L, a: L.xlogy(a, 0.0), [[0.0, 1.0]]),
    ("xlogy-scalar-other-negative", lambda L, a: L.xlogy(a, -1.0), [[0.0, 1.0]]),
    ("xlogy-scalar-self", lambda L, b: L.xlogy(2.0, b), [[0.0, 1.0, 3.0]]),
    ("xlogy-scalar-self-zero", lambda L, b: L.xlogy(0.0, b), [[0.0, 1.0]]),
    ("copysign", lambda L, a, b: L.copysign(a, b),
     [[0.0, -0.0, 1.0, -2.0, 1.0], [1.0, -1.0, -1.0, 1.0, 0.0]]),
    ("copysign-scalar", lambda L, a: L.copysign(a, -1.0), [[0.0, -0.0, 1.0, -2.0]]),
    ("remainder", lambda L, a, b: L.remainder(a, b),
     [[5.0, -5.0, 5.5, 1.0], [3.0, 3.0, -2.0, 0.3]]),
    ("remainder-scalar", lambda L, a: a % 2.0, [[5.0, -5.0, 5.5]]),
    ("fmod", lambda L, a, b: L.fmod(a, b), [[5.0, -5.0, 5.5, 1.0], [3.0, 3.0, -2.0, 0.3]]),
    ("fmod-scalar", lambda L, a: L.fmod(a, 2.0), [[5.0, -5.0, 5.5]]),
    ("div-trunc", lambda L, a, b: L.div(a, b, rounding_mode="trunc"), [[5.0, -5.0], [3.0, 3.0]]),
    ("div-floor", lambda L, a, b: L.div(a, b, rounding_mode="floor"), [[5.0, -5.0], [3.0, 3.0]]),
    ("divide-floor-method", lambda L, a, b: a.divide(b, rounding_mode="floor"), [[5.0], [3.0]]),
    ("true_divide", lambda L, a, b: L.true_divide(a, b), [[1.0, -2.0], [4.0, 0.5]]),
    ("divide", lambda L, a, b: L.divide(a, b), [[1.0, -2.0], [4.0, 0.5]]),
    ("multiply", lambda L, a, b: L.multiply(a, b), [[1.0, -2.0], [4.0, 0.5]]),
    ("subtract-alpha", lambda L, a, b: L.subtract(a, b, alpha=2.5), [[1.0, -2.0], [4.0, 0.5]]),
    ("add-alpha", lambda L, a, b: L.add(a, b, alpha=-3), [[1.0, -2.0], [4.0, 0.5]]),
    ("lerp-scalar", lambda L, a, b: L.lerp(a, b, 0.3), [[1.0, 2.0], [3.0, 5.0]]),
    ("lerp-tensor", lambda L, a, b, w: L.lerp(a, b, w), [[1.0, 2.0], [3.0, 5.0], [0.2, 0.7]]),
    ("where-broadcast", lambda L, a, b: L.where(L.tensor([[True], [False], [True]]), a, b),
     [[[1.0, 2.0, 3.0, 4.0]], 5.0]),
    ("where-scalar-other", lambda L, a: L.where(a > 0.5, a, 2.0), [[0.0, 1.0, 2.0]]),
]

CLAMP_CASES = [
    ("clamp-scalar-bounds", lambda L, a: L.clamp(a, 0, 1), [X6]),
    ("clamp-scalar-min", lambda L, a: L.clamp(a, min=0), [X6]),
    ("clamp-scalar-max", lambda L, a: L.clamp(a, max=1), [X6]),
    ("clamp-scalar-crossed", lambda L, a: L.clamp(a, 2, 1), [X6]),
    ("clip-scalar", lambda L, a: L.clip(a, -0.5, 0.5), [X6]),
    ("clamp_min-scalar", lambda L, a: L.clamp_min(a, 0.0), [X6]),
    ("clamp_max-scalar", lambda L, a: L.clamp_max(a, 1.0), [X6]),
    ("clamp-tensor-min", lambda L, a, b: L.clamp(a, min=b), [X6, [0.0, 0.0, 0.0, NAN, 3.0, 0.0]]),
    ("clamp-tensor-max", lambda L, a, b: L.clamp(a, max=b), [X6, [1.0, 0.0, 1.0, NAN, 1.0, 1.0]]),
    ("clamp_min-tensor", lambda L, a, b: L.clamp_min(a, b), [X6, [0.0, 0.0, 0.0, NAN, 3.0, 0.0]]),
    ("clamp_max-tensor", lambda L, a, b: L.clamp_max(a, b), [X6, [1.0, 0.0, 1.0, NAN, 1.0, 1.0]]),
    ("clamp-tensor-broadcast", lambda L, a, lo, hi: L.clamp(a, lo, hi),
     [[[-1.0, 0.0, 0.5, 2.0], [1.0, 3.0, -3.0, 0.25]], [0.0, 0.0, 0.0, 0.5], [[1.0], [2.0]]]),
]

UNARY_CASES = [
    ("sign", lambda L, a: L.sign(a), [X6]),
    ("sgn-real", lambda L, a: L.sgn(a), [X6]),
    ("floor", lambda L, a: L.floor(a), [X6]),
    ("ceil", lambda L, a: L.ceil(a), [X6]),
    ("trunc", lambda L, a: L.trunc(a), [X6]),
    ("fix", lambda L, a: L.fix(a), [X6]),
    ("round", lambda L, a: L.round(a), [X6]),
    ("round-decimals", lambda L, a: L.round(a, decimals=1), [X6]),
    ("frac", lambda L, a: L.frac(a), [X6]),
    ("logit", lambda L, a: L.logit(a), [[0.0, 0.3, 1.0, -0.1, 0.9]]),
    ("logit-eps", lambda L, a: L.logit(a, eps=0.2),
     [[0.0, 0.1, 0.2, 0.3, 0.8, 0.9, 1.0, -0.1, NAN]]),
    ("nan_to_num", lambda L, a: L.nan_to_num(a), [[1.0, NAN, INF, -INF]]),
    ("nan_to_num-values", lambda L, a: L.nan_to_num(a, nan=1.0, posinf=2.0), [[1.0, NAN, INF]]),
    ("negative", lambda L, a: L.negative(a), [X6]),
    ("absolute", lambda L, a: L.absolute(a), [[0.0, -1.0, 2.0, -0.0]]),
    ("abs", lambda L, a: L.abs(a), [[0.0, -1.0, 2.0]]),
    ("angle-real", lambda L, a: L.angle(a), [[0.0, -1.0, 2.0, NAN]]),
    ("digamma", lambda L, a: L.digamma(a), [[0.5, 1.0, 3.5, -0.5, -2.3]]),
    ("lgamma", lambda L, a: L.lgamma(a), [[0.5, 1.0, 3.5, -0.5, -2.3]]),
    ("polygamma-1", lambda L, a: L.polygamma(1, a), [[0.5, 1.0, 3.5, -0.5, -2.3]]),
    ("polygamma-2", lambda L, a: L.polygamma(2, a), [[0.5, 1.0, 3.5, -0.5, -2.3]]),
    ("polygamma-method", lambda L, a: a.polygamma(3), [[0.5, 1.0, 3.5]]),
    ("sinc", lambda L, a: L.sinc(a), [[0.0, 0.5, -1.5, 2.25, 1e-3, -7.0]]),
]


@pytest.mark.parametrize("case", BINARY_CASES + CLAMP_CASES + UNARY_CASES, ids=lambda c: c[0])
def test_gradients_match_pytorch(case, torch):
    what, fn, arrays = case
    rtol = 1e-8 if what in ("digamma", "polygamma-1") else 1e-10
    assert_same(run_backward(ember, fn, arrays), run_backward(torch, fn, arrays), what, rtol)


def test_clamp_tensor_bounds_every_tie_and_nan_combination(torch):
    # Every combination of self, min, max in {0, 1, 2, NaN}: ties split evenly between the
    # tensors equal to the result, min > max selects max, NaN passes the gradient to self.
    values = [0.0, 1.0, 2.0, NAN]
    combos = list(itertools.product(values, repeat=3))
    arrays = [[c[i] for c in combos] for i in range(3)]
    fn = lambda L, a, lo, hi: L.clamp(a, lo, hi)  # noqa: E731
    grad_out = np.linspace(1.0, 2.0, len(combos))
    assert_same(run_backward(ember, fn, arrays, grad_out=grad_out),
                run_backward(torch, fn, arrays, grad_out=grad_out), "clamp grid")


def test_clamp_gradients_at_the_bounds():
    # Python-number bounds: strictly inside only (PyTorch's convention).
    x = ember.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], dtype=ember.float64).requires_grad_()
    x.clamp(0, 1).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]
    # Tensor bounds: a tie splits the gradient between the input and the bound.
    x.grad = None
    lo = ember.zeros(5, dtype=ember.float64).requires_grad_()
    hi = ember.ones(5, dtype=ember.float64).requires_grad_()
    ember.clamp(x, lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]
    assert lo.grad.tolist() == [1.0, 0.5, 0.0, 0.0, 0.0]
    assert hi.grad.tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]


def test_minimum_maximum_split_ties():
    a = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64).requires_grad_()
    b = ember.tensor([1.0, 1.0, 4.0], dtype=ember.float64).requires_grad_()
    ember.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0]
    assert b.grad.tolist() == [0.5, 0.0, 1.0]
    a.grad = b.grad = None
    ember.minimum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0]
    assert b.grad.tolist() == [0.5, 1.0, 0.0]


def test_where_broadcasting_sums_gradients_back():
    cond = ember.tensor([[True], [False], [True]])
    x = ember.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=ember.float64).requires_grad_()
    y = ember.tensor(5.0, dtype=ember.float64).requires_grad_()
    out = ember.where(cond, x, y)
    assert out.shape == (3, 4) and out.grad_fn.name() == "WhereBackward0"
    out.backward(ember.ones_like(out))
    assert x.grad.shape == (1, 4) and x.grad.tolist() == [[2.0, 2.0, 2.0, 2.0]]
    assert y.grad.shape == () and y.grad.item() == 4.0
    assert gradcheck(lambda x, y: ember.where(cond, x, y), (x, y))
    assert gradgradcheck(lambda x, y: ember.where(cond, x * x, y), (x, y))


# --- complex inputs ----------------------------------------------------------------------------

Z = [1 + 2j, -1.5 + 0.5j, 0j, -2 - 1e-3j]
G = [1 + 0.5j, -0.25 + 2j, 1 - 1j, 0.5 + 0.5j]

COMPLEX_CASES = [
    ("sgn", lambda L, z: L.sgn(z)),
    ("angle", lambda L, z: L.angle(z)),
    ("abs", lambda L, z: L.abs(z)),
    ("real", lambda L, z: L.real(z)),
    ("imag", lambda L, z: L.imag(z)),
    ("conj", lambda L, z: L.conj(z)),
    ("conj_physical", lambda L, z: L.conj_physical(z)),
    ("square", lambda L, z: L.square(z)),
    ("pow-scalar", lambda L, z: z ** 3),
    ("pow-complex-scalar", lambda L, z: (z + 3) ** (1 + 1j)),
    ("pow-tensor", lambda L, z: L.pow(z + 3, z)),
    ("rpow", lambda L, z: 2 ** z),
    ("float_power", lambda L, z: L.float_power(z + 3, z)),
    ("lerp", lambda L, z: L.lerp(z, z * z, z + 1)),
    ("lerp-complex-weight", lambda L, z: L.lerp(z, z * 2, 0.3 + 0.2j)),
    ("where", lambda L, z: L.where(L.tensor([True, False, True, False]), z, z * z)),
    ("nan_to_num", lambda L, z: L.nan_to_num(z)),
    ("add-complex-alpha", lambda L, z: L.add(z, z * z, alpha=1 - 2j)),
    ("sub-complex-alpha", lambda L, z: L.sub(z, z * z, alpha=2j)),
]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=lambda c: c[0])
def test_complex_gradients_match_pytorch(case, torch):
    what, fn = case
    e = run_backward(ember, fn, [Z], "complex128")
    t = run_backward(torch, fn, [Z], "complex128")
    # A real output takes a real grad_output; a complex output a complex one.
    if np.iscomplexobj(e[0]):
        e = run_backward(ember, fn, [Z], "complex128", grad_out=G)
        t = run_backward(torch, fn, [Z], "complex128", grad_out=G)
    assert_same(e, t, what)


def test_complex_and_polar_from_real_parts(torch):
    arrays = [[0.0, 1.0, 2.0], [0.3, 1.0, -2.0]]
    for name in ("complex", "polar"):
        fn = lambda L, a, b, name=name: getattr(L, name)(a, b)  # noqa: E731
        assert_same(run_backward(ember, fn, arrays, grad_out=G[:3]),
                    run_backward(torch, fn, arrays, grad_out=G[:3]), name)


@pytest.mark.parametrize("fn", [
    lambda z: ember.sgn(z), lambda z: ember.angle(z), lambda z: ember.real(z),
    lambda z: ember.imag(z), lambda z: ember.conj(z), lambda z: z ** (1 + 1j),
    lambda z: ember.pow(z, z), lambda z: 2 ** z, lambda z: ember.lerp(z, z * z, z),
])
def test_complex_gradcheck(fn):
    z = ember.tensor([1 + 2j, -1.5 + 0.5j, 0.3 - 0.7j], dtype=ember.complex128).requires_grad_()
    assert gradcheck(fn, (z,))
    assert gradgradcheck(fn, (z,))


def test_complex_polar_gradcheck():
    r = ember.tensor([0.5, 1.0, 2.0], dtype=ember.float64).requires_grad_()
    t = ember.tensor([0.3, -1.0, 2.5], dtype=ember.float64).requires_grad_()
    assert gradcheck(ember.polar, (r, t))
    assert gradgradcheck(ember.polar, (r, t))
    assert gradcheck(ember.complex, (r, t))


# --- in-place and view forms ------------------------------------------------------------------

A = [[-1.5, -0.25, 0.0, 0.5, 1.0, 2.5]]
B = [[0.5, 2.0, -1.0, 3.0, 1.0, -2.0]]
POS = [[0.3, 0.5, 1.25, 2.0, 3.0, 4.5]]

INPLACE_CASES = [
    ("pow_-scalar", lambda y, o: y.pow_(2), A, []),
    ("pow_-tensor", lambda y, o: y.pow_(o), POS, B),
    ("ipow", lambda y, o: y.__ipow__(3), A, []),
    ("square_", lambda y, o: y.square_(), A, []),
    ("float_power_", lambda y, o: y.float_power_(o), POS, B),
    ("clamp_", lambda y, o: y.clamp_(0, 1), A, []),
    ("clamp_-tensor", lambda y, o: y.clamp_(min=o), A, B),
    ("clamp_-tensor-both", lambda y, o: y.clamp_(o, o + 1), A, B),
    ("clip_", lambda y, o: y.clip_(-0.5, 1.5), A, []),
    ("clamp_min_", lambda y, o: y.clamp_min_(0.5), A, []),
    ("clamp_max_-tensor", lambda y, o: y.clamp_max_(o), A, B),
    ("lerp_-scalar", lambda y, o: y.lerp_(o, 0.25), A, B),
    ("lerp_-tensor", lambda y, o: y.lerp_(o * 2, o), A, B),
    ("atan2_", lambda y, o: y.atan2_(o), A, B),
    ("hypot_", lambda y, o: y.hypot_(o), A, B),
    ("xlogy_", lambda y, o: y.xlogy_(o), A, POS),
    ("copysign_", lambda y, o: y.copysign_(o), A, B),
    ("remainder_", lambda y, o: y.remainder_(o), A, B),
    ("fmod_", lambda y, o: y.fmod_(o), A, B),
    ("div_-floor", lambda y, o: y.div_(o, rounding_mode="floor"), A, B),
    ("floor_", lambda y, o: y.floor_(), A, []),
    ("ceil_", lambda y, o: y.ceil_(), A, []),
    ("round_", lambda y, o: y.round_(), A, []),
    ("round_-decimals", lambda y, o: y.round_(decimals=1), A, []),
    ("trunc_", lambda y, o: y.trunc_(), A, []),
    ("fix_", lambda y, o: y.fix_(), A, []),
    ("sign_", lambda y, o: y.sign_(), A, []),
    ("sgn_", lambda y, o: y.sgn_(), A, []),
    ("frac_", lambda y, o: y.frac_(), A, []),
    ("logit_", lambda y, o: y.logit_(), [[0.1, 0.3, 0.5, 0.7, 0.9, 0.95]], []),
    ("logit_-eps", lambda y, o: y.logit_(eps=0.2), [[0.1, 0.2, 0.5, 0.7, 0.8, 0.95]], []),
    ("nan_to_num_", lambda y, o: y.nan_to_num_(), [[1.0, NAN, INF, -INF, 0.0, 2.0]], []),
    ("digamma_", lambda y, o: y.digamma_(), POS, []),
    ("lgamma_", lambda y, o: y.lgamma_(), POS, []),
    ("polygamma_", lambda y, o: y.polygamma_(1), POS, []),
    ("abs_", lambda y, o: y.abs_(), A, []),
    ("neg_", lambda y, o: y.neg_(), A, []),
]


def _inplace_run(lib, fn, x_arr, o_arr, view):
    x = _leaves(lib, x_arr, "float64")[0]
    o = _leaves(lib, o_arr, "float64")[0] if o_arr else None
    y = x * 1.5  # a non-leaf: in-place ops on it are allowed
    target = y[1:5] if view else y
    fn(target, o[1:5] if (view and o is not None) else o)
    name = _node_name(y)
    (y * lib.arange(1, 7, dtype=lib.float64)).sum().backward()
    return _to_numpy(y), name, [_to_numpy(x.grad)] + ([_to_numpy(o.grad)] if o is not None else [])


@pytest.mark.parametrize("case", INPLACE_CASES, ids=lambda c: c[0])
@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
def test_inplace_gradients_match_pytorch(case, view, torch):
    what, fn, x_arr, o_arr = case
    rtol = 1e-8 if what in ("digamma_", "polygamma_") else 1e-10
    assert_same(_inplace_run(ember, fn, x_arr, o_arr, view),
                _inplace_run(torch, fn, x_arr, o_arr, view), f"{what} ({'view' if view else ''})",
                rtol)


def test_inplace_pow_saves_the_original_input():
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64).requires_grad_()
    y = x * 1
    y.pow_(2)  # y is overwritten: the node keeps a copy of the old y
    assert y.grad_fn.name() == "PowBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_inplace_on_a_leaf_that_requires_grad_raises():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.clamp_(0, 1)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.pow_(2)
    with ember.no_grad():
        x.clamp_(0, 1.5)  # allowed without recording
    assert x.tolist() == [1.0, 1.5]


def test_modified_saved_input_is_detected():
    x = ember.tensor([0.5, 2.0], dtype=ember.float64).requires_grad_()
    y = x * 1
    z = ember.atan2(y, ember.ones_like(y))  # saves y
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# --- double backward -------------------------------------------------------------------------

DOUBLE_CASES = [
    ("pow-tensor", lambda L, a, b: L.pow(a, b), [[0.5, 2.0, 1.5], [2.0, -1.0, 0.5]]),
    ("pow-scalar", lambda L, a: a ** 3.5, [[0.5, 2.0, 1.5]]),
    ("rpow", lambda L, b: 3.0 ** b, [[0.5, -2.0, 1.5]]),
    ("atan2", lambda L, a, b: L.atan2(a, b), [[0.5, -2.0, 1.5], [1.0, 3.0, -0.5]]),
    ("hypot", lambda L, a, b: L.hypot(a, b), [[0.5, -2.0, 1.5], [1.0, 3.0, -0.5]]),
    ("xlogy", lambda L, a, b: L.xlogy(a, b), [[0.5, -2.0, 1.5], [1.0, 3.0, 0.5]]),
    ("logaddexp", lambda L, a, b: L.logaddexp(a, b), [[0.5, -2.0, 1.5], [1.0, 3.0, 0.5]]),
    ("logaddexp2", lambda L, a, b: L.logaddexp2(a, b), [[0.5, -2.0, 1.5], [1.0, 3.0, 0.5]]),
    ("lerp", lambda L, a, b, w: L.lerp(a, b, w), [[0.5, -2.0], [1.0, 3.0], [0.25, 0.5]]),
    ("maximum", lambda L, a, b: L.maximum(a * a, b), [[0.5, -2.0], [1.0, 3.0]]),
    ("clamp", lambda L, a: L.clamp(a * a, 0.5, 2.0), [[0.5, -1.2, 3.0]]),
    ("where", lambda L, a: L.where(a > 0, a * a, a), [[0.5, -1.2, 3.0]]),
    ("logit", lambda L, a: L.logit(a), [[0.2, 0.5, 0.7]]),
    ("digamma", lambda L, a: L.digamma(a), [[0.3, 1.5, -0.5]]),
    ("lgamma", lambda L, a: L.lgamma(a), [[0.3, 1.5, -0.5]]),
    ("polygamma", lambda L, a: L.polygamma(2, a), [[0.3, 1.5, -0.5]]),
    ("sgn", lambda L, a: L.sgn(a) * a, [[0.3, -1.5]]),
]


@pytest.mark.parametrize("case", DOUBLE_CASES, ids=lambda c: c[0])
def test_second_derivatives_match_pytorch(case, torch):
    what, fn, arrays = case
    got = run_double_backward(ember, fn, arrays)
    want = run_double_backward(torch, fn, arrays)
    for g, w in zip(got, want):
        if w is None:
            assert g is None or not np.any(g), what
        else:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=what)


def test_lgamma_digamma_gradgradcheck():
    x = ember.tensor([0.3, 1.5, 4.0, -0.5, -2.7], dtype=ember.float64).requires_grad_()
    for fn in (ember.lgamma, ember.digamma, lambda t: ember.polygamma(1, t)):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


# --- ops that record nothing ------------------------------------------------------------------

NON_DIFFERENTIABLE = [
    lambda a, b: ember.eq(a, b), lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
    lambda a, b: ember.greater(a, b), lambda a, b: ember.greater_equal(a, b),
    lambda a, b: ember.logical_and(a, b), lambda a, b: ember.logical_or(a, b),
    lambda a, b: ember.logical_xor(a, b), lambda a, b: ember.logical_not(a),
    lambda a, b: ember.isnan(a), lambda a, b: ember.isinf(a), lambda a, b: ember.isfinite(a),
    lambda a, b: ember.isposinf(a), lambda a, b: ember.isneginf(a), lambda a, b: ember.signbit(a),
    lambda a, b: ember.isreal(a), lambda a, b: ember.isclose(a, b),
    lambda a, b: ember.floor_divide(a, b), lambda a, b: a // b,
]


@pytest.mark.parametrize("fn", NON_DIFFERENTIABLE)
def test_non_differentiable_ops_record_nothing(fn):
    a = ember.tensor([1.0, -2.0, 3.0], dtype=ember.float64).requires_grad_()
    b = ember.tensor([1.0, 2.0, -1.0], dtype=ember.float64).requires_grad_()
    out = fn(a, b)
    assert out.grad_fn is None and not out.requires_grad


def test_bool_results_and_comparisons_return_plain_values():
    a = ember.tensor([1.0, 2.0], dtype=ember.float64).requires_grad_()
    assert ember.allclose(a, a) is True
    assert ember.equal(a, a * 1) is True


def test_identity_like_ops_return_the_input():
    x = ember.tensor([1.0, -2.0], dtype=ember.float64).requires_grad_()
    # As PyTorch: positive, and conj / conj_physical / real of a real tensor are the tensor itself.
    for fn in (ember.positive, ember.conj, ember.conj_physical, ember.real):
        assert fn(x) is x
    (ember.positive(x) * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# --- errors -----------------------------------------------------------------------------------


def test_out_arguments_refuse_autograd():
    x = ember.tensor([0.5, 2.0], dtype=ember.float64).requires_grad_()
    out = ember.empty(2, dtype=ember.float64)
    for call in (lambda: ember.pow(x, 2, out=out), lambda: ember.atan2(x, x, out=out),
                 lambda: ember.clamp(x, 0, 1, out=out), lambda: ember.polygamma(1, x, out=out),
                 lambda: ember.where(x > 1, x, x, out=out), lambda: ember.lerp(x, x, 0.5, out=out),
                 lambda: ember.float_power(x, 2, out=out), lambda: ember.logit(x, out=out),
                 lambda: ember.maximum(x, x, out=out), lambda: ember.sign(x, out=out)):
        with pytest.raises(RuntimeError, match=r"out=\.\.\. arguments don't support automatic"):
            call()
    with ember.no_grad():
        ember.pow(x, 2, out=out)
    assert out.tolist() == [0.25, 4.0]


def test_float_power_inplace_needs_double():
    x = ember.tensor([1.0, 2.0], dtype=ember.float32).requires_grad_()
    y = x * 1
    with pytest.raises(RuntimeError, match=r"\[float_power\] the base given to float_power_"):
        y.float_power_(2)
    z = ember.float_power(x, 2)  # float32 input: computed in float64, gradient back in float32
    assert z.dtype is ember.float64 and z.grad_fn.name() == "PowBackward0"
    z.sum().backward()
    assert x.grad.dtype is ember.float32 and x.grad.tolist() == [2.0, 4.0]


# --- polygamma --------------------------------------------------------------------------------


def test_polygamma_values_match_pytorch(torch):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-6, 8, 300), rng.uniform(1e-3, 1, 50), [0.5, 1.0, 40.0]])
    for n in (0, 1, 2, 3, 4, 7, 12):
        got = ember.polygamma(n, ember.tensor(x)).numpy()
        want = torch.polygamma(n, torch.tensor(x)).numpy()
        # PyTorch's trigamma is accurate to ~1e-9 only (Ember's to double precision).
        np.testing.assert_allclose(got, want, rtol=1e-8 if n == 1 else 1e-11, err_msg=f"n={n}")


def test_polygamma_poles_and_special_values():
    x = ember.tensor([0.0, -1.0, -3.0, INF, NAN], dtype=ember.float64)
    assert ember.polygamma(1, x).tolist()[:4] == [INF, INF, INF, 0.0]
    assert ember.polygamma(2, x).tolist()[:4] == [-INF, -INF, -INF, 0.0]
    assert math.isnan(ember.polygamma(3, x)[4].item())
    assert math.isnan(ember.polygamma(3, ember.tensor([-INF]))[0].item())
    # Large orders stay finite where the value is (PyTorch overflows n! first).
    big = ember.polygamma(200, ember.tensor([30.0], dtype=ember.float64)).item()
    assert math.isfinite(big) and big < 0
    expected = math.lgamma(201) - 201 * math.log(30.0)  # the dominant term n! / x^(n+1)
    assert abs(math.log(-big) - expected) < 0.01
    # Huge orders end at once, also where the series' two nearest terms cancel exactly (x = -1/2
    # with n even summed up to n + 10 terms before: a hang found by the fuzzer).
    huge = ember.polygamma(10**10, ember.tensor([0.467, -0.5, -1.5, 3.0], dtype=ember.float64))
    assert huge.tolist()[0] == -INF and huge.tolist()[3] == -INF


def test_polygamma_forms_dtypes_and_errors():
    assert ember.polygamma(1, ember.tensor([1, 2])).dtype is ember.float32
    assert ember.polygamma(2, ember.tensor([1.0], dtype=ember.float16)).dtype is ember.float16
    x = ember.tensor([0.5, 2.0], dtype=ember.float64)
    out = ember.empty(2, dtype=ember.float64)
    assert ember.polygamma(1, x, out=out) is out
    np.testing.assert_allclose(out.numpy(), x.polygamma(1).numpy())
    y = x.clone()
    assert y.polygamma_(1) is y
    np.testing.assert_allclose(y.numpy(), [4.934802200544679, 0.6449340668482264])
    with pytest.raises(RuntimeError, match=r"\[polygamma\] .*does not support negative n"):
        ember.polygamma(-1, x)
    with pytest.raises((RuntimeError, TypeError), match="polygamma"):
        ember.polygamma(1, ember.tensor([1j]))
    z = ember.polygamma(1, x.clone().requires_grad_())
    assert z.grad_fn.name() == "PolygammaBackward0"


def test_digamma_gradient_is_trigamma():
    x = ember.tensor([0.5, 1.0, 3.0], dtype=ember.float64).requires_grad_()
    ember.digamma(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.934802200544679, 1.6449340668482264,
                                                0.3949340668482264], rtol=1e-13)
