"""Random sampling: the Philox generator API, reproducibility (including across thread counts),
statistics of every distribution, and every error class, with expectations from PyTorch."""

import numpy as np
import pytest

import ember
from opinfo import FLOATING, INTEGRAL

N = 200_000  # large enough to run in parallel chunks


@pytest.fixture(autouse=True)
def _restore_rng_and_threads():
    state = ember.get_rng_state()
    threads = ember.get_num_threads()
    yield
    ember.set_rng_state(state)
    ember.set_num_threads(threads)


def as_np(t):
    return t.float().numpy() if t.dtype is ember.bfloat16 else t.numpy()


def chi_square(observed, expected):
    observed = np.asarray(observed, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    return float(((observed - expected) ** 2 / expected).sum())


def assert_chi_square_ok(observed, expected):
    # A fixed seed makes the statistic deterministic; mean + 6 sd of the chi-square law with
    # k - 1 degrees of freedom is a bound a correct sampler essentially never exceeds.
    dof = len(expected) - 1
    assert chi_square(observed, expected) < dof + 6 * np.sqrt(2 * dof), (observed, expected)


# --- generator API ------------------------------------------------------------------------------


def test_generator_seeding_and_state():
    g = ember.Generator()
    assert g.initial_seed() == 67280421310721  # PyTorch's default seed
    assert g.device == ember.device("cpu")
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert ember.Generator().manual_seed(-1).initial_seed() == 2**64 - 1  # wraps like torch
    assert ember.Generator().manual_seed(2**64 - 1).initial_seed() == 2**64 - 1
    assert ember.Generator().manual_seed(1.5).initial_seed() == 1  # int(seed)
    s = g.seed()
    assert 0 <= s < 2**63 and g.initial_seed() == s
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.shape == (16,)
    a = ember.rand(5, generator=g)
    g.set_state(state)
    assert ember.rand(5, generator=g).tolist() == a.tolist()
    assert g.set_state(state) is g
    assert "Philox" in repr(g)


def test_generator_errors():
    g = ember.Generator()
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2**64)
    with pytest.raises(ValueError, match="Overflow"):
        ember.manual_seed(-(2**63) - 1)
    with pytest.raises(ValueError, match="invalid literal"):
        ember.manual_seed("a")
    with pytest.raises(TypeError, match="expected an ember.uint8 tensor, but got list"):
        g.set_state([1, 2])
    with pytest.raises(TypeError, match="RNG state must be an ember.uint8 tensor"):
        g.set_state(ember.zeros(16))
    with pytest.raises(RuntimeError, match="found the input RNG state size to be 3"):
        g.set_state(ember.zeros(3, dtype=ember.uint8))
    with pytest.raises(TypeError, match="RNG state must be an ember.uint8 tensor"):
        ember.set_rng_state(ember.zeros(3))
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"\[Generator\] device 'cuda' is not available"):
            ember.Generator(device="cuda")
    with pytest.raises(TypeError, match="generator must be an ember.Generator"):
        ember.rand(2, generator=3)


def test_global_seeding_functions():
    assert ember.manual_seed(7) is ember.default_generator
    assert ember.initial_seed() == 7
    a = ember.rand(4)
    ember.manual_seed(7)
    assert ember.rand(4).tolist() == a.tolist()
    state = ember.get_rng_state()
    b = ember.randn(4)
    ember.set_rng_state(state)
    assert ember.randn(4).tolist() == b.tolist()
    s = ember.seed()
    assert ember.initial_seed() == s
    assert ember.random.initial_seed() == s
    with ember.random.fork_rng():
        ember.rand(10)
    after_fork = ember.rand(3)
    ember.manual_seed(s)
    assert ember.rand(3).tolist() == after_fork.tolist()


def test_generator_keyword_leaves_global_stream_alone():
    ember.manual_seed(11)
    expected = ember.rand(3).tolist()
    ember.manual_seed(11)
    g = ember.Generator().manual_seed(11)
    from_g = ember.rand(3, generator=g).tolist()
    assert from_g == expected  # same seed, same stream
    assert ember.rand(3).tolist() == expected  # the global generator did not move


