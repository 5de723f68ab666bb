"""ember.nn.attention.bias (causal_upper_left, causal_lower_right, CausalBias): the masks they
stand for, scaled_dot_product_attention with them on both backends against NumPy, fully masked
queries, gradcheck, errors, pickling, and parity with PyTorch."""

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck
from ember.nn.attention import SDPBackend, sdpa_kernel
from ember.nn.attention.bias import CausalBias, CausalVariant, causal_lower_right, causal_upper_left

SIZES = [(3, 5), (5, 5), (5, 3), (1, 7), (6, 1)]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def np_mask(variant, L, S):
    offset = 0 if variant == CausalVariant.UPPER_LEFT else S - L
    return np.tril(np.ones((L, S), bool), offset)


def np_sdpa(q, k, v, mask):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    s = np.where(mask, s, -np.inf)
    m = np.max(s, -1, keepdims=True)
    e = np.exp(s - np.where(np.isneginf(m), 0, m))
    total = e.sum(-1, keepdims=True)
    return e / np.where(total == 0, 1, total) @ v


def make(variant, L, S):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L > S, lower right: tested below
        return (causal_upper_left if variant == CausalVariant.UPPER_LEFT else
                causal_lower_right)(L, S)


@pytest.mark.parametrize("variant", list(CausalVariant))
@pytest.mark.parametrize("L,S", SIZES)
def test_materialize(variant, L, S):
    bias = make(variant, L, S)
    assert isinstance(bias, ember.Tensor) and isinstance(bias, CausalBias)
    assert (bias.variant, bias.seq_len_q, bias.seq_len_kv) == (variant, L, S)
    mask = bias._materialize()
    assert mask.dtype == ember.bool and tuple(mask.shape) == (L, S)
    np.testing.assert_array_equal(mask.numpy(), np_mask(variant, L, S))
    assert repr(bias) == repr(mask)


@pytest.mark.parametrize("backend", [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("variant", list(CausalVariant))
@pytest.mark.parametrize("L,S", SIZES)
def test_sdpa_matches_numpy(backend, dtype, variant, L, S):
    q, k, v = rand(2, 3, L, 8), rand(2, 3, S, 8, seed=1), rand(2, 3, S, 5, seed=2)
    mask = np_mask(variant, L, S)
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(
            *(ember.tensor(x.astype(dtype)) for x in (q, k, v)), attn_mask=make(variant, L, S))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, mask), rtol=tol, atol=tol)
    # Queries without keys (lower right with L > S) give zeros, never NaN.
    blind = ~mask.any(-1)
    assert np.isfinite(out.numpy()).all() and (out.numpy()[..., blind, :] == 0).all()


def test_upper_left_is_is_causal():
    q, k, v = (ember.tensor(rand(1, 2, 4, 8, seed=i)) for i in range(3))
    a = F.scaled_dot_product_attention(q, k, v, causal_upper_left(4, 4))
    b = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("backend", [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH])
@pytest.mark.parametrize("variant", list(CausalVariant))
def test_gradcheck(backend, variant):
    q = ember.tensor(rand(1, 2, 3, 4), requires_grad=True)
    k = ember.tensor(rand(1, 2, 5, 4, seed=1), requires_grad=True)
    v = ember.tensor(rand(1, 2, 5, 3, seed=2), requires_grad=True)
    bias = make(variant, 3, 5)
    with sdpa_kernel(backend):
        assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, bias), (q, k, v))


def test_grouped_heads_and_dropout_pass_through():
    q, k, v = rand(1, 4, 2, 8), rand(1, 2, 6, 8, seed=1), rand(1, 2, 6, 8, seed=2)
    out = F.scaled_dot_product_attention(*(ember.tensor(x) for x in (q, k, v)),
                                         causal_lower_right(2, 6), enable_gqa=True)
    ref = np_sdpa(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1),
                  np_mask(CausalVariant.LOWER_RIGHT, 2, 6))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    ember.manual_seed(0)
    a = F.scaled_dot_product_attention(*(ember.tensor(x) for x in (q, q, q)),
                                       causal_upper_left(2, 2), dropout_p=0.5)
    ember.manual_seed(0)
    b = F.scaled_dot_product_attention(*(ember.tensor(x) for x in (q, q, q)), dropout_p=0.5,
                                       is_causal=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_lower_right_with_more_queries_than_keys_warns():
    with pytest.warns(UserWarning, match="first 2 queries without keys: their outputs are zeros"):
        causal_lower_right(5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        causal_lower_right(3, 5)
        causal_upper_left(5, 3)


def test_errors():
    q = ember.randn(1, 2, 3, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(q, q, q, causal_upper_left(3, 3), is_causal=True)
    with pytest.raises(RuntimeError, match="a CausalBias for 3 queries and 4 keys was given "
                                           "with 3 queries and 3 keys"):
        F.scaled_dot_product_attention(q, q, q, causal_lower_right(3, 4))
    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        causal_upper_left(3)
    with pytest.raises(AssertionError, match="causal_lower_right only supports 2D tensors"):
        causal_lower_right(3, 4, 5)
    with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
        CausalBias(1, 3, 4)
    with pytest.raises(ValueError, match="seq_len_kv must be a non-negative int, got -1"):
        causal_upper_left(3, -1)


def test_pickle_and_deepcopy():
    bias = causal_lower_right(2, 5)
    for other in (pickle.loads(pickle.dumps(bias)), copy.deepcopy(bias)):
        assert type(other) is CausalBias
        assert (other.variant, other.seq_len_q, other.seq_len_kv) == (CausalVariant.LOWER_RIGHT,
                                                                        2, 5)


@pytest.mark.parametrize("variant", list(CausalVariant))
@pytest.mark.parametrize("L,S", SIZES)
def test_matches_torch(variant, L, S):
    torch = pytest.importorskip("torch")
    import torch.nn.attention.bias as tbias

    q, k, v = rand(2, 3, L, 8), rand(2, 3, S, 8, seed=1), rand(2, 3, S, 5, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tb = (tbias.causal_upper_left if variant == CausalVariant.UPPER_LEFT else
              tbias.causal_lower_right)(L, S)
    t = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(x) for x in (q, k, v)), tb)
    e = F.scaled_dot_product_attention(*(ember.tensor(x) for x in (q, k, v)),
                                       make(variant, L, S))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(make(variant, L, S)._materialize().numpy(),
                                  tb._materialize().numpy())
