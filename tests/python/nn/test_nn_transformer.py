"""MultiheadAttention, F.multi_head_attention_forward and the Transformer modules (regular,
composed-op path): NumPy references for every kind of mask and option, encoder / decoder layer
variants, PyTorch's state_dict keys, gradcheck, errors, and (with torch installed) parity of
outputs, attention weights and gradients with PyTorch modules whose state_dicts are loaded."""

import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck
from ember.nn.modules.transformer import _detect_is_causal_mask

# A bool padding mask with a float attention mask (e.g. the float causal mask) warns, as in
# PyTorch; test_mha_mismatched_mask_types_warn checks the warning itself.
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")

F64 = ember.float64
TOL = {"rtol": 1e-10, "atol": 1e-10}


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def et(a):
    """A float64 ember tensor, or a bool one for a bool array."""
    return ember.tensor(a) if a.dtype == bool else ember.tensor(a, dtype=F64)


def randomize_(module, seed=0, scale=0.5):
    """Random values for every parameter (PyTorch's init zeroes the attention biases, which
    would hide bias mistakes)."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, value in module.state_dict().items():
        noise = rng.standard_normal(tuple(value.shape)) * scale
        if name.rpartition(".")[0].endswith(("norm", "norm1", "norm2", "norm3")) and \
                name.endswith(".weight"):
            noise = 1.0 + noise * 0.2  # LayerNorm gains near 1
        state[name] = ember.tensor(noise, dtype=value.dtype)
    module.load_state_dict(state)
    return module


def params(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


# ---------------------------------------------------------------- NumPy references

def np_softmax(x):
    """Softmax whose fully -inf rows give zeros (as Ember's attention does)."""
    m = np.max(x, -1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(x - m)
    s = e.sum(-1, keepdims=True)
    return e / np.where(s == 0, 1, s)


def additive(mask):
    """PyTorch's MHA convention: bool True = may not attend (-inf); float masks are added."""
    if mask is None:
        return 0.0
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def np_mha(q, k, v, p, num_heads, kpm=None, attn_mask=None, add_zero_attn=False,
           average=True, prefix=""):
    """Multi-head attention of batched (L, N, E) inputs with the parameters ``p`` (a
    state_dict as NumPy arrays, keys after ``prefix``). Returns (output, weights)."""
    g = lambda name: p.get(prefix + name)  # noqa: E731
    if g("in_proj_weight") is not None:
        wq, wk, wv = np.split(g("in_proj_weight"), 3)
    else:
        wq, wk, wv = g("q_proj_weight"), g("k_proj_weight"), g("v_proj_weight")
    b = g("in_proj_bias")
    bq, bk, bv = np.split(b, 3) if b is not None else (0.0, 0.0, 0.0)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    L, N, E = Q.shape
    H, d = num_heads, E // num_heads
    S = K.shape[0]
    bias = np.zeros((N, H, L, S))
    if attn_mask is not None:
        a = additive(attn_mask)
        bias = bias + (a if a.ndim == 2 else a.reshape(N, H, L, S))
    if kpm is not None:
        bias = bias + additive(kpm)[:, None, None, :]

    def add_key(bias):  # one more key that every query may attend to
        return np.concatenate([bias, np.zeros(bias.shape[:-1] + (1,))], -1)

    if g("bias_k") is not None:
        K = np.concatenate([K, np.tile(g("bias_k"), (1, N, 1))])
        V = np.concatenate([V, np.tile(g("bias_v"), (1, N, 1))])
        bias = add_key(bias)

    def heads(x):  # (S, N, E) -> (N, H, S, d)
        return x.reshape(x.shape[0], N, H, d).transpose(1, 2, 0, 3)

    Qh, Kh, Vh = heads(Q), heads(K), heads(V)
    if add_zero_attn:
        Kh = np.concatenate([Kh, np.zeros((N, H, 1, d))], 2)
        Vh = np.concatenate([Vh, np.zeros((N, H, 1, d))], 2)
        bias = add_key(bias)
    w = np_softmax(Qh @ Kh.swapaxes(-1, -2) / math.sqrt(d) + bias)
    out = (w @ Vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = out @ g("out_proj.weight").T
    if g("out_proj.bias") is not None:
        out = out + g("out_proj.bias")
    return out, (w.mean(1) if average else w)


def np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps) * w
    return y if b is None else y + b


def np_linear(x, p, name):
    y = x @ p[name + ".weight"].T
    return y if p.get(name + ".bias") is None else y + p[name + ".bias"]


_erf = np.vectorize(math.erf)
NP_ACT = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
    "silu": lambda x: x / (1 + np.exp(-x)),
}


def np_encoder_layer(x, p, H, norm_first=False, act="relu", src_mask=None, kpm=None,
                     prefix=""):
    P = {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}
    ln = lambda y, i: np_layer_norm(y, P[f"norm{i}.weight"], P.get(f"norm{i}.bias"))  # noqa: E731
    sa = lambda y: np_mha(y, y, y, P, H, kpm, src_mask, prefix="self_attn.")[0]  # noqa: E731
    ff = lambda y: np_linear(NP_ACT[act](np_linear(y, P, "linear1")), P, "linear2")  # noqa: E731
    if norm_first:
        x = x + sa(ln(x, 1))
        return x + ff(ln(x, 2))
    x = ln(x + sa(x), 1)
    return ln(x + ff(x), 2)


def np_decoder_layer(x, mem, p, H, norm_first=False, act="relu", tgt_mask=None,
                     memory_mask=None, tgt_kpm=None, memory_kpm=None, prefix=""):
    P = {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}
    ln = lambda y, i: np_layer_norm(y, P[f"norm{i}.weight"], P.get(f"norm{i}.bias"))  # noqa: E731
    sa = lambda y: np_mha(y, y, y, P, H, tgt_kpm, tgt_mask, prefix="self_attn.")[0]  # noqa: E731
    ca = lambda y: np_mha(y, mem, mem, P, H, memory_kpm, memory_mask,  # noqa: E731
                          prefix="multihead_attn.")[0]
    ff = lambda y: np_linear(NP_ACT[act](np_linear(y, P, "linear1")), P, "linear2")  # noqa: E731
    if norm_first:
        x = x + sa(ln(x, 1))
        x = x + ca(ln(x, 2))
        return x + ff(ln(x, 3))
    x = ln(x + sa(x), 1)
    x = ln(x + ca(x), 2)
    return ln(x + ff(x), 3)


def causal_float(n):
    return np.triu(np.full((n, n), -np.inf), 1)


# ---------------------------------------------------------------- MultiheadAttention

N, H, E, L, S = 3, 2, 8, 4, 5


def mask_case(case, seed=7):
    """(key_padding_mask, attn_mask) as NumPy arrays for query length L and key length S; no
    query row is fully masked."""
    rng = np.random.default_rng(seed)
    kpm = am = None
    if case == "kpm_right":
        kpm = np.zeros((N, S), bool)
        for n in range(N):
            kpm[n, S - n:] = True
    elif case == "kpm_left":
        kpm = np.zeros((N, S), bool)
        for n in range(N):
            kpm[n, :n] = True
    elif case == "kpm_random":
        kpm = rng.random((N, S)) < 0.4
        kpm[:, 2] = False
    elif case == "kpm_float":
        kpm = rng.standard_normal((N, S))
    elif case == "bool_2d":
        am = rng.random((L, S)) < 0.4
        am[:, 1] = False
    elif case == "float_2d":
        am = rng.standard_normal((L, S))
    elif case == "bool_3d":
        am = rng.random((N * H, L, S)) < 0.4
        am[..., 3] = False
    elif case == "float_3d":
        am = rng.standard_normal((N * H, L, S))
    elif case == "kpm_and_bool_2d":
        kpm = np.zeros((N, S), bool)
        kpm[1, 3:] = True
        am = rng.random((L, S)) < 0.3
        am[:, 0] = False
    elif case == "kpm_and_float_3d":
        kpm = rng.standard_normal((N, S))
        am = rng.standard_normal((N * H, L, S))
    return kpm, am


MASK_CASES = ["none", "kpm_right", "kpm_left", "kpm_random", "kpm_float", "bool_2d",
              "float_2d", "bool_3d", "float_3d", "kpm_and_bool_2d", "kpm_and_float_3d"]


def opt(a):
    return None if a is None else et(a)


@pytest.mark.parametrize("case", MASK_CASES)
def test_mha_masks_match_numpy(case):
    mha = randomize_(nn.MultiheadAttention(E, H, dtype=F64))
    q, k, v = rand(L, N, E), rand(S, N, E, seed=1), rand(S, N, E, seed=2)
    kpm, am = mask_case(case)
    p = params(mha)
    for need_weights, average in ((True, True), (True, False), (False, True)):
        out, w = mha(et(q), et(k), et(v), key_padding_mask=opt(kpm), attn_mask=opt(am),
                     need_weights=need_weights, average_attn_weights=average)
        ref_out, ref_w = np_mha(q, k, v, p, H, kpm, am, average=average)
        np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
        if need_weights:
            assert tuple(w.shape) == ((N, L, S) if average else (N, H, L, S))
            np.testing.assert_allclose(w.numpy(), ref_w, **TOL)
        else:
            assert w is None


@pytest.mark.parametrize("mask_dtype", ["float", "bool"])
def test_mha_causal_mask_and_hint(mask_dtype):
    # Self-attention (one tensor for query, key and value: the packed single-matmul path).
    mha = randomize_(nn.MultiheadAttention(E, H, dtype=F64))
    x = rand(S, N, E)
    mask = causal_float(S) if mask_dtype == "float" else np.triu(np.ones((S, S), bool), 1)
    p = params(mha)
    ref_out, ref_w = np_mha(x, x, x, p, H, attn_mask=mask)
    xe = et(x)
    for need_weights in (True, False):
        for is_causal in (False, True):
            out, w = mha(xe, xe, xe, attn_mask=et(mask), need_weights=need_weights,
                         is_causal=is_causal)
            np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
            if need_weights:
                np.testing.assert_allclose(w.numpy(), ref_w, **TOL)
                assert (np.triu(w.numpy()[0], 1) == 0).all()
    # The hint with a padding mask too: the merged mask is used.
    kpm = np.zeros((N, S), bool)
    kpm[2, 4] = True
    out, _ = mha(xe, xe, xe, attn_mask=et(mask), key_padding_mask=et(kpm), need_weights=False,
                 is_causal=True)
    np.testing.assert_allclose(out.numpy(), np_mha(x, x, x, p, H, kpm, mask)[0], **TOL)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_bias_kv_and_zero_attn(need_weights):
    q, k = rand(L, N, E), rand(S, N, E, seed=1)
    kpm, am = mask_case("kpm_and_bool_2d")
    for add_bias_kv, add_zero_attn in ((True, False), (False, True), (True, True)):
        mha = randomize_(nn.MultiheadAttention(E, H, add_bias_kv=add_bias_kv,
                                               add_zero_attn=add_zero_attn, dtype=F64))
        assert (mha.bias_k is not None) == add_bias_kv
        p = params(mha)
        # key is value: the packed path that shares the key / value matmul.
        ke = et(k)
        out, w = mha(et(q), ke, ke, key_padding_mask=et(kpm), attn_mask=et(am),
                     need_weights=need_weights)
        ref_out, ref_w = np_mha(q, k, k, p, H, kpm, am, add_zero_attn=add_zero_attn)
        np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
        if need_weights:
            extra = int(add_bias_kv) + int(add_zero_attn)
            assert tuple(w.shape) == (N, L, S + extra)
            np.testing.assert_allclose(w.numpy(), ref_w, **TOL)


def test_mha_kdim_vdim_and_no_bias():
    mha = randomize_(nn.MultiheadAttention(E, H, kdim=3, vdim=5, dtype=F64))
    assert mha.in_proj_weight is None and not mha._qkv_same_embed_dim
    assert tuple(mha.k_proj_weight.shape) == (E, 3) and tuple(mha.v_proj_weight.shape) == (E, 5)
    q, k, v = rand(L, N, E), rand(S, N, 3, seed=1), rand(S, N, 5, seed=2)
    kpm, am = mask_case("kpm_and_float_3d")
    p = params(mha)
    for need_weights in (True, False):
        out, w = mha(et(q), et(k), et(v), key_padding_mask=et(kpm), attn_mask=et(am),
                     need_weights=need_weights)
        ref_out, ref_w = np_mha(q, k, v, p, H, kpm, am)
        np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
        if need_weights:
            np.testing.assert_allclose(w.numpy(), ref_w, **TOL)
    nobias = randomize_(nn.MultiheadAttention(E, H, bias=False, dtype=F64))
    assert nobias.in_proj_bias is None and nobias.out_proj.bias is None
    out, w = nobias(et(q), et(rand(S, N, E, seed=1)), et(rand(S, N, E, seed=2)))
    ref_out, ref_w = np_mha(q, rand(S, N, E, seed=1), rand(S, N, E, seed=2), params(nobias), H)
    np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
    np.testing.assert_allclose(w.numpy(), ref_w, **TOL)


def test_mha_batch_first_matches_sequence_first():
    seq = randomize_(nn.MultiheadAttention(E, H, dtype=F64))
    bf = nn.MultiheadAttention(E, H, batch_first=True, dtype=F64)
    bf.load_state_dict(seq.state_dict())
    x, m, v = rand(N, S, E), rand(N, S, E, seed=1), rand(N, S, E, seed=2)
    xe, me, ve = et(x), et(m), et(v)
    kpm = et(mask_case("kpm_right")[0])
    # Self-attention, key-is-value and three separate inputs: the identities between the
    # inputs (which pick the in-projection's grouping) survive batch_first's transposes.
    for (q, k, vv), (qe, ke, vve) in (((x, x, x), (xe, xe, xe)), ((x, m, m), (xe, me, me)),
                                      ((x, m, v), (xe, me, ve))):
        ref_out, ref_w = seq(*(et(a.transpose(1, 0, 2)) for a in (q, k, vv)),
                             key_padding_mask=kpm)
        out, w = bf(qe, ke, vve, key_padding_mask=kpm)
        assert tuple(out.shape) == (N, S, E)
        np.testing.assert_allclose(out.numpy(), ref_out.numpy().transpose(1, 0, 2), **TOL)
        np.testing.assert_allclose(w.numpy(), ref_w.numpy(), **TOL)
        np.testing.assert_allclose(
            out.numpy(), np_mha(*(a.transpose(1, 0, 2) for a in (q, k, vv)), params(seq), H,
                                kpm.numpy())[0].transpose(1, 0, 2), **TOL)


def test_mha_unbatched_input():
    mha = randomize_(nn.MultiheadAttention(E, H, dtype=F64))
    q, k, v = rand(L, E), rand(S, E, seed=1), rand(S, E, seed=2)
    kpm = np.array([False, True, False, False, True])
    am = np.random.default_rng(3).random((H, L, S)) < 0.3
    am[..., 0] = False
    p = params(mha)
    for need_weights, average in ((True, True), (True, False), (False, True)):
        out, w = mha(et(q), et(k), et(v), key_padding_mask=et(kpm), attn_mask=et(am),
                     need_weights=need_weights, average_attn_weights=average)
        ref_out, ref_w = np_mha(q[:, None], k[:, None], v[:, None], p, H, kpm[None], am,
                                average=average)
        assert tuple(out.shape) == (L, E)
        np.testing.assert_allclose(out.numpy(), ref_out[:, 0], **TOL)
        if need_weights:
            assert tuple(w.shape) == ((L, S) if average else (H, L, S))
            np.testing.assert_allclose(w.numpy(), ref_w[0], **TOL)
    # batch_first is ignored for unbatched input.
    bf = nn.MultiheadAttention(E, H, batch_first=True, dtype=F64)
    bf.load_state_dict(mha.state_dict())
    np.testing.assert_allclose(bf(et(q), et(k), et(v))[0].numpy(),
                               mha(et(q), et(k), et(v))[0].numpy(), **TOL)


def test_mha_fully_masked_rows_give_zeros():
    """PyTorch gives NaN for a query with no key to attend to (need_weights=True); Ember gives
    zero weights and a zero attention output, so the row's output is out_proj's bias."""
    mha = randomize_(nn.MultiheadAttention(E, H, dtype=F64))
    q = et(rand(L, N, E)).requires_grad_()
    k = et(rand(S, N, E, seed=1)).requires_grad_()
    kpm = np.zeros((N, S), bool)
    kpm[1] = True  # batch entry 1: every key is padding
    am = np.zeros((L, S), bool)
    am[2] = True  # query 2: every key masked
    bias = mha.out_proj.bias.detach().numpy()
    for need_weights in (True, False):
        out, w = mha(q, k, k, key_padding_mask=et(kpm), attn_mask=et(am),
                     need_weights=need_weights)
        o = out.detach().numpy()
        assert np.isfinite(o).all()
        np.testing.assert_allclose(o[:, 1], np.broadcast_to(bias, (L, E)), **TOL)
        np.testing.assert_allclose(o[2], np.broadcast_to(bias, (N, E)), **TOL)
        ref = np_mha(q.detach().numpy(), k.detach().numpy(), k.detach().numpy(), params(mha),
                     H, kpm, am)[0]
        np.testing.assert_allclose(o, ref, **TOL)
        if need_weights:
            wn = w.detach().numpy()
            assert (wn[1] == 0).all() and (wn[:, 2] == 0).all() and np.isfinite(wn).all()
            np.testing.assert_allclose(wn[0, 0].sum(), 1.0, rtol=1e-12)
        (out.sum() + (w.sum() if need_weights else 0)).backward()
        for t in (q, k, mha.in_proj_weight, mha.out_proj.weight):
            assert np.isfinite(t.grad.numpy()).all()
        assert (q.grad.numpy()[:, 1] == 0).all()  # nothing reaches a fully padded entry
        q.grad = k.grad = None
        mha.zero_grad()


def test_functional_mha_static_kv_and_separate_weights():
    rng = np.random.default_rng(0)
    d = E // H
    q = rand(L, N, E)
    w_in, b_in = rng.standard_normal((3 * E, E)), rng.standard_normal(3 * E)
    w_out, b_out = rng.standard_normal((E, E)), rng.standard_normal(E)
    static_k, static_v = rand(N * H, S, d, seed=1), rand(N * H, S, d, seed=2)
    out, w = F.multi_head_attention_forward(
        et(q), et(q), et(q), E, H, et(w_in), et(b_in), None, None, False, 0.0, et(w_out),
        et(b_out), static_k=et(static_k), static_v=et(static_v), average_attn_weights=False)
    Q = (q @ w_in[:E].T + b_in[:E]).reshape(L, N * H, d).transpose(1, 0, 2)
    ref_w = np_softmax(Q @ static_k.swapaxes(1, 2) / math.sqrt(d))
    ref_out = (ref_w @ static_v).transpose(1, 0, 2).reshape(L, N, E) @ w_out.T + b_out
    np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
    np.testing.assert_allclose(w.numpy(), ref_w.reshape(N, H, L, S), **TOL)
    # use_separate_proj_weight with the packed weight's rows gives the packed result.
    wq, wk, wv = (et(x) for x in np.split(w_in, 3))
    k = rand(S, N, E, seed=3)
    packed = F.multi_head_attention_forward(et(q), et(k), et(k), E, H, et(w_in), et(b_in),
                                            None, None, False, 0.0, et(w_out), et(b_out))
    separate = F.multi_head_attention_forward(
        et(q), et(k), et(k), E, H, None, et(b_in), None, None, False, 0.0, et(w_out),
        et(b_out), use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk,
        v_proj_weight=wv)
    np.testing.assert_allclose(packed[0].numpy(), separate[0].numpy(), **TOL)
    np.testing.assert_allclose(packed[1].numpy(), separate[1].numpy(), **TOL)


def test_mha_dropout_only_in_training():
    ember.manual_seed(0)
    mha = randomize_(nn.MultiheadAttention(E, H, dropout=0.5, dtype=F64))
    ref = nn.MultiheadAttention(E, H, dtype=F64)
    ref.load_state_dict(mha.state_dict())
    x = et(rand(L, N, E))
    train_out, train_w = mha(x, x, x, average_attn_weights=False)
    expected_out, expected_w = ref(x, x, x, average_attn_weights=False)
    tw, ew = train_w.numpy(), expected_w.numpy()
    dropped = tw == 0
    assert dropped.any() and (~dropped).any()
    np.testing.assert_allclose(tw[~dropped], 2 * ew[~dropped], **TOL)  # kept: scaled by 1/(1-p)
    assert not np.allclose(train_out.numpy(), expected_out.numpy())
    mha.eval()
    for need_weights in (True, False):
        np.testing.assert_allclose(mha(x, x, x, need_weights=need_weights)[0].numpy(),
                                   expected_out.numpy(), **TOL)


def test_mha_parameters_and_init():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    assert mha.head_dim == 4 and mha.batch_first is False and mha.dropout == 0.0
    assert isinstance(mha.out_proj, nn.modules.linear.NonDynamicallyQuantizableLinear)
    assert (mha.in_proj_bias.detach().numpy() == 0).all()
    assert (mha.out_proj.bias.detach().numpy() == 0).all()
    bound = math.sqrt(6 / (16 + 48))  # xavier_uniform_ of the (48, 16) in_proj_weight
    w = mha.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert mha.bias_k.detach().numpy().std() > 0 and tuple(mha.bias_k.shape) == (1, 1, 16)
    assert nn.modules.activation.MultiheadAttention is nn.MultiheadAttention
    names = [n for n, _ in nn.MultiheadAttention(8, 2, kdim=3).named_parameters()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                     "out_proj.weight", "out_proj.bias"]


def test_mha_merge_masks():
    mha = nn.MultiheadAttention(E, H, batch_first=True, dtype=F64)
    x = et(rand(N, L, E))
    kpm = additive(mask_case("kpm_left")[0][:, :L])
    am2, am3 = rand(L, L, seed=1), rand(N * H, L, L, seed=2)
    assert mha.merge_masks(None, None, x) == (None, None)
    merged, kind = mha.merge_masks(None, et(kpm), x)
    assert kind == 1 and merged.numpy().tolist() == et(kpm).numpy().tolist()
    merged, kind = mha.merge_masks(et(am2), et(kpm), x)
    assert kind == 2
    np.testing.assert_array_equal(merged.numpy(), am2 + kpm[:, None, None, :] + np.zeros(
        (N, H, L, L)))
    merged, kind = mha.merge_masks(et(am3), None, x)
    assert kind == 2
    np.testing.assert_array_equal(merged.numpy(), am3.reshape(N, H, L, L))


def test_mha_mismatched_mask_types_warn():
    mha = nn.MultiheadAttention(E, H, dtype=F64)
    x = et(rand(L, N, E))
    kpm = np.zeros((N, L), bool)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        out, _ = mha(x, x, x, key_padding_mask=et(kpm), attn_mask=et(np.zeros((L, L))))
    np.testing.assert_allclose(out.numpy(), mha(x, x, x)[0].numpy(), **TOL)


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    mha = nn.MultiheadAttention(E, H, dtype=F64)
    q, k = et(rand(L, N, E)), et(rand(S, N, E))
    with pytest.raises(AssertionError, match=r"query should be unbatched 2D or batched 3D.*"
                                             r"\(1, 4, 3, 8\)"):
        mha(et(rand(1, L, N, E)), k, k)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        mha(q, et(rand(S, E)), et(rand(S, E)))
    with pytest.raises(AssertionError, match="expected `key_padding_mask` to be `None` or 2-D"):
        mha(q, k, k, key_padding_mask=et(np.zeros(S, bool)))
    with pytest.raises(AssertionError, match=r"Expected key_padding_mask of shape \(3, 5\)"):
        mha(q, k, k, key_padding_mask=et(np.zeros((N, S + 1), bool)))
    with pytest.raises(AssertionError, match="expected `attn_mask` to be `None`, 2-D or 3-D"):
        mha(q, k, k, attn_mask=et(np.zeros((1, 1, L, S))))
    with pytest.raises(RuntimeError, match=r"2D attn_mask is \(5, 4\), but should be \(4, 5\)"):
        mha(q, k, k, attn_mask=et(np.zeros((S, L))))
    with pytest.raises(RuntimeError, match=r"3D attn_mask is \(3, 4, 5\), but should be "
                                           r"\(6, 4, 5\)"):
        mha(q, k, k, attn_mask=et(np.zeros((N, L, S))))
    with pytest.raises(AssertionError, match=r"Expected `attn_mask` shape to be \(2, 4, 5\)"):
        mha(et(rand(L, E)), et(rand(S, E)), et(rand(S, E)), attn_mask=et(np.zeros((3, L, S))))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        mha(q, k, k, attn_mask=ember.zeros((L, S), dtype=ember.int64))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask"):
        mha(q, k, k, key_padding_mask=ember.zeros((N, S), dtype=ember.int32))
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float or to match "
                                           "query dtype.*float32 and query.dtype: .*float64"):
        mha(q, k, k, attn_mask=ember.zeros((L, S), dtype=ember.float32))
    with pytest.raises(RuntimeError, match="key_padding_mask dtype to be bool or float"):
        mha(q, k, k, key_padding_mask=ember.zeros((N, S), dtype=ember.float32),
            need_weights=False)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(q, q, q, is_causal=True)
    with pytest.raises(AssertionError, match=r"key shape \(5, 3, 8\) does not match value "
                                             r"shape \(4, 3, 8\)"):
        mha(q, k, q)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        F.multi_head_attention_forward(
            et(rand(L, N, 6)), et(rand(S, N, 6)), et(rand(S, N, 6)), E, H, mha.in_proj_weight,
            mha.in_proj_bias, None, None, False, 0.0, mha.out_proj.weight, mha.out_proj.bias)
    with pytest.raises(AssertionError, match=r"expecting key weights shape of \(8, 8\), but "
                                             r"got \(8, 3\)"):
        F.multi_head_attention_forward(
            q, k, k, E, H, None, None, None, None, False, 0.0, mha.out_proj.weight, None,
            use_separate_proj_weight=True, q_proj_weight=et(rand(E, E)),
            k_proj_weight=et(rand(E, 3)), v_proj_weight=et(rand(E, E)))


