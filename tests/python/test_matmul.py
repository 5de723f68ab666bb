"""Focused tests of the matmul family: every shape combination against np.matmul for every
dtype and layout, batch broadcasting, float32 accuracy at scale, alpha/beta rules, out=, the
operator forms, threads, and the errors (class and message) PyTorch raises."""

import threading

import numpy as np
import pytest

import ember
from opinfo import COMPLEX, FLOATING, INTEGRAL, TOL, make_array, make_tensor, to_numpy
from thread_count import num_threads

NUMERIC = INTEGRAL + FLOATING + COMPLEX
GEMM_TOL = dict(TOL)
GEMM_TOL.update({ember.float16: (2e-3, 2e-3), ember.bfloat16: (1.6e-2, 2e-2),
                 ember.float32: (1e-5, 1e-4), ember.complex64: (1e-5, 1e-4)})

SHAPES = [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (6, 4, 2)),
    ((2, 1, 3, 4), (1, 2, 4, 5)), ((3, 2, 1, 3, 4), (2, 4, 5)),
    ((0, 4), (4, 5)), ((3, 0), (0, 5)), ((3, 4), (4, 0)), ((0, 3, 4), (4,)), ((2, 0, 4), (2, 4, 3)),
    ((2, 3, 0), (0, 4)), ((0,), (0,)), ((5, 0), (0,)), ((1, 0, 3), (2, 3, 0)),
]


def _wide(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else
                    np.float64 if a.dtype.kind == "f" else np.int64)


def _ref(a, b):
    r = np.matmul(_wide(a), _wide(b))
    return r.astype(a.dtype) if a.dtype.kind in "iu" else r


def _check(got, want, dtype):
    gv = to_numpy(got)
    assert gv.shape == np.shape(want)
    assert got.dtype is dtype
    if gv.dtype.kind in "iu":
        np.testing.assert_array_equal(gv, want)
    else:
        rtol, atol = GEMM_TOL[dtype]
        np.testing.assert_allclose(gv.astype(np.complex128), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("sa,sb", SHAPES, ids=lambda s: "x".join(map(str, s)) or "0d")
def test_matmul_shapes_all_dtypes(sa, sb, dtype):
    rng = np.random.default_rng(0)
    a, b = make_array(sa, dtype, rng), make_array(sb, dtype, rng)
    ta, tb = make_tensor(a, dtype), make_tensor(b, dtype)
    _check(ember.matmul(ta, tb), _ref(a, b), dtype)
    _check(ta @ tb, _ref(a, b), dtype)
    _check(ta.matmul(tb), _ref(a, b), dtype)


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("la", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("lb", ["contiguous", "transposed", "strided"])
def test_matmul_layouts(dtype, la, lb):
    rng = np.random.default_rng(1)
    for sa, sb in [((5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)), ((1, 7), (7, 1)), ((6, 1), (1, 4))]:
        a, b = make_array(sa, dtype, rng), make_array(sb, dtype, rng)
        got = make_tensor(a, dtype, layout=la) @ make_tensor(b, dtype, layout=lb)
        _check(got, _ref(a, b), dtype)


def test_permuted_and_expanded_batches():
    rng = np.random.default_rng(2)
    a = make_array((4, 3, 5), ember.float64, rng)
    b = make_array((3, 5, 2), ember.float64, rng)
    ta = make_tensor(a, ember.float64).permute(1, 0, 2)  # batch stride < row stride
    np.testing.assert_allclose(ember.bmm(ta, make_tensor(b, ember.float64)).numpy(),
                               np.matmul(a.transpose(1, 0, 2), b))
    e = make_tensor(a[:1], ember.float64).expand(6, 3, 5)  # zero batch stride
    w = make_array((6, 5, 2), ember.float64, rng)
    np.testing.assert_allclose(ember.matmul(e, make_tensor(w, ember.float64)).numpy(),
                               np.matmul(np.broadcast_to(a[:1], (6, 3, 5)), w))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.complex64])
