"""Quantized tensors: quantize / dequantize against NumPy's formula over dtypes and edge cases
(0-d, empty, non-contiguous input, negative axis, NaN/inf, extreme parameters), views and copies
keeping the parameters, clear errors, and PyTorch's values where PyTorch is installed."""

import numpy as np
import pytest

import ember

QRANGE = {"qint8": (-128, 127), "quint8": (0, 255), "qint32": (-(2**31), 2**31 - 1)}
QDTYPES = [ember.qint8, ember.quint8, ember.qint32]


def np_quantize(x, scale, zp, dtype):
    """PyTorch's quantize_val: float32 product and rounding (half to even), then the clamp."""
    lo, hi = QRANGE[dtype._name]
    inv = np.float32(1) / np.float32(scale)
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.float32(zp) + np.rint(x.astype(np.float32) * inv)
        v = np.where(np.isnan(v), lo, v)
    return np.clip(v.astype(np.float64), lo, hi).astype(np.int64)


def np_dequantize(q, scale, zp):
    return ((q.astype(np.float64) - zp) * scale).astype(np.float32)


@pytest.mark.parametrize("dtype", QDTYPES, ids=lambda d: d._name)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 0, 4), (4, 33)])
def test_quantize_per_tensor_matches_numpy(dtype, shape):
    x = np.asarray(np.random.default_rng(0).standard_normal(shape) * 4, dtype=np.float32)
    scale, zp = 0.037, {"qint8": -3, "quint8": 117, "qint32": 5}[dtype._name]
    q = ember.quantize_per_tensor(ember.from_numpy(x), scale, zp, dtype)
    assert q.dtype == dtype and q.is_quantized and tuple(q.shape) == shape
    assert q.q_scale() == scale and q.q_zero_point() == zp
    assert q.qscheme() == ember.per_tensor_affine
    want = np_quantize(x, scale, zp, dtype)
    np.testing.assert_array_equal(q.int_repr().numpy().astype(np.int64), want)
    np.testing.assert_array_equal(q.dequantize().numpy(), np_dequantize(want, scale, zp))
    assert q.int_repr().dtype == {"qint8": ember.int8, "quint8": ember.uint8,
                                  "qint32": ember.int32}[dtype._name]


@pytest.mark.parametrize("dtype", QDTYPES, ids=lambda d: d._name)
def test_quantize_edge_values(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.25, 0.75, 1e30, -1e30, 2.5, 3.5],
                 dtype=np.float32)
    q = ember.quantize_per_tensor(ember.from_numpy(x), 0.5, 1, dtype)
    np.testing.assert_array_equal(q.int_repr().numpy().astype(np.int64), np_quantize(x, 0.5, 1,
                                                                                     dtype))


def test_quantize_accepts_tensor_params_other_floats_and_strided_input():
    base = np.random.default_rng(1).standard_normal((6, 8))
    x = ember.from_numpy(base)[:, ::2].t()  # float64, non-contiguous
    q = ember.quantize_per_tensor(x, ember.tensor(0.05), ember.tensor(128), ember.quint8)
    want = np_quantize(np.ascontiguousarray(base[:, ::2].T), 0.05, 128, ember.quint8)
    np.testing.assert_array_equal(q.int_repr().numpy(), want)
    qs = ember.quantize_per_tensor([x, x * 2], ember.tensor([0.1, 0.2]), ember.tensor([0, 3]),
                                   ember.qint8)
    assert [t.q_zero_point() for t in qs] == [0, 3]
    assert len(ember.dequantize(qs)) == 2


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_quantize_per_channel_matches_numpy(axis):
    x = np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float32)
    n = x.shape[axis]
    scales = np.linspace(0.01, 0.1, n)
    zps = np.arange(n) - 2
    q = ember.quantize_per_channel(ember.from_numpy(x), ember.from_numpy(scales),
                                   ember.from_numpy(zps), axis, ember.qint8)
    ax = axis % 3
    assert q.qscheme() == ember.per_channel_affine and q.q_per_channel_axis() == ax
    np.testing.assert_array_equal(q.q_per_channel_scales().numpy(), scales)
    np.testing.assert_array_equal(q.q_per_channel_zero_points().numpy(), zps)
    shape = [1, 1, 1]
    shape[ax] = n
    s, z = scales.reshape(shape), zps.reshape(shape)
    lo, hi = QRANGE["qint8"]
    inv = np.float32(1) / s.astype(np.float32)
    want = np.clip(np.float32(z) + np.rint(x * inv), lo, hi).astype(np.int64)
    np.testing.assert_array_equal(q.int_repr().numpy().astype(np.int64), want)
    np.testing.assert_allclose(q.dequantize().numpy(), ((want - z) * s).astype(np.float32),
                               rtol=1e-7)