def test_consecutive_calls_differ_and_seeds_differ():
    ember.manual_seed(0)
    a, b = ember.rand(8).tolist(), ember.rand(8).tolist()
    assert a != b
    ember.manual_seed(1)
    assert ember.rand(8).tolist() != a


SAMPLERS = {
    "rand": lambda g: ember.rand(N, generator=g),
    "rand_f64": lambda g: ember.rand(N, dtype=ember.float64, generator=g),
    "randn": lambda g: ember.randn(N, generator=g),
    "randn_f16": lambda g: ember.randn(N, dtype=ember.float16, generator=g),
    "randn_c128": lambda g: ember.randn(N, dtype=ember.complex128, generator=g),
    "randint": lambda g: ember.randint(-5, 1000, (N,), generator=g),
    "randint_big": lambda g: ember.randint(-(2**62), 2**62, (N,), generator=g),
    "randperm": lambda g: ember.randperm(5000, generator=g),
    "normal": lambda g: ember.normal(2.0, 3.0, (N,), generator=g),
    "normal_tensor": lambda g: ember.normal(ember.zeros(N), ember.ones(N), generator=g),
    "bernoulli": lambda g: ember.bernoulli(ember.full((N,), 0.3), generator=g),
    "multinomial": lambda g: ember.multinomial(ember.ones(40, 50), 20, generator=g),
    "exponential": lambda g: ember.empty(N).exponential_(2.0, generator=g),
    "geometric": lambda g: ember.empty(N, dtype=ember.int32).geometric_(0.2, generator=g),
    "log_normal": lambda g: ember.empty(N, dtype=ember.float64).log_normal_(generator=g),
    "cauchy": lambda g: ember.empty(N).cauchy_(generator=g),
    "random_": lambda g: ember.empty(N, dtype=ember.int16).random_(generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_seed_same_values_with_one_and_two_threads(name):
    sample = SAMPLERS[name]
    ember.set_num_threads(1)
    one = sample(ember.Generator().manual_seed(1234)).tolist()
    ember.set_num_threads(2)
    two = sample(ember.Generator().manual_seed(1234)).tolist()
    again = sample(ember.Generator().manual_seed(1234)).tolist()
    assert one == two == again


def test_non_contiguous_targets_fill_in_logical_order():
    base = ember.zeros(4, 6)
    view = base[:, ::2]
    view.uniform_(generator=ember.Generator().manual_seed(5))
    expected = ember.empty(4, 3).uniform_(generator=ember.Generator().manual_seed(5))
    assert view.tolist() == expected.tolist()
    assert base[:, 1::2].tolist() == [[0.0] * 3] * 4  # untouched
    t = ember.zeros(3, 4).transpose(0, 1)
    t.normal_(generator=ember.Generator().manual_seed(5))
    same = ember.empty(4, 3).normal_(generator=ember.Generator().manual_seed(5))
    assert t.tolist() == same.tolist()


def test_in_place_methods_return_self_and_bump_version():
    t = ember.empty(5)
    v = t._version
    for call in (lambda: t.uniform_(), lambda: t.normal_(), lambda: t.random_(0, 5),
                 lambda: t.bernoulli_(0.5), lambda: t.exponential_(), lambda: t.geometric_(0.5),
                 lambda: t.log_normal_(), lambda: t.cauchy_()):
        assert call() is t
    assert t._version == v + 8


# --- statistics ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATING)
def test_rand_is_uniform_on_unit_interval(dtype):
    ember.manual_seed(0)
    x = as_np(ember.rand(N, dtype=dtype)).astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    counts, _ = np.histogram(x, bins=8, range=(0, 1))
    assert_chi_square_ok(counts, [N / 8] * 8)


@pytest.mark.parametrize("dtype", FLOATING)
def test_randn_is_standard_normal(dtype):
    ember.manual_seed(0)
    x = as_np(ember.randn(N, dtype=dtype)).astype(np.float64)
    assert abs(x.mean()) < 0.015 and abs(x.var() - 1) < 0.03
    # Fraction within one standard deviation: 0.6827.
    assert abs(np.mean(np.abs(x) < 1) - 0.6827) < 0.01


def test_complex_rand_and_randn():
    ember.manual_seed(0)
    c = ember.randn(N, dtype=ember.complex64).numpy()
    assert abs(c.real.var() - 0.5) < 0.02 and abs(c.imag.var() - 0.5) < 0.02
    assert abs(np.mean(np.abs(c) ** 2) - 1) < 0.02
    u = ember.rand(N, dtype=ember.complex128).numpy()
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() and u.imag.max() < 1


def test_uniform_and_normal_parameters():
    ember.manual_seed(0)
    x = ember.empty(N, dtype=ember.float64).uniform_(-2, 6).numpy()
    assert x.min() >= -2 and x.max() < 6 and abs(x.mean() - 2) < 0.05
    y = ember.empty(N).normal_(3, 0.5).numpy()
    assert abs(y.mean() - 3) < 0.01 and abs(y.std() - 0.5) < 0.01
    z = ember.normal(-1.0, 2.0, (N,), dtype=ember.float64).numpy()
    assert z.dtype == np.float64 and abs(z.mean() + 1) < 0.03 and abs(z.std() - 2) < 0.03
    assert ember.empty(3).normal_(1.0, 0.0).tolist() == [1.0, 1.0, 1.0]


def test_normal_tensor_overloads():
    ember.manual_seed(0)
    mean = ember.tensor([-10.0, 0.0, 10.0], dtype=ember.float64).reshape(3, 1)
    std = ember.tensor([0.1, 1.0, 5.0], dtype=ember.float64).reshape(3, 1)
    mean_big, std_big = mean.expand(3, 50000), std.expand(3, 50000)
    x = ember.normal(mean_big, std_big).numpy()
    np.testing.assert_allclose(x.mean(axis=1), [-10, 0, 10], atol=0.06)
    np.testing.assert_allclose(x.std(axis=1), [0.1, 1, 5], rtol=0.03)
    y = ember.normal(mean_big, 2.0).numpy()
    np.testing.assert_allclose(y.std(axis=1), [2, 2, 2], rtol=0.03)
    z = ember.normal(5.0, std_big).numpy()
    np.testing.assert_allclose(z.mean(axis=1), [5, 5, 5], atol=0.06)
    assert ember.normal(ember.zeros(3), ember.ones(3, 1)).shape == (3, 3)
    assert ember.normal(ember.zeros(3), ember.ones(3, dtype=ember.float64)).dtype is ember.float32
    assert ember.normal(ember.zeros(3, dtype=ember.float64), 1.0).dtype is ember.float64
    assert ember.normal(0.0, ember.ones(3, dtype=ember.float64)).dtype is ember.float64
    out = ember.empty(3, dtype=ember.float64)
    assert ember.normal(ember.zeros(3), ember.ones(3), out=out) is out


@pytest.mark.parametrize("dtype", [ember.int64, ember.int8, ember.uint8, ember.float32,
                                   ember.float16, ember.bfloat16, ember.float64])
def test_randint_is_uniform(dtype):
    ember.manual_seed(0)
    x = as_np(ember.randint(3, 13, (N,), dtype=dtype)).astype(np.int64)
    assert x.min() == 3 and x.max() == 12
    assert_chi_square_ok(np.bincount(x - 3, minlength=10), [N / 10] * 10)


def test_randint_forms_and_wide_ranges():
    assert ember.randint(5, (3,)).dtype is ember.int64
    assert ember.randint(3, 5, (3,)).dtype is ember.int64
    assert ember.randint(low=2, high=4, size=(3,)).dtype is ember.int64
    assert ember.randint(high=4, size=(2, 2)).shape == (2, 2)
    assert ember.randint(0, 2, (8,), dtype=ember.bool).dtype is ember.bool
    out = ember.empty(0, dtype=ember.int32)
    assert ember.randint(3, (4,), out=out) is out and out.dtype is ember.int32
    ember.manual_seed(0)
    x = ember.randint(-(2**62), 2**62, (N,)).numpy()
    assert x.min() >= -(2**62) and x.max() < 2**62
    assert (x < 0).mean() == pytest.approx(0.5, abs=0.01)
    full = ember.empty(N, dtype=ember.int64).random_(-(2**63), None).numpy()
    assert (full < 0).mean() == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("dtype", INTEGRAL + [ember.bool])
def test_random_default_range_for_integers(dtype):
    ember.manual_seed(0)
    x = ember.empty(N, dtype=dtype).random_().numpy().astype(np.float64)
    hi = 1 if dtype is ember.bool else np.iinfo(str(dtype)[6:]).max
    assert x.min() >= 0 and x.max() <= hi
    assert abs(x.mean() / hi - 0.5) < 0.01


@pytest.mark.parametrize("dtype,hi", [(ember.float16, 2**11), (ember.bfloat16, 2**8),
                                      (ember.float32, 2**24), (ember.float64, 2**53)])
def test_random_default_range_for_floats(dtype, hi):
    ember.manual_seed(0)
    x = as_np(ember.empty(N, dtype=dtype).random_()).astype(np.float64)
    assert x.min() >= 0 and x.max() <= hi and np.all(x == np.floor(x))
    assert abs(x.mean() / hi - 0.5) < 0.01


def test_random_forms():
    ember.manual_seed(0)
    assert set(ember.empty(1000).random_(5).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    assert set(ember.empty(1000).random_(to=3).tolist()) == {0.0, 1.0, 2.0}
    assert set(ember.empty(1000).random_(-2, 1).tolist()) == {-2.0, -1.0, 0.0}
    x = ember.empty(1000, dtype=ember.int8).random_(100, None).numpy()
    assert x.min() >= 100 and x.max() <= 127


def test_randperm():
    ember.manual_seed(0)
    for n in (0, 1, 2, 10, 1000):
        p = ember.randperm(n).numpy()
        assert sorted(p.tolist()) == list(range(n))
    assert ember.randperm(5, dtype=ember.float32).dtype is ember.float32
    assert ember.randperm(256, dtype=ember.uint8).shape == (256,)
    assert sorted(ember.randperm(2049, dtype=ember.float16).tolist()) == list(range(2049))
    # Every value is equally likely in position 0.
    firsts = [ember.randperm(5)[0].item() for _ in range(5000)]
    assert_chi_square_ok(np.bincount(firsts, minlength=5), [1000] * 5)


def test_bernoulli():
    ember.manual_seed(0)
    p = ember.tensor([0.0, 0.2, 0.9, 1.0], dtype=ember.float64).reshape(4, 1).expand(4, 50000)
    x = ember.bernoulli(p).numpy()
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.mean(axis=1), [0, 0.2, 0.9, 1], atol=0.01)
    assert ember.bernoulli(ember.full((3,), 0.5)).dtype is ember.float32
    y = ember.bernoulli(ember.ones(N, dtype=ember.int64), 0.25).numpy()
    assert y.dtype == np.int64 and set(np.unique(y)) <= {0, 1} and abs(y.mean() - 0.25) < 0.01
    b = ember.zeros(N, dtype=ember.bool).bernoulli_(0.7).numpy()
    assert abs(b.mean() - 0.7) < 0.01
    z = ember.zeros(3, N // 3).bernoulli_(ember.tensor([0.1, 0.5, 0.8], dtype=ember.float64)
                                          .reshape(3, 1)).numpy()
    np.testing.assert_allclose(z.mean(axis=1), [0.1, 0.5, 0.8], atol=0.015)
    assert ember.zeros(3, 2).bernoulli_(ember.full((2,), 0.5)).shape == (3, 2)
    assert ember.ones(2).bernoulli(0.0).tolist() == [0.0, 0.0]


def test_continuous_distributions():
    ember.manual_seed(0)
    e = ember.empty(N, dtype=ember.float64).exponential_(2.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    g = ember.empty(N, dtype=ember.int64).geometric_(0.25).numpy()
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.05
    counts = np.bincount(g, minlength=6)[1:6]
    assert_chi_square_ok(counts, [N * 0.25 * 0.75 ** (k - 1) for k in range(1, 6)])
    ln = ember.empty(N, dtype=ember.float64).log_normal_(0.5, 0.25).numpy()
    assert ln.min() > 0
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01
    c = ember.empty(N, dtype=ember.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.05
    q1, q3 = np.percentile(c, [25, 75])
    assert abs((q3 - q1) / 2 - 2.0) < 0.1  # half the interquartile range is sigma
    for dtype in (ember.float16, ember.bfloat16):
        assert ember.empty(10, dtype=dtype).exponential_().dtype is dtype


def test_multinomial():
    ember.manual_seed(0)
    probs = ember.tensor([0.1, 0.2, 0.3, 0.4])
    draws = ember.multinomial(probs, N, replacement=True).numpy()
    assert draws.dtype == np.int64
    assert_chi_square_ok(np.bincount(draws, minlength=4), [N * p for p in (0.1, 0.2, 0.3, 0.4)])
    # Unnormalised weights and rows.
    rows = ember.tensor([[0.0, 5.0, 0.0], [1.0, 1.0, 2.0]], dtype=ember.float64)
    r = ember.multinomial(rows, 1000, True).numpy()
    assert r.shape == (2, 1000) and set(r[0]) == {1}
    assert_chi_square_ok(np.bincount(r[1], minlength=3), [250, 250, 500])
    # Without replacement: distinct categories; the first pick follows the weights.
    for _ in range(20):
        s = ember.multinomial(ember.tensor([1.0, 2, 3, 4, 5, 6]), 6).tolist()
        assert sorted(s) == list(range(6))
    firsts = ember.multinomial(probs.reshape(1, 4).expand(20000, 4), 2).numpy()
    assert np.all(firsts[:, 0] != firsts[:, 1])
    assert_chi_square_ok(np.bincount(firsts[:, 0], minlength=4), [2000, 4000, 6000, 8000])
    assert ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 2).tolist()[0] == 1
    assert ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 2, True).tolist() == [1, 1]
    assert ember.multinomial(ember.ones(0, 3), 1).shape == (0, 1)
    assert ember.ones(2).multinomial(2).shape == (2,)
    assert ember.multinomial(ember.ones(2, dtype=ember.float16), 2).dtype is ember.int64


def test_like_factories():
    t = ember.zeros(3, 4, dtype=ember.float64).transpose(0, 1)
    r = ember.rand_like(t)
    assert r.dtype is ember.float64 and r.shape == (4, 3) and r.stride() == (1, 4)
    assert ember.randn_like(t, dtype=ember.float16).dtype is ember.float16
    assert ember.randint_like(ember.zeros(2), 5).dtype is ember.float32
    assert set(ember.randint_like(ember.zeros(1000), 3, 5).tolist()) == {3.0, 4.0}
    assert ember.randint_like(ember.zeros(2), low=3, high=5).shape == (2,)
    g = ember.Generator().manual_seed(3)
    a = ember.rand_like(t, generator=g)
    assert a.tolist() == ember.rand_like(t, generator=ember.Generator().manual_seed(3)).tolist()


def test_argument_forms():
    assert ember.rand(2, 3).shape == (2, 3)
    assert ember.rand((2, 3)).shape == (2, 3)
    assert ember.rand(size=(2,)).shape == (2,)
    assert ember.randn(()).shape == ()
    out = ember.empty(0, dtype=ember.float64)
    assert ember.rand(4, out=out) is out and out.dtype is ember.float64 and out.shape == (4,)
    assert ember.rand(2, dtype=ember.complex64).dtype is ember.complex64
    assert ember.randn(2, dtype=ember.bfloat16).dtype is ember.bfloat16
    assert ember.zeros(2).normal_(2).shape == (2,)  # mean=2, std=1
    with pytest.raises(RuntimeError, match="from=2 > to=1"):
        ember.zeros(2).uniform_(2)  # from=2, to=1 as in torch


# --- errors -------------------------------------------------------------------------------


def test_dtype_errors_are_not_implemented_errors():
    for call in (lambda: ember.rand(2, dtype=ember.int64),
                 lambda: ember.randn(2, dtype=ember.int64),
                 lambda: ember.zeros(3, dtype=ember.int64).uniform_(),
                 lambda: ember.zeros(3, dtype=ember.int64).normal_(),
                 lambda: ember.zeros(3, dtype=ember.int64).log_normal_(),
                 lambda: ember.zeros(3, dtype=ember.bool).geometric_(0.5),
                 lambda: ember.zeros(3, dtype=ember.complex64).random_(),
                 lambda: ember.randperm(5, dtype=ember.bool),
                 lambda: ember.bernoulli(ember.ones(3, dtype=ember.int64)),
                 lambda: ember.zeros(3).bernoulli_(ember.ones(3, dtype=ember.int64)),
                 lambda: ember.normal(ember.zeros(3, dtype=ember.int64), 1.0),
                 lambda: ember.randn_like(ember.zeros(2, dtype=ember.int64)),
                 lambda: ember.rand_like(ember.zeros(2, dtype=ember.int64))):
        with pytest.raises(NotImplementedError, match="not implemented for"):
            call()


@pytest.mark.parametrize("call,match", [
    (lambda: ember.randint(5, 3, (3,)), "random_ expects 'from' to be less than 'to', but got "
     "from=5 >= to=3"),
    (lambda: ember.randint(5, 5, (3,)), "from=5 >= to=5"),
    (lambda: ember.randint(0, 300, (3,), dtype=ember.uint8), "to - 1 is out of bounds for uint8"),
    (lambda: ember.randint(-1, 3, (3,), dtype=ember.uint8), "from is out of bounds for uint8"),
    (lambda: ember.randint(0, 3, (3,), dtype=ember.bool), "to - 1 is out of bounds for bool"),
    (lambda: ember.zeros(3, dtype=ember.int8).random_(-200, 3), "from is out of bounds for int8"),
    (lambda: ember.zeros(3).uniform_(1, 0), r"uniform_ expects to return a \[from, to\) range, "
     "but found from=1 > to=0"),
    (lambda: ember.zeros(3).uniform_(0, float("inf")), "to is out of bounds for float32"),
    (lambda: ember.zeros(3, dtype=ember.float16).uniform_(-70000, 70000),
     "from is out of bounds for float16"),
    (lambda: ember.zeros(3).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    (lambda: ember.normal(ember.zeros(3), -1.0), "normal expects std >= 0.0"),
    (lambda: ember.normal(0.0, -1.0, (2,)), "normal expects std >= 0.0"),
    (lambda: ember.normal(ember.zeros(3), float("nan")), "found std nan"),
    (lambda: ember.normal(ember.zeros(3), ember.full((3,), -1.0)),
     "normal expects all elements of std >= 0.0"),
    (lambda: ember.normal(ember.zeros(3), ember.tensor([float("nan"), 1, 1])),
     "normal expects all elements of std >= 0.0"),
    (lambda: ember.normal(ember.zeros(3), ember.ones(2)), "shapes|size"),
    (lambda: ember.bernoulli(ember.full((3,), 2.0)), r"elements of p to be in \[0, 1\]"),
    (lambda: ember.bernoulli(ember.ones(3), 1.5), r"bernoulli_ expects p to be in \[0, 1\], "
     "but got p=1.5"),
    (lambda: ember.zeros(3).bernoulli_(ember.full((2,), 0.5)), "expand"),
    (lambda: ember.zeros(3).exponential_(0), "exponential_ expects lambda > 0.0, but found "
     "lambda=0"),
    (lambda: ember.zeros(3, dtype=ember.int64).exponential_(), "Exponential distribution is a "
     "continuous probability distribution"),
    (lambda: ember.zeros(3).geometric_(1), r"geometric_ expects p to be in \(0, 1\), but got p=1"),
    (lambda: ember.zeros(3).log_normal_(0, 0), "log_normal_ expects std > 0.0, but found std=0"),
    (lambda: ember.zeros(3).cauchy_(0, -1), "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    (lambda: ember.zeros(3, dtype=ember.int64).cauchy_(), "Cauchy distribution is a continuous"),
    (lambda: ember.randperm(-1), "n must be non-negative, got -1"),
    (lambda: ember.randperm(300, dtype=ember.uint8), "cannot be converted to type uint8"),
    (lambda: ember.randperm(3000, dtype=ember.float16), "n cannot be greater than 2049"),
    (lambda: ember.multinomial(ember.tensor([0.2, 0.8]), 3), "cannot sample n_sample > "
     r"prob_dist.size\(-1\) samples without replacement"),
    (lambda: ember.multinomial(ember.tensor([0.2, 0.8]), 0), "cannot sample n_sample <= 0"),
    (lambda: ember.multinomial(ember.tensor([-0.2, 0.8]), 1), "probability tensor contains "
     "either `inf`, `nan` or element < 0"),
    (lambda: ember.multinomial(ember.tensor([float("nan"), 0.8]), 1), "`inf`, `nan`"),
    (lambda: ember.multinomial(ember.tensor([float("inf"), 0.8]), 1), "`inf`, `nan`"),
    (lambda: ember.multinomial(ember.tensor([[0.0, 0.0]]), 1), r"invalid multinomial "
     r"distribution \(sum of probabilities <= 0\)"),
    (lambda: ember.multinomial(ember.tensor([1, 2]), 1), "only supports floating-point dtypes"),
    (lambda: ember.multinomial(ember.tensor(1.0), 1), "prob_dist must be 1 or 2 dim"),
    (lambda: ember.multinomial(ember.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    (lambda: ember.rand(2, dtype=ember.float32, out=ember.empty(0, dtype=ember.float64)),
     "dtype float32 does not match dtype of out parameter"),
    (lambda: ember.rand(-2), "negative dimension"),
    (lambda: ember.rand(2, device="cuda"),
     # with a GPU: no sampling kernel there yet
     r"not implemented for device cuda: this backend has no kernel" if ember.cuda.is_available()
     else r"\[rand\] device 'cuda' is not available"),
])
def test_runtime_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError):
        ember.randint(5)
    with pytest.raises(TypeError, match="argument 'size' must be tuple of ints, not int"):
        ember.randint(5, 3)
    with pytest.raises(TypeError, match="must be int, not float"):
        ember.randint(0.5, 4.5, (3,))
    with pytest.raises(TypeError, match="must be int, not float"):
        ember.zeros(3).random_(5.5)
    with pytest.raises(TypeError):
        ember.normal(0, 1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'from_'"):
        ember.zeros(3).random_(from_=2, to=5)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        ember.rand(2, foo=1)


def test_read_only_targets_are_refused():
    a = np.zeros(4)
    a.flags.writeable = False
    with pytest.warns(UserWarning):
        t = ember.from_numpy(a)
    for call in (t.uniform_, t.normal_, t.random_, t.bernoulli_, t.exponential_, t.cauchy_):
        with pytest.raises(RuntimeError, match="read-only"):
            call()


def test_global_generator_is_thread_safe():
    # Each call reserves its own block of counters under the generator's mutex, so however the
    # threads interleave (the GIL is released while sampling), the values drawn together are
    # exactly those of the same calls made one after another.
    import threading

    calls, size = 16, 50_000
    ember.manual_seed(99)
    sequential = np.sort(np.concatenate([ember.rand(size).numpy() for _ in range(calls)]))
    ember.manual_seed(99)
    results = []
    lock = threading.Lock()

    def worker():
        for _ in range(calls // 4):
            r = ember.rand(size).numpy()
            with lock:
                results.append(r)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert np.array_equal(np.sort(np.concatenate(results)), sequential)
