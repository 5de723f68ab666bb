"""Statically quantized CNNs: the int8 convolution against the float convolution of the
dequantized operands requantized (odd shapes, groups, strides, dilation, padding with extreme
zero points, 1-D, unbatched), quantized pooling / activations / FloatFunctional against their
float definitions, the static and QAT workflows on a CNN trained on digits, and PyTorch's
quantized Conv2d where PyTorch is installed."""

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.ao import quantization as tq

nnq = ember.ao.nn.quantized
nni = ember.ao.nn.intrinsic
nniq = ember.ao.nn.intrinsic.quantized
_Q = ember._C._quantized


def _ints(t):
    return t.int_repr().numpy().astype(np.int64)


def _quantized_weight(rng, shape, per_channel, zero_point=0):
    w = ember.tensor(rng.standard_normal(shape).astype(np.float32) * 0.3)
    if per_channel:
        scales = ember.tensor(rng.uniform(0.005, 0.02, shape[0]))
        zps = ember.zeros(shape[0], dtype=ember.int64)
        return ember.quantize_per_channel(w, scales, zps, 0, ember.qint8)
    return ember.quantize_per_tensor(w, 0.01, zero_point, ember.qint8)


CASES = [
    # N, C, H, W, O, kernel, stride, padding, dilation, groups
    (2, 8, 9, 7, 16, 3, 1, 1, 1, 1),
    (1, 3, 10, 11, 5, 3, 2, 0, 1, 1),
    (2, 8, 6, 6, 8, 1, 1, 0, 1, 1),  # pointwise: the input is the GEMM's operand as it is
    (2, 6, 7, 7, 9, 3, 1, 2, 2, 3),
    (1, 4, 5, 5, 4, 3, 1, 1, 1, 4),  # depthwise
    (3, 5, 12, 4, 7, (3, 1), (2, 1), (1, 0), 1, 1),
    (1, 16, 4, 4, 33, 2, 2, 1, 1, 1),
    (0, 4, 5, 5, 4, 3, 1, 1, 1, 1),  # empty batch
    # Groups of 2, 4, 8 and 16 channels in and out: the direct grouped kernel (symmetric
    # weights), channel counts that leave lanes over, strides, dilation, 1-wide kernels.
    (2, 16, 7, 9, 16, 3, 1, 1, 1, 8),
    (1, 32, 6, 6, 32, 3, 2, 1, 1, 8),
    (2, 24, 5, 6, 24, 3, 1, 1, 1, 3),
    (1, 48, 7, 5, 48, 3, 1, 2, 2, 3),
    (1, 20, 5, 5, 20, (1, 3), 1, (0, 1), 1, 5),
    # Stems: a few input channels, outputs in whole vectors (the direct kernel too).
    (2, 3, 15, 13, 32, 3, 2, 1, 1, 1),
    (1, 1, 9, 9, 16, 5, 1, 2, 1, 1),
    (1, 3, 16, 16, 32, 7, 2, 3, 1, 1),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("in_zero_point", [0, 131, 255])
def test_conv2d_equals_requantized_float_conv(case, per_channel, in_zero_point):
    n, c, h, w, o, k, s, p, d, g = case
    rng = np.random.default_rng(abs(hash((case, per_channel, in_zero_point))) % 2**32)
    x = ember.tensor(rng.standard_normal((n, c, h, w)).astype(np.float32))
    k2 = k if isinstance(k, tuple) else (k, k)
    qw = _quantized_weight(rng, (o, c // g, *k2), per_channel, 0 if per_channel else -3)
    b = ember.tensor(rng.standard_normal(o).astype(np.float32))
    qx = ember.quantize_per_tensor(x, 0.03, in_zero_point, ember.quint8)
    pair = lambda v: list(v) if isinstance(v, tuple) else [v, v]  # noqa: E731
    packed = _Q.conv_prepack(qw, b, pair(s), pair(p), pair(d), g)
    for relu in (False, True):
        got = _Q.conv(qx, packed, 0.05, 60, relu)
        ref = F.conv2d(qx.dequantize(), qw.dequantize(), b, s, p, d, g)
        if relu:
            ref = F.relu(ref)
        want = ember.quantize_per_tensor(ref, 0.05, 60, ember.quint8)
        assert got.shape == want.shape and got.dtype == ember.quint8
        assert got.q_scale() == 0.05 and got.q_zero_point() == 60
        # Exact sums and the same float epilogue: equal up to a rounding midpoint.
        diff = np.abs(_ints(got) - _ints(want))
        assert diff.max(initial=0) <= 1
        assert (diff == 0).mean() > 0.99 if diff.size else True


@pytest.mark.parametrize("group", [2, 4, 8, 16])
def test_grouped_kernel_equals_the_gemm_route(group):
    rng = np.random.default_rng(group)
    c, groups = 32, 32 // group
    qw = _quantized_weight(rng, (c, group, 3, 3), True)
    b = ember.tensor(rng.standard_normal(c).astype(np.float32))
    qx = ember.quantize_per_tensor(ember.tensor(rng.standard_normal((2, c, 9, 8))
                                                .astype(np.float32)), 0.04, 77, ember.quint8)
    direct = _Q.conv_prepack(qw, b, [1, 1], [1, 1], [1, 1], groups)
    gemm = _Q.conv_prepack(qw, b, [1, 1], [1, 1], [1, 1], groups, "gemm")
    assert gemm.kernel == "int8 GEMM"
    # Groups of 16 take the direct kernel only with 16-lane vectors (AVX-512).
    wide_lanes = ember.backends.cpu.get_cpu_capability().startswith("AVX512")
    if group < 16 or wide_lanes:
        assert direct.kernel == "int8 grouped" and f"groups of {group}" in direct.reason
    else:
        assert direct.kernel == "int8 GEMM"
    for relu in (False, True):
        np.testing.assert_array_equal(_ints(_Q.conv(qx, direct, 0.05, 60, relu)),
                                      _ints(_Q.conv(qx, gemm, 0.05, 60, relu)))


def test_conv_output_is_channels_last_and_takes_any_input_layout():
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((2, 8, 6, 5)).astype(np.float32))
    qw = _quantized_weight(rng, (12, 8, 3, 3), True)
    conv = nnq.Conv2d(8, 12, 3, padding=1)
    conv.set_weight_bias(qw, None)
    qx = ember.quantize_per_tensor(x, 0.05, 128, ember.quint8)
    y = conv(qx)
    assert y.stride() == (5 * 6 * 12, 1, 5 * 12, 12)
    # A channels-last input (the previous layer's output), a transposed view, the same answer.
    qx_cl = ember.quantize_per_tensor(x.permute(0, 2, 3, 1).contiguous(), 0.05, 128,
                                      ember.quint8).permute(0, 3, 1, 2)
    np.testing.assert_array_equal(_ints(conv(qx_cl)), _ints(y))
    t = ember.quantize_per_tensor(x.transpose(2, 3).contiguous(), 0.05, 128, ember.quint8)
    np.testing.assert_array_equal(_ints(conv(t.transpose(2, 3))), _ints(conv(qx)))


def test_conv1d_and_unbatched_inputs():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((3, 4, 17)).astype(np.float32))
    qx = ember.quantize_per_tensor(x, 0.04, 100, ember.quint8)
    conv = nnq.Conv1d(4, 6, 5, stride=2, padding=2, dilation=1)
    qw = _quantized_weight(rng, (6, 4, 5), False)
    conv.set_weight_bias(qw, ember.ones(6))
    conv.scale, conv.zero_point = 0.05, 50
    want = ember.quantize_per_tensor(F.conv1d(qx.dequantize(), qw.dequantize(), ember.ones(6),
                                              2, 2), 0.05, 50, ember.quint8)
    got = conv(qx)
    assert got.shape == (3, 6, 9)
    assert np.abs(_ints(got) - _ints(want)).max() <= 1
    np.testing.assert_array_equal(_ints(conv(qx[0])), _ints(got[0]))
    conv2 = nnq.Conv2d(4, 6, 3)
    single = conv2(ember.quantize_per_tensor(ember.randn(4, 5, 5), 0.1, 10, ember.quint8))
    assert single.shape == (6, 3, 3)


def test_reflect_padding_and_state_dict_round_trip():
    rng = np.random.default_rng(3)
    conv = nnq.Conv2d(3, 4, 3, padding=1, padding_mode="reflect", bias=False)
    conv.set_weight_bias(_quantized_weight(rng, (4, 3, 3, 3), False), None)
    conv.scale, conv.zero_point = 0.07, 20
    qx = ember.quantize_per_tensor(ember.randn(1, 3, 6, 6), 0.05, 128, ember.quint8)
    ref = F.conv2d(F.pad(qx.dequantize(), (1, 1, 1, 1), mode="reflect"),
                   conv.weight().dequantize())
    want = ember.quantize_per_tensor(ref, 0.07, 20, ember.quint8)
    assert np.abs(_ints(conv(qx)) - _ints(want)).max() <= 1
    sd = conv.state_dict()
    assert set(sd) == {"weight", "bias", "scale", "zero_point"}
    other = nnq.Conv2d(3, 4, 3, padding=1, padding_mode="reflect", bias=False)
    other.load_state_dict(sd)
    np.testing.assert_array_equal(_ints(other(qx)), _ints(conv(qx)))
    import copy

    np.testing.assert_array_equal(_ints(copy.deepcopy(conv)(qx)), _ints(conv(qx)))


def test_conv_bad_input_raises():
    conv = nnq.Conv2d(4, 4, 3)
    with pytest.raises(TypeError, match="QuantStub"):
        conv(ember.randn(1, 4, 5, 5))
    with pytest.raises(RuntimeError, match="channels"):
        conv(ember.quantize_per_tensor(ember.randn(1, 3, 5, 5), 0.1, 0, ember.quint8))
    with pytest.raises(RuntimeError, match="smaller than the kernel"):
        conv(ember.quantize_per_tensor(ember.randn(1, 4, 2, 2), 0.1, 0, ember.quint8))
    with pytest.raises(TypeError, match="quint8"):
        conv(ember.quantize_per_tensor(ember.randn(1, 4, 5, 5), 0.1, 0, ember.qint8))
    with pytest.raises(ValueError, match="padding_mode"):
        nnq.Conv2d(4, 4, 3, padding_mode="circular")
    with pytest.raises(ValueError, match="divisible"):
        nnq.Conv2d(4, 6, 3, groups=4)
    with pytest.raises(TypeError, match="qint8"):
        _Q.conv_prepack(ember.quantize_per_tensor(ember.randn(2, 2, 1, 1), 0.1, 0, ember.quint8),
                        None, [1, 1], [0, 0], [1, 1], 1)


def _q(shape, seed=0, zp=77, layout_cl=False):
    rng = np.random.default_rng(seed)
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32))
    q = ember.quantize_per_tensor(x, 0.05, zp, ember.quint8)
    if layout_cl:  # channels-last memory, as a quantized convolution returns
        q = ember.quantize_per_tensor(x.permute(0, 2, 3, 1).contiguous(), 0.05, zp,
                                      ember.quint8).permute(0, 3, 1, 2)
    return q