def test_quantize_per_tensor_dynamic_uses_the_input_range():
    x = ember.tensor([-1.0, 0.5, 3.0])
    q = ember.quantize_per_tensor_dynamic(x, ember.quint8, False)
    assert q.q_zero_point() == 64 and q.q_scale() == pytest.approx(4 / 255)
    np.testing.assert_allclose(q.dequantize().numpy(), x.numpy(), atol=q.q_scale() / 2)
    r = ember.quantize_per_tensor_dynamic(x, ember.quint8, True)
    assert r.int_repr().numpy().max() <= 127


def test_views_and_copies_keep_parameters():
    q = ember.quantize_per_tensor(ember.arange(12.0).reshape(3, 4), 0.5, 2, ember.quint8)
    for v in (q[1:], q.t(), q.reshape(4, 3), q.view(12)[::3], q.unsqueeze(0), q[:, 1],
              q.detach(), q.clone(), q.t().contiguous(), q.permute(1, 0)):
        assert v.dtype == ember.quint8
        assert (v.q_scale(), v.q_zero_point()) == (0.5, 2)
    np.testing.assert_array_equal(q.t().contiguous().dequantize().numpy(),
                                  q.dequantize().numpy().T)
    assert q[1:]._base is q
    c = q.t().contiguous()
    np.testing.assert_array_equal(c.int_repr().numpy(), q.int_repr().numpy().T)


def test_per_channel_views_keep_the_axis_in_place():
    q = ember.quantize_per_channel(ember.randn(3, 4), ember.tensor([0.1, 0.2, 0.3]),
                                   ember.tensor([0, 0, 0]), 0, ember.qint8)
    assert q[:, 1:3].q_per_channel_axis() == 0
    np.testing.assert_array_equal(q[:, 1:3].dequantize().numpy(), q.dequantize().numpy()[:, 1:3])
    with pytest.raises(RuntimeError, match="channel axis"):
        q.t()
    np.testing.assert_array_equal(q.clone().dequantize().numpy(), q.dequantize().numpy())


def test_make_quantized_from_integers_copies():
    ints = ember.tensor([[1, 2], [3, 4]], dtype=ember.int8)
    q = ember._make_per_tensor_quantized_tensor(ints, 0.5, 1)
    assert q.dtype == ember.qint8
    ints[0, 0] = 9
    assert q.int_repr()[0, 0].item() == 1
    np.testing.assert_array_equal(q.dequantize().numpy(), [[0, 0.5], [1, 1.5]])
    pc = ember._make_per_channel_quantized_tensor(ember.tensor([[1, 2], [3, 4]], dtype=ember.uint8),
                                                  ember.tensor([1.0, 2.0]),
                                                  ember.tensor([0, 1]), 1)
    np.testing.assert_array_equal(pc.dequantize().numpy(), [[1, 2], [3, 6]])


def test_printing_matches_pytorch_layout():
    q = ember.quantize_per_tensor(ember.tensor([-1.0, 0.0, 1.0, 2.0]), 0.1, 10, ember.quint8)
    assert repr(q) == ("tensor([-1.,  0.,  1.,  2.], size=(4,), dtype=ember.quint8,\n"
                       "       quantization_scheme=ember.per_tensor_affine, scale=0.1, "
                       "zero_point=10)")
    assert repr(ember.per_channel_affine) == "ember.per_channel_affine"
    assert ember.qint8.itemsize == 1 and ember.qint32.itemsize == 4
    assert ember.quint8.is_signed is False and ember.qint8.is_signed is True
    assert not ember.qint8.is_floating_point


