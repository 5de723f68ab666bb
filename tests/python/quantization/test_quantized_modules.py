"""The quantized activations and normalisations of ember.ao.nn.quantized (Hardswish, ELU,
LeakyReLU, Sigmoid, Softmax, Dropout, BatchNorm2d/3d, LayerNorm, GroupNorm, InstanceNorm1d/2d/3d,
nn.intrinsic.quantized.BNReLU2d/3d) against their float definitions, their place in prepare /
convert, the fixed-qparams observers and fake quants of sigmoid / hardsigmoid / softmax / tanh,
the ember.nn.quantized & co. aliases, and PyTorch's quantized modules where PyTorch is
installed."""

import importlib
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.ao import quantization as tq
from ember.ao.nn.quantized.modules import activation as qact

nnq = ember.ao.nn.quantized
nni = ember.ao.nn.intrinsic
nniq = ember.ao.nn.intrinsic.quantized


def _q(x, scale=0.05, zero_point=100, dtype=ember.quint8):
    return ember.quantize_per_tensor(x, scale, zero_point, dtype)


def _want(op, xq, scale, zero_point):
    """The definition: quantize(op(dequantize(x))) with the module's parameters."""
    return ember.quantize_per_tensor(op(xq.dequantize()), float(scale), int(zero_point),
                                     xq.dtype)


def _check(got, want):
    assert got.dtype == want.dtype
    assert got.q_scale() == pytest.approx(want.q_scale(), rel=1e-7)
    assert got.q_zero_point() == want.q_zero_point()
    np.testing.assert_array_equal(got.int_repr().numpy(), want.int_repr().numpy())


ACTIVATIONS = [
    ("hardswish", lambda: nnq.Hardswish(0.03, 10), F.hardswish),
    ("elu", lambda: nnq.ELU(0.04, 60, alpha=0.7), lambda x: F.elu(x, 0.7)),
    ("leaky_relu", lambda: nnq.LeakyReLU(0.05, 30, negative_slope=0.2),
     lambda x: F.leaky_relu(x, 0.2)),
    ("sigmoid", lambda: nnq.Sigmoid(1 / 256, 0), ember.sigmoid),
    ("softmax", lambda: nnq.Softmax(dim=1, scale=1 / 256, zero_point=0),
     lambda x: ember.softmax(x, 1)),
    ("softmax_dim0", lambda: nnq.Softmax(0, 0.002, 3), lambda x: ember.softmax(x, 0)),
    ("hardsigmoid", lambda: qact._Hardsigmoid(1 / 256, 0), F.hardsigmoid),
    ("tanh", lambda: qact._Tanh(2 / 256, 128), ember.tanh),
]


@pytest.mark.parametrize("name,make,op", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [ember.quint8, ember.qint8])
def test_activation_is_its_float_op_requantized(name, make, op, dtype):
    ember.manual_seed(0)
    m = make()
    x = ember.randn(4, 5, 3) * 3
    xq = _q(x, 0.05, 100 if dtype == ember.quint8 else -3, dtype)
    scale = getattr(m, "scale", getattr(m, "output_scale", None))
    zero_point = getattr(m, "zero_point", getattr(m, "output_zero_point", None))
    if dtype == ember.qint8:
        zero_point = int(zero_point) - 128  # the same real range in signed integers
        for attr in ("zero_point", "output_zero_point"):
            if hasattr(m, attr):
                setattr(m, attr, zero_point if not isinstance(getattr(m, attr), ember.Tensor)
                        else ember.tensor(zero_point))
    _check(m(xq), _want(op, xq, scale, zero_point))
    if name.startswith(("sigmoid", "softmax", "hardsigmoid", "tanh")):
        # PyTorch does not convert these (its float ops take quantized tensors): in a float
        # region they must still compute the float op.
        np.testing.assert_array_equal(m(x).numpy(), op(x).numpy())
    else:
        with pytest.raises(TypeError, match="quantized input"):
            m(x)


