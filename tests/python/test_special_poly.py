"""Legendre polynomials at huge degrees: an asymptotic form instead of the n-step recurrence (a
fuzzer found legendre_polynomial_p(x, 2**31 - 1) looping for seconds)."""

import time

import numpy as np
import pytest
import scipy.special as sp

import ember


@pytest.mark.parametrize("x", [0.3, -0.7, 0.999, 0.0, -0.05])
def test_legendre_at_huge_degree_matches_scipy(x):
    n = 2**24 + 3
    got = ember.special.legendre_polynomial_p(ember.tensor([x], dtype=ember.float64), n).item()
    assert abs(got - sp.eval_legendre(n, x)) < 1e-10


def test_degree_near_int32_max_returns_promptly():
    t0 = time.perf_counter()
    v = ember.special.legendre_polynomial_p(ember.zeros(1, 1, dtype=ember.uint8), 2**31 - 1)
    assert time.perf_counter() - t0 < 1.0
    assert np.isfinite(v.numpy()).all()


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L(ember.tensor([[4]], dtype=ember.int64), 1e10),  # the fuzzer's: n a float
        lambda L: L(ember.tensor([0.5]), 2**24 + 2),
        lambda L: L(ember.tensor([0.5, 2.0]), ember.tensor([3.0, 2.0**30])),
        lambda L: L(0.25, ember.tensor([2**31 - 1])),
    ],
)
def test_laguerre_refuses_degrees_above_2_24_where_the_recurrence_cannot_stop(call):
    with pytest.raises(RuntimeError, match=r"laguerre_polynomial_l.*2\*\*24"):
        call(ember.special.laguerre_polynomial_l)


def test_laguerre_huge_degree_where_the_answer_is_known_or_overflows():
    L = ember.special.laguerre_polynomial_l
    x = ember.tensor([0.0, -3.0, float("nan")], dtype=ember.float64)
    got = L(x, 2**40).numpy()
    assert got[0] == 1.0 and not np.isfinite(got[1:]).any()
    # Below the limit the recurrence runs and matches SciPy.
    n = 2**12
    np.testing.assert_allclose(
        L(ember.tensor([0.5, 3.0], dtype=ember.float64), n).numpy(),
        sp.eval_laguerre(n, np.array([0.5, 3.0])),
        rtol=1e-9,
    )