def test_bad_input_raises_clear_errors():
    x = ember.randn(3)
    with pytest.raises(TypeError, match="floating point"):
        ember.quantize_per_tensor(ember.arange(3), 0.1, 0, ember.quint8)
    with pytest.raises(ValueError, match="scale must be positive"):
        ember.quantize_per_tensor(x, 0.0, 0, ember.quint8)
    with pytest.raises(ValueError, match="scale must be positive"):
        ember.quantize_per_tensor(x, float("nan"), 0, ember.quint8)
    with pytest.raises(ValueError, match="outside quint8"):
        ember.quantize_per_tensor(x, 0.1, 256, ember.quint8)
    with pytest.raises(ValueError, match="outside qint8"):
        ember.quantize_per_tensor(x, 0.1, -129, ember.qint8)
    with pytest.raises(TypeError, match="dtype must be"):
        ember.quantize_per_tensor(x, 0.1, 0, ember.float32)
    with pytest.raises(IndexError, match="axis 2"):
        ember.quantize_per_channel(x, ember.tensor([0.1]), ember.tensor([0]), 2, ember.qint8)
    with pytest.raises(ValueError, match="1 scales .* for 3 channels"):
        ember.quantize_per_channel(x, ember.tensor([0.1]), ember.tensor([0]), 0, ember.qint8)
    q = ember.quantize_per_tensor(x, 0.1, 0, ember.qint8)
    for op in (lambda: q + 1, lambda: q.sum(), lambda: ember.exp(q), lambda: q * q,
               lambda: ember.matmul(q, q)):
        with pytest.raises(NotImplementedError, match="dequantize"):
            op()
    with pytest.raises(TypeError, match="dequantize"):
        q.numpy()
    with pytest.raises(RuntimeError, match="dequantize"):
        ember.empty(3).copy_(q)
    with pytest.raises(RuntimeError, match="per-channel"):
        q.q_per_channel_scales()
    with pytest.raises(TypeError, match="quantized tensor"):
        x.q_scale()
    with pytest.raises(RuntimeError, match="quantized"):
        q.view(ember.int8)


def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32) * 3
    for dtype, tdtype, zp in ((ember.qint8, torch.qint8, -5), (ember.quint8, torch.quint8, 100),
                              (ember.qint32, torch.qint32, 7)):
        q = ember.quantize_per_tensor(ember.from_numpy(x), 0.043, zp, dtype)
        t = torch.quantize_per_tensor(torch.from_numpy(x), 0.043, zp, tdtype)
        np.testing.assert_array_equal(q.int_repr().numpy(), t.int_repr().numpy())
        # Ember rounds (q - zp) * scale once (in double); PyTorch's vectorised form may differ
        # in the last bit (docs/differences.md).
        np.testing.assert_allclose(q.dequantize().numpy(), t.dequantize().numpy(), rtol=2.5e-7)
    scales = np.array([0.01, 0.02, 0.05, 0.1])
    zps = np.array([0, 1, -1, 3])
    q = ember.quantize_per_channel(ember.from_numpy(x), ember.from_numpy(scales),
                                   ember.from_numpy(zps), 0, ember.qint8)
    t = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales),
                                   torch.from_numpy(zps), 0, torch.qint8)
    np.testing.assert_array_equal(q.int_repr().numpy(), t.int_repr().numpy())
    np.testing.assert_allclose(q.dequantize().numpy(), t.dequantize().numpy(), rtol=1e-7)
    for reduce_range in (False, True):
        q = ember.quantize_per_tensor_dynamic(ember.from_numpy(x), ember.quint8, reduce_range)
        t = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), torch.quint8, reduce_range)
        assert (q.q_scale(), q.q_zero_point()) == (pytest.approx(t.q_scale()), t.q_zero_point())
        np.testing.assert_array_equal(q.int_repr().numpy(), t.int_repr().numpy())


