"""Reductions and scans: named tuples, errors, accuracy, dtype=, out=, index rules, quantile
modes, parallel plans on large inputs, method forms. Values are checked against NumPy."""

import pickle

import numpy as np
import pytest

import ember
import ember.return_types as rt


def T(a, dtype=None):
    """An ember tensor from NumPy data (0-d arrays stay 0-d)."""
    t = ember.from_numpy(np.array(a, copy=True)).clone()
    return t if dtype is None else t.to(dtype)


def N(t):
    return t.numpy() if t.dtype is not ember.bfloat16 else t.float().numpy()


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    old = ember.get_num_threads()
    ember.set_num_threads(request.param)
    yield request.param
    ember.set_num_threads(old)


# ---- named tuples ---------------------------------------------------------------------------


def test_named_tuple_fields_and_repr():
    x = T(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32))
    r = ember.max(x, dim=1)
    assert type(r) is rt.max and isinstance(r, tuple) and len(r) == 2
    assert r.values is r[0] and r.indices is r[1]
    assert r.n_fields == 2 and r.n_sequence_fields == 2 and r.n_unnamed_fields == 0
    assert type(r).__module__ == "ember.return_types" and type(r).__name__ == "max"
    assert repr(r) == (
        "ember.return_types.max(\nvalues=tensor([5., 7.]),\nindices=tensor([1, 0]))"
    )
    assert str(r) == repr(r)
    v, i = r
    assert N(v).tolist() == [5.0, 7.0] and N(i).tolist() == [1, 0]
    mm = ember.aminmax(x)
    assert type(mm) is rt.aminmax and mm.min.item() == 0.0 and mm.max.item() == 7.0
    assert repr(mm) == "ember.return_types.aminmax(\nmin=tensor(0.),\nmax=tensor(7.))"


@pytest.mark.parametrize("name,fn", [
    ("min", lambda x: ember.min(x, 0)), ("median", lambda x: ember.median(x, 0)),
    ("nanmedian", lambda x: ember.nanmedian(x, 0)), ("mode", lambda x: ember.mode(x, 0)),
    ("cummax", lambda x: ember.cummax(x, 0)), ("cummin", lambda x: ember.cummin(x, 0)),
])
def test_named_tuple_types(name, fn):
    r = fn(T(np.array([3.0, 1.0, 2.0], np.float32)))
    assert type(r) is getattr(rt, name)
    assert r.values is r[0] and r.indices is r[1]
    assert r.indices.dtype is ember.int64


def test_return_types_for_other_families():
    for name, fields in [("sort", ("values", "indices")), ("topk", ("values", "indices")),
                         ("kthvalue", ("values", "indices")), ("slogdet", ("sign", "logabsdet")),
                         ("linalg_qr", ("Q", "R")), ("svd", ("U", "S", "V"))]:
        t = getattr(rt, name)((1, 2, 3)[: len(fields)])
        assert all(getattr(t, f) == i + 1 for i, f in enumerate(fields))
        assert type(getattr(rt, name + "_out")((0,) * len(fields))).__name__ == name + "_out"


def test_named_tuple_construction_and_pickle():
    r = rt.max((1, 2))
    assert r.values == 1 and r.indices == 2 and r == (1, 2)
    with pytest.raises(TypeError, match="constructor requires a sequence"):
        rt.max(5)
    with pytest.raises(TypeError, match="2-sequence"):
        rt.max((1, 2, 3))
    x = ember.max(T(np.arange(6.0).reshape(2, 3)), 1)
    y = pickle.loads(pickle.dumps(rt.max((1, 2))))
    assert type(y) is rt.max and y == (1, 2)
    assert repr(rt.max((1, 2))) == "ember.return_types.max(\nvalues=1,\nindices=2)"
    assert x.values.shape == (2,)