def test_activation_modules_attributes_and_names():
    hs = nnq.Hardswish(0.1, 3)
    assert isinstance(hs, nn.Hardswish) and hs._get_name() == "QuantizedHardswish"
    assert set(hs.state_dict()) == {"scale", "zero_point"}  # buffers, as PyTorch's
    lr = nnq.LeakyReLU(0.1, 3, 0.3)
    assert lr.negative_slope == 0.3 and set(lr.state_dict()) == {"scale", "zero_point"}
    elu = nnq.ELU(0.1, 3)
    assert elu.alpha == 1.0 and elu.scale == 0.1 and elu._get_name() == "QuantizedELU"
    sm = nnq.Softmax()
    assert sm.dim is None and sm.scale == 1.0 and sm.zero_point == 0
    sig = nnq.Sigmoid(0.5, 1)
    assert isinstance(sig, nn.Sigmoid) and (sig.output_scale, sig.output_zero_point) == (0.5, 1)
    assert isinstance(qact._Tanh(2 / 256, 128), nn.Tanh)
    assert isinstance(qact._Hardsigmoid(1 / 256, 0), nn.Hardsigmoid)
    # Softmax without a dim picks PyTorch's implicit one, with its warning.
    xq = _q(ember.randn(3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension"):
        got = nnq.Softmax(scale=1 / 256, zero_point=0)(xq)
    _check(got, _want(lambda x: ember.softmax(x, 1), xq, 1 / 256, 0))


def test_dropout_is_an_identity_in_train_and_eval():
    d = nnq.Dropout.from_float(nn.Dropout(0.4, inplace=False))
    assert isinstance(d, nnq.Dropout) and d.p == 0.4 and d._get_name() == "QuantizedDropout"
    xq = _q(ember.randn(50))
    for mode in (True, False):
        d.train(mode)
        np.testing.assert_array_equal(d(xq).int_repr().numpy(), xq.int_repr().numpy())
    assert nnq.Dropout.from_reference(nn.Dropout(0.2), 0.1, 0).p == 0.2


def _bn(cls, n, seed):
    rng = np.random.default_rng(seed)
    bn = cls(n)
    with ember.no_grad():
        bn.weight.copy_(ember.from_numpy(rng.uniform(0.5, 1.5, n).astype(np.float32)))
        bn.bias.copy_(ember.from_numpy(rng.uniform(-0.5, 0.5, n).astype(np.float32)))
        bn.running_mean.copy_(ember.from_numpy(rng.uniform(-1, 1, n).astype(np.float32)))
        bn.running_var.copy_(ember.from_numpy(rng.uniform(0.5, 2, n).astype(np.float32)))
    return bn


@pytest.mark.parametrize("cls,ndim,relu", [(nnq.BatchNorm2d, 4, False),
                                           (nnq.BatchNorm3d, 5, False),
                                           (nniq.BNReLU2d, 4, True), (nniq.BNReLU3d, 5, True)])
def test_quantized_batch_norm_is_the_float_one_requantized(cls, ndim, relu):
    ref = _bn(nn.BatchNorm2d, 3, ndim).eval()
    m = cls(3, eps=1e-5)
    for name in ("weight", "bias"):
        setattr(m, name, getattr(ref, name))
    m.running_mean, m.running_var = ref.running_mean, ref.running_var
    m.scale, m.zero_point = ember.tensor(0.04), ember.tensor(70)
    ember.manual_seed(ndim)
    xq = _q(ember.randn(*([2, 3] + [4] * (ndim - 2))), 0.03, 90)

    def op(x):
        y = F.batch_norm(x, ref.running_mean, ref.running_var, ref.weight, ref.bias, False,
                         0.0, ref.eps)
        return F.relu(y) if relu else y

    want = _want(op, xq, 0.04, 70)
    _check(m(xq), want)
    m.train()  # the running statistics still normalise (inference-only kernels, as PyTorch)
    _check(m(xq), want)
    with pytest.raises(ValueError, match="Input shape"):
        m(_q(ember.randn(2, 3, 4)))
    assert m._get_name() == ("QuantizedBNReLU" if relu else "QuantizedBatchNorm") + f"{ndim - 2}d"


def test_quantized_batch_norm_from_float():
    bn = _bn(nn.BatchNorm2d, 4, 1).eval()
    bn.qconfig = tq.default_qconfig
    bn.activation_post_process = tq.MinMaxObserver()
    x = ember.randn(2, 4, 3, 3)
    bn.activation_post_process(bn(x))
    q = nnq.BatchNorm2d.from_float(bn)
    scale, zero_point = bn.activation_post_process.calculate_qparams()
    assert float(q.scale) == float(scale) and int(q.zero_point) == int(zero_point)
    assert q.weight is bn.weight and q.running_var is bn.running_var and q.eps == bn.eps
    xq = _q(x, 0.02, 128)
    _check(q(xq), _want(bn, xq, scale, zero_point))
    fused = nni.BNReLU2d(bn, nn.ReLU())
    fused.activation_post_process = bn.activation_post_process
    qr = nniq.BNReLU2d.from_float(fused)
    assert type(qr) is nniq.BNReLU2d and qr.weight is bn.weight
    _check(qr(xq), _want(lambda t: F.relu(bn(t)), xq, scale, zero_point))
    ref = nnq.BatchNorm2d.from_reference(bn, ember.tensor(0.1), ember.tensor(5))
    assert ref.running_mean is bn.running_mean and ref.zero_point.item() == 5


@pytest.mark.parametrize("affine", [True, False])
def test_quantized_norms_are_the_float_ones_requantized(affine):
    ember.manual_seed(2)
    ln = nn.LayerNorm([5, 6], elementwise_affine=affine)
    gn = nn.GroupNorm(2, 4, affine=affine)
    if affine:
        with ember.no_grad():
            for m in (ln, gn):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    x = ember.randn(3, 4, 5, 6) * 2 + 0.5
    xq = _q(x, 0.05, 110)
    qln = nnq.LayerNorm([5, 6], ln.weight, ln.bias, 0.03, 128, elementwise_affine=affine)
    assert qln.weight is ln.weight and qln._get_name() == "QuantizedLayerNorm"
    _check(qln(xq), _want(ln, xq, 0.03, 128))
    qgn = nnq.GroupNorm(2, 4, gn.weight, gn.bias, 0.03, 128, affine=affine)
    assert qgn._get_name() == "QuantizedGroupNorm"
    _check(qgn(xq), _want(gn, xq, 0.03, 128))
    weight = nn.Parameter(ember.rand(4) + 0.5) if affine else None
    bias = nn.Parameter(ember.rand(4) - 0.5) if affine else None
    for cls, shape in ((nnq.InstanceNorm1d, (3, 4, 7)), (nnq.InstanceNorm2d, (3, 4, 5, 6)),
                       (nnq.InstanceNorm3d, (2, 4, 3, 4, 5))):
        m = cls(4, weight, bias, 0.025, 120, affine=affine)
        assert m.num_features == 4 and m.affine == affine
        assert m._get_name() == "Quantized" + cls.__name__
        assert set(m.state_dict()) >= {"scale", "zero_point"}
        xq = _q(ember.randn(*shape) * 3, 0.05, 110)
        _check(m(xq), _want(lambda t: F.instance_norm(t, weight=weight, bias=bias), xq, 0.025,
                            120))


def test_quantized_norms_from_float():
    ember.manual_seed(3)
    ln = nn.LayerNorm(6)
    gn = nn.GroupNorm(3, 6)
    x = ember.randn(4, 6) * 2
    for m in (ln, gn):
        m.activation_post_process = tq.MinMaxObserver()
        m.activation_post_process(m(x))
    qln, qgn = nnq.LayerNorm.from_float(ln), nnq.GroupNorm.from_float(gn)
    for q, m in ((qln, ln), (qgn, gn)):
        scale, zero_point = m.activation_post_process.calculate_qparams()
        assert float(q.scale) == float(scale) and int(q.zero_point) == int(zero_point)
        assert q.weight is m.weight and q.bias is m.bias and q.eps == m.eps
        xq = _q(x, 0.04, 128)
        _check(q(xq), _want(m, xq, scale, zero_point))
    assert qln.normalized_shape == (6,) and qgn.num_groups == 3

    # Ember's nn has no InstanceNorm yet: from_float reads PyTorch's attributes off any module.
    class FloatInstanceNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.num_features, self.eps, self.affine = 6, 1e-3, True
            self.weight = nn.Parameter(ember.rand(6) + 0.5)
            self.bias = nn.Parameter(ember.rand(6))

        def forward(self, t):
            return F.instance_norm(t, weight=self.weight, bias=self.bias, eps=self.eps)

    f = FloatInstanceNorm()
    y = ember.randn(2, 6, 5)
    f.activation_post_process = tq.MinMaxObserver()
    f.activation_post_process(f(y))
    q = nnq.InstanceNorm1d.from_float(f)
    scale, zero_point = f.activation_post_process.calculate_qparams()
    assert q.eps == 1e-3 and q.weight is f.weight and float(q.scale) == float(scale)
    yq = _q(y, 0.03, 120)
    _check(q(yq), _want(f, yq, scale, zero_point))
    assert nnq.InstanceNorm2d.from_reference(f, 0.5, 3).zero_point.item() == 3


def test_fixed_qparams_observer_and_fake_quant():
    obs = tq.default_fixed_qparams_range_0to1_observer()
    assert isinstance(obs, tq.FixedQParamsObserver)
    x = ember.rand(10)
    assert obs(x) is x
    scale, zero_point = obs.calculate_qparams()
    assert scale.item() == 1 / 256 and zero_point.item() == 0 and zero_point.dtype == ember.int32
    assert (obs.quant_min, obs.quant_max, obs.dtype) == (0, 255, ember.quint8)
    scale, zero_point = tq.default_fixed_qparams_range_neg1to1_observer().calculate_qparams()
    assert scale.item() == 2 / 256 and zero_point.item() == 128
    assert tq.default_symmetric_fixed_qparams_observer is \
        tq.default_fixed_qparams_range_neg1to1_observer
    assert tq.default_affine_fixed_qparams_observer is tq.default_fixed_qparams_range_0to1_observer
    with pytest.raises(NotImplementedError, match="dynamic"):
        tq.FixedQParamsObserver(0.1, 0, is_dynamic=True)

    fq = tq.default_fixed_qparams_range_neg1to1_fake_quant()
    assert isinstance(fq, tq.FixedQParamsFakeQuantize) and isinstance(fq, tq.FakeQuantize)
    assert fq.scale is fq.activation_post_process.scale  # the observer's buffers themselves
    y = ember.tanh(ember.randn(100) * 2)
    out = fq(y)
    want = ember.fake_quantize_per_tensor_affine(y, 2 / 256, 128, 0, 255)
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    ints = out.numpy() * 128 + 128
    np.testing.assert_allclose(ints, np.round(ints), atol=1e-4)  # on the fixed grid
    assert fq.calculate_qparams()[0].item() == 2 / 256
    assert fq.scale.item() == 2 / 256  # observing does not move it
    fq.apply(tq.disable_fake_quant)
    assert fq(y) is y
    assert tq.default_affine_fixed_qparams_fake_quant is \
        tq.default_fixed_qparams_range_0to1_fake_quant
    assert tq.default_symmetric_fixed_qparams_fake_quant is \
        tq.default_fixed_qparams_range_neg1to1_fake_quant
    assert "scale=" in repr(fq) and "quant_max=255" in repr(fq)
    with pytest.raises(AssertionError, match="FixedQParamsObserver"):
        tq.FixedQParamsFakeQuantize(observer=tq.MinMaxObserver)


class ActNet(nn.Module):
    """Every new static mapping between a QuantStub and a DeQuantStub."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.bn2 = nn.BatchNorm2d(4)
        self.relu2 = nn.ReLU()
        self.hardswish = nn.Hardswish()
        self.leaky = nn.LeakyReLU(0.1)
        self.elu = nn.ELU(0.5)
        self.gn = nn.GroupNorm(2, 4)
        self.ln = nn.LayerNorm([4, 4])
        self.dropout = nn.Dropout(0.3)
        self.hardsigmoid = nn.Hardsigmoid()
        self.fc = nn.Linear(16, 6)
        self.tanh = nn.Tanh()
        self.fc2 = nn.Linear(6, 6)
        self.sigmoid = nn.Sigmoid()
        self.fc3 = nn.Linear(6, 5)
        self.softmax = nn.Softmax(dim=1)
        self.dequant = tq.DeQuantStub()
        for bn in (self.bn, self.bn2):
            with ember.no_grad():
                bn.running_mean.uniform_(-0.2, 0.2)
                bn.running_var.uniform_(0.5, 1.5)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = self.relu2(self.bn2(self.bn(self.conv(self.quant(x)))))  # (N, 4, 4, 4)
        x = self.elu(self.leaky(self.hardswish(x)))
        x = self.dropout(self.ln(self.gn(x)))
        x = self.hardsigmoid(x).mean(1)  # (N, 4, 4)
        x = self.tanh(self.fc(ember.flatten(x, 1)))
        x = self.sigmoid(self.fc2(x))
        return self.dequant(self.softmax(self.fc3(x)))


def _logits(model, x, flatten, upto=None):
    """ActNet's converted forward up to the module ``upto``, or up to the logits (before the
    softmax) dequantized."""
    h = model.quant(x)
    for name in ("conv", "bn", "bn2", "hardswish", "leaky", "elu", "gn", "ln", "dropout",
                 "hardsigmoid"):
        h = getattr(model, name)(h)
        if name == upto:
            return h
    h = model.sigmoid(model.fc2(model.tanh(model.fc(flatten(h.mean(1), 1)))))
    return model.fc3(h).dequantize()


FIXED = {"hardsigmoid": (1 / 256, 0), "sigmoid": (1 / 256, 0), "softmax": (1 / 256, 0),
         "tanh": (2 / 256, 128)}


def test_prepare_and_convert_quantize_the_new_modules():
    ember.manual_seed(4)
    model = ActNet().eval()
    model.qconfig = tq.default_qconfig
    fused = tq.fuse_modules(model, [["bn2", "relu2"]])
    assert type(fused.bn2) is nni.BNReLU2d
    prepared = tq.prepare(fused)
    assert not hasattr(prepared.dropout, "activation_post_process")  # as PyTorch
    for name, (scale, zero_point) in FIXED.items():
        obs = getattr(prepared, name).activation_post_process
        assert type(obs) is tq.FixedQParamsObserver
        s, z = obs.calculate_qparams()
        assert (s.item(), z.item()) == (scale, zero_point)
    for name in ("bn", "bn2", "hardswish", "leaky", "elu", "gn", "ln"):
        assert type(getattr(prepared, name).activation_post_process) is tq.MinMaxObserver
    x = ember.randn(8, 3, 6, 6)
    with ember.no_grad():
        prepared(x)
    q = tq.convert(prepared)
    types = {"bn": nnq.BatchNorm2d, "bn2": nniq.BNReLU2d, "hardswish": nnq.Hardswish,
             "leaky": nnq.LeakyReLU, "elu": nnq.ELU, "gn": nnq.GroupNorm, "ln": nnq.LayerNorm,
             "dropout": nnq.Dropout, "sigmoid": nnq.Sigmoid, "softmax": nnq.Softmax,
             "hardsigmoid": qact._Hardsigmoid, "tanh": qact._Tanh}
    for name, cls in types.items():
        assert type(getattr(q, name)) is cls, name
    for name in ("bn", "hardswish", "gn", "ln"):
        s, z = getattr(prepared, name).activation_post_process.calculate_qparams()
        assert float(getattr(q, name).scale) == float(s)
        assert int(getattr(q, name).zero_point) == int(z)
    assert (q.sigmoid.output_scale, q.sigmoid.output_zero_point) == (1 / 256, 0)
    assert (q.tanh.output_scale, q.tanh.output_zero_point) == (2 / 256, 128)
    assert (q.softmax.scale, q.softmax.zero_point, q.softmax.dim) == (1 / 256, 0, 1)
    assert q.elu.alpha == 0.5 and q.leaky.negative_slope == 0.1
    with ember.no_grad():
        out, ref = q(x), model(x)
    assert out.shape == (8, 5)
    np.testing.assert_allclose(out.sum(1).numpy(), 1.0, atol=0.03)
    assert (out - ref).abs().max().item() < 0.05
    # The tanh output is on the 2/256 grid, the sigmoid's on 1/256 (PyTorch's fixed kernels).
    with ember.no_grad():
        h = _logits(q, x, ember.flatten, upto="hardsigmoid")
        assert h.q_scale() == 1 / 256 and h.q_zero_point() == 0
        t = q.tanh(q.fc(ember.flatten(h.mean(1), 1)))
        assert t.q_scale() == 2 / 256 and t.q_zero_point() == 128


def test_fixed_qparams_activations_in_a_float_region_stay_float():
    # PyTorch's eager mode leaves Sigmoid / Softmax / Tanh / Hardsigmoid float, so a program
    # may run them on float values after the DeQuantStub, with the model's qconfig.
    ember.manual_seed(9)
    model = nn.Sequential(tq.QuantStub(), nn.Linear(6, 6), tq.DeQuantStub(), nn.Sigmoid(),
                          nn.Tanh(), nn.Hardsigmoid(), nn.Softmax(dim=1)).eval()
    model.qconfig = tq.default_qconfig
    prepared = tq.prepare(model)
    x = ember.randn(5, 6)
    with ember.no_grad():
        prepared(x)
    q = tq.convert(prepared)
    with ember.no_grad():
        out = q(x)
        h = q[2](q[1](q[0](x)))
        want = ember.softmax(F.hardsigmoid(ember.tanh(ember.sigmoid(h))), 1)
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)


def test_prepare_qat_gives_fixed_qparams_fake_quants_that_convert_keeps():
    ember.manual_seed(5)
    model = nn.Sequential(tq.QuantStub(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8),
                          nn.Hardsigmoid(), nn.Linear(8, 8), nn.Sigmoid(), nn.Linear(8, 4),
                          nn.Softmax(dim=1), tq.DeQuantStub()).train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    qat = tq.prepare_qat(model)
    for idx, (scale, zero_point) in ((2, (2 / 256, 128)), (4, (1 / 256, 0)), (6, (1 / 256, 0)),
                                     (8, (1 / 256, 0))):
        fq = qat[idx].activation_post_process
        assert type(fq) is tq.FixedQParamsFakeQuantize
        assert (fq.scale.item(), fq.zero_point.item()) == (scale, zero_point)
    x = ember.randn(16, 8) * 2
    target = ember.softmax(ember.randn(16, 4), 1)
    opt = ember.optim.SGD(qat.parameters(), lr=0.05)
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(qat(x), target).backward()
        opt.step()
    for fq_idx in (2, 4, 6, 8):
        fq = qat[fq_idx].activation_post_process
        assert fq.scale.item() in (1 / 256, 2 / 256)  # training does not move them
    # The simulated tanh output is on the fixed grid.
    with ember.no_grad():
        t = qat[2](qat[1](qat[0](x)))
    grid = t.numpy() * 128 + 128
    np.testing.assert_allclose(grid, np.round(grid), atol=1e-3)
    qat.apply(tq.disable_observer)
    qat.eval()
    with ember.no_grad():
        simulated = qat(x)
    q = tq.convert(qat)
    assert type(q[2]) is qact._Tanh and type(q[4]) is qact._Hardsigmoid
    assert type(q[6]) is nnq.Sigmoid and type(q[8]) is nnq.Softmax
    assert (q[2].output_scale, q[2].output_zero_point) == (2 / 256, 128)
    with ember.no_grad():
        real = q(x)
    assert (real - simulated).abs().max().item() <= 2 / 256 + 1e-6


def test_nn_quantized_intrinsic_qat_aliases():
    import ember.nn.intrinsic as nn_intrinsic
    import ember.nn.intrinsic.qat as nn_intrinsic_qat
    import ember.nn.intrinsic.quantized as nn_intrinsic_quantized
    import ember.nn.qat as nn_qat
    import ember.nn.quantized as nn_quantized
    import ember.nn.quantized.dynamic as nn_quantized_dynamic
    from ember.nn.intrinsic.qat import ConvBn2d, freeze_bn_stats
    from ember.nn.quantized import Conv2d, FloatFunctional

    assert nn_quantized is ember.ao.nn.quantized and ember.nn.quantized is nn_quantized
    assert nn_quantized_dynamic is ember.ao.nn.quantized.dynamic
    assert nn_intrinsic is ember.ao.nn.intrinsic and nn_qat is ember.ao.nn.qat
    assert nn_intrinsic_qat is ember.ao.nn.intrinsic.qat
    assert nn_intrinsic_quantized is ember.ao.nn.intrinsic.quantized
    assert Conv2d is nnq.Conv2d and FloatFunctional is nnq.FloatFunctional
    assert ConvBn2d is ember.ao.nn.intrinsic.qat.ConvBn2d
    assert freeze_bn_stats is ember.ao.nn.intrinsic.qat.freeze_bn_stats
    assert ember.nn.quantized.dynamic.Linear is ember.ao.nn.quantized.dynamic.Linear
    assert ember.nn.intrinsic.ConvBnReLU2d is nni.ConvBnReLU2d
    assert ember.nn.qat.Conv2d is ember.ao.nn.qat.Conv2d
    # Module objects keep their ember.ao identity (one class per name, reload works).
    assert nn_quantized.__name__ == "ember.ao.nn.quantized"
    assert nn_quantized.__spec__.name == "ember.ao.nn.quantized"
    import ember.nn.quantized.modules.conv as conv_module

    assert conv_module is ember.ao.nn.quantized.modules.conv
    with pytest.raises(AttributeError):
        ember.nn.not_a_module  # noqa: B018
    with pytest.raises(ImportError):
        importlib.import_module("ember.nn.not_a_module")
    # Aliased paths work in the workflows.
    model = nn.Sequential(ember.quantization.QuantStub(), nn.Linear(4, 4),
                          ember.quantization.DeQuantStub()).eval()
    model.qconfig = tq.default_qconfig
    prepared = tq.prepare(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared(ember.randn(4, 4))
    assert isinstance(tq.convert(prepared)[1], ember.nn.quantized.Linear)


def _torch_quantized(torch, xq):
    return torch._make_per_tensor_quantized_tensor(
        torch.from_numpy(xq.int_repr().numpy()), xq.q_scale(), xq.q_zero_point())


def _close_to_torch(got, want):
    """Within one quantization step of PyTorch's kernel, mostly equal (its hardswish and elu
    kernels round a few values differently from the float op's requantization)."""
    assert got.q_scale() == pytest.approx(want.q_scale(), rel=1e-6)
    assert got.q_zero_point() == want.q_zero_point()
    g = got.int_repr().numpy().astype(np.int64)
    w = want.int_repr().numpy().astype(np.int64)
    assert np.abs(g - w).max() <= 1
    assert (g == w).mean() > 0.9


def test_matches_pytorch_quantized_modules():
    torch = pytest.importorskip("torch")
    tnnq = torch.ao.nn.quantized
    rng = np.random.default_rng(6)

    def inputs(shape, scale=0.05, zero_point=100):
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        xq = _q(ember.from_numpy(x), scale, zero_point)
        return xq, _torch_quantized(torch, xq)

    pairs = [
        (nnq.Hardswish(0.03, 10), tnnq.Hardswish(0.03, 10), (4, 6, 5)),
        (nnq.ELU(0.04, 60, 0.7), tnnq.ELU(0.04, 60, 0.7), (4, 6, 5)),
        (nnq.LeakyReLU(0.05, 30, 0.2), tnnq.LeakyReLU(0.05, 30, 0.2), (4, 6, 5)),
        (nnq.Sigmoid(1 / 256, 0), tnnq.Sigmoid(1 / 256, 0), (4, 6, 5)),
        (nnq.Softmax(1, 1 / 256, 0), tnnq.Softmax(1, 1 / 256, 0), (4, 6, 5)),
        (nnq.Dropout(0.5), tnnq.Dropout(0.5), (4, 6)),
    ]
    for em, tm, shape in pairs:
        xq, txq = inputs(shape)
        _close_to_torch(em(xq), tm(txq))
    # PyTorch leaves hardsigmoid and tanh float: its kernels fix the output parameters.
    xq, txq = inputs((5, 7))
    _close_to_torch(qact._Hardsigmoid(1 / 256, 0)(xq), torch.nn.functional.hardsigmoid(txq))
    _close_to_torch(qact._Tanh(2 / 256, 128)(xq), torch.tanh(txq))
    # Normalisations with the same parameters.
    w = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 4).astype(np.float32)
    rm = rng.uniform(-0.5, 0.5, 4).astype(np.float32)
    rv = rng.uniform(0.5, 2, 4).astype(np.float32)
    for ecls, tcls, ndim in ((nnq.BatchNorm2d, tnnq.BatchNorm2d, 4),
                             (nnq.BatchNorm3d, tnnq.BatchNorm3d, 5),
                             (nniq.BNReLU2d, torch.ao.nn.intrinsic.quantized.BNReLU2d, 4),
                             (nniq.BNReLU3d, torch.ao.nn.intrinsic.quantized.BNReLU3d, 5)):
        em, tm = ecls(4), tcls(4)
        for m, lib in ((em, ember), (tm, torch)):
            to = ember.from_numpy if lib is ember else torch.from_numpy
            with lib.no_grad():
                m.weight.copy_(to(w))
                m.bias.copy_(to(b))
                m.running_mean.copy_(to(rm))
                m.running_var.copy_(to(rv))
            m.scale, m.zero_point = lib.tensor(0.04), lib.tensor(70)
        xq, txq = inputs([2, 4] + [3] * (ndim - 2))
        _close_to_torch(em(xq), tm(txq))
    ew, eb = nn.Parameter(ember.from_numpy(w)), nn.Parameter(ember.from_numpy(b))
    tw, tb = torch.nn.Parameter(torch.from_numpy(w)), torch.nn.Parameter(torch.from_numpy(b))
    xq, txq = inputs((3, 4, 5, 6))
    _close_to_torch(nnq.LayerNorm([5, 6], None, None, 0.03, 128, elementwise_affine=False)(xq),
                    tnnq.LayerNorm([5, 6], None, None, 0.03, 128, elementwise_affine=False)(txq))
    _close_to_torch(nnq.GroupNorm(2, 4, ew, eb, 0.03, 128)(xq),
                    tnnq.GroupNorm(2, 4, tw, tb, 0.03, 128)(txq))
    for ecls, tcls, shape in ((nnq.InstanceNorm1d, tnnq.InstanceNorm1d, (3, 4, 9)),
                              (nnq.InstanceNorm2d, tnnq.InstanceNorm2d, (3, 4, 5, 6)),
                              (nnq.InstanceNorm3d, tnnq.InstanceNorm3d, (2, 4, 3, 4, 5))):
        xq, txq = inputs(shape)
        _close_to_torch(ecls(4, ew, eb, 0.025, 120, affine=True)(xq),
                        tcls(4, tw, tb, 0.025, 120, affine=True)(txq))