# ---------------------------------------------------------------- encoder / decoder layers

D, NH, FF = 8, 2, 12

ACTIVATIONS = {"relu": ("relu", "relu"), "gelu_str": ("gelu", "gelu"),
               "gelu_fn": (F.gelu, "gelu"), "gelu_module": (nn.GELU(), "gelu"),
               "silu_fn": (F.silu, "silu")}


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_encoder_layer_matches_numpy(norm_first, bias, act):
    activation, np_act = ACTIVATIONS[act]
    layer = randomize_(nn.TransformerEncoderLayer(D, NH, FF, dropout=0.1, activation=activation,
                                                  norm_first=norm_first, bias=bias, dtype=F64))
    layer.eval()
    assert layer.norm1.bias is None if not bias else layer.norm1.bias is not None
    assert layer.activation_relu_or_gelu == {"relu": 1, "gelu": 2, "silu": 0}[np_act]
    x = rand(S, N, D)
    kpm = np.zeros((N, S), bool)
    kpm[0, 3:] = True
    mask = np.random.default_rng(1).random((S, S)) < 0.3
    np.fill_diagonal(mask, False)
    out = layer(et(x), src_mask=et(mask), src_key_padding_mask=et(kpm))
    assert tuple(out.shape) == (S, N, D)
    ref = np_encoder_layer(x, params(layer), NH, norm_first, np_act, mask, kpm)
    np.testing.assert_allclose(out.numpy(), ref, **TOL)