def test_out_calls_return_out_types():
    x = T(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.max(x, 1, out=(v, i))
    assert type(r) is rt.max_out and r.values is v and r.indices is i
    assert N(v).tolist() == [2.0, 5.0] and N(i).tolist() == [2, 2]
    lo, hi = ember.empty(0), ember.empty(0)
    r = ember.aminmax(x, dim=0, out=(lo, hi))
    assert type(r) is rt.aminmax_out and r.min is lo and N(hi).tolist() == [3.0, 4.0, 5.0]
    for fn, name in [(lambda o: ember.cummax(x, 1, out=o), "cummax_out"),
                     (lambda o: ember.median(x, 1, out=o), "median_out"),
                     (lambda o: ember.mode(x, 1, out=o), "mode_out")]:
        o = (ember.empty(0), ember.empty(0, dtype=ember.int64))
        r = fn(o)
        assert type(r).__name__ == name and r[0] is o[0] and r[1] is o[1]


# ---- errors ---------------------------------------------------------------------------------

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("call", [
    lambda x: ember.sum(x, 2), lambda x: ember.mean(x, (0, -3)), lambda x: ember.amax(x, 5),
    lambda x: ember.max(x, 2), lambda x: ember.argmax(x, -3), lambda x: ember.cumsum(x, 2),
    lambda x: ember.median(x, 2), lambda x: ember.mode(x, 2), lambda x: ember.var(x, 2),
    lambda x: ember.quantile(x, 0.5, dim=2), lambda x: ember.norm(x, dim=3),
    lambda x: ember.logsumexp(x, 2), lambda x: ember.count_nonzero(x, 2),
    lambda x: ember.all(x, 2), lambda x: ember.cummax(x, 2), lambda x: ember.aminmax(x, dim=2),
    lambda x: ember.prod(x, 2), lambda x: ember.logcumsumexp(x, -3),
])
def test_dim_out_of_range_is_index_error(call):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range"):
        call(T(X))


@pytest.mark.parametrize("call", [
    lambda x: ember.sum(x, (0, 0)), lambda x: ember.amax(x, (1, -1)),
    lambda x: ember.var(x, (0, -2)), lambda x: ember.norm(x, dim=(0, 0)),
    lambda x: ember.logsumexp(x, (1, 1)), lambda x: ember.count_nonzero(x, (0, 0)),
    lambda x: ember.all(x, (0, 0)), lambda x: ember.nansum(x, (1, 1)),
])
def test_repeated_dims_is_runtime_error(call):
    with pytest.raises(RuntimeError, match="appears multiple times in the list of dims"):
        call(T(X))


def test_empty_reductions_without_identity():
    e = ember.empty(0)
    for fn in (ember.max, ember.min, ember.amax, ember.amin):
        with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
            fn(e)
    with pytest.raises(IndexError, match="Expected reduction dim to be specified"):
        ember.argmax(e)
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        ember.aminmax(e)
    e2 = ember.empty(0, 3)
    for call in (lambda: ember.max(e2, 0), lambda: ember.amax(e2, 0), lambda: ember.argmin(e2, 0),
                 lambda: ember.median(e2, 0), lambda: ember.mode(e2, 0),
                 lambda: ember.aminmax(e2, dim=0), lambda: ember.nanmedian(e2, 0)):
        with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
            call()
    # a non-empty reduced dim of an empty input is fine
    assert ember.max(e2, 1).values.shape == (0,)
    assert ember.amax(e2, 1).shape == (0,)
    with pytest.raises(RuntimeError, match="inf norm on an empty tensor"):
        ember.norm(e, float("inf"))
    with pytest.raises(RuntimeError, match="quantile\\(\\) input tensor must be non-empty"):
        ember.quantile(e, 0.5)


def test_empty_reductions_with_identity():
    e = ember.empty(0, 3)
    assert ember.sum(e).item() == 0 and ember.prod(e).item() == 1
    assert np.isnan(ember.mean(e).item()) and np.isnan(ember.var(e).item())
    assert N(ember.sum(e, 0)).tolist() == [0, 0, 0] and N(ember.prod(e, 0)).tolist() == [1, 1, 1]
    assert ember.logsumexp(e, (0, 1)).item() == float("-inf")
    assert ember.all(e).item() is True and ember.any(e).item() is False
    assert ember.norm(e).item() == 0.0 and ember.count_nonzero(e).item() == 0
    assert np.isnan(ember.median(ember.empty(0)).item())
    assert ember.cumsum(e, 0).shape == (0, 3)


@pytest.mark.parametrize("call,cls,match", [
    (lambda: ember.mean(T(np.arange(3))), NotImplementedError, "Input dtype must be either"),
    (lambda: ember.mean(T(X), dtype=ember.int64), NotImplementedError, "Optional dtype"),
    (lambda: ember.nanmean(T(np.arange(3))), NotImplementedError, "floating point"),
    (lambda: ember.nansum(T(X, ember.complex64)), NotImplementedError, "complex"),
    (lambda: ember.var(T(np.arange(3))), NotImplementedError, "std and var only support"),
    (lambda: ember.std(T(np.arange(3))), NotImplementedError, "std and var only support"),
    (lambda: ember.norm(T(np.arange(3))), NotImplementedError, "floating point or complex"),
    (lambda: ember.norm(T(X), dtype=ember.int32), RuntimeError, "dtype should be floating"),
    (lambda: ember.norm(T(X), "abc"), RuntimeError, "Order abc not supported"),
    (lambda: ember.logcumsumexp(T(np.arange(3)), 0), NotImplementedError, "int64"),
    (lambda: ember.median(T(np.ones(3, bool))), NotImplementedError, "bool"),
    (lambda: ember.median(T(np.ones(3, bool)), 0), NotImplementedError, "bool"),
    (lambda: ember.mode(T(X, ember.complex64)), NotImplementedError, "complex64"),
    (lambda: ember.amax(T(X, ember.complex64)), NotImplementedError, "complex64"),
    (lambda: ember.max(T(X, ember.complex64), 0), TypeError, "does not support complex"),
    (lambda: ember.argmax(T(X, ember.complex64)), TypeError, "does not support complex"),
    (lambda: ember.argmin(T(np.ones(3, bool))), NotImplementedError, "does not support bool"),
    (lambda: ember.aminmax(T(X, ember.complex64)), TypeError, "aminmax not implemented"),
    (lambda: ember.cummax(T(X, ember.complex64), 0), NotImplementedError, "complex64"),
    (lambda: ember.quantile(T(np.arange(3)), 0.5), RuntimeError, "float or double"),
    (lambda: ember.quantile(T(X), 1.5), RuntimeError, r"q must be in the range \[0, 1\]"),
    (lambda: ember.quantile(T(X), T(np.array([0.2, 1.2], np.float32))), RuntimeError,
     r"q values must be in the range \[0, 1\]"),
    (lambda: ember.quantile(T(X), T(np.array([[0.2]], np.float32))), RuntimeError,
     "q must be a scalar or 1D tensor"),
    (lambda: ember.quantile(T(X), T(np.array([0.2]))), RuntimeError, "same dtype"),
    (lambda: ember.quantile(T(X), 0.5, interpolation="foo"), RuntimeError,
     "interpolation must be one of linear, lower, higher, midpoint or nearest"),
    (lambda: ember.amax(T(X), 0, out=ember.empty(0, dtype=ember.float64)), RuntimeError,
     "Expected the dtype for input and out to match"),
    (lambda: ember.argmax(T(X), 0, out=ember.empty(0, dtype=ember.int32)), RuntimeError,
     "Expected out tensor to have dtype long int, but got int"),
    (lambda: ember.max(T(X), 0, out=(ember.empty(0, dtype=ember.float64),
                                     ember.empty(0, dtype=ember.int64))),
     RuntimeError, "Expected out tensor to have dtype float, but got double"),
    (lambda: ember.all(T(X), out=ember.empty(0)), RuntimeError, "only supports bool tensor"),
    (lambda: ember.logsumexp(T(X), 0, out=ember.empty(0, dtype=ember.int64)), RuntimeError,
     "Expected floating point type for result"),
    (lambda: ember.prod(T(X), (0, 1)), TypeError, "must be int"),
    (lambda: ember.var(T(X), 0, True, correction=1), TypeError, "both unbiased and correction"),
    (lambda: ember.max(T(X), 1.5), TypeError, None),
    (lambda: ember.logsumexp(T(X)), TypeError, None),
    (lambda: T(X).cumsum_(0, dtype=ember.float64), RuntimeError,
     "Expected out tensor to have dtype double"),
])
def test_error_classes(call, cls, match):
    with pytest.raises(cls, match=match):
        call()


def test_errors_name_the_op():
    with pytest.raises(IndexError, match=r"^\[amax\]"):
        ember.amax(T(X), 4)
    with pytest.raises(RuntimeError, match=r"^\[quantile\]"):
        ember.quantile(T(X), 2.0)


# ---- accuracy -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,dim", [
    ((1_000_000,), None), ((1000, 1000), None), ((1000, 1000), 0), ((1000, 1000), 1),
    ((500_000, 2), 0), ((2, 500_000), 1), ((100, 100, 100), (0, 2)),
])
def test_float32_sums_are_accurate(shape, dim, threads):
    rng = np.random.default_rng(0)
    a = (rng.random(shape) + 0.1).astype(np.float32)  # all positive: error cannot cancel
    want = a.astype(np.float64).sum(axis=dim)
    np.testing.assert_allclose(N(ember.sum(T(a), dim)), want, rtol=1e-5)
    np.testing.assert_allclose(N(ember.mean(T(a), dim)), want / (a.size / np.size(want)),
                               rtol=1e-5)