def test_large_accuracy(dtype):
    rng = np.random.default_rng(3)
    a = make_array((512, 512), dtype, rng, low=-1, high=1)
    b = make_array((512, 512), dtype, rng, low=-1, high=1)
    got = to_numpy(make_tensor(a, dtype) @ make_tensor(b, dtype))
    want = _wide(a) @ _wide(b)
    # float32 GEMM error grows like sqrt(k) * eps * |a||b|
    tol = 1e-4 if dtype in (ember.float32, ember.complex64) else 1e-10
    assert np.max(np.abs(got - want)) < tol * np.sqrt(512) * 10
    # and transposed operands take the same path without copies changing the answer
    got_t = to_numpy(make_tensor(a, dtype, layout="transposed") @ make_tensor(b, dtype))
    np.testing.assert_allclose(got_t, got, rtol=1e-5, atol=1e-4)


def test_large_reduced_precision():
    rng = np.random.default_rng(4)
    a = make_array((128, 256), ember.float32, rng, low=-1, high=1)
    b = make_array((256, 64), ember.float32, rng, low=-1, high=1)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for dt, tol in [(ember.bfloat16, 0.15), (ember.float16, 0.02)]:
        ta, tb = ember.tensor(a).to(dt), ember.tensor(b).to(dt)
        exact = ta.float().numpy().astype(np.float64) @ tb.float().numpy().astype(np.float64)
        got = (ta @ tb).float().numpy()
        assert np.max(np.abs(got - exact)) < tol
        assert np.max(np.abs(got - want)) < tol * 4


@pytest.mark.parametrize("dtype", INTEGRAL, ids=lambda d: str(d)[6:])
def test_integer_matmul_is_exact_and_wraps(dtype):
    rng = np.random.default_rng(5)
    info = np.iinfo(np.dtype(str(dtype)[6:]))
    hi = min(info.max, 2**40)
    a = rng.integers(max(info.min, -hi), hi, size=(9, 33), dtype=np.int64)
    b = rng.integers(max(info.min, -hi), hi, size=(33, 7), dtype=np.int64)
    a, b = a.astype(info.dtype), b.astype(info.dtype)
    # reference: exact products in Python ints, reduced modulo 2**bits like PyTorch
    want = (a.astype(object) @ b.astype(object))
    bits = info.bits
    want = np.vectorize(lambda v: ((int(v) + 2 ** (bits - 1)) % 2**bits) - 2 ** (bits - 1)
                        if info.min < 0 else int(v) % 2**bits)(want).astype(info.dtype)
    got = (ember.tensor(a) @ ember.tensor(b)).numpy()
    np.testing.assert_array_equal(got, want)


def test_mm_bmm_mv_dot_vdot_inner():
    rng = np.random.default_rng(6)
    a = make_array((3, 4), ember.complex128, rng)
    b = make_array((4, 2), ember.complex128, rng)
    v = make_array((4,), ember.complex128, rng)
    T = ember.tensor
    np.testing.assert_allclose(ember.mm(T(a), T(b)).numpy(), a @ b)
    np.testing.assert_allclose(T(a).mm(T(b)).numpy(), a @ b)
    np.testing.assert_allclose(ember.mv(T(a), T(v)).numpy(), a @ v)
    np.testing.assert_allclose(ember.dot(T(v), T(v)).numpy(), np.dot(v, v))
    np.testing.assert_allclose(ember.vdot(T(v), T(v * 2)).numpy(), np.vdot(v, v * 2))
    np.testing.assert_allclose(T(v).vdot(T(v)).numpy(), np.vdot(v, v))
    np.testing.assert_allclose(ember.inner(T(a), T(a)).numpy(), np.inner(a, a))
    bb = make_array((2, 3, 4), ember.complex128, rng)
    cc = make_array((2, 4, 5), ember.complex128, rng)
    np.testing.assert_allclose(ember.bmm(T(bb), T(cc)).numpy(), bb @ cc)
    assert ember.dot(T(v), T(v)).shape == ()


