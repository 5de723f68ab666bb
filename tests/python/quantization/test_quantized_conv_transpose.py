"""Statically quantized transposed convolution (nn.quantized.ConvTranspose1d / 2d): the int8 op
against the float transposed convolution of the dequantized operands requantized (strides,
output padding, dilation, groups, extreme zero points, a weight zero point, 1-D, unbatched,
empty), the static workflow, the per-channel refusal PyTorch shares, bad input, and PyTorch's
quantized ConvTranspose2d where PyTorch is installed."""

import io

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.ao import quantization as tq

nnq = ember.ao.nn.quantized
_Q = ember._C._quantized


def _ints(t):
    return t.int_repr().numpy().astype(np.int64)


def _pair(v):
    return list(v) if isinstance(v, tuple) else [v, v]


CASES = [
    # N, C_in, H, W, C_out, kernel, stride, padding, output_padding, dilation, groups
    (2, 8, 5, 6, 4, 3, 2, 1, 1, 1, 1),
    (1, 6, 4, 4, 9, (3, 2), (2, 1), (1, 0), (1, 0), 1, 3),
    (2, 5, 3, 3, 7, 2, 1, 0, 0, 2, 1),
    (1, 16, 7, 7, 16, 4, 2, 1, 0, 1, 4),
    (1, 3, 1, 1, 5, 3, 3, 0, 2, 1, 1),  # one input pixel
    (0, 4, 3, 3, 4, 3, 1, 1, 0, 1, 1),  # empty batch
    (1, 4096, 1, 2, 2, 4, 1, 0, 0, 1, 1),  # deep: columns beyond float's exact range
    # Tall outputs, computed in bands of output rows (each band multiplies the input rows it
    # reads): one image in two bands, several images in several, and strided, dilated groups.
    (1, 4, 40, 40, 8, 3, 2, 1, 1, 1, 1),
    (3, 4, 64, 64, 16, 5, 2, 2, 0, 1, 1),
    (2, 8, 48, 20, 8, 3, 3, 1, 2, 2, 2),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("in_zero_point", [0, 131, 255])
@pytest.mark.parametrize("w_zero_point", [0, -3])
def test_conv_transpose2d_equals_requantized_float(case, in_zero_point, w_zero_point):
    n, c, h, w, o, k, s, p, op, d, g = case
    rng = np.random.default_rng(abs(hash((case, in_zero_point, w_zero_point))) % 2**32)
    k2 = k if isinstance(k, tuple) else (k, k)
    x = ember.tensor(rng.standard_normal((n, c, h, w)).astype(np.float32))
    qx = ember.quantize_per_tensor(x, 0.03, in_zero_point, ember.quint8)
    wt = ember.tensor(rng.standard_normal((c, o // g, *k2)).astype(np.float32) * 0.3)
    qw = ember.quantize_per_tensor(wt, 0.01, w_zero_point, ember.qint8)
    b = ember.tensor(rng.standard_normal(o).astype(np.float32))
    packed = _Q.conv_transpose_prepack(qw, b, _pair(s), _pair(p), _pair(op), _pair(d), g)
    got = _Q.conv_transpose(qx, packed, 0.05, 60)
    ref = F.conv_transpose2d(qx.dequantize(), qw.dequantize(), b, s, p, op, g, d)
    want = ember.quantize_per_tensor(ref, 0.05, 60, ember.quint8)
    assert got.shape == want.shape and got.dtype == ember.quint8
    assert got.q_scale() == 0.05 and got.q_zero_point() == 60
    # Exact integer sums and one requantization: equal up to a rounding midpoint.
    diff = np.abs(_ints(got) - _ints(want))
    assert diff.max(initial=0) <= 1
    assert (diff == 0).mean() > 0.99 if diff.size else True
    if n:  # channels-last memory, as every quantized convolution's output
        assert got.stride()[1] == 1


def test_conv_transpose1d_unbatched_and_channels_last_input():
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((2, 4, 9)).astype(np.float32))
    qx = ember.quantize_per_tensor(x, 0.04, 100, ember.quint8)
    conv = nnq.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1)
    qw = ember.quantize_per_tensor(ember.tensor(rng.standard_normal((4, 6, 3))
                                                .astype(np.float32) * 0.3), 0.01, 0, ember.qint8)
    conv.set_weight_bias(qw, ember.ones(6))
    conv.scale, conv.zero_point = 0.05, 50
    want = ember.quantize_per_tensor(
        F.conv_transpose1d(qx.dequantize(), qw.dequantize(), ember.ones(6), 2, 1, 1), 0.05, 50,
        ember.quint8)
    got = conv(qx)
    assert got.shape == (2, 6, 18)
    assert np.abs(_ints(got) - _ints(want)).max() <= 1
    np.testing.assert_array_equal(_ints(conv(qx[0])), _ints(got[0]))
    conv2 = nnq.ConvTranspose2d(4, 6, 3)
    x4 = ember.tensor(rng.standard_normal((1, 4, 5, 5)).astype(np.float32))
    qx4 = ember.quantize_per_tensor(x4, 0.05, 10, ember.quint8)
    cl = ember.quantize_per_tensor(x4.permute(0, 2, 3, 1).contiguous(), 0.05, 10,
                                   ember.quint8).permute(0, 3, 1, 2)
    np.testing.assert_array_equal(_ints(conv2(cl)), _ints(conv2(qx4)))


def _calibrated_model(qconfig):
    rng = np.random.default_rng(2)
    model = nn.Sequential(tq.QuantStub(), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                          nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), tq.DeQuantStub())
    model.eval()
    model.qconfig = tq.get_default_qconfig("x86")
    model[3].qconfig = qconfig
    prepared = tq.prepare(model)
    data = ember.tensor(rng.standard_normal((16, 3, 6, 6)).astype(np.float32))
    with ember.no_grad():
        prepared(data)
    return model, tq.convert(prepared), data


def test_static_workflow_save_and_load():
    transposed = tq.QConfig(activation=tq.get_default_qconfig("x86").activation,
                            weight=tq.default_weight_observer)
    model, quantized, data = _calibrated_model(transposed)
    assert isinstance(quantized[3], nnq.ConvTranspose2d)
    assert "QuantizedConvTranspose2d(8, 4, kernel_size=(4, 4), stride=(2, 2)" in repr(quantized)
    with ember.no_grad():
        got = quantized(data).numpy()
        want = model(data).numpy()
    assert got.shape == (16, 4, 12, 12)
    # Three int8 layers: within a few output steps of float.
    assert np.abs(got - want).max() < 8 * quantized[3].scale
    buf = io.BytesIO()
    ember.save(quantized.state_dict(), buf)
    _, fresh, _ = _calibrated_model(transposed)
    buf.seek(0)
    fresh.load_state_dict(ember.load(buf))
    with ember.no_grad():
        np.testing.assert_array_equal(fresh(data).numpy(), got)


def test_default_qconfig_mapping_gives_transposed_convs_per_tensor_weights():
    mapping = tq.get_default_qconfig_mapping("x86")
    qconfig = mapping.object_type_qconfigs[nn.ConvTranspose2d]
    assert qconfig.weight().qscheme == ember.per_tensor_symmetric
    assert mapping.object_type_qconfigs[nn.ConvTranspose1d] is qconfig


def test_per_channel_weights_are_refused_with_guidance():
    with pytest.raises(AssertionError, match="per-tensor weight observer"):
        _calibrated_model(tq.get_default_qconfig("x86"))
    w = ember.quantize_per_channel(ember.randn(4, 2, 3, 3), ember.full((4,), 0.01),
                                   ember.zeros(4, dtype=ember.int64), 0, ember.qint8)
    with pytest.raises(RuntimeError, match="per-channel weights are not supported"):
        _Q.conv_transpose_prepack(w, None, [1, 1], [0, 0], [0, 0], [1, 1], 1)


def test_bad_input_raises_clear_errors():
    conv = nnq.ConvTranspose2d(4, 6, 3)
    with pytest.raises(TypeError, match="QuantStub"):
        conv(ember.randn(1, 4, 5, 5))
    with pytest.raises(RuntimeError, match="has 3 channels"):
        conv(ember.quantize_per_tensor(ember.randn(1, 3, 5, 5), 0.1, 0, ember.quint8))
    with pytest.raises(ValueError, match="output_size"):
        conv(ember.quantize_per_tensor(ember.randn(1, 4, 5, 5), 0.1, 0, ember.quint8),
             output_size=[7, 7])
    with pytest.raises(ValueError, match="output_padding"):
        nnq.ConvTranspose2d(4, 6, 3, stride=1, output_padding=1)
    with pytest.raises(ValueError, match="padding_mode"):
        nnq.ConvTranspose2d(4, 6, 3, padding_mode="reflect")
    qw = ember.quantize_per_tensor(ember.randn(4, 6, 3, 3), 0.01, 0, ember.qint8)
    with pytest.raises(TypeError, match="qint8"):
        _Q.conv_transpose_prepack(ember.randn(4, 6, 3, 3), None, [1], [0], [0], [1], 1)
    with pytest.raises(ValueError, match="groups"):
        _Q.conv_transpose_prepack(qw, None, [1], [0], [0], [1], 3)


def test_matches_pytorch_quantized_conv_transpose2d():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 5, 7)).astype(np.float32)
    w = (rng.standard_normal((6, 4, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    tw = torch.quantize_per_tensor(torch.from_numpy(w), 0.01, 0, torch.qint8)
    tconv = torch.ao.nn.quantized.ConvTranspose2d(6, 8, 3, stride=2, padding=1, output_padding=1,
                                                  groups=2)
    tconv.set_weight_bias(tw, torch.from_numpy(b))
    tconv.scale, tconv.zero_point = 0.06, 70
    tx = torch.quantize_per_tensor(torch.from_numpy(x), 0.04, 120, torch.quint8)
    want = tconv(tx).int_repr().numpy().astype(np.int64)
    econv = nnq.ConvTranspose2d(6, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
    econv.set_weight_bias(ember.quantize_per_tensor(ember.from_numpy(w), 0.01, 0, ember.qint8),
                          ember.from_numpy(b))
    econv.scale, econv.zero_point = 0.06, 70
    ex = ember.quantize_per_tensor(ember.from_numpy(x), 0.04, 120, ember.quint8)
    got = _ints(econv(ex))
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1