def test_strided_float32_sum_is_accurate():
    a = (np.random.default_rng(1).random((2000, 1000)) + 0.1).astype(np.float32)
    t = T(a).transpose(0, 1)[:, ::3]
    want = a.T[:, ::3].astype(np.float64)
    np.testing.assert_allclose(ember.sum(t).item(), want.sum(), rtol=1e-5)
    np.testing.assert_allclose(N(ember.sum(t, 0)), want.sum(0), rtol=1e-5)


def test_half_precision_accumulates_in_float():
    for dt in (ember.float16, ember.bfloat16):
        x = ember.full((100_000,), 0.1, dtype=dt)
        want = np.float32(ember.tensor(0.1, dtype=dt).float().item()) * 100_000
        got = ember.sum(x).float().item()
        assert abs(got - want) / want < 1e-2, (dt, got, want)
        assert abs(ember.mean(x).float().item() - want / 100_000) < 1e-3
    # a float16 cumsum keeps a float accumulator (PyTorch: 300 after 3000 steps of 0.1)
    c = ember.cumsum(ember.full((3000,), 0.1, dtype=ember.float16), 0)
    assert abs(c[-1].float().item() - 300.0) < 0.5


def test_variance_is_stable_with_a_large_mean(threads):
    rng = np.random.default_rng(2)
    a = (1e4 + rng.standard_normal((300, 4000))).astype(np.float32)
    want = a.astype(np.float64)
    for dim in (None, 0, 1):
        np.testing.assert_allclose(N(ember.var(T(a), dim)), want.var(axis=dim, ddof=1), rtol=2e-4)
        np.testing.assert_allclose(N(ember.std(T(a), dim, correction=0)),
                                   want.std(axis=dim), rtol=2e-4)
    h = ember.full((1000,), 1000.1, dtype=ember.float16)
    assert ember.var(h).item() == 0.0


