"""QAT fusion: fuse_modules_qat and fuse_known_modules(is_qat=True) patterns, the fused float
modules (nn.intrinsic.ConvBn*, ConvBnReLU*, LinearBn1d, BNReLU2d), their QAT counterparts
(PyTorch's _ConvBnNd design: the batch norm trained with batch statistics, the weight
fake-quantized as folded), freeze_bn_stats / update_bn_stats, to_float, convert() folding the
batch norm, and PyTorch's QAT results where PyTorch is installed."""

from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.ao import quantization as tq

nni = ember.ao.nn.intrinsic
nniqat = ember.ao.nn.intrinsic.qat
nniq = ember.ao.nn.intrinsic.quantized
nnq = ember.ao.nn.quantized

# The non-fused FakeQuantize qconfig (PyTorch's default_qat_qconfig with per-channel weights):
# PyTorch's get_default_qat_qconfig("x86") uses its fused fake-quant op, whose symmetric
# weight scale divides by 128 / 127 rather than 127.5.
QAT_QCONFIG = tq.QConfig(activation=tq.default_fake_quant,
                         weight=tq.default_per_channel_weight_fake_quant)


def _np(t):
    return t.detach().numpy()


def _randomize_bn(bn, seed):
    rng = np.random.default_rng(seed)
    n = bn.num_features
    with ember.no_grad():
        bn.weight.copy_(ember.from_numpy(rng.uniform(0.5, 1.5, n).astype(np.float32)))
        bn.bias.copy_(ember.from_numpy(rng.uniform(-0.3, 0.3, n).astype(np.float32)))
        bn.running_mean.copy_(ember.from_numpy(rng.uniform(-0.2, 0.2, n).astype(np.float32)))
        bn.running_var.copy_(ember.from_numpy(rng.uniform(0.5, 2.0, n).astype(np.float32)))