def test_alpha_beta():
    rng = np.random.default_rng(7)
    inp = make_array((3, 5), ember.float64, rng)
    a, b = make_array((3, 4), ember.float64, rng), make_array((4, 5), ember.float64, rng)
    T = ember.tensor
    got = ember.addmm(T(inp), T(a), T(b), beta=0.5, alpha=-2)
    np.testing.assert_allclose(got.numpy(), 0.5 * inp - 2 * (a @ b))
    # beta=0: input values, NaN included, never reach the result
    nan = np.full((3, 5), np.nan)
    np.testing.assert_allclose(ember.addmm(T(nan), T(a), T(b), beta=0).numpy(), a @ b)
    np.testing.assert_allclose(ember.addmv(T(nan[:, 0]), T(a), T(b[:, 0]), beta=0).numpy(),
                               a @ b[:, 0])
    bb = make_array((2, 3, 4), ember.float64, rng)
    cc = make_array((2, 4, 5), ember.float64, rng)
    np.testing.assert_allclose(ember.baddbmm(T(nan), T(bb), T(cc), beta=0, alpha=2).numpy(),
                               2 * (bb @ cc))
    np.testing.assert_allclose(ember.addbmm(T(inp), T(bb), T(cc), beta=3).numpy(),
                               3 * inp + (bb @ cc).sum(0))
    # integer beta/alpha; a float beta on an integer tensor truncates like PyTorch
    ti = ember.tensor([[1]])
    assert ember.addmm(ti, ember.tensor([[1, 2]]), ember.tensor([[1], [2]]), beta=1.5).item() == 6