def _same_as_float(q_out, float_out, like):
    want = ember.quantize_per_tensor(float_out, like.q_scale(), like.q_zero_point(), like.dtype)
    assert q_out.dtype == like.dtype and q_out.q_scale() == like.q_scale()
    assert q_out.q_zero_point() == like.q_zero_point()
    assert q_out.shape == want.shape
    assert np.abs(_ints(q_out) - _ints(want)).max(initial=0) <= 1


@pytest.mark.parametrize("layout_cl", [False, True])
def test_pooling_and_activations_take_quantized_inputs(layout_cl):
    q = _q((2, 5, 9, 8), layout_cl=layout_cl)
    real = q.dequantize()
    np.testing.assert_array_equal(_ints(F.max_pool2d(q, 3, 2, 1)),
                                  _ints(ember.quantize_per_tensor(F.max_pool2d(real, 3, 2, 1),
                                                                  0.05, 77, ember.quint8)))
    _same_as_float(F.max_pool2d(q, 2, ceil_mode=True, dilation=1),
                   F.max_pool2d(real, 2, ceil_mode=True), q)
    _same_as_float(F.adaptive_avg_pool2d(q, 1), F.adaptive_avg_pool2d(real, 1), q)
    _same_as_float(F.adaptive_avg_pool2d(q, (3, 2)), F.adaptive_avg_pool2d(real, (3, 2)), q)
    _same_as_float(F.avg_pool2d(q, 2), F.avg_pool2d(real, 2), q)
    _same_as_float(F.relu(q), F.relu(real), q)
    _same_as_float(F.hardtanh(q, -1.0, 1.0), F.hardtanh(real, -1.0, 1.0), q)
    _same_as_float(F.relu6(q), F.relu6(real), q)
    _same_as_float(F.hardswish(q), F.hardswish(real), q)
    _same_as_float(F.leaky_relu(q, 0.1), F.leaky_relu(real, 0.1), q)
    _same_as_float(q.mean((2, 3), keepdim=True), real.mean((2, 3), keepdim=True), q)
    _same_as_float(F.interpolate(q, scale_factor=2, mode="nearest"),
                   F.interpolate(real, scale_factor=2, mode="nearest"), q)
    _same_as_float(nn.MaxPool2d(2)(q), nn.MaxPool2d(2)(real), q)
    _same_as_float(q.flatten(1), real.flatten(1), q)
    unbatched = _q((3, 6, 6))
    _same_as_float(F.max_pool2d(unbatched, 2), F.max_pool2d(unbatched.dequantize(), 2), unbatched)
    _same_as_float(F.adaptive_avg_pool2d(unbatched, 2),
                   F.adaptive_avg_pool2d(unbatched.dequantize(), 2), unbatched)
    # in place
    r = q.clone()
    ember.relu_(r)
    _same_as_float(r, F.relu(real), q)
    qi8 = ember.quantize_per_tensor(real, 0.05, -3, ember.qint8)
    _same_as_float(F.max_pool2d(qi8, 2), F.max_pool2d(qi8.dequantize(), 2), qi8)
    _same_as_float(F.relu(qi8), F.relu(qi8.dequantize()), qi8)