def test_matches_pytorch_static_and_qat_workflows():
    torch = pytest.importorskip("torch")
    ttq = torch.ao.quantization
    ember.manual_seed(7)
    em = ActNet().eval()
    sd = {k: torch.from_numpy(np.array(v.detach().numpy())) for k, v in em.state_dict().items()}

    class TorchActNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            tn = torch.nn
            self.quant = ttq.QuantStub()
            self.conv, self.bn = tn.Conv2d(3, 4, 3), tn.BatchNorm2d(4)
            self.bn2, self.relu2 = tn.BatchNorm2d(4), tn.ReLU()
            self.hardswish, self.leaky, self.elu = tn.Hardswish(), tn.LeakyReLU(0.1), tn.ELU(0.5)
            self.gn, self.ln = tn.GroupNorm(2, 4), tn.LayerNorm([4, 4])
            self.dropout, self.hardsigmoid = tn.Dropout(0.3), tn.Hardsigmoid()
            self.fc, self.tanh = tn.Linear(16, 6), tn.Tanh()
            self.fc2, self.sigmoid = tn.Linear(6, 6), tn.Sigmoid()
            self.fc3, self.softmax = tn.Linear(6, 5), tn.Softmax(dim=1)
            self.dequant = ttq.DeQuantStub()

        def forward(self, x):
            x = self.relu2(self.bn2(self.bn(self.conv(self.quant(x)))))
            x = self.elu(self.leaky(self.hardswish(x)))
            x = self.dropout(self.ln(self.gn(x)))
            x = self.hardsigmoid(x).mean(1)
            x = self.tanh(self.fc(torch.flatten(x, 1)))
            x = self.sigmoid(self.fc2(x))
            # PyTorch has no quantized softmax module in eager mode: softmax in float.
            return self.softmax(self.dequant(self.fc3(x)))

    tm = TorchActNet().eval()
    tm.load_state_dict(sd)
    em.qconfig, tm.qconfig = tq.default_qconfig, ttq.default_qconfig
    ep = tq.prepare(tq.fuse_modules(em, [["bn2", "relu2"]]))
    tp = ttq.prepare(ttq.fuse_modules(tm, [["bn2", "relu2"]]))
    x = np.random.default_rng(8).standard_normal((8, 3, 6, 6)).astype(np.float32)
    with ember.no_grad():
        ep(ember.from_numpy(x))
    with torch.no_grad():
        tp(torch.from_numpy(x))
    eq_model, tq_model = tq.convert(ep), ttq.convert(tp)
    for name in ("bn", "bn2", "hardswish", "leaky", "elu", "gn", "ln", "fc", "fc2", "fc3"):
        e_mod, t_mod = getattr(eq_model, name), getattr(tq_model, name)
        assert e_mod._get_name() == t_mod._get_name(), name
        assert float(e_mod.scale) == pytest.approx(float(t_mod.scale), rel=1e-5), name
        assert int(e_mod.zero_point) == int(t_mod.zero_point), name
    assert type(tq_model.dropout).__name__ == type(eq_model.dropout).__name__ == "Dropout"
    with torch.no_grad():
        want = tq_model(torch.from_numpy(x)).numpy()
        t_logits = _logits(tq_model, torch.from_numpy(x), torch.flatten).numpy()
    with ember.no_grad():
        e_logits = _logits(eq_model, ember.from_numpy(x), ember.flatten).numpy()
        got = eq_model(ember.from_numpy(x)).numpy()
    step = float(tq_model.fc3.scale)
    assert np.abs(e_logits - t_logits).max() <= step + 1e-6
    assert np.abs(got - want).max() < 0.02  # softmax: quantized here, float in PyTorch's

    # prepare_qat: the same fixed-qparams fake quants after sigmoid, hardsigmoid and tanh.
    em.train()
    tm.train()
    em.qconfig = tq.get_default_qat_qconfig("x86")
    tm.qconfig = ttq.get_default_qat_qconfig("x86")
    eqat, tqat = tq.prepare_qat(em), ttq.prepare_qat(tm)
    for name in ("sigmoid", "hardsigmoid", "tanh", "softmax"):
        e_fq = getattr(eqat, name).activation_post_process
        t_fq = getattr(tqat, name).activation_post_process
        assert type(e_fq).__name__ == type(t_fq).__name__ == "FixedQParamsFakeQuantize"
        assert e_fq.scale.item() == t_fq.scale.item()
        assert e_fq.zero_point.item() == t_fq.zero_point.item()
        assert (e_fq.quant_min, e_fq.quant_max) == (t_fq.quant_min, t_fq.quant_max)
        y = np.linspace(-1.2, 1.2, 101).astype(np.float32)
        np.testing.assert_array_equal(e_fq(ember.from_numpy(y)).numpy(),
                                      t_fq(torch.from_numpy(y)).numpy())
