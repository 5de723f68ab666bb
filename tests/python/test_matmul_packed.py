"""Ember's packed AVX-512 float32 GEMM (Note [A packed float32 GEMM for wide products],
kernels/cpu/gemm_packed_kernels.cpp). By default ("auto") it takes some wide products on Intel
cores; "always" sends it every float32 product it can lay out on any AVX-512 core, so that these
tests reach its edges (row and column remainders, several k blocks and row blocks, strided
operands, the epilogue) wherever the CPU allows. Below AVX-512 it declines, and the same tests
check the other engines' answers."""

import contextlib

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from thread_count import num_threads


@contextlib.contextmanager
def _packed_mode(mode):
    saved = ember._C._get_packed_sgemm_mode()
    ember._C._set_packed_sgemm_mode(mode)
    try:
        yield
    finally:
        ember._C._set_packed_sgemm_mode(saved)


def _atol(k):
    return 2e-5 * np.sqrt(k) * 4  # float32 sums of k products of standard normals


# (m, k, n): a single element; remainders of the 14-row and 32-column tiles and of the 16-wide
# packing transposes; k over 1024 (several k blocks); a row block of 1024 rows plus a remainder
# (k = 1024 makes the packed A's row block 1024 rows).
SHAPES = [(1, 1, 1), (13, 5, 7), (15, 17, 33), (300, 770, 1000), (45, 2100, 70), (1100, 1024, 40)]