def test_quantized_pooling_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((2, 4, 7, 9)).astype(np.float32)
    tq_ = torch.quantize_per_tensor(torch.from_numpy(x), 0.05, 70, torch.quint8)
    eq = ember.quantize_per_tensor(ember.from_numpy(x), 0.05, 70, ember.quint8)
    np.testing.assert_array_equal(_ints(F.max_pool2d(eq, 3, 2, 1)),
                                  torch.nn.functional.max_pool2d(tq_, 3, 2, 1).int_repr().numpy())
    for size in (1, (3, 4)):
        want = torch.nn.functional.adaptive_avg_pool2d(tq_, size).int_repr().numpy()
        got = _ints(F.adaptive_avg_pool2d(eq, size))
        assert np.abs(got - want).max() <= 1


def test_float_functional_and_qfunctional():
    ff = nnq.FloatFunctional()
    a, b = ember.randn(2, 3, 4), ember.randn(2, 3, 4)
    np.testing.assert_allclose(ff.add(a, b).numpy(), (a + b).numpy())
    np.testing.assert_allclose(ff.add_relu(a, b).numpy(), F.relu(a + b).numpy())
    np.testing.assert_allclose(ff.cat([a, b], 1).numpy(), ember.cat([a, b], 1).numpy())
    with pytest.raises(RuntimeError, match="underlying operation"):
        ff(a)
    qf = nnq.QFunctional()
    qf.scale, qf.zero_point = 0.04, 100
    qa = ember.quantize_per_tensor(a, 0.03, 120, ember.quint8)
    qb = ember.quantize_per_tensor(b, 0.02, 90, ember.quint8)
    ra, rb = qa.dequantize(), qb.dequantize()

    def check(got, real):
        want = ember.quantize_per_tensor(real, 0.04, 100, ember.quint8)
        assert got.q_scale() == 0.04 and got.q_zero_point() == 100
        assert np.abs(_ints(got) - _ints(want)).max() <= 1

    check(qf.add(qa, qb), ra + rb)
    check(qf.add_relu(qa, qb), F.relu(ra + rb))
    check(qf.mul(qa, qb), ra * rb)
    check(qf.cat([qa, qb], 0), ember.cat([ra, rb], 0))
    check(qf.matmul(qa, qb.transpose(1, 2)), ember.matmul(ra, rb.transpose(1, 2)))
    # broadcasting, and a channels-last pair stays channels-last
    check(qf.add(qa, qb[:1]), ra + rb[:1])
    q4 = _q((2, 3, 4, 5), layout_cl=True)
    s = qf.add(q4, q4)
    assert s.stride() == q4.stride()
    check(s, q4.dequantize() * 2)
    shifted = qf.add_scalar(qa, 0.3)
    assert shifted.q_scale() == qa.q_scale()
    np.testing.assert_allclose(shifted.dequantize().numpy(), (ra + 0.3).numpy(), atol=0.03)
    np.testing.assert_allclose(qf.mul_scalar(qa, 2.0).dequantize().numpy(), (ra * 2).numpy(),
                               atol=1e-6)
    np.testing.assert_allclose(qf.mul_scalar(qa, -0.5).dequantize().numpy(),
                               (ra * -0.5).numpy(), atol=0.016)
    with pytest.raises(TypeError, match="quantized"):
        qf.add(a, qb)
    sd = qf.state_dict()
    other = nnq.QFunctional()
    other.load_state_dict(sd)
    # Stored as float32 tensors, as PyTorch's.
    assert other.scale == pytest.approx(0.04) and other.zero_point == 100


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu1 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.conv3 = nn.Conv2d(32, 32, 1)
        self.relu3 = nn.ReLU()
        self.skip = nnq.FloatFunctional()
        self.fc = nn.Linear(32 * 4 * 4, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu1(self.bn1(self.conv1(self.quant(x)))))
        y = self.relu2(self.conv2(x))
        x = self.skip.add(y, self.relu3(self.conv3(y)))
        return self.dequant(self.fc(ember.flatten(x, 1)))