class ConvBnNet(nn.Module):
    """Conv2d+BN+ReLU, Conv2d+BN (no conv bias), Conv1d+BN+ReLU, Linear+BN, BN+ReLU."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.bn3 = nn.BatchNorm2d(8)
        self.relu3 = nn.ReLU()
        self.conv4 = nn.Conv1d(8, 6, 3)
        self.bn4 = nn.BatchNorm1d(6)
        self.relu4 = nn.ReLU()
        self.fc = nn.Linear(24, 10)
        self.bn5 = nn.BatchNorm1d(10)
        self.dequant = tq.DeQuantStub()
        for i, bn in enumerate((self.bn1, self.bn2, self.bn3, self.bn4, self.bn5)):
            _randomize_bn(bn, i)

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(self.quant(x))))
        x = self.relu3(self.bn3(self.bn2(self.conv2(x))))  # (N, 8, 6, 6)
        x = x.mean(2)  # (N, 8, 6)
        x = self.relu4(self.bn4(self.conv4(x)))  # (N, 6, 4)
        return self.dequant(self.bn5(self.fc(ember.flatten(x, 1))))


FUSE = [["conv1", "bn1", "relu1"], ["conv2", "bn2"], ["bn3", "relu3"],
        ["conv4", "bn4", "relu4"], ["fc", "bn5"]]


def test_fuse_modules_qat_keeps_batch_norms_in_fused_modules():
    ember.manual_seed(0)
    model = ConvBnNet().train()
    fused = tq.fuse_modules_qat(model, FUSE)
    assert type(fused.conv1) is nni.ConvBnReLU2d and type(fused.conv2) is nni.ConvBn2d
    assert type(fused.bn3) is nni.BNReLU2d and type(fused.conv4) is nni.ConvBnReLU1d
    assert type(fused.fc) is nni.LinearBn1d
    for name in ("bn1", "relu1", "bn2", "relu3", "bn4", "relu4", "bn5"):
        assert type(getattr(fused, name)) is nn.Identity
        assert getattr(fused, name).training
    # The fused modules hold the very same float modules: the same computation.
    assert fused.conv1[0].weight is not model.conv1.weight  # (fuse copies unless inplace)
    x = ember.randn(4, 3, 8, 8)
    ref = model(x)
    np.testing.assert_allclose(_np(fused(x)), _np(ref), rtol=1e-5, atol=1e-5)
    inplace = tq.fuse_modules_qat(model, FUSE, inplace=True)
    assert inplace is model and type(model.conv1) is nni.ConvBnReLU2d
    # Plain fuse_modules folds instead (and needs eval).
    with pytest.raises(AssertionError, match="eval"):
        tq.fuse_modules(ConvBnNet().train(), [["conv2", "bn2"]])
    folded = tq.fuse_modules(ConvBnNet().eval(), [["conv2", "bn2"], ["bn3", "relu3"]])
    assert type(folded.conv2) is nn.Conv2d and type(folded.bn3) is nni.BNReLU2d


def test_fuse_known_modules_is_qat_patterns_and_checks():
    ember.manual_seed(1)
    conv, bn, relu = nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU()
    out = tq.fuse_known_modules([conv, bn, relu], is_qat=True)
    assert type(out[0]) is nni.ConvBnReLU2d and out[0][0] is conv and out[0][1] is bn
    assert [type(m) for m in out[1:]] == [nn.Identity, nn.Identity]
    assert type(tq.fuse_known_modules([nn.Conv1d(2, 4, 3), nn.BatchNorm1d(4)], True)[0]) is \
        nni.ConvBn1d
    assert type(tq.fuse_known_modules([nn.Linear(2, 4), nn.BatchNorm1d(4)], True)[0]) is \
        nni.LinearBn1d
    assert type(tq.fuse_known_modules([nn.BatchNorm2d(4), nn.ReLU()], True)[0]) is nni.BNReLU2d
    assert type(tq.fuse_known_modules([nn.Linear(2, 4), nn.ReLU()], True)[0]) is nni.LinearReLU
    assert type(tq.fuse_known_modules([nn.Conv2d(2, 4, 1), nn.ReLU()], True)[0]) is \
        nni.ConvReLU2d
    # PyTorch's checks on the batch norm of a QAT fusion.
    with pytest.raises(AssertionError, match="num_features"):
        tq.fuse_known_modules([nn.Conv2d(2, 4, 3), nn.BatchNorm2d(5)], True)
    with pytest.raises(AssertionError, match="affine"):
        tq.fuse_known_modules([nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4, affine=False)], True)
    with pytest.raises(AssertionError, match="tracking_running_stats"):
        tq.fuse_known_modules([nn.Linear(2, 4), nn.BatchNorm1d(4, track_running_stats=False)],
                              True)
    with pytest.raises(AssertionError, match="same mode"):
        tq.fuse_known_modules([nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4).eval()], True)
    with pytest.raises(NotImplementedError, match="Cannot fuse"):
        tq.fuse_known_modules([nn.ReLU(), nn.Conv2d(2, 4, 3)], True)
    # The fused float modules check the exact types they fuse.
    with pytest.raises(AssertionError, match="Incorrect types"):
        nni.ConvBn2d(nn.Conv1d(2, 4, 3), nn.BatchNorm2d(4))
    with pytest.raises(AssertionError, match="Incorrect types"):
        nni.BNReLU3d(nn.BatchNorm2d(4), nn.ReLU())
    assert tq.get_fuser_method((nn.Conv2d, nn.BatchNorm2d)) is tq.fuse_conv_bn
    with pytest.raises(AssertionError, match="did not find fuser method"):
        tq.get_fuser_method((nn.ReLU, nn.ReLU))


def test_fusion_moves_hooks_and_takes_custom_fuser_methods():
    ember.manual_seed(2)
    seq = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    calls = []
    seq[0].register_forward_pre_hook(lambda m, inp: calls.append("pre"))
    seq[2].register_forward_hook(lambda m, inp, out: calls.append("post"))
    fused = tq.fuse_modules_qat(seq, ["0", "1", "2"])
    fused(ember.randn(2, 2, 5, 5))
    assert calls == ["pre", "post"]  # once each: moved to the fused module, not kept inside
    assert not fused[0][0]._forward_pre_hooks and not fused[0][2]._forward_hooks

    def relu_first(is_qat, relu, conv):
        return nn.Sequential(relu, conv)

    seq = nn.Sequential(nn.ReLU(), nn.Conv2d(2, 4, 3))
    custom = tq.fuse_modules_qat(seq, ["0", "1"], fuse_custom_config_dict={
        "additional_fuser_method_mapping": {(nn.ReLU, nn.Conv2d): relu_first}})
    assert type(custom[0]) is nn.Sequential and type(custom[1]) is nn.Identity

    seen = []

    def fuser_func(mods, is_qat, additional):
        seen.append(is_qat)
        return tq.fuse_known_modules(mods, is_qat, additional)

    tq.fuse_modules(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), ["0", "1"], fuser_func=fuser_func)
    tq.fuse_modules_qat(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), ["0", "1"],
                        fuser_func=fuser_func)
    assert seen == [False, True]


def test_prepare_qat_swaps_fused_modules_for_qat_ones():
    ember.manual_seed(3)
    model = ConvBnNet().train()
    fused = tq.fuse_modules_qat(model, FUSE)
    fused.qconfig = QAT_QCONFIG
    float_modules = {name: getattr(fused, name) for name in ("conv1", "conv2", "fc")}
    qat = tq.prepare_qat(fused, inplace=True)
    assert type(qat.conv1) is nniqat.ConvBnReLU2d and type(qat.conv2) is nniqat.ConvBn2d
    assert type(qat.conv4) is nniqat.ConvBnReLU1d and type(qat.fc) is nniqat.LinearBn1d
    assert type(qat.bn3) is nni.BNReLU2d  # no QAT form: observed whole, quantized by convert
    for m in (qat.conv1, qat.conv2, qat.conv4, qat.fc):
        assert isinstance(m.weight_fake_quant, tq.FakeQuantize)
        assert isinstance(m.activation_post_process, tq.FakeQuantize)
        assert m.bn.training and not m.freeze_bn
    assert isinstance(qat.bn3.activation_post_process, tq.FakeQuantize)
    # from_float shares the float modules' parameters and statistics.
    conv1, fc = float_modules["conv1"], float_modules["fc"]
    assert qat.conv1.weight is conv1[0].weight and qat.conv1.bias is conv1[0].bias
    assert qat.conv1.bn.weight is conv1[1].weight
    assert qat.conv1.bn.running_var is conv1[1].running_var
    assert qat.conv2.bias is None and qat.fc.bn.running_mean is fc[1].running_mean
    # State-dict layout as PyTorch's: the batch norm under "bn.".
    keys = qat.conv2.state_dict().keys()
    assert {"weight", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
            "bn.num_batches_tracked", "weight_fake_quant.scale"} <= set(keys)


def _float_conv_bn(conv_cls, bn_cls, bias, seed):
    ember.manual_seed(seed)
    conv = conv_cls(4, 6, 3, bias=bias)
    bn = bn_cls(6)
    _randomize_bn(bn, seed)
    return conv, bn


@pytest.mark.parametrize("dim", [1, 2])
@pytest.mark.parametrize("bias", [True, False])
def test_qat_conv_bn_forward_is_the_folded_fake_quantized_conv(dim, bias):
    conv_cls, bn_cls = (nn.Conv1d, nn.BatchNorm1d) if dim == 1 else (nn.Conv2d, nn.BatchNorm2d)
    qat_cls = nniqat.ConvBn1d if dim == 1 else nniqat.ConvBn2d
    fused_cls = nni.ConvBn1d if dim == 1 else nni.ConvBn2d
    conv, bn = _float_conv_bn(conv_cls, bn_cls, bias, 4)
    fused = fused_cls(conv, bn)
    fused.qconfig = QAT_QCONFIG
    qat = qat_cls.from_float(fused)
    ref_conv, ref_bn = _float_conv_bn(conv_cls, bn_cls, bias, 4)  # untouched copies
    shape = (5, 4) + (7,) * dim
    x = ember.randn(*shape)
    # Training: y = bn(conv(x, fq(W * s), 0) / s + b) with batch statistics, s = gamma / std.
    s = bn.weight.detach() / ember.sqrt(bn.running_var + bn.eps)
    wshape = (-1,) + (1,) * (dim + 1)
    bshape = (1, -1) + (1,) * dim
    y = qat(x)
    fq = qat.weight_fake_quant
    scaled = ember.fake_quantize_per_channel_affine(
        ref_conv.weight.detach() * s.reshape(wshape), fq.scale, fq.zero_point, 0, -128, 127)
    conv_out = (conv_cls(4, 6, 3, bias=False)._conv_forward(x, scaled, None) /
                s.reshape(bshape))
    if bias:
        conv_out = conv_out + ref_conv.bias.detach().reshape(bshape)
    want = ref_bn.train()(conv_out)
    np.testing.assert_allclose(_np(y), _np(want), rtol=1e-5, atol=1e-5)
    # The running statistics moved as the float batch norm's did on the same values.
    np.testing.assert_allclose(_np(bn.running_var), _np(ref_bn.running_var), rtol=1e-5)
    np.testing.assert_allclose(_np(bn.running_mean), _np(ref_bn.running_mean), atol=1e-6)
    assert bn.num_batches_tracked.item() == 1
    # Gradients reach the conv weight (through the fake quant) and the batch norm.
    y.sum().backward()
    assert float(qat.weight.grad.abs().sum()) > 0 and float(qat.bn.weight.grad.abs().sum()) > 0
    # Without the fake quantization: exactly the float conv + batch norm (batch statistics).
    conv2, bn2 = _float_conv_bn(conv_cls, bn_cls, bias, 4)
    fused2 = fused_cls(conv2, bn2)
    fused2.qconfig = QAT_QCONFIG
    qat2 = qat_cls.from_float(fused2)
    qat2.weight_fake_quant.disable_fake_quant()
    ref_conv, ref_bn = _float_conv_bn(conv_cls, bn_cls, bias, 4)
    np.testing.assert_allclose(_np(qat2(x)), _np(ref_bn(ref_conv(x))), rtol=1e-4, atol=1e-5)
    # Eval: the folded convolution (running statistics), fake quant on its weight (with the
    # parameters the weight observer has now).
    qat.eval()
    qat.weight_fake_quant.disable_observer()
    ref_conv.eval()
    ref_bn.eval()
    folded = tq.fuse_conv_bn_eval(_float_conv_bn(conv_cls, bn_cls, bias, 4)[0].eval(),
                                  bn.eval())
    with ember.no_grad():
        s = bn.weight / ember.sqrt(bn.running_var + bn.eps)
        w = ember.fake_quantize_per_channel_affine(ref_conv.weight * s.reshape(wshape),
                                                   fq.scale, fq.zero_point, 0, -128, 127)
        want = folded._conv_forward(x, w, folded.bias)
        np.testing.assert_allclose(_np(qat(x)), _np(want), rtol=1e-4, atol=1e-5)


def test_qat_conv_bn_relu_and_linear_bn_forward():
    conv, bn = _float_conv_bn(nn.Conv2d, nn.BatchNorm2d, True, 5)
    fused = nni.ConvBnReLU2d(conv, bn, nn.ReLU())
    fused.qconfig = QAT_QCONFIG
    qat = nniqat.ConvBnReLU2d.from_float(fused)
    qat.weight_fake_quant.disable_fake_quant()
    x = ember.randn(3, 4, 6, 6)
    ref_conv, ref_bn = _float_conv_bn(nn.Conv2d, nn.BatchNorm2d, True, 5)
    np.testing.assert_allclose(_np(qat(x)), _np(F.relu(ref_bn(ref_conv(x)))), rtol=1e-4,
                               atol=1e-5)
    assert _np(qat(x)).min() >= 0
    ember.manual_seed(6)
    linear, bn1 = nn.Linear(5, 4), nn.BatchNorm1d(4)
    _randomize_bn(bn1, 6)
    fused = nni.LinearBn1d(linear, bn1)
    fused.qconfig = QAT_QCONFIG
    qat = nniqat.LinearBn1d.from_float(fused)
    ember.manual_seed(6)
    ref_linear, ref_bn = nn.Linear(5, 4), nn.BatchNorm1d(4)
    _randomize_bn(ref_bn, 6)
    x = ember.randn(8, 5)
    s = bn1.weight.detach() / ember.sqrt(bn1.running_var + bn1.eps)
    y = qat(x)
    fq = qat.weight_fake_quant
    w = ember.fake_quantize_per_channel_affine(ref_linear.weight.detach() * s.reshape(-1, 1),
                                               fq.scale, fq.zero_point, 0, -128, 127)
    want = ref_bn(F.linear(x, w) / s + ref_linear.bias.detach())
    np.testing.assert_allclose(_np(y), _np(want), rtol=1e-5, atol=1e-5)


def test_freeze_and_update_bn_stats():
    conv, bn = _float_conv_bn(nn.Conv2d, nn.BatchNorm2d, True, 7)
    fused = nni.ConvBn2d(conv, bn)
    fused.qconfig = QAT_QCONFIG
    qat = nniqat.ConvBn2d.from_float(fused)
    x = ember.randn(4, 4, 6, 6)
    qat(x)
    assert qat.bn.num_batches_tracked.item() == 1
    model = nn.Sequential(qat)
    model.apply(nniqat.freeze_bn_stats)
    qat.weight_fake_quant.disable_observer()  # the same weight parameters for each forward
    assert qat.freeze_bn and not qat.bn.training and qat.training
    before = _np(qat.bn.running_mean).copy(), _np(qat.bn.running_var).copy()
    y = qat(x)
    np.testing.assert_array_equal(_np(qat.bn.running_mean), before[0])
    np.testing.assert_array_equal(_np(qat.bn.running_var), before[1])
    assert qat.bn.num_batches_tracked.item() == 1
    # Frozen: training uses the running statistics, i.e. what eval (and convert) computes.
    with ember.no_grad():
        np.testing.assert_array_equal(_np(y), _np(qat.eval()(x)))
    # model.train() does not bring batch statistics back to a frozen batch norm.
    model.train()
    assert qat.training and not qat.bn.training
    model.apply(nniqat.update_bn_stats)
    assert not qat.freeze_bn and qat.bn.training
    qat(x)
    assert qat.bn.num_batches_tracked.item() == 2
    model.eval()
    assert not qat.bn.training
    model.train()
    assert qat.bn.training
    # Constructed frozen, or in eval: frozen. Methods return the module.
    frozen = nniqat.ConvBnReLU1d(2, 3, 3, freeze_bn=True, qconfig=QAT_QCONFIG)
    assert frozen.freeze_bn and not frozen.bn.training
    assert frozen.update_bn_stats() is frozen and frozen.bn.training
    # The module functions touch only the QAT Conv+BN modules (as PyTorch's); LinearBn1d has
    # the methods.
    lin = nniqat.LinearBn1d(3, 2, qconfig=QAT_QCONFIG)
    nniqat.freeze_bn_stats(lin)
    assert not lin.freeze_bn
    assert lin.freeze_bn_stats() is lin and lin.freeze_bn and not lin.bn.training
    with pytest.raises(AssertionError, match="qconfig must be provided"):
        nniqat.ConvBn2d(2, 3, 3)
    with pytest.raises(AssertionError, match="only works for ConvBnReLU2d"):
        nniqat.ConvBnReLU2d.from_float(fused)


def test_slow_path_matches_the_approximate_one():
    for seed in (8, 9):
        conv, bn = _float_conv_bn(nn.Conv2d, nn.BatchNorm2d, seed == 8, seed)
        fused = nni.ConvBn2d(conv, bn)
        fused.qconfig = QAT_QCONFIG
        fast = nniqat.ConvBn2d.from_float(fused)
        conv2, bn2 = _float_conv_bn(nn.Conv2d, nn.BatchNorm2d, seed == 8, seed)
        fused2 = nni.ConvBn2d(conv2, bn2)
        fused2.qconfig = QAT_QCONFIG
        slow = nniqat.ConvBn2d.from_float(fused2)
        slow._enable_slow_path_for_better_numerical_stability = True
        for m in (fast, slow):
            m.weight_fake_quant.disable_fake_quant()
        x = ember.randn(4, 4, 6, 6)
        np.testing.assert_allclose(_np(slow(x)), _np(fast(x)), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(_np(slow.bn.running_var), _np(fast.bn.running_var),
                                   rtol=1e-5)
        fast.eval()
        slow.eval()
        with ember.no_grad():
            np.testing.assert_allclose(_np(slow(x)), _np(fast(x)), rtol=1e-4, atol=1e-4)


def test_to_float_folds_the_batch_norm():
    for cls, fused_cls, dim in ((nniqat.ConvBnReLU2d, nni.ConvBnReLU2d, 2),
                                (nniqat.ConvBn1d, nni.ConvBn1d, 1)):
        conv_cls, bn_cls = (nn.Conv1d, nn.BatchNorm1d) if dim == 1 else (nn.Conv2d,
                                                                           nn.BatchNorm2d)
        conv, bn = _float_conv_bn(conv_cls, bn_cls, True, 10)
        mods = (conv, bn, nn.ReLU()) if cls is nniqat.ConvBnReLU2d else (conv, bn)
        fused = fused_cls(*mods)
        fused.qconfig = QAT_QCONFIG
        qat = cls.from_float(fused).eval()
        qat.weight_fake_quant.disable_fake_quant()
        f = qat.to_float()
        if cls is nniqat.ConvBnReLU2d:
            assert type(f) is nni.ConvReLU2d and type(f[0]) is nn.Conv2d
        else:
            assert type(f) is nn.Conv1d
        assert not f.training
        x = ember.randn(2, 4, *([6] * dim))
        with ember.no_grad():
            np.testing.assert_allclose(_np(f(x)), _np(qat(x)), rtol=1e-4, atol=1e-5)
    ember.manual_seed(11)
    lin, bn1 = nn.Linear(5, 3), nn.BatchNorm1d(3)
    _randomize_bn(bn1, 11)
    fused = nni.LinearBn1d(lin, bn1)
    fused.qconfig = QAT_QCONFIG
    qat = nniqat.LinearBn1d.from_float(fused).eval()
    qat.weight_fake_quant.disable_fake_quant()
    x = ember.randn(4, 5)
    with ember.no_grad():
        np.testing.assert_allclose(_np(qat.to_float()(x)), _np(qat(x)), rtol=1e-4, atol=1e-5)


def test_version_1_state_dict_loads():
    qat = nniqat.ConvBn2d(2, 3, 3, bias=True, qconfig=QAT_QCONFIG)
    sd = qat.state_dict()
    old = OrderedDict()
    renames = {"bn.weight": "gamma", "bn.bias": "beta", "bn.running_mean": "running_mean",
               "bn.running_var": "running_var", "bn.num_batches_tracked": "num_batches_tracked"}
    for k, v in sd.items():
        old[renames.get(k, k)] = v.clone() + (1 if k == "bn.running_var" else 0)
    old._metadata = OrderedDict({"": {"version": 1}})
    fresh = nniqat.ConvBn2d(2, 3, 3, bias=True, qconfig=QAT_QCONFIG)
    fresh.load_state_dict(old)
    np.testing.assert_array_equal(_np(fresh.bn.running_var), _np(sd["bn.running_var"]) + 1)
    np.testing.assert_array_equal(_np(fresh.bn.weight), _np(sd["bn.weight"]))


def _train_qat(model, steps=6, seed=12):
    rng = np.random.default_rng(seed)
    opt = ember.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    target = ember.from_numpy(rng.standard_normal((16, 10)).astype(np.float32))
    for _ in range(steps):
        x = ember.from_numpy(rng.standard_normal((16, 3, 8, 8)).astype(np.float32))
        opt.zero_grad()
        F.mse_loss(model(x), target).backward()
        opt.step()
    return model


def test_qat_train_then_convert_gives_what_qat_simulated():
    ember.manual_seed(13)
    model = ConvBnNet().train()
    fused = tq.fuse_modules_qat(model, FUSE)
    fused.qconfig = tq.get_default_qat_qconfig("x86")
    qat = _train_qat(tq.prepare_qat(fused))
    # The batch norms trained: their parameters and statistics moved.
    assert not np.allclose(_np(qat.conv1.bn.weight), _np(model.bn1.weight))
    assert qat.conv1.bn.num_batches_tracked.item() == 6
    qat.apply(nniqat.freeze_bn_stats)
    qat.apply(tq.disable_observer)
    qat.eval()
    x = ember.randn(8, 3, 8, 8)
    with ember.no_grad():
        simulated = qat(x)
    q = tq.convert(qat)
    assert type(q.conv1) is nniq.ConvReLU2d and type(q.conv2) is nnq.Conv2d
    assert type(q.conv4) is nniq.ConvReLU1d and type(q.fc) is nnq.Linear
    assert type(q.bn3) is nniq.BNReLU2d
    assert not hasattr(q.conv2, "bn") and q.conv2.bias() is not None  # folded
    with ember.no_grad():
        real = q(x)
    step = q.fc.scale
    diff = _np((real - simulated).abs())
    assert diff.max() <= 2 * step + 1e-6
    assert (diff < 1e-6).mean() > 0.9
    # The fold used the running statistics at convert time and the QAT weight fake quant's
    # parameters: the quantized weight equals the fake-quantized folded weight.
    s = qat.conv2.bn.weight / ember.sqrt(qat.conv2.bn.running_var + qat.conv2.bn.eps)
    fq = qat.conv2.weight_fake_quant
    with ember.no_grad():
        want = ember.fake_quantize_per_channel_affine(qat.conv2.weight * s.reshape(-1, 1, 1, 1),
                                                      fq.scale, fq.zero_point, 0, -128, 127)
    np.testing.assert_allclose(_np(q.conv2.weight().dequantize()), _np(want), rtol=0, atol=1e-7)
    np.testing.assert_allclose(_np(q.conv2.weight().q_per_channel_scales().float()),
                               _np(fq.scale), rtol=1e-6)


def test_quantize_qat_with_conv_bn_and_frozen_stats_from_the_start():
    ember.manual_seed(14)
    model = tq.fuse_modules_qat(ConvBnNet().train(), FUSE)
    model.qconfig = QAT_QCONFIG

    def run(m, steps):
        m.apply(nniqat.freeze_bn_stats)
        _train_qat(m, steps)

    q = tq.quantize_qat(model, run, [3])
    assert type(q.conv2) is nnq.Conv2d and type(q.fc) is nnq.Linear
    out = q(ember.randn(2, 3, 8, 8))
    assert out.shape == (2, 10) and bool(ember.isfinite(out).all())


def _to_torch_state(torch, module):
    return {k: torch.from_numpy(np.array(v.detach().numpy()))
            for k, v in module.state_dict().items()}


def test_matches_pytorch_qat_conv_bn_training_and_convert():
    torch = pytest.importorskip("torch")
    ttq = torch.ao.quantization
    ember.manual_seed(15)
    em = ConvBnNet().train()

    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            tn = torch.nn
            self.quant = ttq.QuantStub()
            self.conv1, self.bn1, self.relu1 = tn.Conv2d(3, 8, 3, padding=1), \
                tn.BatchNorm2d(8), tn.ReLU()
            self.conv2, self.bn2 = tn.Conv2d(8, 8, 3, bias=False), tn.BatchNorm2d(8)
            self.bn3, self.relu3 = tn.BatchNorm2d(8), tn.ReLU()
            self.conv4, self.bn4, self.relu4 = tn.Conv1d(8, 6, 3), tn.BatchNorm1d(6), tn.ReLU()
            self.fc, self.bn5 = tn.Linear(24, 10), tn.BatchNorm1d(10)
            self.dequant = ttq.DeQuantStub()

        def forward(self, x):
            x = self.relu1(self.bn1(self.conv1(self.quant(x))))
            x = self.relu3(self.bn3(self.bn2(self.conv2(x))))
            x = x.mean(2)
            x = self.relu4(self.bn4(self.conv4(x)))
            return self.dequant(self.bn5(self.fc(torch.flatten(x, 1))))

    tm = TorchNet().train()
    tm.load_state_dict(_to_torch_state(torch, em))
    tf = ttq.fuse_modules_qat(tm, FUSE)
    ef = tq.fuse_modules_qat(em, FUSE)
    tf.qconfig = ttq.QConfig(activation=ttq.default_fake_quant,
                             weight=ttq.default_per_channel_weight_fake_quant)
    ef.qconfig = QAT_QCONFIG
    tqat, eqat = ttq.prepare_qat(tf), tq.prepare_qat(ef)
    assert type(eqat.conv1).__name__ == type(tqat.conv1).__name__ == "ConvBnReLU2d"
    assert type(eqat.fc).__name__ == type(tqat.fc).__name__ == "LinearBn1d"
    rng = np.random.default_rng(16)
    for _ in range(4):  # forward passes in training: batch statistics, observers, fake quant
        x = rng.standard_normal((8, 3, 8, 8)).astype(np.float32)
        t_out = tqat(torch.from_numpy(x)).detach().numpy()
        e_out = _np(eqat(ember.from_numpy(x)))
        step = float(tqat.fc.activation_post_process.scale)
        assert np.abs(t_out - e_out).max() <= step + 1e-6
    np.testing.assert_allclose(_np(eqat.conv2.bn.running_var),
                               tqat.conv2.bn.running_var.numpy(), rtol=1e-5)
    tqat.apply(torch.ao.nn.intrinsic.qat.freeze_bn_stats)
    eqat.apply(nniqat.freeze_bn_stats)
    tqat.apply(ttq.disable_observer)
    eqat.apply(tq.disable_observer)
    tq_model, eq_model = ttq.convert(tqat.eval()), tq.convert(eqat.eval())
    for name in ("conv1", "conv2", "conv4", "fc", "bn3"):
        t_mod, e_mod = getattr(tq_model, name), getattr(eq_model, name)
        assert e_mod._get_name() == t_mod._get_name()
        assert float(e_mod.scale) == pytest.approx(float(t_mod.scale), rel=1e-5)
        assert int(e_mod.zero_point) == int(t_mod.zero_point)
    tw, ew = tq_model.conv2.weight(), eq_model.conv2.weight()
    np.testing.assert_allclose(ew.q_per_channel_scales().numpy(),
                               tw.q_per_channel_scales().numpy(), rtol=1e-5)
    assert np.abs(ew.int_repr().numpy().astype(int) - tw.int_repr().numpy()).max() <= 1
    x = rng.standard_normal((6, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        want = tq_model(torch.from_numpy(x)).numpy()
    got = _np(eq_model(ember.from_numpy(x)))
    assert np.abs(got - want).max() <= tq_model.fc.scale + 1e-6


class _ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, kernel_size=3, stride=1, groups=1):
        super().__init__(nn.Conv2d(cin, cout, kernel_size, stride, (kernel_size - 1) // 2,
                                   groups=groups, bias=False),
                         nn.BatchNorm2d(cout, momentum=0.1), nn.ReLU(inplace=False))


class _InvertedResidual(nn.Module):
    def __init__(self, c, expand):
        super().__init__()
        hidden = c * expand
        self.conv = nn.Sequential(_ConvBNReLU(c, hidden, 1), _ConvBNReLU(hidden, hidden,
                                                                         groups=hidden),
                                  nn.Conv2d(hidden, c, 1, bias=False), nn.BatchNorm2d(c))
        # The tutorial's spelling: the deprecated torch.nn.quantized alias.
        self.skip_add = ember.nn.quantized.FloatFunctional()

    def forward(self, x):
        return self.skip_add.add(x, self.conv(x))


class _TinyMobileNetV2(nn.Module):
    """The shape of pytorch/tutorials' static_quantization_tutorial MobileNetV2."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(_ConvBNReLU(3, 8, stride=2), _InvertedResidual(8, 2),
                                      _InvertedResidual(8, 2))
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(8, 5))
        self.quant = ember.quantization.QuantStub()
        self.dequant = ember.quantization.DeQuantStub()

    def forward(self, x):
        x = self.features(self.quant(x))
        return self.dequant(self.classifier(x.mean([2, 3])))

    def fuse_model(self, is_qat=False):
        fuse = ember.ao.quantization.fuse_modules_qat if is_qat else \
            ember.ao.quantization.fuse_modules
        for m in self.modules():
            if type(m) is _ConvBNReLU:
                fuse(m, ["0", "1", "2"], inplace=True)
            if type(m) is _InvertedResidual:
                for idx in range(len(m.conv)):
                    if type(m.conv[idx]) is nn.Conv2d:
                        fuse(m.conv, [str(idx), str(idx + 1)], inplace=True)


