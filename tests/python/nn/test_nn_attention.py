"""scaled_dot_product_attention (math form) and the distance functions (normalize,
cosine_similarity, pairwise_distance): NumPy references, masks, causality, scale, grouped-query
heads, dropout, fully masked rows, gradcheck, errors, and parity with PyTorch."""

import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def np_softmax(x):
    m = np.max(x, -1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(x - m)
    s = e.sum(-1, keepdims=True)
    return e / np.where(s == 0, 1, s)


def np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return np_softmax(s) @ v


@pytest.mark.parametrize("shape", [((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)),
                                   ((4, 8), (6, 8), (6, 3))])
def test_sdpa_matches_numpy(shape):
    q, k, v = (rand(*s, seed=i) for i, s in enumerate(shape))
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v))
    np.testing.assert_allclose(y.numpy(), np_sdpa(q, k, v), rtol=1e-12)
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                       scale=0.3)
    np.testing.assert_allclose(y.numpy(), np_sdpa(q, k, v, scale=0.3), rtol=1e-12)


def test_sdpa_masks_and_causal():
    q, k, v = rand(2, 5, 4), rand(2, 5, 4, seed=1), rand(2, 5, 3, seed=2)
    bool_mask = rand(5, 5, seed=3) > 0
    bool_mask[:, 0] = True
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                       attn_mask=ember.tensor(bool_mask))
    np.testing.assert_allclose(y.numpy(), np_sdpa(q, k, v, mask=bool_mask), rtol=1e-12)
    float_mask = rand(2, 5, 5, seed=4)
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                       attn_mask=ember.tensor(float_mask))
    np.testing.assert_allclose(y.numpy(), np_sdpa(q, k, v, mask=float_mask), rtol=1e-12)
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                       is_causal=True)
    np.testing.assert_allclose(y.numpy(), np_sdpa(q, k, v, causal=True), rtol=1e-12)
    # A query whose keys are all masked out gets zeros (PyTorch's math backend), not NaN.
    none = np.ones((5, 5), bool)
    none[2] = False
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                       attn_mask=ember.tensor(none))
    assert (y.numpy()[:, 2] == 0).all() and np.isfinite(y.numpy()).all()


def test_sdpa_grouped_query_heads():
    q, k, v = rand(1, 4, 3, 8), rand(1, 2, 5, 8, seed=1), rand(1, 2, 5, 6, seed=2)
    y = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                       enable_gqa=True)
    ref = np_sdpa(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)
    with pytest.raises(RuntimeError, match="must be a multiple"):
        F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(rand(1, 3, 5, 8)),
                                       ember.tensor(rand(1, 3, 5, 6)), enable_gqa=True)


def test_sdpa_dropout_is_reproducible():
    q, k, v = (ember.tensor(rand(2, 4, 8, seed=i)) for i in range(3))
    ember.manual_seed(0)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ember.manual_seed(0)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), F.scaled_dot_product_attention(q, k, v).numpy())


@pytest.mark.parametrize("p", [-0.5, 1.5, float("nan")])
def test_sdpa_dropout_outside_zero_one_raises(p):
    # PyTorch's math backend applied a negative probability as no dropout at all; a NaN would
    # do the same here. Both backends refuse them, as they refuse p > 1.
    q = ember.tensor(rand(2, 4, 8))
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention: dropout probability"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=p)
    # The ends of the range stay valid: p = 1 drops every weight.
    assert (F.scaled_dot_product_attention(q, q, q, dropout_p=1.0).numpy() == 0).all()


def test_sdpa_gradcheck():
    q, k, v = (ember.tensor(rand(2, 3, 4, seed=i), requires_grad=True) for i in range(3))
    mask = ember.tensor(rand(3, 3, seed=5))
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask),
                     (q, k, v))
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
                     (q, k, v))
    assert gradgradcheck(F.scaled_dot_product_attention, (q, k, v))


def test_sdpa_errors():
    q = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(3, 3, dtype=ember.bool),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="same embedding size"):
        F.scaled_dot_product_attention(q, ember.randn(2, 3, 5), q)
    with pytest.raises(RuntimeError, match="same sequence length"):
        F.scaled_dot_product_attention(q, q, ember.randn(2, 4, 4))
    with pytest.raises(RuntimeError, match="to have the same dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.7}, {"mask": "bool"},
                                {"mask": "float"}])
def test_sdpa_matches_torch(kw):
    torch = pytest.importorskip("torch")
    q, k, v = rand(2, 2, 4, 8), rand(2, 2, 6, 8, seed=1), rand(2, 2, 6, 5, seed=2)
    kw = dict(kw)
    mask = kw.pop("mask", None)
    tm = em = None
    if mask == "bool":
        m = rand(4, 6, seed=3) > 0
        m[1] = False  # one fully masked query
        tm, em = torch.tensor(m), ember.tensor(m)
    elif mask == "float":
        m = rand(2, 1, 4, 6, seed=3)
        tm, em = torch.tensor(m), ember.tensor(m)
    tt = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    et = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
    ty = torch.nn.functional.scaled_dot_product_attention(*tt, attn_mask=tm, **kw)
    ey = F.scaled_dot_product_attention(*et, attn_mask=em, **kw)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rand(*ty.shape, seed=9)
    (ty * torch.tensor(w)).sum().backward()
    (ey * ember.tensor(w)).sum().backward()
    for e, t in zip(et, tt):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