def test_encoder_layer_batch_first_unbatched_and_causal():
    layer = randomize_(nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0, batch_first=True,
                                                  dtype=F64))
    p = params(layer)
    x = rand(N, S, D)
    out = layer(et(x))
    assert tuple(out.shape) == (N, S, D)
    np.testing.assert_allclose(out.numpy(),
                               np_encoder_layer(x.transpose(1, 0, 2), p, NH).transpose(1, 0, 2),
                               **TOL)
    single = layer(et(x[1]))  # unbatched (S, E)
    np.testing.assert_allclose(single.numpy(), out.numpy()[1], **TOL)
    mask = nn.Transformer.generate_square_subsequent_mask(S, dtype=F64)
    ref = np_encoder_layer(x.transpose(1, 0, 2), p, NH, src_mask=causal_float(S))
    for is_causal in (False, True):
        out = layer(et(x), src_mask=mask, is_causal=is_causal)
        np.testing.assert_allclose(out.numpy(), ref.transpose(1, 0, 2), **TOL)
    # forward = canonical masks + _regular_forward (the composed path kept for fused fronts).
    bool_mask = np.triu(np.ones((S, S), bool), 1)
    np.testing.assert_allclose(
        layer(et(x), src_mask=et(bool_mask)).numpy(),
        layer._regular_forward(et(x), mask, None, False).numpy(), **TOL)