def test_cumsum_float32_accumulates_in_double():
    a = np.full(1_000_000, 0.1, np.float32)
    got = N(ember.cumsum(T(a), 0))
    np.testing.assert_allclose(got[-1], np.float64(np.float32(0.1)) * 1e6, rtol=1e-7)


# ---- dtype= -----------------------------------------------------------------------------------


def test_dtype_argument_casts_before_reducing():
    i8 = T(np.array([100, 100, 100], np.int8))
    assert ember.sum(i8).dtype is ember.int64 and ember.sum(i8).item() == 300
    assert ember.sum(i8, dtype=ember.int8).item() == 44  # wraps in int8, as PyTorch
    assert ember.sum(T(np.array([200, 100], np.uint8)), dtype=ember.uint8).item() == 44
    s = ember.sum(i8, dtype=ember.float32)
    assert s.dtype is ember.float32 and s.item() == 300.0
    m = ember.mean(T(np.arange(4)), dtype=ember.float64)
    assert m.dtype is ember.float64 and m.item() == 1.5
    x = T(np.array([[1.5, 2.5], [3.5, 4.5]], np.float32))
    assert N(ember.sum(x, 1, dtype=ember.int32)).tolist() == [3, 7]  # 1+2, 3+4 after the cast
    assert ember.prod(x, dtype=ember.float64).dtype is ember.float64
    assert N(ember.cumsum(T(np.arange(3)), 0, dtype=ember.float32)).dtype == np.float32
    assert ember.norm(x, dtype=ember.float64).dtype is ember.float64
    assert ember.nansum(T(np.array([1.0, np.nan])), dtype=ember.float32).item() == 1.0
    assert ember.sum(T(np.array([True, True])), dtype=ember.bool).item() is True
    assert ember.sum(T(np.array([True, True]))).item() == 2


# ---- out= ------------------------------------------------------------------------------------


