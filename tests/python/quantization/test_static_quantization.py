"""Static post-training quantization: QuantStub / DeQuantStub, prepare (observers), calibration,
convert (quantized Linear, LinearReLU, ReLU), fuse_modules, accuracy on digits, and PyTorch's
converted model's outputs where PyTorch is installed."""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.ao.quantization import (
    DeQuantStub,
    QuantStub,
    QuantWrapper,
    convert,
    default_qconfig,
    fuse_modules,
    prepare,
    quantize,
)

nnq = ember.ao.nn.quantized
nni = ember.ao.nn.intrinsic
nniq = ember.ao.nn.intrinsic.quantized


class MLP(nn.Module):
    def __init__(self, d_in=64, hidden=48, d_out=10):
        super().__init__()
        self.quant = QuantStub()
        self.fc1 = nn.Linear(d_in, hidden)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(hidden, d_out)
        self.dequant = DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc2(self.relu1(self.fc1(self.quant(x)))))


def calibrated(model, data, fuse=True):
    model.eval()
    model.qconfig = default_qconfig
    if fuse:
        model = fuse_modules(model, [["fc1", "relu1"]])
    prepared = prepare(model)
    with ember.no_grad():
        prepared(data)
    return prepared


def test_prepare_attaches_observers_and_convert_swaps_modules():
    ember.manual_seed(0)
    model = MLP()
    x = ember.randn(32, 64)
    prepared = calibrated(model, x)
    assert isinstance(prepared.fc1, nni.LinearReLU)
    assert isinstance(prepared.relu1, nn.Identity)
    assert hasattr(prepared.fc1, "activation_post_process")
    assert hasattr(prepared.quant, "activation_post_process")
    assert not hasattr(model.fc1, "activation_post_process")  # prepare copies
    assert prepared.quant.activation_post_process.min_val.item() == x.min().item()
    q = convert(prepared)
    assert isinstance(q.quant, nnq.Quantize) and isinstance(q.dequant, nnq.DeQuantize)
    assert isinstance(q.fc1, nniq.LinearReLU) and isinstance(q.fc2, nnq.Linear)
    assert not hasattr(q.fc1, "activation_post_process") and not hasattr(q, "qconfig")
    with ember.no_grad():
        y = q(x)
        ref = model(x)
    assert y.dtype == ember.float32 and y.shape == (32, 10)
    # Within a few output quantization steps of float.
    assert (y - ref).abs().max().item() < 6 * q.fc2.scale
    # The quantized hidden activations are non-negative (the fused ReLU).
    with ember.no_grad():
        hidden = q.fc1(q.quant(x))
    assert hidden.dtype == ember.quint8
    assert hidden.dequantize().min().item() >= 0


def test_unfused_relu_and_quant_wrapper():
    ember.manual_seed(1)
    inner = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.ReLU6())
    model = QuantWrapper(inner).eval()
    model.qconfig = default_qconfig
    prepared = prepare(model)
    x = ember.randn(20, 8) * 4
    with ember.no_grad():
        prepared(x)
    q = convert(prepared)
    assert isinstance(q.module[1], nnq.ReLU) and isinstance(q.module[2], nnq.ReLU6)
    with ember.no_grad():
        y = q(x)
        ref = inner(x)
    assert y.min().item() >= 0 and y.max().item() <= 6 + 1e-6
    assert (y - ref).abs().max().item() < 0.2


def test_quantize_runs_the_whole_workflow():
    ember.manual_seed(2)
    model = MLP(16, 16, 4)
    model.qconfig = default_qconfig
    x = ember.randn(10, 16)
    q = quantize(model, lambda m, data: m(data), [x])
    assert isinstance(q.fc1, nnq.Linear)
    assert type(model.fc1) is nn.Linear


def test_fuse_folds_batch_norm_in_eval():
    ember.manual_seed(3)
    seq = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.Flatten(), nn.Linear(64, 5), nn.BatchNorm1d(5))
    seq.train()
    x = ember.randn(6, 3, 6, 6)
    seq(x)  # running statistics
    seq.eval()
    fused = fuse_modules(seq, [["0", "1", "2"], ["4", "5"]])
    assert isinstance(fused[0], nni.ConvReLU2d) and isinstance(fused[1], nn.Identity)
    with ember.no_grad():
        np.testing.assert_allclose(fused(x).numpy(), seq(x).numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="eval"):
        fuse_modules(seq.train(), [["0", "1"]])
    with pytest.raises(NotImplementedError, match="Cannot fuse"):
        fuse_modules(seq.eval(), [["3", "4"]])