def test_inplace_forms():
    rng = np.random.default_rng(8)
    inp = make_array((3, 5), ember.float32, rng)
    a, b = make_array((3, 4), ember.float32, rng), make_array((4, 5), ember.float32, rng)
    t = ember.tensor(inp)
    r = t.addmm_(ember.tensor(a), ember.tensor(b), alpha=2)
    assert r is t
    np.testing.assert_allclose(t.numpy(), inp + 2 * (a @ b), rtol=1e-5, atol=1e-5)
    # in-place on a transposed (non-contiguous) tensor
    t2 = ember.tensor(np.ascontiguousarray(inp.T)).transpose(0, 1)
    t2.addmm_(ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(t2.numpy(), inp + a @ b, rtol=1e-5, atol=1e-5)
    # the input also being an operand
    sq = make_array((4, 4), ember.float64, rng)
    ts = ember.tensor(sq)
    ts.addmm_(ts, ts)
    np.testing.assert_allclose(ts.numpy(), sq + sq @ sq)
    v = ember.tensor(inp[:, 0].copy())
    v.addmv_(ember.tensor(a), ember.tensor(b[:, 0]))
    np.testing.assert_allclose(v.numpy(), inp[:, 0] + a @ b[:, 0], rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match=r"\[addmm\] output with shape"):
        ember.tensor(inp[:, :1].copy()).addmm_(ember.tensor(a), ember.tensor(b))


def test_out_variants():
    rng = np.random.default_rng(9)
    a, b = make_array((3, 4), ember.float32, rng), make_array((4, 5), ember.float32, rng)
    out = ember.empty(0)
    r = ember.matmul(ember.tensor(a), ember.tensor(b), out=out)
    assert r is out and out.shape == (3, 5)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)
    # a non-contiguous out of the right shape keeps its strides
    out2 = ember.zeros(5, 3).transpose(0, 1)
    ember.mm(ember.tensor(a), ember.tensor(b), out=out2)
    np.testing.assert_allclose(out2.numpy(), a @ b, rtol=1e-5, atol=1e-5)
    assert out2.stride() == (1, 3)
    o = ember.empty(0)
    ember.addmm(ember.tensor(a[:, :1].copy()), ember.tensor(a), ember.tensor(b), out=o)
    np.testing.assert_allclose(o.numpy(), a[:, :1] + a @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        ember.mm(ember.tensor(a), ember.tensor(b), out=ember.empty(3, 5, dtype=ember.float64))


def test_rmatmul_and_operators():
    a, b = ember.ones(2, 3), ember.ones(3, 4)
    assert (a @ b).shape == (2, 4)
    assert b.__rmatmul__(a).shape == (2, 4)
    assert a.__matmul__(3) is NotImplemented
    with pytest.raises(TypeError):
        a @ 3


def test_threads_give_same_results():
    rng = np.random.default_rng(10)
    a = ember.tensor(make_array((300, 200), ember.float32, rng))
    b = ember.tensor(make_array((200, 100), ember.float32, rng))
    d = ember.tensor(make_array((64, 70), ember.float64, rng))
    i = ember.tensor(rng.integers(-5, 5, (60, 50)))
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        r1 = [(a @ b).numpy(), (d @ d.transpose(0, 1)).numpy(), (i @ i.transpose(0, 1)).numpy()]
        ember.set_num_threads(2)
        r2 = [(a @ b).numpy(), (d @ d.transpose(0, 1)).numpy(), (i @ i.transpose(0, 1)).numpy()]
    finally:
        ember.set_num_threads(saved)
    np.testing.assert_allclose(r1[0], r2[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r1[1], r2[1], rtol=1e-12)
    np.testing.assert_array_equal(r1[2], r2[2])


def test_tiny_float32_products_between_large_ones():
    # Note [Tiny products on one thread] (gemm_onednn.cpp): products of a few thousand
    # multiply-adds run oneDNN on the calling thread, which sets the thread's OpenMP team size to
    # 1 for the call. The results must be right, and the team size must come back: a large
    # product after it still agrees with the one-thread result, and get_num_threads is unchanged.
    rng = np.random.default_rng(12)
    tiny = [((128, 1), (1, 4)), ((1, 128), (128, 4)), ((4, 128), (128, 2)), ((3, 5), (5, 7)),
            ((32, 32), (32, 32))]
    big_a = rng.standard_normal((256, 300)).astype(np.float32)
    big_b = rng.standard_normal((300, 200)).astype(np.float32)
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        for sa, sb in tiny:
            a_np = rng.standard_normal(sa).astype(np.float32)
            b_np = rng.standard_normal(sb).astype(np.float32)
            got = (ember.tensor(a_np) @ ember.tensor(b_np)).numpy()
            want = a_np.astype(np.float64) @ b_np.astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            assert ember.get_num_threads() == 2
        two = (ember.tensor(big_a) @ ember.tensor(big_b)).numpy()
        ember.set_num_threads(1)
        one = (ember.tensor(big_a) @ ember.tensor(big_b)).numpy()
    finally:
        ember.set_num_threads(saved)
    np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("k", [512, 1536])
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_rows_2kib_apart(k, threads):
    # Note [Padded B rows] (gemm_onednn.cpp): below AVX-512, a B whose rows are an odd multiple
    # of 2 KiB apart is copied to padded rows first; the product, and a strided B (its rows
    # 2 KiB apart, not contiguous), must still be right.
    rng = np.random.default_rng(11)
    a_np = rng.standard_normal((96, k)).astype(np.float32)
    b_np = rng.standard_normal((k, 512)).astype(np.float32)
    wide = rng.standard_normal((k, 1024)).astype(np.float32)
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(threads)
        got = (ember.tensor(a_np) @ ember.tensor(b_np)).numpy()
        got_strided = (ember.tensor(a_np) @ ember.tensor(wide)[:, ::2]).numpy()
    finally:
        ember.set_num_threads(saved)
    want = a_np.astype(np.float64) @ b_np.astype(np.float64)
    want_strided = a_np.astype(np.float64) @ wide[:, ::2].astype(np.float64)
    scale = np.sqrt(k)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale)
    np.testing.assert_allclose(got_strided, want_strided, rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("threads", [1, 2])
def test_float32_large_row_major_b(threads):
    # Note [Padded B rows]: on Intel cores at the AVX-512 levels, a row-major B of 3 MiB or more
    # with at least 256 columns is copied to padded rows (B 768 x 1024 here; with a transposed A
    # it is not). Elsewhere the same products take the plain path; the answers must agree.
    rng = np.random.default_rng(12)
    a_np = rng.standard_normal((200, 768)).astype(np.float32)
    b_np = rng.standard_normal((768, 1024)).astype(np.float32)
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(threads)
        got = (ember.tensor(a_np) @ ember.tensor(b_np)).numpy()
        got_t = (ember.tensor(a_np.T.copy()).t() @ ember.tensor(b_np)).numpy()
        out = ember.empty(200, 1024)
        ember.matmul(ember.tensor(a_np), ember.tensor(b_np), out=out)
    finally:
        ember.set_num_threads(saved)
    want = a_np.astype(np.float64) @ b_np.astype(np.float64)
    atol = 1e-5 * np.sqrt(768)
    for result in (got, got_t, out.numpy()):
        np.testing.assert_allclose(result, want, rtol=0, atol=atol)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_transposed, m, n, k", [
    (True, 1200, 1300, 1100), (True, 1900, 800, 1100), (False, 600, 200, 2100),
    (False, 256, 700, 2100)])