def test_encoder_layer_dropout_and_bad_activation():
    ember.manual_seed(0)
    layer = randomize_(nn.TransformerEncoderLayer(D, NH, FF, dropout=0.5, dtype=F64))
    x = et(rand(S, N, D))
    assert not np.allclose(layer(x).numpy(), layer(x).numpy())  # training: dropout active
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), np_encoder_layer(x.numpy(), params(layer), NH),
                               **TOL)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(D, NH, activation="tanh")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not swish"):
        nn.TransformerDecoderLayer(D, NH, activation="swish")


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("act", ["relu", "gelu_str", "silu_fn"])
def test_decoder_layer_matches_numpy(norm_first, bias, act):
    activation, np_act = ACTIVATIONS[act]
    layer = randomize_(nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0, activation=activation,
                                                  norm_first=norm_first, bias=bias, dtype=F64))
    T = L
    tgt, mem = rand(T, N, D), rand(S, N, D, seed=1)
    tgt_kpm = np.zeros((N, T), bool)
    tgt_kpm[2, 3] = True
    mem_kpm = np.zeros((N, S), bool)
    mem_kpm[1, 2:] = True
    mem_mask = np.random.default_rng(2).standard_normal((T, S))
    out = layer(et(tgt), et(mem), tgt_mask=et(causal_float(T)), memory_mask=et(mem_mask),
                tgt_key_padding_mask=et(tgt_kpm), memory_key_padding_mask=et(mem_kpm),
                tgt_is_causal=True)
    assert tuple(out.shape) == (T, N, D)
    ref = np_decoder_layer(tgt, mem, params(layer), NH, norm_first, np_act, causal_float(T),
                           mem_mask, tgt_kpm, mem_kpm)
    np.testing.assert_allclose(out.numpy(), ref, **TOL)