def test_static_mlp_on_digits_keeps_its_accuracy(digits):
    ember.manual_seed(0)
    model = digits.fit(MLP(64, 128, 10), digits.x)
    float_acc = digits.accuracy(model, digits.x)
    q = convert(calibrated(model, digits.x[digits.train]))
    assert float_acc > 0.9
    assert digits.accuracy(q, digits.x) >= float_acc - 0.01


def test_matches_pytorch_static_conversion():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    w1, b1 = rng.standard_normal((24, 16)).astype(np.float32) * 0.3, rng.standard_normal(24)
    w2, b2 = rng.standard_normal((5, 24)).astype(np.float32) * 0.3, rng.standard_normal(5)
    x = rng.standard_normal((40, 16)).astype(np.float32)

    class TorchMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = torch.ao.quantization.QuantStub()
            self.fc1 = torch.nn.Linear(16, 24)
            self.relu1 = torch.nn.ReLU()
            self.fc2 = torch.nn.Linear(24, 5)
            self.dequant = torch.ao.quantization.DeQuantStub()

        def forward(self, v):
            return self.dequant(self.fc2(self.relu1(self.fc1(self.quant(v)))))

    tm = TorchMLP().eval()
    em = MLP(16, 24, 5).eval()
    with torch.no_grad():
        for t_layer, e_layer, w, b in ((tm.fc1, em.fc1, w1, b1), (tm.fc2, em.fc2, w2, b2)):
            t_layer.weight.copy_(torch.from_numpy(w))
            t_layer.bias.copy_(torch.from_numpy(b.astype(np.float32)))
            e_layer.weight.data = ember.from_numpy(w.copy())
            e_layer.bias.data = ember.from_numpy(b.astype(np.float32))
    tm.qconfig = torch.ao.quantization.default_qconfig
    tm = torch.ao.quantization.fuse_modules(tm, [["fc1", "relu1"]])
    tp = torch.ao.quantization.prepare(tm)
    with torch.no_grad():
        tp(torch.from_numpy(x))
    tq = torch.ao.quantization.convert(tp)
    eq = convert(calibrated(em, ember.from_numpy(x)))
    # The same observed parameters, module by module.
    assert eq.quant.scale.item() == pytest.approx(tq.quant.scale.item())
    assert eq.quant.zero_point.item() == tq.quant.zero_point.item()
    for name in ("fc1", "fc2"):
        assert getattr(eq, name).scale == pytest.approx(getattr(tq, name).scale, rel=1e-6)
        assert getattr(eq, name).zero_point == getattr(tq, name).zero_point
        np.testing.assert_array_equal(getattr(eq, name).weight().int_repr().numpy(),
                                      getattr(tq, name).weight().int_repr().numpy())
    with torch.no_grad():
        want = tq(torch.from_numpy(x)).numpy()
    got = eq(ember.from_numpy(x)).numpy()
    # Within one output quantization step.
    assert np.abs(got - want).max() <= eq.fc2.scale * 1.01


def test_engine_and_qconfig_mismatches_raise():
    from ember.ao.quantization import MinMaxObserver, QConfig, quantize_dynamic

    assert ember.backends.quantized.engine == "x86"
    assert "onednn" in ember.backends.quantized.supported_engines
    with pytest.raises(RuntimeError, match="not supported"):
        ember.backends.quantized.engine = "arm_compute"
    # qnnpack (listed by PyTorch's x86 builds too; torchvision's quantized MobileNets set it)
    # runs the same kernels with its own default qconfigs.
    ember.backends.quantized.engine = "qnnpack"
    try:
        assert ember.backends.quantized.engine == "qnnpack"
        qconfig = ember.ao.quantization.get_default_qat_qconfig("qnnpack")
        assert qconfig.weight().qscheme == ember.per_tensor_symmetric
    finally:
        ember.backends.quantized.engine = "x86"
    model = MLP(8, 8, 2).eval()
    model.qconfig = QConfig(activation=MinMaxObserver.with_args(dtype=ember.qint8),
                            weight=MinMaxObserver.with_args(dtype=ember.qint8))
    with pytest.raises(RuntimeError, match="qint8 activations, but the 'x86' engine"):
        prepare(model)
    bad_weights = QConfig(activation=MinMaxObserver, weight=MinMaxObserver)
    with pytest.raises(RuntimeError, match="quint8 weights"):
        quantize_dynamic(nn.Sequential(nn.Linear(4, 4)), {nn.Linear: bad_weights})
    ember.backends.quantized.engine = "none"
    try:
        with pytest.raises(RuntimeError, match="engine is 'none'"):
            quantize_dynamic(nn.Sequential(nn.Linear(4, 4)))
    finally:
        ember.backends.quantized.engine = "x86"