FUSE = [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["conv3", "relu3"]]


def test_static_cnn_on_digits_keeps_its_accuracy(digits):
    images = digits.images()
    ember.manual_seed(0)
    model = digits.fit(DigitsCNN(), images, steps=120)
    float_acc = digits.accuracy(model, images)
    model.qconfig = tq.get_default_qconfig("x86")
    prepared = tq.prepare(tq.fuse_modules(model, FUSE))
    with ember.no_grad():
        prepared(images[digits.train])
    q = tq.convert(prepared)
    assert isinstance(q.conv1, nniq.ConvReLU2d) and isinstance(q.conv3, nniq.ConvReLU2d)
    assert isinstance(q.skip, nnq.QFunctional) and isinstance(q.fc, nnq.Linear)
    assert float_acc > 0.9
    assert digits.accuracy(q, images) >= float_acc - 0.01
    # Smaller on disk: this tiny model's per-tensor metadata (biases, per-channel scales and
    # pickling) weighs more than a large one's, where the ratio nears 0.25 (bench_quantized).
    # PyTorch's zip format adds about 200 bytes a record (zip headers, 64-byte alignment), and
    # the quantized state_dict has more records (each layer's scale and zero point).
    import io

    for fmt, bound in (("safetensors", 0.4), ("torch", 0.45)):
        sizes = []
        for m in (model, q):
            buf = io.BytesIO()
            ember.save(m.state_dict(), buf, format=fmt)
            sizes.append(buf.tell())
        assert sizes[1] < bound * sizes[0], (fmt, sizes)