def test_encoder_and_decoder_stacks_match_numpy():
    enc_layer = nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0, dtype=F64)
    encoder = randomize_(nn.TransformerEncoder(enc_layer, 3, norm=nn.LayerNorm(D, dtype=F64)))
    layers = list(encoder.layers)
    assert len(layers) == 3 and all(lay is not enc_layer for lay in layers)
    assert layers[0].linear1.weight is not layers[1].linear1.weight
    x = rand(S, N, D)
    kpm = np.zeros((N, S), bool)
    kpm[1, 4:] = True
    p = params(encoder)
    ref = x
    for i in range(3):
        ref = np_encoder_layer(ref, p, NH, kpm=kpm, prefix=f"layers.{i}.")
    ref = np_layer_norm(ref, p["norm.weight"], p["norm.bias"])
    memory = encoder(et(x), src_key_padding_mask=et(kpm))
    np.testing.assert_allclose(memory.numpy(), ref, **TOL)

    dec_layer = nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0, dtype=F64)
    decoder = randomize_(nn.TransformerDecoder(dec_layer, 2), seed=1)
    assert decoder.norm is None
    tgt = rand(L, N, D, seed=2)
    pd = params(decoder)
    ref_d = tgt
    for i in range(2):
        ref_d = np_decoder_layer(ref_d, ref, pd, NH, tgt_mask=causal_float(L), memory_kpm=kpm,
                                 prefix=f"layers.{i}.")
    out = decoder(et(tgt), memory, tgt_mask=et(causal_float(L)),
                  memory_key_padding_mask=et(kpm))
    np.testing.assert_allclose(out.numpy(), ref_d, **TOL)