def test_numeric_suite_finds_each_layers_error():
    from ember.ao.ns import compare_model_outputs, compare_weights, compute_sqnr
    from ember.ao.quantization import quantize_dynamic

    ember.manual_seed(6)
    model = MLP(16, 32, 4).eval()
    x = ember.randn(20, 16)
    q = convert(calibrated(model, x, fuse=False))
    weights = compare_weights(model.state_dict(), q.state_dict())
    assert set(weights) == {"fc1._packed_params._packed_params",
                            "fc2._packed_params._packed_params"}
    for pair in weights.values():
        assert pair["quantized"].is_quantized
        assert compute_sqnr(pair["float"], pair["quantized"]) > 30
    outputs = compare_model_outputs(model, q, x)
    assert {"fc1", "relu1", "fc2"} <= set(outputs)
    for pair in outputs.values():
        assert len(pair["float"]) == len(pair["quantized"]) == 1
        assert compute_sqnr(pair["float"][0], pair["quantized"][0]) > 20
    dyn = quantize_dynamic(model)
    assert set(compare_weights(model.state_dict(), dyn.state_dict())) == set(weights)
    assert compute_sqnr(x, x) == float("inf")


def test_fake_quantize_functions():
    x = ember.tensor([-1.0, -0.26, 0.0, 0.25, 0.35, 1.3, 5.0], requires_grad=True)
    y = ember.fake_quantize_per_tensor_affine(x, 0.1, 3, 0, 15)
    q = ember.quantize_per_tensor(x.detach(), 0.1, 3, ember.quint8)
    want = np.clip(q.int_repr().numpy().astype(float), 0, 15)
    np.testing.assert_allclose(y.detach().numpy(), ((want - 3) * np.float32(0.1)).astype(
        np.float32))
    y.sum().backward()
    # Straight-through: gradient 1 where the input was inside [qmin, qmax], 0 where clamped.
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 1, 1, 1, 0, 0])
    w = ember.randn(3, 4)
    pc = ember.fake_quantize_per_channel_affine(w, ember.tensor([0.1, 0.2, 0.3]),
                                                ember.tensor([0, 1, -1]), 0, -128, 127)
    qw = ember.quantize_per_channel(w, ember.tensor([0.1, 0.2, 0.3]), ember.tensor([0, 1, -1]),
                                    0, ember.qint8)
    np.testing.assert_array_equal(pc.numpy(), qw.dequantize().numpy())
    with pytest.raises(ValueError, match="quant_min"):
        ember.fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 3)
    with pytest.raises(ValueError, match="scale must be positive"):
        ember.fake_quantize_per_tensor_affine(x, 0.0, 0, 0, 255)