def test_qat_cnn_on_digits_converts_to_what_it_simulated(digits):
    images = digits.images()
    ember.manual_seed(0)
    model = digits.fit(DigitsCNN(), images, steps=100)
    float_acc = digits.accuracy(model, images)
    fused = tq.fuse_modules(model.eval(), FUSE)
    fused.qconfig = tq.get_default_qat_qconfig("x86")
    qat = tq.prepare_qat(fused.train())
    assert isinstance(qat.conv1, ember.ao.nn.intrinsic.qat.ConvReLU2d)
    digits.fit(qat, images, steps=20, lr=2e-3)
    qat.apply(tq.disable_observer)
    with ember.no_grad():
        simulated = qat(images[digits.test])
    q = tq.convert(qat)
    with ember.no_grad():
        real = q(images[digits.test])
    diff = (real - simulated).abs()
    # Bit-equal except where a float sum of the fake-quant path straddles a rounding midpoint;
    # such a one-step difference then carries through the later layers (by how many steps
    # depends on the CPU level's float convolution, which the simulation runs on), so the
    # checks are the share of equal outputs and the predictions.
    assert (diff == 0).float().mean().item() > 0.9
    assert (real.argmax(1) == simulated.argmax(1)).float().mean().item() >= 0.99
    assert digits.accuracy(q, images) >= float_acc - 0.01