def test_transformer_matches_numpy_and_trains():
    model = randomize_(nn.Transformer(D, NH, 2, 2, FF, dropout=0.0, batch_first=True,
                                      dtype=F64))
    assert model.d_model == D and model.nhead == NH and model.batch_first
    src, tgt = rand(N, S, D), rand(N, L, D, seed=1)
    src_kpm = np.zeros((N, S), bool)
    src_kpm[0, 4] = True
    p = params(model)
    mem = src.transpose(1, 0, 2)
    for i in range(2):
        mem = np_encoder_layer(mem, p, NH, kpm=src_kpm, prefix=f"encoder.layers.{i}.")
    mem = np_layer_norm(mem, p["encoder.norm.weight"], p["encoder.norm.bias"])
    out_ref = tgt.transpose(1, 0, 2)
    for i in range(2):
        out_ref = np_decoder_layer(out_ref, mem, p, NH, tgt_mask=causal_float(L),
                                   memory_kpm=src_kpm, prefix=f"decoder.layers.{i}.")
    out_ref = np_layer_norm(out_ref, p["decoder.norm.weight"], p["decoder.norm.bias"])
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(L, dtype=F64)
    out = model(et(src), et(tgt), tgt_mask=tgt_mask, src_key_padding_mask=et(src_kpm),
                memory_key_padding_mask=et(src_kpm))
    np.testing.assert_allclose(out.numpy(), out_ref.transpose(1, 0, 2), **TOL)

    # Every parameter gets a gradient, and a few SGD steps lower a regression loss.
    target = et(rand(N, L, D, seed=5))
    opt_ = ember.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(8):
        opt_.zero_grad()
        loss = ((model(et(src), et(tgt), tgt_mask=tgt_mask) - target) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
        opt_.step()
    grads = [(n, q.grad) for n, q in model.named_parameters()]
    assert all(g is not None and np.abs(g.numpy()).sum() > 0 for _, g in grads), \
        [n for n, g in grads if g is None]
    assert losses[-1] < 0.8 * losses[0]


def test_transformer_init_mask_and_errors():
    ember.manual_seed(0)
    model = nn.Transformer(16, 4, 1, 1, 32)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = math.sqrt(6 / (16 + 32))  # every >= 2-D parameter re-drawn Xavier-uniform
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert (model.encoder.layers[0].self_attn.in_proj_bias.detach().numpy() == 0).all()
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == ember.float32
    np.testing.assert_array_equal(m.numpy(), causal_float(3).astype(np.float32))
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=F64).dtype == F64
    custom = nn.Transformer(8, 2, custom_encoder=nn.Identity(), custom_decoder=nn.Identity())
    assert isinstance(custom.encoder, nn.Identity) and not list(custom.parameters())
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(ember.zeros(5, 2, 16), ember.zeros(4, 3, 16))
    with pytest.raises(RuntimeError, match=r"feature number of src and tgt must be equal to "
                                           r"d_model \(16\)"):
        model(ember.zeros(5, 2, 16), ember.zeros(4, 2, 8))


def test_causal_mask_detection():
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(causal, None, 4) is True
    assert _detect_is_causal_mask(causal, None, 5) is False  # wrong size
    assert _detect_is_causal_mask(ember.zeros(4, 4), None) is False
    assert _detect_is_causal_mask(ember.zeros(4, 4), True) is True  # the hint is trusted
    assert _detect_is_causal_mask(causal, False) is False
    assert _detect_is_causal_mask(None, None) is False


def test_encoder_nested_tensor_flags_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seq_first = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
        fast = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)
        off = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1,
                                    enable_nested_tensor=False, mask_check=False)
    assert seq_first.enable_nested_tensor and not seq_first.use_nested_tensor
    assert fast.use_nested_tensor and fast.mask_check
    assert not off.use_nested_tensor and not off.mask_check and off.num_layers == 1


# ---------------------------------------------------------------- state_dict keys

MHA_KEYS = ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
MHA_SEPARATE_NO_BIAS_KEYS = ["q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k",
                             "bias_v", "out_proj.weight"]
ENC_LAYER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias",
                  "self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear1.weight",
                  "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
                  "norm2.weight", "norm2.bias"]
ENC_LAYER_NO_BIAS_KEYS = ["self_attn.in_proj_weight", "self_attn.out_proj.weight",
                          "linear1.weight", "linear2.weight", "norm1.weight", "norm2.weight"]
DEC_LAYER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias",
                  "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                  "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                  "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias",
                  "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                  "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "norm3.weight",
                  "norm3.bias"]


def test_state_dict_keys_are_pytorchs():
    assert list(nn.MultiheadAttention(8, 2).state_dict()) == MHA_KEYS
    separate = nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, kdim=3, vdim=5)
    assert list(separate.state_dict()) == MHA_SEPARATE_NO_BIAS_KEYS
    assert list(nn.TransformerEncoderLayer(8, 2, 16).state_dict()) == ENC_LAYER_KEYS
    assert list(nn.TransformerEncoderLayer(8, 2, 16, bias=False).state_dict()) == \
        ENC_LAYER_NO_BIAS_KEYS
    assert list(nn.TransformerDecoderLayer(8, 2, 16).state_dict()) == DEC_LAYER_KEYS
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, nn.LayerNorm(8))
    assert list(encoder.state_dict()) == [f"layers.{i}.{k}" for i in range(2)
                                          for k in ENC_LAYER_KEYS] + ["norm.weight", "norm.bias"]
    model = nn.Transformer(8, 2, 1, 1, 16)
    expected = ([f"encoder.layers.0.{k}" for k in ENC_LAYER_KEYS]
                + ["encoder.norm.weight", "encoder.norm.bias"]
                + [f"decoder.layers.0.{k}" for k in DEC_LAYER_KEYS]
                + ["decoder.norm.weight", "decoder.norm.bias"])
    assert list(model.state_dict()) == expected


# ---------------------------------------------------------------- gradcheck (float64)

def test_gradcheck_functional_mha():
    e, h, lq, ls, n = 4, 2, 2, 3, 2
    rng = np.random.default_rng(0)
    leaf = lambda *s: et(rng.standard_normal(s) * 0.5).requires_grad_()  # noqa: E731
    q, k, v = leaf(lq, n, e), leaf(ls, n, e), leaf(ls, n, e)
    w_in, b_in, w_out, b_out = leaf(3 * e, e), leaf(3 * e), leaf(e, e), leaf(e)
    bias_k, bias_v = leaf(1, 1, e), leaf(1, 1, e)
    kpm = et(np.array([[False, False, True], [False, False, False]]))
    am = et(rng.standard_normal((lq, ls)))
    for need_weights in (True, False):
        def fn(q, k, v, w_in, b_in, w_out, b_out, bias_k, bias_v, need_weights=need_weights):
            return F.multi_head_attention_forward(
                q, k, v, e, h, w_in, b_in, bias_k, bias_v, True, 0.0, w_out, b_out,
                key_padding_mask=kpm, attn_mask=am, need_weights=need_weights,
                average_attn_weights=False)
        assert gradcheck(fn, (q, k, v, w_in, b_in, w_out, b_out, bias_k, bias_v))