def test_float32_gradient_products_large(threads, a_transposed, m, n, k):
    # Note [float32 weight gradients through OpenBLAS]: on Intel cores at the AVX-512 levels a
    # float32 A^T B with a large output and k >= 1024 (a weight gradient), and a row-major A @ B
    # with k >= 2048 and k >= 3n, n <= 768 (an input gradient), go to OpenBLAS's sgemm, split
    # over the threads along C's longer side (here in steps that leave a remainder; rows, then
    # columns). A and B may be slices of wider matrices, alpha and beta must be honoured, and the
    # product must match the other engines' on every CPU.
    rng = np.random.default_rng(13)
    wide_a = rng.standard_normal((k, m + 37) if a_transposed else (m, k + 5)).astype(np.float32)
    wide_b = rng.standard_normal((k, n + 9)).astype(np.float32)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    a_np = wide_a[:, :m].T if a_transposed else wide_a[:, :k]
    with num_threads(threads):
        a = ember.tensor(wide_a)[:, :m].t() if a_transposed else ember.tensor(wide_a)[:, :k]
        b = ember.tensor(wide_b)[:, :n]
        got = ember.mm(a, b).numpy()
        got_addmm = ember.addmm(ember.tensor(c0), a, b, beta=0.5, alpha=2.0).numpy()
    want = a_np.astype(np.float64) @ wide_b[:, :n].astype(np.float64)
    atol = 1e-5 * np.sqrt(k)
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    np.testing.assert_allclose(got_addmm, 0.5 * c0 + 2.0 * want, rtol=0, atol=3 * atol)


def test_linear_weight_gradient_large():
    # The weight gradient of a Linear (G^T X, Note [float32 weight gradients through OpenBLAS])
    # at a BERT feed-forward shape, against NumPy in float64.
    rng = np.random.default_rng(14)
    x_np = rng.standard_normal((1100, 768)).astype(np.float32)
    g_np = rng.standard_normal((1100, 2048)).astype(np.float32)
    lin = ember.nn.Linear(768, 2048)
    y = lin(ember.tensor(x_np))
    y.backward(ember.tensor(g_np))
    want = g_np.T.astype(np.float64) @ x_np.astype(np.float64)
    np.testing.assert_allclose(lin.weight.grad.numpy(), want, rtol=0, atol=1e-5 * np.sqrt(1100))
    np.testing.assert_allclose(lin.bias.grad.numpy(), g_np.sum(0, dtype=np.float64), atol=1e-3)


def test_concurrent_python_threads():
    # Bindings release the GIL around matmul; concurrent callers must still get right answers.
    rng = np.random.default_rng(11)
    mats = [make_array((64, 64), ember.float32, rng) for _ in range(4)]
    results = [None] * 4

    def work(k):
        t = ember.tensor(mats[k])
        for _ in range(20):
            r = t @ t
        results[k] = r.numpy()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for k in range(4):
        np.testing.assert_allclose(results[k], mats[k] @ mats[k], rtol=1e-4, atol=1e-4)


def test_concurrent_python_threads_gradient_products():
    # The products that go to OpenBLAS's sgemm on Intel AVX-512 cores (a weight gradient with
    # k >= 4096, an input gradient with a long reduction), from several Python threads at once,
    # each with Ember's two threads: every caller must get its own right answer.
    rng = np.random.default_rng(16)
    gs = [rng.standard_normal((4096, 768)).astype(np.float32) for _ in range(3)]
    xs = [rng.standard_normal((4096, 256)).astype(np.float32) for _ in range(3)]
    ws = [rng.standard_normal((768, 256)).astype(np.float32) for _ in range(3)]
    results = [None] * 3

    def work(i):
        g, x, w = ember.tensor(gs[i]), ember.tensor(xs[i]), ember.tensor(ws[i])
        for _ in range(2):
            dw = ember.mm(g.t(), x)
            dx = ember.mm(ember.tensor(xs[i][:, :256].T.copy()), ember.tensor(gs[i][:, :256]))
        results[i] = (dw.numpy(), dx.numpy(), (g[:, :256] @ w.t()).numpy())

    with num_threads(2):
        threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    for i in range(3):
        g, x, w = (a.astype(np.float64) for a in (gs[i], xs[i], ws[i]))
        dw, dx, y = results[i]
        np.testing.assert_allclose(dw, g.T @ x, rtol=0, atol=1e-5 * np.sqrt(4096))
        np.testing.assert_allclose(dx, x[:, :256].T @ g[:, :256], rtol=0, atol=1e-5 * 64)
        np.testing.assert_allclose(y, g[:, :256] @ w.T, rtol=0, atol=1e-5 * 16)