def test_matches_pytorch_quantized_conv2d():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    w = rng.standard_normal((8, 6, 3, 3)).astype(np.float32) * 0.2
    b = rng.standard_normal(8).astype(np.float32)
    x = rng.standard_normal((2, 6, 7, 7)).astype(np.float32)
    tw = torch.quantize_per_channel(torch.from_numpy(w), torch.full((8,), 0.01, dtype=torch.double),
                                    torch.zeros(8, dtype=torch.long), 0, torch.qint8)
    tconv = torch.ao.nn.quantized.Conv2d(6, 8, 3, stride=1, padding=1)
    tconv.set_weight_bias(tw, torch.from_numpy(b))
    tconv.scale, tconv.zero_point = 0.06, 64
    econv = nnq.Conv2d(6, 8, 3, padding=1)
    sd = {k: v for k, v in tconv.state_dict().items()}
    econv.load_state_dict({
        "weight": ember._make_per_channel_quantized_tensor(
            ember.from_numpy(sd["weight"].int_repr().numpy()),
            ember.from_numpy(sd["weight"].q_per_channel_scales().numpy()),
            ember.from_numpy(sd["weight"].q_per_channel_zero_points().numpy()), 0),
        "bias": ember.from_numpy(sd["bias"].detach().numpy()),
        "scale": ember.tensor(float(sd["scale"])),
        "zero_point": ember.tensor(int(sd["zero_point"])),
    })
    tx = torch.quantize_per_tensor(torch.from_numpy(x), 0.05, 120, torch.quint8)
    ex = ember.quantize_per_tensor(ember.from_numpy(x), 0.05, 120, ember.quint8)
    want = tconv(tx).int_repr().numpy()
    got = _ints(econv(ex))
    assert np.abs(got - want).max() <= 1
    assert (got == want).mean() > 0.99


@pytest.mark.parametrize("kernel", ["int8", "float"])
@pytest.mark.parametrize("shape", [(2, 8, 7, 7, 16, 8), (2, 8, 7, 7, 8, 4), (1, 6, 5, 5, 12, 1),
                                   (2, 4, 9, 9, 8, 4)])