def test_gradcheck_mha_module_self_attention_kdim():
    ember.manual_seed(0)
    mha = randomize_(nn.MultiheadAttention(4, 2, kdim=3, vdim=2, batch_first=True, dtype=F64))
    x = et(rand(2, 3, 4)).requires_grad_()
    k = et(rand(2, 2, 3, seed=1)).requires_grad_()
    v = et(rand(2, 2, 2, seed=2)).requires_grad_()
    assert gradcheck(lambda x, k, v, *ps: mha(x, k, v), (x, k, v, *mha.parameters()))
    self_attn = randomize_(nn.MultiheadAttention(4, 2, dtype=F64))
    causal = nn.Transformer.generate_square_subsequent_mask(3, dtype=F64)
    assert gradcheck(lambda x, *ps: self_attn(x, x, x, attn_mask=causal, is_causal=True,
                                              need_weights=False)[0],
                     (x.transpose(0, 1).detach().requires_grad_(), *self_attn.parameters()))


@pytest.mark.parametrize("norm_first", [False, True])
def test_gradcheck_encoder_layer(norm_first):
    layer = randomize_(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu",
                                                  norm_first=norm_first, dtype=F64))
    x = et(rand(3, 2, 4)).requires_grad_()
    kpm = et(np.array([[False, False, True], [False, False, False]]))
    assert gradcheck(lambda x, *ps: layer(x, src_key_padding_mask=kpm),
                     (x, *layer.parameters()))


def test_gradcheck_decoder_layer():
    layer = randomize_(nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, dtype=F64))
    tgt = et(rand(3, 2, 4)).requires_grad_()
    mem = et(rand(2, 2, 4, seed=1)).requires_grad_()
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=F64)
    assert gradcheck(lambda t, m, *ps: layer(t, m, tgt_mask=mask, tgt_is_causal=True),
                     (tgt, mem, *layer.parameters()))


# ---------------------------------------------------------------- parity with PyTorch

def torch_state_to_ember(module, tmodule):
    module.load_state_dict({k: ember.tensor(v.detach().cpu().numpy())
                            for k, v in tmodule.state_dict().items()})  # strict: same keys
    return module


def f32(*shape, seed=0):
    return rand(*shape, seed=seed).astype(np.float32)


def both(a):
    import torch

    return torch.tensor(a), ember.tensor(a)


PARITY = {"rtol": 1e-5, "atol": 2e-6}

MHA_TORCH_CASES = {
    "default": {},
    "batch_first": {"batch_first": True},
    "bias_kv_zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
    "kdim_vdim": {"kdim": 5, "vdim": 3},
    "no_bias": {"bias": False},
}


@pytest.mark.parametrize("case", list(MHA_TORCH_CASES))
@pytest.mark.parametrize("masks", ["none", "bool", "float", "causal"])
def test_mha_parity_with_torch(case, masks):
    torch = pytest.importorskip("torch")
    kw = MHA_TORCH_CASES[case]
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(E, H, **kw).eval()
    with torch.no_grad():
        for prm in tm.parameters():
            prm.add_(torch.randn_like(prm) * 0.1)
    em = torch_state_to_ember(nn.MultiheadAttention(E, H, **kw).eval(), tm)
    bf = kw.get("batch_first", False)
    lq = S if masks == "causal" else L
    q = f32(N, lq, E) if bf else f32(lq, N, E)
    kdim, vdim = kw.get("kdim", E), kw.get("vdim", E)
    k = f32(*((N, S, kdim) if bf else (S, N, kdim)), seed=1)
    v = f32(*((N, S, vdim) if bf else (S, N, vdim)), seed=2)
    if masks == "causal" and kdim == E and vdim == E:
        k = v = q
    kpm = am = None
    if masks == "bool":
        kpm, am = mask_case("kpm_and_bool_2d")
    elif masks == "float":
        kpm, am = mask_case("kpm_and_float_3d")
        kpm, am = kpm.astype(np.float32), am.astype(np.float32)
    elif masks == "causal":
        am = np.triu(np.ones((lq, S), bool), 1)
    tq, eq = both(q)
    tk, ek = (tq, eq) if k is q else both(k)
    tv, ev = (tk, ek) if v is k else both(v)
    tkpm, ekpm = both(kpm) if kpm is not None else (None, None)
    tam, eam = both(am) if am is not None else (None, None)
    for need_weights, average in ((True, True), (True, False), (False, True)):
        t_out, t_w = tm(tq, tk, tv, key_padding_mask=tkpm, attn_mask=tam,
                        need_weights=need_weights, average_attn_weights=average,
                        is_causal=masks == "causal")
        e_out, e_w = em(eq, ek, ev, key_padding_mask=ekpm, attn_mask=eam,
                        need_weights=need_weights, average_attn_weights=average,
                        is_causal=masks == "causal")
        np.testing.assert_allclose(e_out.numpy(), t_out.detach().numpy(), **PARITY)
        if need_weights:
            np.testing.assert_allclose(e_w.numpy(), t_w.detach().numpy(), **PARITY)
        else:
            assert e_w is None and t_w is None


def test_mha_parity_with_torch_unbatched_and_fused_inference():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    tm = torch.nn.MultiheadAttention(E, H, batch_first=True).eval()
    em = torch_state_to_ember(nn.MultiheadAttention(E, H, batch_first=True).eval(), tm)
    x = f32(S, E)
    tx, ex = both(x)
    t_out, t_w = tm(tx, tx, tx)
    e_out, e_w = em(ex, ex, ex)
    np.testing.assert_allclose(e_out.numpy(), t_out.detach().numpy(), **PARITY)
    np.testing.assert_allclose(e_w.numpy(), t_w.detach().numpy(), **PARITY)
    # Under no_grad, PyTorch takes its fused kernel (batch_first self-attention, eval): the
    # composed path agrees with it too.
    xb = f32(N, S, E, seed=3)
    kpm = np.zeros((N, S), bool)
    kpm[1, 3:] = True
    (txb, exb), (tkpm, ekpm) = both(xb), both(kpm)
    with torch.no_grad():
        t_out, t_w = tm(txb, txb, txb, key_padding_mask=tkpm)
    e_out, e_w = em(exb, exb, exb, key_padding_mask=ekpm)
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), **PARITY)
    np.testing.assert_allclose(e_w.numpy(), t_w.numpy(), **PARITY)


