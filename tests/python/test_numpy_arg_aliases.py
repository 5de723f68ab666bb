"""NumPy's keyword names, accepted wherever PyTorch's argument parser accepts them: axis= for
dim=, keepdims= for keepdim=, x=/a=/x1= for input=, x2= for other=."""

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # the parity half needs PyTorch
    torch = None


def _check(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_axis_and_keepdims_on_reductions():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = ember.from_numpy(a)
    _check(x.sum(axis=1), a.sum(axis=1))
    _check(ember.sum(x, axis=-1, keepdims=True), a.sum(axis=-1, keepdims=True))
    _check(x.mean(axis=(0, 2)), a.mean(axis=(0, 2)))
    _check(ember.amax(x, axis=0), a.max(axis=0))
    _check(x.max(axis=2).values, a.max(axis=2))
    _check(x.argmax(axis=1), a.argmax(axis=1))
    _check(x.softmax(axis=-1).sum(axis=-1), np.ones((2, 3), np.float32))
    _check(ember.cumsum(x, axis=1), np.cumsum(a, axis=1))
    _check(x.std(axis=0), a.std(axis=0, ddof=1))


def test_input_and_other_aliases():
    a = np.arange(6, dtype=np.float32)
    x = ember.from_numpy(a)
    _check(ember.add(x=x, other=x), a + a)
    _check(ember.mul(x, x2=x), a * a)
    _check(ember.sub(x1=x, other=1), a - 1)


def test_aliases_do_not_shadow_real_arguments():
    x = ember.ones(2, 3)
    # cat has its own axis= spelling; quantize_per_channel has a real `axis` argument.
    assert ember.cat([x, x], axis=0).shape == (4, 3)
    q = ember.quantize_per_channel(x, ember.ones(2), ember.zeros(2, dtype=ember.int64), axis=0,
                                   dtype=ember.qint8)
    assert q.q_per_channel_axis() == 0
    with pytest.raises(TypeError):
        x.sum(dim=0, axis=1)  # both spellings: the alias is left alone, and refused
    with pytest.raises(TypeError):
        x.sum(axiss=0)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
def test_same_calls_as_pytorch():
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    x, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    for call in (lambda m, v: m.sum(v, axis=1), lambda m, v: m.mean(v, axis=0, keepdims=True),
                 lambda m, v: v.sum(axis=-1, keepdims=True), lambda m, v: m.add(x=v, other=v)):
        _check(call(ember, x).numpy(), call(torch, t).numpy())
