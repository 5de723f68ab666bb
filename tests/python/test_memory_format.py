"""Memory formats: channels_last / channels_last_3d through contiguous, is_contiguous, to, clone,
the *_like factories and Module.to, against NumPy (values) and the dense stride orders, and
against PyTorch's strides where PyTorch is installed."""

import numpy as np
import pytest

import ember
import ember.nn as nn


def _nhwc_strides(shape):
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def test_contiguous_channels_last_strides_values_and_query():
    x = ember.randn(2, 3, 4, 5)
    assert x.is_contiguous()
    assert not x.is_contiguous(memory_format=ember.channels_last)
    y = x.contiguous(memory_format=ember.channels_last)
    assert y.shape == x.shape and y.stride() == _nhwc_strides((2, 3, 4, 5))
    assert y.is_contiguous(memory_format=ember.channels_last)
    assert not y.is_contiguous()
    assert not y.is_contiguous(memory_format=ember.contiguous_format)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    # Already channels-last: the same tensor back, as PyTorch.
    assert y.contiguous(memory_format=ember.channels_last) is y
    back = y.contiguous()
    assert back.is_contiguous() and back.stride() == x.stride()
    np.testing.assert_array_equal(back.numpy(), x.numpy())


def test_size_one_dims_and_other_ranks():
    # One channel: NCHW and NHWC orders coincide.
    assert ember.randn(2, 1, 4, 5).is_contiguous(memory_format=ember.channels_last)
    assert not ember.randn(3, 4).is_contiguous(memory_format=ember.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4"):
        ember.randn(3, 4, 5).contiguous(memory_format=ember.channels_last)
    z = ember.randn(2, 3, 4, 5, 6)
    z3 = z.contiguous(memory_format=ember.channels_last_3d)
    assert z3.stride() == (4 * 5 * 6 * 3, 1, 5 * 6 * 3, 6 * 3, 3)
    assert z3.is_contiguous(memory_format=ember.channels_last_3d)
    np.testing.assert_array_equal(z3.numpy(), z.numpy())
    with pytest.raises(RuntimeError, match="required rank 5"):
        ember.randn(2, 3, 4, 5).contiguous(memory_format=ember.channels_last_3d)
    with pytest.raises(TypeError, match="memory_format"):
        ember.randn(2, 3).contiguous(memory_format="channels_last")


def test_to_clone_and_conversions():
    x = ember.randn(2, 3, 4, 5)
    y = x.to(memory_format=ember.channels_last)
    assert y.stride() == _nhwc_strides(x.shape)
    assert y.to(memory_format=ember.channels_last) is y
    d = x.to(ember.float64, memory_format=ember.channels_last)
    assert d.dtype == ember.float64 and d.stride() == _nhwc_strides(x.shape)
    np.testing.assert_array_equal(d.numpy(), x.numpy().astype(np.float64))
    h = x.double(memory_format=ember.channels_last)
    assert h.stride() == _nhwc_strides(x.shape)
    c = y.clone()
    assert c.stride() == y.stride() and c.data_ptr() != y.data_ptr()  # preserve_format
    c2 = y.clone(memory_format=ember.channels_last)
    assert c2.stride() == y.stride() and c2.data_ptr() != y.data_ptr()  # always a copy
    c3 = y.clone(memory_format=ember.contiguous_format)
    assert c3.is_contiguous()
    np.testing.assert_array_equal(c3.numpy(), x.numpy())


@pytest.mark.parametrize("factory", ["empty_like", "zeros_like", "ones_like", "rand_like",
                                     "randn_like"])
def test_like_factories_take_channels_last(factory):
    x = ember.randn(2, 3, 4, 5)
    y = getattr(ember, factory)(x, memory_format=ember.channels_last)
    assert y.shape == x.shape and y.stride() == _nhwc_strides(x.shape)
    if factory == "zeros_like":
        assert float(y.abs().sum()) == 0
    if factory == "ones_like":
        assert float(y.sum()) == x.numel()
    f = ember.full_like(x, 2.5, memory_format=ember.channels_last)
    assert f.stride() == _nhwc_strides(x.shape) and float(f.mean()) == 2.5


def test_module_to_channels_last_converts_4d_weights_and_keeps_outputs():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.Conv2d(8, 4, 1)).eval()
    x = ember.randn(2, 3, 6, 6)
    with ember.no_grad():
        want = model(x).numpy()
    model.to(memory_format=ember.channels_last)
    assert model[0].weight.stride() == _nhwc_strides(tuple(model[0].weight.shape))
    assert model[1].weight.is_contiguous()  # 1-D parameters are left as they are
    with ember.no_grad():
        got = model(x.to(memory_format=ember.channels_last)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_gradient_flows_through_the_layout_change():
    x = ember.randn(2, 3, 4, 5, dtype=ember.float64, requires_grad=True)

    def f(t):
        return (t.contiguous(memory_format=ember.channels_last) * 2).sin()

    assert ember.autograd.gradcheck(f, (x,))


def test_strides_match_pytorch():
    torch = pytest.importorskip("torch")
    for shape in [(2, 3, 4, 5), (1, 1, 3, 3), (2, 8, 1, 1), (3, 2, 1, 4)]:
        a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        t = torch.from_numpy(a).contiguous(memory_format=torch.channels_last)
        e = ember.from_numpy(a).contiguous(memory_format=ember.channels_last)
        assert e.stride() == t.stride()
        for fmt_t, fmt_e in [(torch.channels_last, ember.channels_last),
                             (torch.contiguous_format, ember.contiguous_format)]:
            assert e.is_contiguous(memory_format=fmt_e) == t.is_contiguous(memory_format=fmt_t)
            plain_t = torch.from_numpy(a)
            plain_e = ember.from_numpy(a)
            assert plain_e.is_contiguous(memory_format=fmt_e) == \
                plain_t.is_contiguous(memory_format=fmt_t)