def _compare_grads(tmodule, emodule, pairs):
    for tt, ee in pairs:
        np.testing.assert_allclose(ee.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-5)
    tgrads = dict(tmodule.named_parameters())
    for name, prm in emodule.named_parameters():
        np.testing.assert_allclose(prm.grad.numpy(), tgrads[name].grad.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_gradients_match_torch(need_weights):
    torch = pytest.importorskip("torch")
    torch.manual_seed(2)
    tm = torch.nn.MultiheadAttention(E, H, add_bias_kv=True, kdim=6)
    with torch.no_grad():
        for prm in tm.parameters():
            prm.add_(torch.randn_like(prm) * 0.1)
    em = torch_state_to_ember(nn.MultiheadAttention(E, H, add_bias_kv=True, kdim=6), tm)
    q, k, v = f32(L, N, E), f32(S, N, 6, seed=1), f32(S, N, E, seed=2)
    kpm, am = mask_case("kpm_and_bool_2d")
    g_out = f32(L, N, E, seed=4)
    g_w = f32(N, L, S + 1, seed=5)
    results = []
    for mod, mk in ((tm, torch.tensor), (em, ember.tensor)):
        ins = [mk(a).requires_grad_() for a in (q, k, v)]
        out, w = mod(*ins, key_padding_mask=mk(kpm), attn_mask=mk(am),
                     need_weights=need_weights)
        loss = (out * mk(g_out)).sum()
        if need_weights:
            loss = loss + (w * mk(g_w)).sum()
        loss.backward()
        results.append(ins)
    _compare_grads(tm, em, zip(*results))


@pytest.mark.parametrize("config", [
    {},
    {"norm_first": True, "activation": "gelu"},
    {"batch_first": True, "bias": False},
])
def test_encoder_layer_parity_and_gradients_with_torch(config):
    torch = pytest.importorskip("torch")
    torch.manual_seed(3)
    tl = torch.nn.TransformerEncoderLayer(D, NH, FF, **config).eval()
    el = torch_state_to_ember(nn.TransformerEncoderLayer(D, NH, FF, **config).eval(), tl)
    bf = config.get("batch_first", False)
    x = f32(N, S, D) if bf else f32(S, N, D)
    kpm = np.zeros((N, S), bool)
    kpm[2, 3:] = True
    mask = nn.Transformer.generate_square_subsequent_mask(S).numpy()
    (tx, ex), (tkpm, ekpm), (tmask, emask) = both(x), both(kpm), both(mask)
    tx.requires_grad_()
    ex.requires_grad_()
    t_out = tl(tx, src_mask=tmask, src_key_padding_mask=tkpm)
    e_out = el(ex, src_mask=emask, src_key_padding_mask=ekpm)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), **PARITY)
    g = f32(*x.shape, seed=9)
    (t_out * torch.tensor(g)).sum().backward()
    (e_out * ember.tensor(g)).sum().backward()
    _compare_grads(tl, el, [(tx, ex)])


def test_encoder_parity_with_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(4)
    layer = torch.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True)
    te = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(D)).eval()
    ee = torch_state_to_ember(
        nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NH, FF, batch_first=True), 2,
                              norm=nn.LayerNorm(D)).eval(), te)
    x = f32(N, S, D)
    kpm = np.zeros((N, S), bool)
    kpm[0, 3:] = True
    kpm[2, 4:] = True
    (tx, ex), (tkpm, ekpm) = both(x), both(kpm)
    e_out = ee(ex, src_key_padding_mask=ekpm).numpy()
    t_out = te(tx, src_key_padding_mask=tkpm).detach().numpy()  # grad on: PyTorch's regular path
    np.testing.assert_allclose(e_out, t_out, **PARITY)
    causal = nn.Transformer.generate_square_subsequent_mask(S)
    np.testing.assert_allclose(
        ee(ex, mask=causal).numpy(),
        te(tx, mask=torch.tensor(causal.numpy())).detach().numpy(), **PARITY)
    # Under no_grad PyTorch runs padded inputs as nested tensors: padded positions come out
    # as the final norm of zeros instead of their computed values; the rest agrees.
    with torch.no_grad():
        t_nested = te(tx, src_key_padding_mask=tkpm).numpy()
    keep = ~kpm
    np.testing.assert_allclose(e_out[keep], t_nested[keep], **PARITY)


def test_decoder_layer_and_decoder_parity_with_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(5)
    tdl = torch.nn.TransformerDecoderLayer(D, NH, FF, norm_first=True).eval()
    edl = torch_state_to_ember(nn.TransformerDecoderLayer(D, NH, FF, norm_first=True).eval(),
                               tdl)
    tgt, mem = f32(L, N, D), f32(S, N, D, seed=1)
    mem_kpm = np.zeros((N, S), bool)
    mem_kpm[1, 2:] = True
    causal = nn.Transformer.generate_square_subsequent_mask(L).numpy()
    (tt, et_), (tm_, em_), (tk, ek), (tc, ec) = both(tgt), both(mem), both(mem_kpm), both(causal)
    np.testing.assert_allclose(
        edl(et_, em_, tgt_mask=ec, memory_key_padding_mask=ek, tgt_is_causal=True).numpy(),
        tdl(tt, tm_, tgt_mask=tc, memory_key_padding_mask=tk,
            tgt_is_causal=True).detach().numpy(), **PARITY)
    tdec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, NH, FF), 2,
                                       norm=torch.nn.LayerNorm(D)).eval()
    edec = torch_state_to_ember(
        nn.TransformerDecoder(nn.TransformerDecoderLayer(D, NH, FF), 2,
                              norm=nn.LayerNorm(D)).eval(), tdec)
    np.testing.assert_allclose(
        edec(et_, em_, tgt_mask=ec, memory_key_padding_mask=ek).numpy(),
        tdec(tt, tm_, tgt_mask=tc, memory_key_padding_mask=tk).detach().numpy(), **PARITY)


def test_transformer_parity_with_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's nested-tensor warning
        tt = torch.nn.Transformer(D, NH, 2, 2, FF, activation="gelu").eval()
    e = torch_state_to_ember(nn.Transformer(D, NH, 2, 2, FF, activation="gelu").eval(), tt)
    src, tgt = f32(S, N, D), f32(L, N, D, seed=1)
    src_kpm = np.zeros((N, S), bool)
    src_kpm[2, 4] = True
    tgt_kpm = np.zeros((N, L), bool)
    tgt_kpm[0, 3] = True
    causal = nn.Transformer.generate_square_subsequent_mask(L).numpy()
    (ts, es), (tg, eg), (tsk, esk), (ttk, etk), (tc, ec) = (
        both(src), both(tgt), both(src_kpm), both(tgt_kpm), both(causal))
    t_out = tt(ts, tg, tgt_mask=tc, src_key_padding_mask=tsk, tgt_key_padding_mask=ttk,
               memory_key_padding_mask=tsk)
    e_out = e(es, eg, tgt_mask=ec, src_key_padding_mask=esk, tgt_key_padding_mask=etk,
              memory_key_padding_mask=esk)
    assert tuple(e_out.shape) == (L, N, D)
    np.testing.assert_allclose(e_out.numpy(), t_out.detach().numpy(), **PARITY)