def test_integer_moving_ops_keep_parameters():
    import copy
    import pickle

    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    q = ember.quantize_per_tensor(ember.from_numpy(x), 0.1, 5, ember.quint8)
    r = ember.quantize_per_tensor(ember.from_numpy(-x), 0.1, 5, ember.quint8)
    d, dr = q.dequantize().numpy(), r.dequantize().numpy()
    idx = ember.tensor([2, 0])
    cases = {
        "cat": (ember.cat([q, r]), np.concatenate([d, dr])),
        "stack": (ember.stack([q, r], 1), np.stack([d, dr], 1)),
        "index_select": (q.index_select(1, idx), d[:, [2, 0]]),
        "advanced index": (q[idx], d[[2, 0]]),
        "bool index": (q[ember.tensor([True, False, True])], d[[0, 2]]),
        "flip": (q.flip(0), d[::-1]),
        "roll": (q.roll(1, 1), np.roll(d, 1, 1)),
        "repeat": (q.repeat(2, 1), np.tile(d, (2, 1))),
        "take": (q.take(ember.tensor([0, 5])), d.reshape(-1)[[0, 5]]),
        "gather": (q.gather(1, ember.tensor([[0], [1], [2]])), d[[0, 1, 2], [0, 1, 2]][:, None]),
        "masked_select": (q.masked_select(ember.from_numpy(x > 0)), d[x > 0]),
        "deepcopy": (copy.deepcopy(q), d),
        "pickle": (pickle.loads(pickle.dumps(q)), d),
        "empty_like": (ember.empty_like(q), None),
    }
    for name, (got, want) in cases.items():
        assert got.dtype == ember.quint8, name
        assert (got.q_scale(), got.q_zero_point()) == (0.1, 5), name
        if want is not None:
            np.testing.assert_array_equal(got.dequantize().numpy(), want, err_msg=name)
    with pytest.raises(RuntimeError, match="same quantization parameters"):
        ember.cat([q, ember.quantize_per_tensor(ember.from_numpy(x), 0.2, 5, ember.quint8)])
    with pytest.raises(RuntimeError, match="mixes quint8 and float32"):
        ember.cat([q, ember.from_numpy(x)])
    with pytest.raises(NotImplementedError, match="advanced indices"):
        q[idx] = q[:2]
    pc = ember.quantize_per_channel(ember.from_numpy(x), ember.tensor([0.1, 0.2, 0.3]),
                                    ember.tensor([0, 0, 0]), 0, ember.qint8)
    np.testing.assert_array_equal(pc.index_select(1, idx).dequantize().numpy(),
                                  pc.dequantize().numpy()[:, [2, 0]])
    with pytest.raises(RuntimeError, match="channel axis"):
        pc.index_select(0, idx)
    with pytest.raises(RuntimeError, match="per-channel"):
        ember.cat([pc, pc])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(pc)).dequantize().numpy(),
                                  pc.dequantize().numpy())


def test_factories_refuse_quantized_dtypes():
    q = ember.quantize_per_tensor(ember.randn(3), 0.1, 2, ember.qint8)
    for make in (lambda: ember.empty(3, dtype=ember.qint8),
                 lambda: ember.zeros(3, dtype=ember.quint8),
                 lambda: ember.tensor([], dtype=ember.qint8), lambda: q.new_zeros(2),
                 lambda: ember.zeros_like(ember.ones(2), dtype=ember.qint8)):
        with pytest.raises(TypeError, match="quantization parameters"):
            make()
    e = ember._empty_affine_quantized([2, 3], scale=0.5, zero_point=3, dtype=ember.quint8)
    assert (e.q_scale(), e.q_zero_point()) == (0.5, 3)
    np.testing.assert_array_equal(e.dequantize().numpy(), np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="rebuild"):
        ember._C._rebuild_tensor(q.int_repr().untyped_storage(), ember.qint8, (3,), (1,), 0)