def test_many_shapes_hit_the_primitive_cache():
    # Shapes beyond the cache capacity evict old primitives; results stay right.
    rng = np.random.default_rng(12)
    for n in range(1, 600, 1):
        if n % 97 and n > 20:
            continue
        a = make_array((n, 3), ember.float32, rng)
        b = make_array((3, 2), ember.float32, rng)
        np.testing.assert_allclose((ember.tensor(a) @ ember.tensor(b)).numpy(), a @ b,
                                   rtol=1e-5, atol=1e-5)


# ---- errors ---------------------------------------------------------------------------------


def test_shape_errors():
    f = ember.ones
    with pytest.raises(RuntimeError, match=r"\[matmul\] mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 4x5\)"):
        ember.matmul(f(2, 3), f(4, 5))
    with pytest.raises(RuntimeError, match=r"\[mm\] mat1 and mat2 shapes cannot be multiplied"):
        ember.mm(f(2, 3), f(4, 5))
    with pytest.raises(RuntimeError, match=r"\[matmul\] mat1 and mat2 shapes cannot be multiplied "
                                           r"\(1x3 and 4x5\)"):
        ember.matmul(f(3), f(4, 5))
    with pytest.raises(RuntimeError, match=r"\[matmul\] size mismatch, got input \(2\), mat "
                                           r"\(2x3\), vec \(4\)"):
        ember.matmul(f(2, 3), f(4))
    with pytest.raises(RuntimeError, match=r"\[matmul\] inconsistent tensor size"):
        ember.matmul(f(3), f(4))
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.matmul(f(2, 2, 3), f(3, 3, 5))
    with pytest.raises(RuntimeError, match=r"need to be at least 1D, but they are 0D and 1D"):
        ember.matmul(f(()), f(4))
    with pytest.raises(RuntimeError, match=r"\[mm\] self must be a matrix, got 3-D tensor"):
        ember.mm(f(2, 3, 4), f(3, 5))
    with pytest.raises(RuntimeError, match=r"\[mm\] mat2 must be a matrix, got 1-D tensor"):
        ember.mm(f(2, 3), f(3))
    with pytest.raises(RuntimeError, match=r"\[bmm\] batch1 must be a 3D tensor"):
        ember.bmm(f(3, 4), f(3, 4, 6))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[2, 4\] but got: \[2, 5\]"):
        ember.bmm(f(2, 3, 4), f(2, 5, 6))
    with pytest.raises(RuntimeError, match=r"\[mv\] vector \+ matrix @ vector expected"):
        ember.mv(f(2, 3), f(3, 1))
    with pytest.raises(RuntimeError, match=r"\[dot\] 1D tensors expected, but got 2D and 1D"):
        ember.dot(f(2, 2), f(3))
    with pytest.raises(RuntimeError, match=r"\[addmm\] The expanded size|\[expand\]"):
        ember.addmm(f(2, 2), f(2, 3), f(3, 5))
    with pytest.raises(RuntimeError, match=r"\[addbmm\] batch1 and batch2 must have same number "
                                           r"of batches, got 2 and 3"):
        ember.addbmm(f(2, 5), f(2, 2, 3), f(3, 3, 5))
    with pytest.raises(RuntimeError, match=r"\[addmv\] size mismatch"):
        ember.addmv(f(3), f(2, 3), f(3))
    with pytest.raises(RuntimeError, match=r"\[inner\] inner\(\) the last dimension must match"):
        ember.inner(f(2, 3), f(4, 4))