def test_quantization_aware_training_converts_to_what_it_simulated():
    from ember.ao.quantization import get_default_qat_qconfig, prepare_qat

    nnqat = ember.ao.nn.qat
    ember.manual_seed(7)
    model = MLP(16, 32, 4)
    model.eval()
    model = fuse_modules(model, [["fc1", "relu1"]])
    model.train()
    model.qconfig = get_default_qat_qconfig("x86")
    qat = prepare_qat(model)
    assert isinstance(qat.fc2, nnqat.Linear) and hasattr(qat.fc2, "weight_fake_quant")
    assert isinstance(qat.fc1, ember.ao.nn.intrinsic.qat.LinearReLU)
    opt = ember.optim.SGD(qat.parameters(), lr=0.05)
    x, target = ember.randn(64, 16), ember.randint(0, 4, (64,))
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(qat(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    qat.eval()
    qat.apply(ember.ao.quantization.disable_observer)
    with ember.no_grad():
        simulated = qat(x)
    q = convert(qat)
    assert isinstance(q.fc2, nnq.Linear) and isinstance(q.fc1, nniq.LinearReLU)
    with ember.no_grad():
        real = q(x)
    # The fake-quant forward accumulates the products in float, the int8 model exactly: the
    # outputs are bit-equal except where the float sum straddles a rounding boundary, and there
    # they differ by one step (measured: 0.08% of 5120 outputs of a 64-128-10 MLP).
    step = q.fc2.scale
    diff = (real - simulated).abs()
    assert diff.max().item() <= step * 1.01
    assert (diff == 0).float().mean().item() > 0.95
    assert not hasattr(qat.dequant, "activation_post_process")


def test_histogram_observer_and_default_qconfig():
    from ember.ao.quantization import HistogramObserver, get_default_qconfig

    rng = np.random.default_rng(8)
    obs = HistogramObserver(bins=256)
    for i in range(3):
        x = rng.standard_normal(4000).astype(np.float32) * (1 + i)
        x[:3] = 60.0  # a few outliers
        obs(ember.from_numpy(x))
    scale, zp = obs.calculate_qparams()
    # The running range covers every value; the chosen one lies within it.
    assert obs.max_val.item() == 60.0
    assert 0 < scale.item() * (255 - zp.item()) <= 60.0 * (1 + 1e-5)
    # (the zero point is rounded, so the low end may move by up to a step)
    assert obs.min_val.item() - scale.item() <= -scale.item() * zp.item() <= 0
    assert obs.histogram.sum().item() == 12000
    with pytest.warns(UserWarning, match="inf"):
        obs(ember.tensor([float("inf"), 1.0]))
    with pytest.raises(NotImplementedError, match="per_tensor"):
        HistogramObserver(qscheme=ember.per_channel_affine)
    ember.manual_seed(9)
    model = MLP(16, 32, 4).eval()
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)
    data = ember.randn(64, 16)
    with ember.no_grad():
        prepared(data)
    q = convert(prepared)
    assert q.fc1.weight().qscheme() == ember.per_channel_affine
    with ember.no_grad():
        assert (q(data) - model(data)).abs().max().item() < 0.1
    with pytest.raises(AssertionError, match="not supported"):
        get_default_qconfig("tpu")


def test_histogram_observer_matches_pytorch():
    torch = pytest.importorskip("torch")
    from ember.ao.quantization import HistogramObserver

    rng = np.random.default_rng(10)
    for reduce_range in (True, False):
        e = HistogramObserver(reduce_range=reduce_range)
        t = torch.ao.quantization.HistogramObserver(reduce_range=reduce_range)
        for i in range(4):
            x = (rng.standard_normal(3000) * (1 + i) + (rng.random(3000) < 0.002) * 30)
            x = x.astype(np.float32)
            e(ember.from_numpy(x))
            t(torch.from_numpy(x))
        (es, ez), (ts, tz) = e.calculate_qparams(), t.calculate_qparams()
        assert es.item() == pytest.approx(ts.item(), rel=1e-5)
        assert ez.item() == tz.item()


def test_qconfig_mapping_precedence_and_round_trip():
    from ember.ao.quantization import (
        QConfigMapping,
        default_dynamic_qconfig,
        get_default_qconfig_mapping,
        propagate_qconfig_,
        quantize_dynamic,
    )

    model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4), nn.ReLU()),
                          nn.Linear(4, 2))
    mapping = (QConfigMapping().set_global(default_qconfig)
               .set_object_type(nn.ReLU, None)
               .set_module_name_regex(r"1\..*", default_dynamic_qconfig)
               .set_module_name("2", None))
    propagate_qconfig_(model, mapping)
    assert model.qconfig is default_qconfig and model[0].qconfig is default_qconfig
    assert model[1].qconfig is default_qconfig  # "1" itself matches no entry: inherits
    assert model[1][0].qconfig is default_dynamic_qconfig  # regex beats object type
    assert model[1][1].qconfig is default_dynamic_qconfig
    assert model[2].qconfig is None  # module name beats everything
    again = QConfigMapping.from_dict(mapping.to_dict())
    assert again.to_dict() == mapping.to_dict()
    assert "module_name_regex" in repr(mapping)
    assert get_default_qconfig_mapping("x86").global_qconfig is not None
    fresh = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    q = quantize_dynamic(fresh, QConfigMapping().set_object_type(nn.Linear,
                                                                 default_dynamic_qconfig)
                         .set_module_name("1", None))
    assert isinstance(q[0], ember.ao.nn.quantized.dynamic.Linear)
    assert type(q[1]) is nn.Linear