def test_out_argument():
    x = T(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    out = ember.empty(0)
    r = ember.sum(x, 1, out=out)
    assert r is out and out.shape == (3,) and N(out).tolist() == [6.0, 22.0, 38.0]
    out = ember.empty(5, 5)  # wrong shape: resized
    ember.mean(x, 0, keepdim=True, out=out)
    assert out.shape == (1, 4) and N(out).tolist() == [[4.0, 5.0, 6.0, 7.0]]
    # out's dtype decides the computation of sum-like ops (PyTorch)
    oi = ember.empty(0, dtype=ember.int64)
    ember.sum(x, 0, out=oi)
    assert N(oi).tolist() == [12, 15, 18, 21]
    od = ember.empty(0, dtype=ember.float64)
    ember.var(x, 1, out=od)
    assert od.dtype is ember.float64
    np.testing.assert_allclose(N(od), np.var(N(x), axis=1, ddof=1))
    # a non-contiguous out
    big = ember.zeros(4, 2)
    col = big[:, 0]
    ember.amax(x, 0, out=col)
    assert N(big)[:, 0].tolist() == [8.0, 9.0, 10.0, 11.0] and N(big)[:, 1].tolist() == [0] * 4
    v = ember.empty(0)
    ember.cumsum(x, 1, out=v)
    np.testing.assert_array_equal(N(v), np.cumsum(N(x), 1))
    q = ember.empty(0)
    ember.quantile(x, T(np.array([0.25, 0.5], np.float32)), dim=1, out=q)
    np.testing.assert_allclose(N(q), np.quantile(N(x), [0.25, 0.5], axis=1), rtol=1e-6)
    o0, o1 = ember.empty(0), ember.empty(0)
    r = ember.var_mean(x, 0, out=(o0, o1))
    assert type(r) is tuple and r[0] is o0 and r[1] is o1
    b = ember.empty(0, dtype=ember.bool)
    ember.any(x, 1, out=b)
    assert N(b).tolist() == [True, True, True]
    version = x._version
    x.cumsum_(1)
    assert x._version > version and N(x)[0].tolist() == [0.0, 1.0, 3.0, 6.0]
    y = T(np.arange(1, 5))
    assert y.cumprod_(0) is y and N(y).tolist() == [1, 2, 6, 24]


# ---- index rules ----------------------------------------------------------------------------


def test_argmax_ties_take_the_first_occurrence(threads):
    a = np.zeros(100_000, np.float32)
    a[[700, 5000, 99_999]] = 3.0
    assert ember.argmax(T(a)).item() == 700
    assert ember.max(T(a), 0).indices.item() == 700
    assert ember.argmin(T(-a)).item() == 700
    m = np.zeros((3000, 7), np.float32)
    m[[10, 2000], 3] = 1.0
    assert ember.argmax(T(m), 0)[3].item() == 10  # outer (column) reductions
    assert N(ember.argmax(T(m), 0)).tolist() == [0, 0, 0, 10, 0, 0, 0]
    mi = np.full((5, 4000), 2, np.int32)
    mi[:, 100] = 9
    mi[:, 3000] = 9
    assert N(ember.argmax(T(mi), 1)).tolist() == [100] * 5


def test_nan_wins_and_the_first_nan_is_reported(threads):
    a = np.arange(50_000, dtype=np.float64)
    a[[30_000, 40_000]] = np.nan
    for fn in (ember.argmax, ember.argmin):
        assert fn(T(a)).item() == 30_000
    r = ember.max(T(a), 0)
    assert np.isnan(r.values.item()) and r.indices.item() == 30_000
    assert np.isnan(ember.amax(T(a)).item()) and np.isnan(ember.amin(T(a)).item())
    assert np.isnan(ember.max(T(a)).item())
    m = np.ones((2000, 3))
    m[[5, 700], 1] = np.nan
    r = ember.min(T(m), 0)
    assert np.isnan(N(r.values)[1]) and N(r.indices).tolist() == [0, 5, 0]
    c = ember.cummax(T(np.array([1.0, np.nan, 2.0, np.nan])), 0)
    assert N(c.indices).tolist() == [0, 1, 1, 3]


def test_median_and_mode_rules():
    x = T(np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 1.0, 3.0, 4.0]]))
    r = ember.median(x, 1)
    assert np.isnan(N(r.values)[0]) and N(r.indices).tolist() == [1, 0]
    assert N(ember.nanmedian(x, 1).values).tolist() == [1.0, 2.0]
    assert ember.median(T(np.array([4, 1, 3, 2]))).item() == 2  # the lower median
    assert ember.nanmedian(T(np.array([np.nan, 1.0, 3.0]))).item() == 1.0
    m = ember.mode(T(np.array([3, 3, 1, 1, 2])))
    assert m.values.item() == 1 and m.indices.item() == 3
    m = ember.mode(T(np.array([1, 1, 2, 2, 1])), 0)
    assert m.values.item() == 1 and m.indices.item() == 4