def test_dtype_errors():
    f = ember.ones
    with pytest.raises(RuntimeError, match=r"\[mm\] expected m1 and m2 to have the same dtype, "
                                           r"but got: float != double"):
        ember.mm(f(2, 3), f(3, 5, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"\[matmul\] expected m1 and m2 to have the same "
                                           r"dtype, but got: long int != int"):
        ember.matmul(f(2, 3, dtype=ember.int64), f(3, 5, dtype=ember.int32))
    with pytest.raises(RuntimeError, match=r"\[bmm\] expected scalar type Float but found Double"):
        ember.bmm(f(2, 3, 4), f(2, 4, 6, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"\[dot\] dot : expected both vectors to have same "
                                           r"dtype, but found Float and Double"):
        ember.dot(f(3), f(3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"\[addmm\] self and mat2 must have the same dtype, "
                                           r"but got Double and Float"):
        ember.addmm(f(2, 5, dtype=ember.float64), f(2, 3), f(3, 5))
    with pytest.raises(NotImplementedError, match=r"not implemented for 'Bool'"):
        ember.matmul(f(2, 3, dtype=ember.bool), f(3, 2, dtype=ember.bool))
    with pytest.raises(NotImplementedError, match=r"not implemented for 'Bool'"):
        ember.dot(f(3, dtype=ember.bool), f(3, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="value cannot be converted to type float"):
        ember.addmm(f(1, 1), f(1, 2), f(2, 1), alpha=1j)
    # An empty bool product is allowed, as in PyTorch.
    empty = ember.mm(f(2, 0, dtype=ember.bool), f(0, 3, dtype=ember.bool))
    assert empty.tolist() == [[False] * 3] * 2


# F.linear with a bias runs one GEMM whose epilogue adds the bias (float32, CPU, unit column
# strides, two rows or more); anything else goes through addmm. Both must equal the same NumPy
# reference, whatever the layout.
@pytest.mark.parametrize("rows,k,n", [(2, 3, 5), (7, 33, 17), (130, 64, 96), (4096, 256, 1024)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed input", "strided weight",
                                    "strided bias", "3-d input", "expanded input",
                                    "expanded weight", "float64"])
def test_linear_bias_fused_and_addmm_routes_agree_with_numpy(rows, k, n, layout):
    rng = np.random.default_rng(rows + k + n)
    dtype = np.float64 if layout == "float64" else np.float32
    x = rng.standard_normal((rows, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    want = x.astype(np.float64) @ w.T.astype(np.float64) + b
    ex, ew, eb = ember.tensor(x), ember.tensor(w), ember.tensor(b)
    if layout == "transposed input":
        ex = ember.tensor(np.ascontiguousarray(x.T)).t()
    elif layout == "strided weight":
        ew = ember.tensor(np.repeat(w, 2, axis=1))[:, ::2]
    elif layout == "strided bias":
        eb = ember.tensor(np.repeat(b, 2))[::2]
    elif layout == "3-d input" and rows % 2 == 0:
        ex = ex.reshape(2, rows // 2, k)
    elif layout == "expanded input":  # row stride 0: every row the same
        x[:] = x[0]
        want = x.astype(np.float64) @ w.T.astype(np.float64) + b
        ex = ember.tensor(x[0]).expand(rows, k)
    elif layout == "expanded weight":
        w[:] = w[0]
        want = x.astype(np.float64) @ w.T.astype(np.float64) + b
        ew = ember.tensor(w[0]).expand(n, k)
    got = ember.nn.functional.linear(ex, ew, eb).numpy().reshape(rows, n)
    tol = 1e-12 if dtype == np.float64 else 2e-5 * max(1.0, np.sqrt(k))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_linear_bias_fused_route_propagates_nan_and_inf():
    x = np.ones((8, 16), np.float32)
    w = np.ones((4, 16), np.float32)
    b = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    got = ember.nn.functional.linear(ember.tensor(x), ember.tensor(w), ember.tensor(b)).numpy()
    assert np.isnan(got[:, 0]).all() and (got[:, 1] == np.inf).all()
    assert (got[:, 2] == -np.inf).all() and (got[:, 3] == 17).all()


def test_linear_bias_fused_route_with_threads_and_autograd():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 40)).astype(np.float32)
    w = rng.standard_normal((70, 40)).astype(np.float32)
    b = rng.standard_normal(70).astype(np.float32)
    want = x @ w.T + b
    for threads in (1, 2):
        with num_threads(threads):
            ex = ember.tensor(x, requires_grad=True)
            ew, eb = ember.tensor(w, requires_grad=True), ember.tensor(b, requires_grad=True)
            y = ember.nn.functional.linear(ex, ew, eb)
            np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-4, atol=1e-4)
            y.sum().backward()
            np.testing.assert_allclose(eb.grad.numpy(), np.full(70, 300.0), rtol=1e-6)
            np.testing.assert_allclose(ex.grad.numpy(), np.tile(w.sum(0), (300, 1)), rtol=1e-4,
                                       atol=1e-4)