# ---- normalize, cosine_similarity, pairwise_distance ---------------------------------------------


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1), (math.inf, 1)])
def test_normalize(p, dim):
    x = rand(3, 4, 2)
    norm = np.linalg.norm(x, ord=p, axis=dim, keepdims=True) if p != 3.0 else (
        (np.abs(x) ** 3).sum(dim, keepdims=True) ** (1 / 3))
    y = F.normalize(ember.tensor(x), p=p, dim=dim)
    np.testing.assert_allclose(y.numpy(), x / np.maximum(norm, 1e-12), rtol=1e-12)
    z = ember.zeros(2, 3, dtype=ember.float64)
    assert (F.normalize(z).numpy() == 0).all()
    out = ember.empty(3, 4, 2, dtype=ember.float64)
    F.normalize(ember.tensor(x), p=p, dim=dim, out=out)
    np.testing.assert_allclose(out.numpy(), y.numpy())
    t = ember.tensor(x, requires_grad=True)
    if p != math.inf:
        assert gradcheck(lambda a: F.normalize(a, p=p, dim=dim), (t,))


def test_cosine_similarity():
    a, b = rand(5, 7), rand(5, 7, seed=1)
    y = F.cosine_similarity(ember.tensor(a), ember.tensor(b))
    ref = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)
    # Broadcasting and dim.
    y = F.cosine_similarity(ember.tensor(a), ember.tensor(b[0]), dim=-1)
    ref = (a * b[0]).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b[0]))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)
    # A zero vector gives 0 (eps clamps its norm).
    assert F.cosine_similarity(ember.zeros(1, 3), ember.ones(1, 3)).tolist() == [0.0]
    # Integers compute in the default dtype.
    ints = F.cosine_similarity(ember.tensor([[1, 2]]), ember.tensor([[2, 4]]))
    assert ints.dtype == ember.float32
    ta, tb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    assert gradcheck(F.cosine_similarity, (ta, tb))
    with pytest.raises(RuntimeError):
        F.cosine_similarity(ember.randn(3, 4), ember.randn(2, 4))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, math.inf, 3.0])
def test_pairwise_distance(p, keepdim=False):
    a, b = rand(4, 6), rand(4, 6, seed=1)
    d = a - b + 1e-6
    if p == 0:
        ref = (d != 0).sum(-1).astype(float)
    elif p == math.inf:
        ref = np.abs(d).max(-1)
    else:
        ref = (np.abs(d) ** p).sum(-1) ** (1 / p)
    y = F.pairwise_distance(ember.tensor(a), ember.tensor(b), p=p)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)
    assert F.pairwise_distance(ember.tensor(a), ember.tensor(b), p=p, keepdim=True).shape == (4, 1)
    assert F.pairwise_distance(ember.tensor(a), ember.tensor(b[0]), p=p).shape == (4,)
    assert F.pairwise_distance(ember.tensor(a[0]), ember.tensor(b[0]), p=p).shape == ()
    if p not in (0.0, math.inf):
        ta, tb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
        assert gradcheck(lambda x, y: F.pairwise_distance(x, y, p=p), (ta, tb))


def test_pairwise_distance_scalars_and_errors():
    y = F.pairwise_distance(ember.tensor(1.0, dtype=ember.float64),
                            ember.tensor(2.0, dtype=ember.float64))
    assert abs(float(y) - (1 - 1e-6)) < 1e-12
    with pytest.raises(RuntimeError):
        F.pairwise_distance(ember.randn(2, 4), ember.randn(2, 3))


def test_distances_match_torch():
    torch = pytest.importorskip("torch")
    a, b = rand(3, 5, 4), rand(5, 4, seed=1)
    TF = torch.nn.functional
    for efn, tfn, kw in [
        (F.cosine_similarity, TF.cosine_similarity, {"dim": -1}),
        (F.pairwise_distance, TF.pairwise_distance, {"p": 1.5, "keepdim": True}),
        (F.normalize, TF.normalize, {"p": 2.0, "dim": 1}),
    ]:
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
        if efn is F.normalize:
            ty, ey = tfn(ta, **kw), efn(ea, **kw)
        else:
            ty, ey = tfn(ta, tb, **kw), efn(ea, eb, **kw)
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
        w = rand(*ty.shape, seed=2)
        (ty * torch.tensor(w)).sum().backward()
        (ey * ember.tensor(w)).sum().backward()
        np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-10)
        if efn is not F.normalize:
            np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-10)