# ---- quantile -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_interpolation_matches_numpy(method):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 11))
    q = np.array([0.0, 0.13, 0.37, 0.5, 0.81, 1.0])
    for dim in (None, 0, 1):
        got = ember.quantile(T(a), T(q), dim=dim, interpolation=method)
        np.testing.assert_allclose(N(got), np.quantile(a, q, axis=dim, method=method), rtol=1e-12)
        got = ember.nanquantile(T(a), 0.37, dim=dim, keepdim=True, interpolation=method)
        np.testing.assert_allclose(N(got), np.quantile(a, 0.37, axis=dim, keepdims=True,
                                                       method=method), rtol=1e-12)
    b = a.copy()
    b[1, [2, 5]] = np.nan
    got = ember.nanquantile(T(b), T(q), dim=1, interpolation=method)
    np.testing.assert_allclose(N(got), np.nanquantile(b, q, axis=1, method=method), rtol=1e-12)
    assert np.isnan(N(ember.quantile(T(b), 0.5, dim=1, interpolation=method))[1])


# ---- large inputs: every reduction plan on several threads ----------------------------------


@pytest.mark.parametrize("shape,dim", [
    ((3_000_000,), None), ((2, 1_500_000), 1), ((1_500_000, 2), 0), ((700, 3000), 0),
    ((3000, 700), 1), ((30, 200, 500), (0, 2)), ((30, 200, 500), 1),
])
def test_large_reductions_on_threads(shape, dim, threads):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape).astype(np.float32)
    t = T(a)
    w = a.astype(np.float64)
    np.testing.assert_allclose(N(ember.sum(t, dim)), w.sum(axis=dim), rtol=1e-4, atol=1e-2)
    np.testing.assert_array_equal(N(ember.amax(t, dim)), a.max(axis=dim))
    np.testing.assert_array_equal(N(ember.amin(t, dim)), a.min(axis=dim))
    np.testing.assert_allclose(N(ember.var(t, dim)), w.var(axis=dim, ddof=1), rtol=1e-4)
    np.testing.assert_allclose(N(ember.norm(t, dim=dim)), np.sqrt((w * w).sum(axis=dim)),
                               rtol=1e-5)
    big = a > 3.0
    np.testing.assert_array_equal(N(ember.any(T(big), dim)), np.any(big, axis=dim))
    np.testing.assert_array_equal(N(ember.all(T(~big), dim)), np.all(~big, axis=dim))
    np.testing.assert_array_equal(N(ember.count_nonzero(T(big), dim)),
                                  np.count_nonzero(big, axis=dim))
    if not isinstance(dim, tuple):
        d = 0 if dim is None else dim
        src = t if dim is not None else t.reshape(-1)
        ref = a if dim is not None else a.reshape(-1)
        r = ember.max(src, d)
        np.testing.assert_array_equal(N(r.values), ref.max(axis=d))
        np.testing.assert_array_equal(N(r.indices), ref.argmax(axis=d))
        np.testing.assert_array_equal(N(ember.argmin(src, d)), ref.argmin(axis=d))
        np.testing.assert_allclose(N(ember.logsumexp(src, d)),
                                   np.logaddexp.reduce(ref.astype(np.float64), axis=d),
                                   rtol=1e-5)