@pytest.mark.parametrize("mode", ["always", "auto"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_linear_and_mm_match_float64(mode, threads, m, k, n):
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    with _packed_mode(mode), num_threads(threads):
        ex, ew, eb = ember.tensor(x), ember.tensor(w), ember.tensor(bias)
        linear = F.linear(ex, ew, eb).numpy()  # A @ W^T, beta 1 over the broadcast bias
        linear_nobias = F.linear(ex, ew).numpy()
        nn = ember.mm(ex, ember.tensor(b)).numpy()  # both row-major
    x64 = x.astype(np.float64)
    atol = _atol(k)
    np.testing.assert_allclose(linear, x64 @ w.T.astype(np.float64) + bias, rtol=0, atol=atol)
    np.testing.assert_allclose(linear_nobias, x64 @ w.T.astype(np.float64), rtol=0, atol=atol)
    np.testing.assert_allclose(nn, x64 @ b.astype(np.float64), rtol=0, atol=atol)


@pytest.mark.parametrize("threads", [1, 2])
def test_strided_operands_and_out(threads):
    # A and W slices of wider matrices (row strides beyond k), an out= slice; alpha and beta other
    # than 0 and 1 leave the packed kernel and must still be right.
    rng = np.random.default_rng(5)
    m, k, n = 290, 300, 800
    wide_x = rng.standard_normal((m, k + 11)).astype(np.float32)
    wide_w = rng.standard_normal((n, k + 3)).astype(np.float32)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    with _packed_mode("always"), num_threads(threads):
        x = ember.tensor(wide_x)[:, :k]
        w = ember.tensor(wide_w)[:, :k]
        got = F.linear(x, w).numpy()
        out = ember.zeros(m, n + 6)
        ember.mm(x, w.t(), out=out[:, :n])
        scaled = ember.addmm(ember.tensor(c0), x, w.t(), beta=0.5, alpha=2.0).numpy()
    want = wide_x[:, :k].astype(np.float64) @ wide_w[:, :k].T.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=0, atol=_atol(k))
    np.testing.assert_allclose(out.numpy()[:, :n], want, rtol=0, atol=_atol(k))
    np.testing.assert_array_equal(out.numpy()[:, n:], 0)
    np.testing.assert_allclose(scaled, 0.5 * c0 + 2.0 * want, rtol=0, atol=2 * _atol(k))


def test_results_do_not_depend_on_thread_count():
    # Every element is summed in the same order whichever way the threads split C.
    rng = np.random.default_rng(6)
    x = ember.tensor(rng.standard_normal((700, 900)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((2200, 900)).astype(np.float32))
    tall = ember.tensor(rng.standard_normal((3000, 600)).astype(np.float32))
    narrow = ember.tensor(rng.standard_normal((600, 300)).astype(np.float32))
    with _packed_mode("always"):
        with num_threads(1):
            one = [F.linear(x, w).numpy(), ember.mm(tall, narrow).numpy()]
        with num_threads(2):
            two = [F.linear(x, w).numpy(), ember.mm(tall, narrow).numpy()]
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_nan_and_inf_propagate_and_beta_zero_ignores_out():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((40, 64)).astype(np.float32)
    x[3, 5] = np.nan
    x[7, 9] = np.inf
    w = rng.standard_normal((64, 50)).astype(np.float32)
    with _packed_mode("always"):
        out = ember.full((40, 50), float("nan"))
        ember.mm(ember.tensor(x), ember.tensor(w), out=out)
    got = out.numpy()
    with np.errstate(invalid="ignore"):
        want = x.astype(np.float64) @ w.astype(np.float64)
    assert np.isnan(got[3]).all()
    np.testing.assert_array_equal(np.isinf(got[7]), np.isinf(want[7]))
    rest = [i for i in range(40) if i not in (3, 7)]
    np.testing.assert_allclose(got[rest], want[rest], rtol=0, atol=_atol(64))


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("padded", [False, True])
def test_encoder_fastpath_epilogue(activation, norm_first, bias, padded):
    # The fastpath's linears fuse bias, activation and residual into the GEMM: through the packed
    # kernel ("always") they must match oneDNN's epilogue ("off") and the regular path.
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(64, 4, 96, dropout=0.0, activation=activation,
                                             batch_first=True, norm_first=norm_first, bias=bias)
    encoder = ember.nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval()
    rng = np.random.default_rng(8)
    x = ember.tensor(rng.standard_normal((3, 37, 64)).astype(np.float32))
    mask = None
    if padded:
        m = np.zeros((3, 37), dtype=bool)
        m[0, 30:] = True
        m[2, :5] = True
        mask = ember.tensor(m)
    results = {}
    with ember.no_grad():
        assert ember.nn.why_not_fastpath(encoder.layers[0], x, src_key_padding_mask=mask) == ""
        for mode in ("always", "off"):
            with _packed_mode(mode):
                results[mode] = encoder(x, src_key_padding_mask=mask).numpy()
        ember.backends.mha.set_fastpath_enabled(False)
        try:
            regular = encoder(x, src_key_padding_mask=mask).numpy()
        finally:
            ember.backends.mha.set_fastpath_enabled(True)
    np.testing.assert_allclose(results["always"], results["off"], rtol=0, atol=2e-5)
    keep = ~mask.numpy() if padded else np.ones((3, 37), dtype=bool)
    np.testing.assert_allclose(results["always"][keep], regular[keep], rtol=0, atol=2e-5)


def test_mode_switch():
    with _packed_mode("off"):
        assert ember._C._get_packed_sgemm_mode() == "off"
    assert ember._C._get_packed_sgemm_mode() == "auto"
    with pytest.raises(ValueError, match="'off', 'auto' or 'always'"):
        ember._C._set_packed_sgemm_mode("fast")


def test_concurrent_python_threads():
    # Each worker thread packs into its own scratch: three Python threads running products at
    # once (the GIL is released around each) must each get the serial answer.
    import threading

    rng = np.random.default_rng(9)
    xs = [ember.tensor(rng.standard_normal((300, 500)).astype(np.float32)) for _ in range(3)]
    w = ember.tensor(rng.standard_normal((900, 500)).astype(np.float32))
    with _packed_mode("always"), num_threads(2):
        want = [F.linear(x, w).numpy() for x in xs]
        got = [None] * 3
        errors = []

        def work(i):
            try:
                for _ in range(5):
                    got[i] = F.linear(xs[i], w).numpy()
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