def test_forced_kernels_agree_and_report(kernel, shape):
    """Every route (int8 GEMM, direct depthwise with channel multipliers, float) gives the
    requantized float convolution, 2-D and 1-D."""
    n, c, h, w, o, g = shape
    rng = np.random.default_rng(7)
    x = ember.tensor(rng.standard_normal((n, c, h, w)).astype(np.float32))
    qx = ember.quantize_per_tensor(x, 0.04, 100, ember.quint8)
    for dims in (2, 1):
        kshape = (o, c // g, 3, 3) if dims == 2 else (o, c // g, 3)
        qw = _quantized_weight(rng, kshape, True)
        b = ember.tensor(rng.standard_normal(o).astype(np.float32))
        conv_in = qx if dims == 2 else qx[:, :, 0]
        packed = _Q.conv_prepack(qw, b, [1] * dims, [1] * dims, [1] * dims, g, kernel)
        assert (packed.kernel == "float") == (kernel == "float")
        got = _Q.conv(conv_in, packed, 0.05, 60, True)
        f = F.conv2d if dims == 2 else F.conv1d
        ref = F.relu(f(conv_in.dequantize(), qw.dequantize(), b, 1, 1, 1, g))
        want = ember.quantize_per_tensor(ref, 0.05, 60, ember.quint8)
        assert np.abs(_ints(got) - _ints(want)).max() <= 1
    with pytest.raises(ValueError, match="kernel"):
        _Q.conv_prepack(qw, b, [1], [1], [1], g, "fast")


def test_int8_report_names_each_layers_kernel():
    model = nn.Sequential(tq.QuantStub(), nn.Conv2d(8, 16, 3), nn.Conv2d(16, 16, 3, groups=16),
                          nn.Conv2d(16, 16, 3, groups=8), nn.Flatten(), nn.Linear(16, 4),
                          tq.DeQuantStub()).eval()
    model.qconfig = tq.get_default_qconfig("x86")
    prepared = tq.prepare(model)
    with ember.no_grad():
        prepared(ember.randn(2, 8, 7, 7))
    q = tq.convert(prepared)
    q.add_module("head", nn.Linear(4, 2))  # left float
    report = {r["module"]: r for r in tq.int8_report(q)}
    assert report["1"]["compute"] == "int8" and report["1"]["reason"] == "int8 GEMM"
    assert report["2"]["reason"].startswith("depthwise")
    assert report["3"]["compute"] == "int8"
    assert report["3"]["reason"] == "grouped: direct int8 kernel (groups of 2)"
    q[3].set_weight_bias(q[3].weight(), q[3].bias())  # packed again: still the measured choice
    forced = _Q.conv_prepack(q[3].weight(), q[3].bias(), [1, 1], [0, 0], [1, 1], 8, "float")
    q[3]._packed_params = forced
    assert tq.int8_report(q)[2]["compute"] == "float"
    assert tq.int8_report(q)[2]["reason"] == "float: requested"
    assert report["5"]["compute"] == "int8"
    assert report["head"]["compute"] == "float" and "not converted" in report["head"]["reason"]
    with ember.no_grad():
        assert q(ember.randn(2, 8, 7, 7)).shape == (2, 2)


def test_sigmoid_tanh_hardsigmoid_take_fixed_output_parameters():
    x = ember.tensor([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 40.0])
    for dtype, zps in ((ember.quint8, (0, 128)), (ember.qint8, (-128, 0))):
        q = ember.quantize_per_tensor(x, 0.5, 0 if dtype == ember.qint8 else 64, dtype)
        real = q.dequantize()
        for fn, ref, scale, zp in ((F.hardsigmoid, F.hardsigmoid, 1 / 256, zps[0]),
                                   (ember.sigmoid, ember.sigmoid, 1 / 256, zps[0]),
                                   (ember.tanh, ember.tanh, 2 / 256, zps[1])):
            got = fn(q)
            assert got.dtype == dtype and got.q_scale() == scale and got.q_zero_point() == zp
            want = ember.quantize_per_tensor(ref(real), scale, zp, dtype)
            np.testing.assert_array_equal(_ints(got), _ints(want))
    with pytest.raises(NotImplementedError, match="dequantize"):
        ember.exp(ember.quantize_per_tensor(x, 0.5, 64, ember.quint8))


def test_fixed_output_parameters_match_pytorch():
    x = ember.tensor([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 40.0])
    torch = pytest.importorskip("torch")
    tq_ = torch.quantize_per_tensor(torch.from_numpy(x.numpy()), 0.5, 64, torch.quint8)
    eq = ember.quantize_per_tensor(x, 0.5, 64, ember.quint8)
    for e_fn, t_fn in ((F.hardsigmoid, torch.nn.functional.hardsigmoid),
                       (ember.sigmoid, torch.sigmoid), (ember.tanh, torch.tanh)):
        t = t_fn(tq_)
        got = e_fn(eq)
        assert got.q_scale() == t.q_scale() and got.q_zero_point() == t.q_zero_point()
        assert np.abs(_ints(got) - t.int_repr().numpy().astype(np.int64)).max() <= 1