@pytest.mark.parametrize("shape,dim", [((3000, 700), 0), ((700, 3000), 1), ((3, 4, 50_000), 2)])
def test_large_scans_on_threads(shape, dim, threads):
    a = np.random.default_rng(5).standard_normal(shape)
    t = T(a)
    np.testing.assert_allclose(N(ember.cumsum(t, dim)), np.cumsum(a, axis=dim), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_array_equal(N(ember.cummax(t, dim).values), np.maximum.accumulate(a, dim))
    np.testing.assert_allclose(N(ember.logcumsumexp(t, dim)), np.logaddexp.accumulate(a, dim),
                               rtol=1e-10)


def test_results_do_not_depend_on_thread_count():
    a = T(np.random.default_rng(6).standard_normal(2_000_001).astype(np.float32))
    old = ember.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            ember.set_num_threads(n)
            results.append((ember.argmax(a).item(), ember.amax(a).item(), ember.median(a).item()))
        assert results[0] == results[1] == results[2]
    finally:
        ember.set_num_threads(old)


# ---- method forms and calling conventions ---------------------------------------------------


def test_method_forms_match_functions():
    a = np.random.default_rng(7).standard_normal((3, 5))
    x = T(a)
    pairs = [
        (x.sum(1), ember.sum(x, 1)), (x.nansum(), ember.nansum(x)), (x.mean(0), ember.mean(x, 0)),
        (x.nanmean(1), ember.nanmean(x, 1)), (x.prod(1), ember.prod(x, 1)),
        (x.amax((0, 1)), ember.amax(x, (0, 1))), (x.amin(1), ember.amin(x, 1)),
        (x.max(), ember.max(x)), (x.min(), ember.min(x)), (x.argmax(), ember.argmax(x)),
        (x.argmin(1, True), ember.argmin(x, 1, True)), (x.var(1), ember.var(x, 1)),
        (x.std(unbiased=False), ember.std(x, unbiased=False)), (x.norm(1), ember.norm(x, 1)),
        (x.logsumexp(1), ember.logsumexp(x, 1)), (x.all(), ember.all(x)),
        (x.any(0), ember.any(x, 0)),
        (x.count_nonzero(), ember.count_nonzero(x)), (x.cumsum(1), ember.cumsum(x, 1)),
        (x.cumprod(0), ember.cumprod(x, 0)), (x.logcumsumexp(1), ember.logcumsumexp(x, 1)),
        (x.median(), ember.median(x)), (x.nanmedian(), ember.nanmedian(x)),
        (x.quantile(0.3, 1), ember.quantile(x, 0.3, 1)),
        (x.nanquantile(0.3), ember.nanquantile(x, 0.3)),
    ]
    for m, f in pairs:
        np.testing.assert_array_equal(N(m), N(f))
    for m, f in [(x.max(1), ember.max(x, 1)), (x.min(0, True), ember.min(x, 0, True)),
                 (x.median(1), ember.median(x, 1)), (x.mode(1), ember.mode(x, 1)),
                 (x.cummax(0), ember.cummax(x, 0)), (x.cummin(1), ember.cummin(x, 1)),
                 (x.aminmax(dim=1), ember.aminmax(x, dim=1)),
                 (x.nanmedian(0), ember.nanmedian(x, 0))]:
        assert type(m) is type(f)
        for u, v in zip(m, f):
            np.testing.assert_array_equal(N(u), N(v))


def test_var_overloads():
    a = np.random.default_rng(8).standard_normal((3, 5))
    x = T(a)
    np.testing.assert_allclose(N(ember.var(x, True)), a.var(ddof=1))
    np.testing.assert_allclose(N(ember.var(x, False)), a.var())
    np.testing.assert_allclose(N(ember.var(x, 1, False, True)), a.var(1, ddof=0, keepdims=True))
    np.testing.assert_allclose(N(ember.var(x, dim=1, correction=2)), a.var(1, ddof=2))
    np.testing.assert_allclose(N(ember.std(x, (0, 1), correction=0.5)),
                               np.sqrt(((a - a.mean()) ** 2).sum() / (a.size - 0.5)))
    v, m = ember.std_mean(x, 0, keepdim=True)
    np.testing.assert_allclose(N(v), a.std(0, ddof=1, keepdims=True))
    np.testing.assert_allclose(N(m), a.mean(0, keepdims=True))
    assert np.isinf(ember.var(T(np.array([1.0, 2.0])), correction=2).item())
    assert np.isnan(ember.var(T(np.array([1.0, 1.0])), correction=2).item())


def test_norm_orders():
    a = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])
    x = T(a)
    assert ember.norm(x).item() == pytest.approx(np.sqrt((a * a).sum()))
    assert ember.norm(x, "fro", dim=(0, 1)).item() == pytest.approx(np.sqrt((a * a).sum()))
    assert N(ember.norm(x, 1, dim=1)).tolist() == [7.0, 5.0]
    assert N(ember.norm(x, float("inf"), dim=1)).tolist() == [4.0, 2.0]
    assert N(ember.norm(x, float("-inf"), dim=1)).tolist() == [0.0, 1.0]
    assert ember.norm(x, 0).item() == 5.0
    assert ember.norm(x, -1).item() == 0.0  # a zero element: (sum |x|^-1)^-1 = 0
    np.testing.assert_allclose(N(ember.norm(x, 3, dim=0, keepdim=True)),
                               (np.abs(a) ** 3).sum(0, keepdims=True) ** (1 / 3))
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        ember.norm(T(np.ones((2, 2, 2))), "fro", dim=(0, 1, 2))
    z = T(np.array([3 + 4j]))
    assert ember.norm(z).dtype is ember.float64 and ember.norm(z).item() == 5.0


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("p", [2, 1, 0, 3, 0.5, float("inf"), float("-inf")])
def test_dist_is_the_p_norm_of_the_broadcast_difference(dtype, p):
    # torch.dist (used by the parametrizations tutorial to compare weights) broadcasts, promotes
    # and reduces everything to a 0-d p-norm.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 1, 3))
    b = rng.standard_normal((4, 3))[:, ::-1]  # non-contiguous
    got = ember.dist(T(a, dtype), T(b.copy(), dtype)[:, :], p)
    d = np.abs(a - b).ravel()
    if p == 0:
        want = np.count_nonzero(d)
    elif np.isinf(p):
        want = d.max() if p > 0 else d.min()
    else:
        want = (d ** p).sum() ** (1 / p)
    assert got.shape == () and got.dtype is dtype
    rtol = 1e-5 if dtype is ember.float32 else 1e-12
    np.testing.assert_allclose(got.item(), want, rtol=rtol)
    assert T(a, dtype).dist(T(b.copy(), dtype), p).item() == got.item()