def test_tutorial_mobilenet_v2_qat_flow():
    ember.manual_seed(17)
    model = _TinyMobileNetV2()
    model.train()
    model.fuse_model(is_qat=True)
    assert type(model.features[0][0]) is nni.ConvBnReLU2d
    assert type(model.features[1].conv[2]) is nni.ConvBn2d
    model.qconfig = ember.ao.quantization.get_default_qat_qconfig("x86")
    ember.ao.quantization.prepare_qat(model, inplace=True)
    assert type(model.features[1].conv[1][0]) is nniqat.ConvBnReLU2d
    assert model.features[1].conv[1][0].groups == 16
    rng = np.random.default_rng(18)
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    labels = ember.from_numpy(rng.integers(0, 5, 16))
    images = ember.from_numpy(rng.standard_normal((16, 3, 12, 12)).astype(np.float32))
    for epoch in range(4):
        if epoch > 1:
            model.apply(ember.quantization.disable_observer)
        if epoch > 2:
            model.apply(ember.nn.intrinsic.qat.freeze_bn_stats)
        opt.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        opt.step()
    model.eval()
    with ember.no_grad():
        simulated = model(images)
    quantized = ember.ao.quantization.convert(model, inplace=False)
    assert type(quantized.features[0][0]) is nniq.ConvReLU2d
    assert type(quantized.features[1].conv[1][0]) is nniq.ConvReLU2d
    assert type(quantized.features[1].conv[2]) is nnq.Conv2d
    assert type(quantized.classifier[0]) is nnq.Dropout
    assert type(quantized.features[1].skip_add) is nnq.QFunctional
    with ember.no_grad():
        real = quantized(images)
        # The converted features are what QAT simulated (the folded ConvBnReLU and ConvBn,
        # the quantized skip adds) to one step.
        sim_features = model.features(model.quant(images))
        real_features = quantized.features(quantized.quant(images))
    features_step = real_features.q_scale()
    assert (real_features.dequantize() - sim_features).abs().max().item() <= \
        features_step + 1e-6
    # The quantized spatial mean then rounds to the features' scale (as PyTorch's), which QAT
    # does not simulate: the logits move by a few of their steps.
    assert (real - simulated).abs().max().item() <= 6 * quantized.classifier[1].scale
    assert (real.argmax(1) == simulated.argmax(1)).float().mean().item() >= 0.8
