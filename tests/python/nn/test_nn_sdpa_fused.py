"""The fused scaled_dot_product_attention kernel (FLASH_ATTENTION on the CPU): NumPy references
over block-edge sizes, masks of every kind, causality, grouped heads and layouts; agreement with
the math backend in values and gradients; float64 gradcheck; sdpa_kernel's choice; PyTorch
parity where it is installed."""

import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.attention import SDPBackend, sdpa_kernel


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def np_sdpa(q, k, v, bias=None, causal=False, scale=None):
    """Reference in float64; q (..., Hq, L, E), k/v (..., Hk, S, *): key heads repeat."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    if q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = np.repeat(k, rep, axis=-3)
        v = np.repeat(v, rep, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), bool)), s, -np.inf)
    if bias is not None:
        s = np.where(bias, s, -np.inf) if bias.dtype == bool else s + bias
    m = np.max(s, -1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(s - m)
    tot = e.sum(-1, keepdims=True)
    return (e / np.where(tot == 0, 1, tot)) @ v


def fused(*args, **kwargs):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(*args, **kwargs)


def math_form(*args, **kwargs):
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(*args, **kwargs)


def tensors(*arrays, dtype=ember.float64, grad=False):
    return [ember.tensor(a, dtype=dtype, requires_grad=grad) for a in arrays]


# L and S around the kernel's blocks (64 queries; 128 keys in the backward, 1024 in the forward)
# and the vector widths.
@pytest.mark.parametrize("L,S", [(1, 1), (3, 5), (64, 128), (65, 129), (130, 300), (7, 257)])
@pytest.mark.parametrize("E,Ev", [(8, 8), (5, 3), (64, 80)])
def test_fused_matches_numpy(L, S, E, Ev):
    q, k, v = rand(2, 3, L, E, seed=1), rand(2, 3, S, E, seed=2), rand(2, 3, S, Ev, seed=3)
    for dtype, tol in ((ember.float64, 1e-12), (ember.float32, 2e-5)):
        got = fused(*tensors(q, k, v, dtype=dtype)).numpy()
        np.testing.assert_allclose(got, np_sdpa(q, k, v), rtol=tol, atol=tol)


@pytest.mark.parametrize("L,S", [(9, 9), (70, 200), (200, 70), (1, 130)])
def test_fused_causal_is_top_left_aligned(L, S):
    q, k, v = rand(2, 4, L, 16, seed=4), rand(2, 4, S, 16, seed=5), rand(2, 4, S, 16, seed=6)
    got = fused(*tensors(q, k, v), is_causal=True).numpy()
    np.testing.assert_allclose(got, np_sdpa(q, k, v, causal=True), rtol=1e-12, atol=1e-12)


# Causal blocks on the diagonal skip the score and value tiles the mask hides (and the
# backward leaves dP unwritten there). Sizes put the diagonal inside, at the edge of and past
# the tiles and blocks; q, k and v are strided views of one packed projection, as in a model,
# and E = 20 is not a whole number of vectors (the K transpose's scalar remainder).
@pytest.mark.parametrize("L,S", [(256, 256), (300, 200), (200, 300), (129, 129), (33, 70),
                                 (1, 64)])
@pytest.mark.parametrize("E", [64, 20])
def test_causal_blocks_match_the_math_form_with_gradients(L, S, E):
    T = max(L, S)
    packed = rand(2, T, 3, 3, E, seed=41)
    g = rand(2, 3, L, E, seed=42)
    for dtype, tol in ((ember.float64, 1e-10), (ember.float32, 3e-5)):
        grads, outs = [], []
        for run in (fused, math_form):
            base = ember.tensor(packed, dtype=dtype, requires_grad=True)
            parts = base.permute(2, 0, 3, 1, 4)  # (3, N, H, T, E) views
            q, k, v = parts[0][:, :, :L], parts[1][:, :, :S], parts[2][:, :, :S]
            out = run(q, k, v, is_causal=True)
            out.backward(ember.tensor(g, dtype=dtype))
            outs.append(out.detach().numpy())
            grads.append(base.grad.numpy())
        np.testing.assert_allclose(outs[0], np_sdpa(packed.transpose(2, 0, 3, 1, 4)[0][:, :, :L],
                                                    packed.transpose(2, 0, 3, 1, 4)[1][:, :, :S],
                                                    packed.transpose(2, 0, 3, 1, 4)[2][:, :, :S],
                                                    causal=True), rtol=tol, atol=tol)
        np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)
        assert np.isfinite(grads[0]).all()


def test_fused_masks_of_every_kind():
    N, H, L, S, E = 3, 2, 37, 150, 16
    q, k, v = rand(N, H, L, E, seed=7), rand(N, H, S, E, seed=8), rand(N, H, S, E, seed=9)
    rng = np.random.default_rng(10)
    lengths = rng.integers(1, S + 1, N)
    masks = {
        "bool 2-D": rng.random((L, S)) > 0.3,
        "float 4-D": rng.standard_normal((N, H, L, S)),
        "float broadcast (1, 1, L, S)": rng.standard_normal((1, 1, L, S)),
        "key padding (N, 1, 1, S)": np.arange(S)[None, None, None, :] < lengths[:, None, None,
                                                                                 None],
        "bool 3-D per head": rng.random((H, L, S)) > 0.5,
    }
    for name, mask in masks.items():
        m = ember.tensor(mask) if mask.dtype == bool else ember.tensor(mask, dtype=ember.float64)
        got = fused(*tensors(q, k, v), attn_mask=m).numpy()
        np.testing.assert_allclose(got, np_sdpa(q, k, v, mask), rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def test_fully_masked_rows_give_zeros_and_zero_gradients():
    q, k, v = rand(1, 2, 6, 8, seed=11), rand(1, 2, 9, 8, seed=12), rand(1, 2, 9, 8, seed=13)
    mask = np.ones((6, 9), bool)
    mask[2] = False  # query 2 sees no key
    qt, kt, vt = tensors(q, k, v, grad=True)
    out = fused(qt, kt, vt, attn_mask=ember.tensor(mask))
    got = out.detach().numpy()
    assert np.all(got[:, :, 2] == 0) and np.isfinite(got).all()
    np.testing.assert_allclose(got, np_sdpa(q, k, v, mask), rtol=1e-12, atol=1e-12)
    out.sum().backward()
    assert np.all(qt.grad.numpy()[:, :, 2] == 0)
    assert all(np.isfinite(t.grad.numpy()).all() for t in (qt, kt, vt))
    # No keys at all: zeros, as the math form.
    empty_k = ember.zeros(1, 2, 0, 8, dtype=ember.float64)
    assert np.all(fused(qt.detach(), empty_k, empty_k).numpy() == 0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(3, 1023), (66, 1025), (65, 2100), (600, 600)])
def test_forward_key_blocks_with_and_without_fused_exp(L, S, causal):
    # The forward visits keys in blocks of 512, and takes the softmax's exp inside the score
    # tiles when nothing changes the scores after the product (a full block, no bias, not
    # crossing the causal diagonal); other blocks store their scores and pass over them. Both
    # kinds meet in one row here, with a float mask too.
    q, k, v = rand(1, 2, L, 64, seed=21), rand(1, 2, S, 64, seed=22), rand(1, 2, S, 16, seed=23)
    bias = rand(1, 1, L, S, seed=24)
    for dtype, tol in ((ember.float64, 1e-12), (ember.float32, 2e-5)):
        got = fused(*tensors(q, k, v, dtype=dtype), is_causal=causal).numpy()
        np.testing.assert_allclose(got, np_sdpa(q, k, v, causal=causal), rtol=tol, atol=tol)
        if not causal:
            got = fused(*tensors(q, k, v, dtype=dtype), attn_mask=ember.tensor(bias, dtype=dtype))
            np.testing.assert_allclose(got.numpy(), np_sdpa(q, k, v, bias), rtol=tol, atol=tol)


def stale_reference_inputs(pattern, L=70, S=1100, E=16):
    rng = np.random.default_rng(50)
    q, k, v = (rng.standard_normal(shape) for shape in ((1, 2, L, E), (1, 2, S, E), (1, 2, S, 8)))
    q[..., 0] = np.abs(q[..., 0]) + 2.0  # a positive first component: k[..., 0] steers the scores
    if pattern == "rising":
        k[..., 0] = np.linspace(-40.0, 40.0, S)
    elif pattern == "falling":
        k[..., 0] = np.linspace(40.0, -40.0, S)
    elif pattern == "wide":
        q *= 5.0
    elif pattern == "neg_inf_keys":  # keys whose every score is -inf, from an infinite component
        k[:, :, :150, 0] = -np.inf  # all of the first tiles of every row
        k[:, :, 600:700, 0] = -np.inf  # and a stretch of the second block
    return q, k, v


# Note [Stale reference]: the forward's score tiles take 2^(s - m) against the reference m they
# find and raise it when a score passes it by more than the headroom; the backward's take P from
# lse. Scores here rise along the keys by 40 to 100 (in base 2), so the reference rises several
# times within a block and across blocks, or fall (it never rises after the first tile), or
# spread widely; or a row's first tiles are all -inf.
@pytest.mark.parametrize("pattern", ["rising", "falling", "wide", "neg_inf_keys"])
def test_stale_reference_softmax(pattern):
    q, k, v = stale_reference_inputs(pattern)
    g = rand(1, 2, q.shape[2], 8, seed=51)
    ref = np_sdpa(q, k, v)
    assert np.isfinite(ref).all()
    # float32 gradients: the fused backward takes the softmax's row term as rowsum(dO * O)
    # (FlashAttention-2's), not rowsum(P * dP), so its dS sums to a rounding error rather than
    # to 0; dq = dS K then carries that error times K's common component (up to 40 here): 1e-4
    # against the math form's 5e-6, with or without the tiles' exp.
    for dtype, tol, grad_tol in ((ember.float64, 1e-10, 1e-10), (ember.float32, 1e-4, 3e-4)):
        runs = []
        for run in (fused, math_form):
            ts = tensors(q, k, v, dtype=dtype, grad=True)
            out = run(*ts)
            out.backward(ember.tensor(g, dtype=dtype))
            runs.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
        np.testing.assert_allclose(runs[0][0], ref, rtol=tol, atol=tol)
        np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=tol, atol=tol)
        # dq = dS K takes 0 * -inf where keys are infinite: NaN there in both forms.
        for a, b in zip(runs[0][1:], runs[1][1:]):
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(a, b, rtol=grad_tol,
                                       atol=grad_tol * max(1.0, np.nanmax(np.abs(b))))


def test_nan_scores_give_nan_rows_as_the_math_form():
    q, k, v = rand(1, 1, 70, 16, seed=25), rand(1, 1, 1200, 16, seed=26), rand(1, 1, 1200, 8,
                                                                             seed=27)
    q[0, 0, 3, 5] = np.nan  # query 3's scores are all NaN
    bias = np.zeros((70, 1200))
    bias[10] = -np.inf  # query 10 sees no key ...
    bias[10, 1100] = np.nan  # ... but one NaN score, in the second key block
    for dtype in (ember.float64, ember.float32):
        for mask in (None, bias):
            extra = {} if mask is None else {"attn_mask": ember.tensor(mask, dtype=dtype)}
            got = fused(*tensors(q, k, v, dtype=dtype), **extra).numpy()
            ref = math_form(*tensors(q, k, v, dtype=dtype), **extra).numpy()
            nan_rows = [3] if mask is None else [3, 10]
            assert np.isnan(got[0, 0, nan_rows]).all()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
            keep = np.ones(70, bool)
            keep[nan_rows] = False
            np.testing.assert_allclose(got[0, 0, keep], ref[0, 0, keep], rtol=2e-5, atol=2e-5)


def test_grouped_query_heads_and_broadcast_head():
    q, k, v = rand(2, 6, 20, 8, seed=14), rand(2, 2, 30, 8, seed=15), rand(2, 2, 30, 4, seed=16)
    got = fused(*tensors(q, k, v), enable_gqa=True).numpy()
    np.testing.assert_allclose(got, np_sdpa(q, k, v), rtol=1e-12, atol=1e-12)
    k1, v1 = rand(2, 1, 30, 8, seed=17), rand(2, 1, 30, 4, seed=18)
    got = fused(*tensors(q, k1, v1)).numpy()
    np.testing.assert_allclose(got, np_sdpa(q, k1, v1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(12, 8), (4, 12, 8), (2, 3, 2, 12, 8)])
def test_other_ranks(shape):
    q = rand(*shape, seed=19)
    kv_shape = shape[:-2] + (15, 8)
    k, v = rand(*kv_shape, seed=20), rand(*kv_shape, seed=21)
    got = fused(*tensors(q, k, v))
    assert tuple(got.shape) == shape
    np.testing.assert_allclose(got.numpy(), np_sdpa(q, k, v), rtol=1e-12, atol=1e-12)


def test_strided_layouts():
    # (N, L, H, E) storage viewed as (N, H, L, E), as MultiheadAttention's heads are.
    q, k, v = rand(2, 33, 4, 16, seed=22), rand(2, 50, 4, 16, seed=23), rand(2, 50, 4, 16, seed=24)
    qt, kt, vt = (t.transpose(1, 2) for t in tensors(q, k, v))
    ref = np_sdpa(*(np.swapaxes(a, 1, 2) for a in (q, k, v)))
    np.testing.assert_allclose(fused(qt, kt, vt).numpy(), ref, rtol=1e-12, atol=1e-12)
    # A last dim that is not contiguous is copied first.
    wide = rand(2, 4, 33, 32, seed=25)
    qs = ember.tensor(wide)[..., ::2]
    ref = np_sdpa(wide[..., ::2], np.swapaxes(k, 1, 2), np.swapaxes(v, 1, 2))
    np.testing.assert_allclose(fused(qs, kt, vt).numpy(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [ember.bfloat16, ember.float16])
def test_half_precision_computes_in_float32(dtype):
    q, k, v = rand(1, 2, 10, 16, seed=26), rand(1, 2, 12, 16, seed=27), rand(1, 2, 12, 16, seed=28)
    got = fused(*tensors(q, k, v, dtype=dtype))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.float().numpy(), np_sdpa(q, k, v), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("case", ["plain", "causal", "mask", "gqa", "scale"])
def test_fused_gradcheck(case):
    q, k, v = rand(1, 2, 5, 4, seed=29), rand(1, 2, 7, 4, seed=30), rand(1, 2, 7, 3, seed=31)
    kwargs = {}
    if case == "causal":
        q = rand(1, 2, 7, 4, seed=29)
        kwargs["is_causal"] = True
    elif case == "mask":
        kwargs["attn_mask"] = ember.tensor(rand(5, 7, seed=32))
    elif case == "gqa":
        q = rand(1, 4, 5, 4, seed=29)
        kwargs["enable_gqa"] = True
    elif case == "scale":
        kwargs["scale"] = 0.3
    inputs = tensors(q, k, v, grad=True)
    assert gradcheck(lambda a, b, c: fused(a, b, c, **kwargs), inputs)


def test_fused_and_math_gradients_agree():
    q, k, v = rand(2, 3, 70, 16, seed=33), rand(2, 3, 140, 16, seed=34), rand(2, 3, 140, 8,
                                                                             seed=35)
    g = rand(2, 3, 70, 8, seed=36)
    for kwargs in ({}, {"is_causal": True},
                   {"attn_mask": ember.tensor(rand(70, 140, seed=37) > -0.5)}):
        grads = []
        for run in (fused, math_form):
            ts = tensors(q, k, v, dtype=ember.float32, grad=True)
            run(*ts, **kwargs).backward(ember.tensor(g, dtype=ember.float32))
            grads.append([t.grad.numpy() for t in ts])
        for a, b in zip(*grads):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype,tol", [(ember.float64, 1e-10), (ember.float32, 1e-4)])
def test_every_partial_register_tile(dtype, tol):
    # The micro-kernels cover rows in tiles of 6 or 8 (by ISA level) and run the remainder as
    # one tile of its own height: query counts 1..17 reach every remainder on every level, in
    # the forward (rows = queries) and in the backward's transposed products (rows = keys).
    for L in range(1, 18):
        S = 2 * L + 1
        q, k, v = rand(1, 2, L, 8, seed=L), rand(1, 2, S, 8, seed=L + 1), rand(1, 2, S, 16,
                                                                               seed=L + 2)
        g = rand(1, 2, L, 16, seed=L + 3)
        grads = []
        for run in (fused, math_form):
            ts = tensors(q, k, v, dtype=dtype, grad=True)
            out = run(*ts)
            out.backward(ember.tensor(g, dtype=dtype))
            grads.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
        np.testing.assert_allclose(grads[0][0], np_sdpa(q, k, v), rtol=tol, atol=tol)
        for a, b in zip(*grads):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_fused_node_and_double_backward():
    ts = tensors(rand(1, 1, 3, 4), rand(1, 1, 3, 4, seed=1), rand(1, 1, 3, 4, seed=2), grad=True)
    out = fused(*ts)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    (gq,) = ember.autograd.grad(out.sum(), ts[0], create_graph=False)
    assert gq.shape == ts[0].shape
    # Double backward: the node's formula in public ops (PyTorch's flash backward raises here).
    assert gradgradcheck(lambda a, b, c: fused(a, b, c, is_causal=True), ts)
    q6 = ember.tensor(rand(1, 4, 3, 4, seed=5), requires_grad=True)
    mask = ember.tensor(np.array([[True, False, True], [False, False, False], [True, True, True]]))
    assert gradgradcheck(lambda a, b, c: fused(a, b, c, attn_mask=mask, enable_gqa=True),
                         (q6, ts[1], ts[2]))


def test_sdpa_kernel_chooses_and_restores():
    q = ember.randn(1, 2, 4, 8, requires_grad=True)
    assert "Flash" in F.scaled_dot_product_attention(q, q, q).grad_fn.name()
    with sdpa_kernel(SDPBackend.MATH):
        assert "Flash" not in F.scaled_dot_product_attention(q, q, q).grad_fn.name()
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
            assert "Flash" in F.scaled_dot_product_attention(q, q, q).grad_fn.name()
        assert not ember.backends.cuda.flash_sdp_enabled()
    assert ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
    # Dropout needs the math form; with only the fused kernel allowed that is an error saying why.
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        with pytest.raises(RuntimeError, match="No available kernel.*dropout"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q)
    with pytest.raises(AssertionError, match="SDPBackend"):
        with sdpa_kernel("math"):
            pass


def test_fused_op_errors_name_shapes():
    op = ember._C._nn._scaled_dot_product_flash_attention_for_cpu
    q = ember.randn(1, 2, 3, 4)
    with pytest.raises(RuntimeError, match=r"4-D.*\(2, 3, 4\)"):
        op(ember.randn(2, 3, 4), q, q)
    with pytest.raises(RuntimeError, match="one embedding size"):
        op(q, ember.randn(1, 2, 3, 5), ember.randn(1, 2, 3, 5))
    with pytest.raises(RuntimeError, match="multiple of the key"):
        op(ember.randn(1, 3, 3, 4), q, q)
    with pytest.raises(RuntimeError, match="dropout"):
        op(q, q, q, 0.1)
    with pytest.raises(RuntimeError, match="is_causal"):
        op(q, q, q, 0.0, True, attn_mask=ember.zeros(3, 3))
    with pytest.raises(RuntimeError, match="attn_mask dtype"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.zeros(3, 3, dtype=ember.float64))


def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    q, k, v = rand(2, 4, 90, 32, seed=40), rand(2, 4, 200, 32, seed=41), rand(2, 4, 200, 24,
                                                                              seed=42)
    mask = np.random.default_rng(43).random((90, 200)) > 0.2
    for kwargs_e, kwargs_t in (({}, {}), ({"is_causal": True}, {"is_causal": True}),
                               ({"attn_mask": ember.tensor(mask)},
                                {"attn_mask": torch.tensor(mask)})):
        got = fused(*tensors(q, k, v, dtype=ember.float32), **kwargs_e).numpy()
        want = torch.nn.functional.scaled_dot_product_attention(
            *(torch.tensor(a, dtype=torch.float32) for a in (q, k, v)), **kwargs_t).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def head_split_views(L, H, E, seed, dtype=ember.float32):
    qkv = ember.tensor(rand(2, L, 3 * H * E, seed=seed), dtype=dtype)
    return [t.view(2, L, H, E).transpose(1, 2) for t in qkv.chunk(3, -1)]


@pytest.mark.parametrize("causal", [False, True])
def test_output_takes_the_query_layout(causal):
    # Note [Output layout as the query's]: head-split views of one projection (the usual
    # self-attention) give an output laid out (batch, query, head, embedding), so that
    # y.transpose(1, 2).view(B, L, H * E) works, as with PyTorch.
    q, k, v = head_split_views(70, 3, 16, seed=46)
    out = fused(q, k, v, is_causal=causal)
    assert tuple(out.stride()) == (70 * 48, 16, 48, 1)
    merged = out.transpose(1, 2).view(2, 70, 48)
    ref = np_sdpa(*(x.numpy().astype(np.float64) for x in (q, k, v)), causal=causal)
    np.testing.assert_allclose(merged.numpy(), ref.transpose(0, 2, 1, 3).reshape(2, 70, 48),
                               rtol=1e-4, atol=1e-5)
    half = fused(*head_split_views(70, 3, 16, seed=46, dtype=ember.float16))
    assert half.dtype == ember.float16 and half.transpose(1, 2).is_contiguous()
    # A broadcast batch keeps its place; a value width other than the query's is contiguous.
    q1 = ember.tensor(rand(1, 3, 5, 4, seed=47), dtype=ember.float32).expand(2, 3, 5, 4)
    assert fused(q1, q1, q1).is_contiguous()
    q5, k5, _ = head_split_views(5, 3, 4, seed=48)
    v6 = ember.tensor(rand(2, 5, 3, 6, seed=49), dtype=ember.float32).transpose(1, 2)
    assert fused(q5, k5, v6).is_contiguous()


# (storage shape, the (batch, head, sequence, embedding) view of it)
LAYOUTS = {
    "head-split": ((2, 5, 3, 4), lambda t: t.transpose(1, 2)),
    "heads outermost": ((3, 2, 5, 4), lambda t: t.permute(1, 0, 2, 3)),
    "sequence outermost": ((5, 2, 3, 4), lambda t: t.permute(1, 2, 0, 3)),
    "sliced": ((2, 5, 3, 8), lambda t: t[..., :4].transpose(1, 2)),
    "embedding-major": ((2, 3, 4, 5), lambda t: t.transpose(2, 3)),
    "contiguous": ((2, 3, 5, 4), lambda t: t),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_output_layout_matches_pytorch(layout):
    torch = pytest.importorskip("torch")
    shape, view = LAYOUTS[layout]
    arrays = [rand(*shape, seed=50 + i).astype(np.float32) for i in range(3)]
    got = fused(*(view(ember.tensor(a)) for a in arrays))
    want = torch.nn.functional.scaled_dot_product_attention(
        *(view(torch.from_numpy(a)) for a in arrays))
    assert tuple(got.stride()) == tuple(want.stride())
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_output_is_contiguous_as_pytorch_returns_it():
    # Programs view the output directly (out.view(N * H, L, E)), which needs PyTorch's layout.
    q, k, v = rand(2, 3, 70, 16, seed=43), rand(2, 3, 90, 16, seed=44), rand(2, 3, 90, 8, seed=45)
    for kwargs in ({}, {"is_causal": True}):
        out = fused(*tensors(q, k, v, dtype=ember.float32), **kwargs)
        assert out.is_contiguous()
        assert tuple(out.view(6, 70, 8).shape) == (6, 70, 8)