def test_dist_dtypes_edges_and_errors():
    x = T(np.array([1.0, 2.0], np.float32))
    y = T(np.array([4.0, 6.0]))
    r = ember.dist(x, y)
    assert r.dtype is ember.float64 and r.item() == 5.0  # float32 with float64 promotes
    assert ember.dist(T(np.array([3 + 4j])), T(np.array([0.0]))).item() == 5.0
    assert ember.dist(T(np.zeros(0)), T(np.zeros(0))).item() == 0.0
    assert np.isnan(ember.dist(T(np.array([np.nan, 1.0])), T(np.array([0.0, 0.0]))).item())
    assert ember.dist(x, x + 1, p=1).item() == 2.0
    with pytest.raises(NotImplementedError, match="floating point or complex"):
        ember.dist(T(np.array([1, 2])), T(np.array([3, 5])))
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.dist(x, T(np.zeros(3, np.float32)))
    with pytest.raises(TypeError, match=r"\[dist\] p must be a real number"):
        ember.dist(x, x, "fro")


@pytest.mark.parametrize("p", [2, 1, 3, float("inf")])
def test_dist_gradcheck(p):
    rng = np.random.default_rng(4)
    a = T(rng.standard_normal((3, 4))).requires_grad_()
    b = T(rng.standard_normal(4)).requires_grad_()
    assert ember.autograd.gradcheck(lambda a, b: ember.dist(a, b, p), (a, b))
    if p in (2, 3):
        assert ember.autograd.gradgradcheck(lambda a, b: ember.dist(a, b, p), (a, b))


def test_dist_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 1, 4)), rng.standard_normal((2, 4))
    for p in (2, 1, 0, 3, float("inf"), float("-inf")):
        want = torch.dist(torch.tensor(a), torch.tensor(b), p).item()
        assert ember.dist(T(a), T(b), p).item() == pytest.approx(want, rel=1e-12)


def test_all_any_keep_uint8_and_reduce_nothing_for_empty_dims():
    u = T(np.array([1, 2, 0], np.uint8))
    assert ember.all(u).dtype is ember.uint8 and ember.all(u).item() == 0
    assert ember.any(u).dtype is ember.uint8 and ember.any(u).item() == 1
    assert ember.all(T(np.array([np.nan]))).item() is True
    x = T(np.array([[0.0, 1.0], [2.0, 3.0]]))
    r = ember.all(x, ())
    assert r.dtype is ember.bool and N(r).tolist() == [[False, True], [True, True]]
    assert ember.count_nonzero(x, ()).item() == 3


def test_max_with_a_tensor_second_argument_is_maximum(monkeypatch):
    calls = []

    def fake(a, b, out=None):
        calls.append((a, b, out))
        return "maximum-result"

    monkeypatch.setattr(ember, "maximum", fake, raising=False)
    monkeypatch.setattr(ember, "minimum", fake, raising=False)
    x, y = T(X), T(X + 1)
    assert ember.max(x, y) == "maximum-result" and calls[-1][0] is x and calls[-1][1] is y
    assert x.max(y) == "maximum-result"
    o = ember.empty(0)
    ember.min(x, y, out=o)
    assert calls[-1][2] is o


def test_zero_dim_inputs():
    s = T(np.array(2.5))
    for fn in (ember.sum, ember.mean, ember.amax, ember.max, ember.median, ember.norm):
        r = fn(s)
        assert r.shape == () and r.item() == pytest.approx(2.5)
    r = ember.max(s, 0, keepdim=True)
    assert r.values.shape == () and r.indices.item() == 0
    assert ember.cumsum(s, 0).shape == () and ember.cummax(s, -1).indices.shape == ()
    assert ember.argmax(s, keepdim=True).shape == ()
    assert ember.quantile(s, 0.3, dim=0, keepdim=True).shape == ()
    assert np.isnan(ember.var(s).item()) and ember.var(s, correction=0).item() == 0.0
