"""Dynamically and statically quantized Linear, observers, QConfig and quantize_dynamic: against
the quantization formula in NumPy, against float, against PyTorch's quantized modules where
PyTorch is installed, state_dict round trips, and accuracy on scikit-learn's digits."""

import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.ao.quantization import (
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    QConfig,
    default_dynamic_qconfig,
    per_channel_dynamic_qconfig,
    quantize_dynamic,
)

nnqd = ember.ao.nn.quantized.dynamic
nnq = ember.ao.nn.quantized


def choose_qparams(lo, hi, qmax):
    """PyTorch's ChooseQuantizationParams for [0, qmax] (no tiny-scale adjustment needed)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (np.float64(hi) - lo) / qmax
    zp_min, zp_max = 0 - lo / scale, qmax - hi / scale
    err_min, err_max = abs(0) - abs(lo / scale), abs(qmax) - abs(hi / scale)
    zp = zp_min if err_min < err_max else zp_max
    return np.float32(scale), int(min(max(np.rint(zp), 0), qmax))


def np_dynamic_linear(x, qw, w_scale, bias, reduce_range=True):
    """The dynamic linear in NumPy: x quantized from its own range, exact integer product."""
    qmax = 127 if reduce_range else 255
    s, zp = choose_qparams(float(x.min()), float(x.max()), qmax)
    xq = np.clip(np.rint(x * (np.float32(1) / s)) + zp, 0, qmax)
    acc = (xq.astype(np.int64) - zp) @ qw.astype(np.int64).T
    return (acc.astype(np.float32) * (s * np.float32(w_scale))).astype(np.float32) + bias


@pytest.mark.parametrize("shape", [(1, 64), (5, 13), (3, 4, 40), (0, 16), (2, 1)])
def test_dynamic_linear_matches_the_formula(shape):
    rng = np.random.default_rng(0)
    k = shape[-1]
    lin = nn.Linear(k, 24)
    q = quantize_dynamic(nn.Sequential(lin))[0]
    assert isinstance(q, nnqd.Linear)
    x = rng.standard_normal(shape).astype(np.float32)
    got = q(ember.from_numpy(x)).numpy()
    assert got.shape == shape[:-1] + (24,)
    qw = q.weight()
    want = np_dynamic_linear(x.reshape(-1, k), qw.int_repr().numpy(), qw.q_scale(),
                             lin.bias.detach().numpy()) if x.size else np.zeros((0, 24))
    np.testing.assert_allclose(got.reshape(-1, 24), want, rtol=1e-5, atol=1e-5)
    # Close to float: within the quantization error.
    if x.size:
        ref = lin(ember.from_numpy(x)).detach().numpy()
        assert np.abs(got - ref).max() < 0.05


def test_dynamic_linear_input_dtypes_and_errors():
    q = quantize_dynamic(nn.Sequential(nn.Linear(8, 3)))[0]
    x = ember.randn(4, 8)
    for dtype in (ember.float64, ember.bfloat16, ember.float16):
        y = q(x.to(dtype))
        assert y.dtype == dtype
        np.testing.assert_allclose(y.float().numpy(), q(x).numpy(), atol=0.05)
    np.testing.assert_allclose(q(x.t().contiguous().t()).numpy(), q(x).numpy())
    with pytest.raises(RuntimeError, match=r"input of shape \(4, 7\).*last dim must be 8"):
        q(ember.randn(4, 7))
    with pytest.raises(TypeError, match="floating point"):
        q(ember.ones(4, 8, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="NaN or inf"):
        q(ember.full((2, 8), float("nan")))
    with pytest.raises(ValueError, match="qint8"):
        quantize_dynamic(nn.Sequential(nn.Linear(8, 3)), dtype=ember.qint32)
    with pytest.raises(TypeError, match="qint8 weight"):
        ember._C._quantized.linear_prepack(ember.quantize_per_tensor(ember.randn(3, 8), 0.1, 0,
                                                                     ember.quint8))


def test_quantize_dynamic_swaps_exact_types_and_keeps_the_original():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(32, 4)
            self.attn = nn.MultiheadAttention(16, 2)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    net = Net()
    q = quantize_dynamic(net, {nn.Linear}, dtype=ember.qint8)
    assert isinstance(q.fc1, nnqd.Linear) and isinstance(q.fc2, nnqd.Linear)
    assert type(net.fc1) is nn.Linear  # not in place
    # MultiheadAttention's out_proj is a Linear subclass that reads its weight directly: kept.
    assert not isinstance(q.attn.out_proj, nnqd.Linear)
    assert not hasattr(q.fc1, "qconfig")
    x = ember.randn(5, 16)
    assert (q(x) - net(x)).abs().max().item() < 0.05
    assert "DynamicQuantizedLinear(in_features=16, out_features=32, dtype=ember.qint8, " \
           "qscheme=ember.per_tensor_affine)" in repr(q)
    only_fc2 = quantize_dynamic(net, {"fc2": default_dynamic_qconfig})
    assert type(only_fc2.fc1) is nn.Linear and isinstance(only_fc2.fc2, nnqd.Linear)
    same = quantize_dynamic(net, inplace=True)
    assert same is net and isinstance(net.fc1, nnqd.Linear)


def test_per_channel_weights_and_state_dict_round_trip():
    net = nn.Sequential(nn.Linear(20, 10), nn.ReLU(), nn.Linear(10, 3, bias=False))
    q = quantize_dynamic(net, {nn.Linear: per_channel_dynamic_qconfig})
    w = q[0].weight()
    assert w.qscheme() == ember.per_channel_affine and w.q_per_channel_axis() == 0
    amax = net[0].weight.detach().abs().amax(dim=1).numpy()
    np.testing.assert_allclose(w.q_per_channel_scales().numpy(), amax / 127.5, rtol=1e-6)
    assert q[2].bias() is None
    sd = q.state_dict()
    assert set(sd) == {f"{i}.{k}" for i in (0, 2) for k in
                       ("scale", "zero_point", "_packed_params.dtype",
                        "_packed_params._packed_params")}
    fresh = quantize_dynamic(nn.Sequential(nn.Linear(20, 10), nn.ReLU(),
                                           nn.Linear(10, 3, bias=False)),
                             {nn.Linear: per_channel_dynamic_qconfig})
    fresh.load_state_dict(sd)
    x = ember.randn(7, 20)
    np.testing.assert_array_equal(fresh(x).numpy(), q(x).numpy())
    np.testing.assert_array_equal(copy.deepcopy(q)(x).numpy(), q(x).numpy())


def test_static_linear_requantizes_its_output():
    rng = np.random.default_rng(1)
    lin = nnq.Linear(12, 5)
    w = ember.quantize_per_tensor(ember.from_numpy(rng.standard_normal((5, 12)).astype(np.float32)),
                                  0.02, 0, ember.qint8)
    b = ember.from_numpy(rng.standard_normal(5).astype(np.float32))
    lin.set_weight_bias(w, b)
    lin.scale, lin.zero_point = 0.05, 60
    x = rng.standard_normal((3, 12)).astype(np.float32)
    for in_zp, in_scale in ((128, 0.03), (3, 0.01)):  # 8-bit and 7-bit inputs
        qx = ember.quantize_per_tensor(ember.from_numpy(x), in_scale, in_zp, ember.quint8)
        y = lin(qx)
        assert y.dtype == ember.quint8 and (y.q_scale(), y.q_zero_point()) == (0.05, 60)
        xi = qx.int_repr().numpy().astype(np.int64) - in_zp
        acc = xi @ w.int_repr().numpy().astype(np.int64).T
        real = acc.astype(np.float32) * np.float32(np.float32(in_scale) * np.float32(0.02)) \
            + b.numpy()
        want = np.clip(np.rint(real * np.float32(1 / np.float32(0.05))) + 60, 0, 255)
        np.testing.assert_array_equal(y.int_repr().numpy(), want)
    with pytest.raises(TypeError, match="quint8 input"):
        lin(ember.from_numpy(x))
    assert "QuantizedLinear(in_features=12, out_features=5, scale=0.05, zero_point=60" in \
        repr(lin)


def test_observers_choose_pytorchs_parameters():
    x = ember.tensor([[-2.0, 0.5, 3.0], [1.0, -0.25, 6.0]])
    obs = MinMaxObserver()
    obs(x)
    scale, zp = obs.calculate_qparams()
    assert scale.item() == pytest.approx(8 / 255) and zp.item() == round(2 / (8 / 255))
    sym = MinMaxObserver(dtype=ember.qint8, qscheme=ember.per_tensor_symmetric)
    sym(x)
    scale, zp = sym.calculate_qparams()
    assert scale.item() == pytest.approx(6 / 127.5) and zp.item() == 0
    rr = MinMaxObserver(reduce_range=True)
    rr(x)
    assert rr.calculate_qparams()[0].item() == pytest.approx(8 / 127)
    pc = PerChannelMinMaxObserver(ch_axis=0, dtype=ember.qint8,
                                  qscheme=ember.per_channel_symmetric)
    pc(x)
    np.testing.assert_allclose(pc.calculate_qparams()[0].numpy(), [3 / 127.5, 6 / 127.5],
                               rtol=1e-6)
    ma = MovingAverageMinMaxObserver(averaging_constant=0.5)
    ma(x)
    ma(x * 0)
    assert ma.min_val.item() == -1.0 and ma.max_val.item() == 3.0
    factory = MinMaxObserver.with_args(dtype=ember.qint8)
    assert factory().dtype == ember.qint8
    with pytest.warns(UserWarning, match="must run observer"):
        MinMaxObserver().calculate_qparams()
    with pytest.raises(RuntimeError, match="PlaceholderObserver"):
        PlaceholderObserver().calculate_qparams()
    with pytest.raises(ValueError, match="observer instance"):
        QConfig(activation=MinMaxObserver(), weight=MinMaxObserver)
    with pytest.raises(NotImplementedError, match="per_tensor"):
        MinMaxObserver(qscheme=ember.per_channel_affine)
    assert ember.quantization.quantize_dynamic is quantize_dynamic


def test_dynamic_mlp_on_digits_keeps_its_accuracy(digits):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    model = digits.fit(model, digits.x)
    float_acc = digits.accuracy(model, digits.x)
    assert float_acc > 0.9
    assert digits.accuracy(quantize_dynamic(model), digits.x) >= float_acc - 0.01


def test_matches_pytorch_dynamic_and_static_linear():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    w = rng.standard_normal((48, 40)).astype(np.float32) * 0.1
    b = rng.standard_normal(48).astype(np.float32)
    tl = torch.nn.Linear(40, 48)
    el = nn.Linear(40, 48)
    with torch.no_grad():
        tl.weight.copy_(torch.from_numpy(w))
        tl.bias.copy_(torch.from_numpy(b))
    el.weight.data = ember.from_numpy(w.copy())
    el.bias.data = ember.from_numpy(b.copy())
    for t_qconfig, e_qconfig in ((torch.ao.quantization.default_dynamic_qconfig,
                                  default_dynamic_qconfig),
                                 (torch.ao.quantization.per_channel_dynamic_qconfig,
                                  per_channel_dynamic_qconfig)):
        tq = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(tl),
                                                    {torch.nn.Linear: t_qconfig})[0]
        eq = quantize_dynamic(nn.Sequential(el), {nn.Linear: e_qconfig})[0]
        tw, ew = tq.weight(), eq.weight()
        np.testing.assert_array_equal(ew.int_repr().numpy(), tw.int_repr().numpy())
        for shape in ((1, 40), (33, 40), (2, 3, 40)):
            x = rng.standard_normal(shape).astype(np.float32)
            with torch.no_grad():
                want = tq(torch.from_numpy(x)).numpy()
            got = eq(ember.from_numpy(x)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # Static: the same quint8 input, weight and output parameters.
    tw = torch.quantize_per_tensor(torch.from_numpy(w), 0.004, 0, torch.qint8)
    tql = torch.ao.nn.quantized.Linear(40, 48)
    tql.set_weight_bias(tw, torch.from_numpy(b))
    tql.scale, tql.zero_point = 0.08, 70
    eql = nnq.Linear(40, 48)
    eql.set_weight_bias(ember.quantize_per_tensor(ember.from_numpy(w), 0.004, 0, ember.qint8),
                        ember.from_numpy(b))
    eql.scale, eql.zero_point = 0.08, 70
    x = rng.standard_normal((9, 40)).astype(np.float32)
    tx = torch.quantize_per_tensor(torch.from_numpy(x), 0.02, 64, torch.quint8)
    ex = ember.quantize_per_tensor(ember.from_numpy(x), 0.02, 64, ember.quint8)
    diff = np.abs(eql(ex).int_repr().numpy().astype(int) - tql(tx).int_repr().numpy())
    assert diff.max() <= 1  # within one quantization step


def test_save_and_load_quantized_models_and_tensors(tmp_path):
    # Sizes where the weights dominate the file, as in any real model (the header and the float
    # biases are a fixed cost).
    net = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 256))
    for qconfig in (default_dynamic_qconfig, per_channel_dynamic_qconfig):
        q = quantize_dynamic(net, {nn.Linear: qconfig})
        path = tmp_path / "q.pt"
        ember.save(q.state_dict(), path)
        fresh = quantize_dynamic(nn.Sequential(nn.Linear(512, 512), nn.ReLU(),
                                               nn.Linear(512, 256)), {nn.Linear: qconfig})
        fresh.load_state_dict(ember.load(path))
        x = ember.randn(4, 512)
        np.testing.assert_array_equal(fresh(x).numpy(), q(x).numpy())
        ember.save(net.state_dict(), tmp_path / "f.pt")
        ratio = path.stat().st_size / (tmp_path / "f.pt").stat().st_size
        assert ratio < 0.27, ratio
    t = {"a": ember.quantize_per_tensor(ember.randn(3, 4), 0.1, 3, ember.quint8),
         "b": ember.quantize_per_channel(ember.randn(2, 5), ember.tensor([0.1, 0.2]),
                                         ember.tensor([1, -1]), 0, ember.qint8)}
    ember.save(t, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    for k in t:
        assert back[k].dtype == t[k].dtype and back[k].qscheme() == t[k].qscheme()
        np.testing.assert_array_equal(back[k].dequantize().numpy(), t[k].dequantize().numpy())


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_quantized_encoder_runs_on_the_fastpath(norm_first, activation):
    ember.manual_seed(3)
    layer = nn.TransformerEncoderLayer(32, 4, 64, activation=activation, batch_first=True,
                                       norm_first=norm_first)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval()
    q = quantize_dynamic(enc, {nn.Linear})
    assert isinstance(q.layers[0].linear1, nnqd.Linear)
    x = ember.randn(3, 10, 32)
    mask = ember.zeros(3, 10, dtype=ember.bool)
    mask[1, 6:] = True
    mask[2, 2:] = True
    with ember.no_grad():
        assert ember.nn.why_not_fastpath(q, x) == ""
        assert ember.nn.why_not_fastpath(q.layers[0], x) == ""
        fast = q(x)
        fast_layer = q.layers[0](x)
        packed = q(x, src_key_padding_mask=mask)
        ember.backends.mha.set_fastpath_enabled(False)
        try:
            regular = q(x)
            regular_layer = q.layers[0](x)
            dense_regular = q(x, src_key_padding_mask=mask)
        finally:
            ember.backends.mha.set_fastpath_enabled(True)
        reference = enc(x)
    # Dense: the same int8 computation on both paths.
    np.testing.assert_allclose(fast.numpy(), regular.numpy(), atol=1e-5)
    np.testing.assert_allclose(fast_layer.numpy(), regular_layer.numpy(), atol=1e-5)
    # Packed: the activations are quantized over the real tokens only, where the dense regular
    # path's range also covers the padded positions, so they agree to quantization error.
    keep = (~mask).numpy()
    assert np.abs(packed.numpy() - dense_regular.numpy())[keep].max() < 0.2
    assert np.all(packed.numpy()[~keep] == 0)
    assert np.abs(fast.numpy() - reference.numpy()).max() < 0.2
    with ember.no_grad():
        assert "float32" in ember.nn.why_not_fastpath(q.double(), x.double())


@pytest.mark.parametrize("kdim", [None, 12])
def test_dynamic_multihead_attention(kdim):
    ember.manual_seed(4)
    mha = nn.MultiheadAttention(16, 4, kdim=kdim, vdim=kdim, batch_first=True).eval()
    q = quantize_dynamic(nn.Sequential(mha), {nn.MultiheadAttention})[0]
    assert isinstance(q, nnqd.MultiheadAttention)
    assert "DynamicQuantizedMultiheadAttention(\n  (out_proj): DynamicQuantizedLinear" in repr(q)
    x = ember.randn(2, 5, 16)
    kv = ember.randn(2, 7, kdim or 16)
    mask = ember.tensor([[False] * 7, [False] * 4 + [True] * 3])
    with ember.no_grad():
        for args in ((x, kv, kv), (x, x, x) if kdim is None else (x, kv, kv)):
            want, want_w = mha(*args, key_padding_mask=mask if args[1] is kv else None)
            got, got_w = q(*args, key_padding_mask=mask if args[1] is kv else None)
            assert got.shape == want.shape and got_w.shape == want_w.shape
            assert (got - want).abs().max().item() < 0.05
            assert (got_w - want_w).abs().max().item() < 0.05
        out, weights = q(x, kv, kv, need_weights=False)
        assert weights is None and out.shape == (2, 5, 16)
    sd = q.state_dict()
    fresh = quantize_dynamic(nn.Sequential(nn.MultiheadAttention(16, 4, kdim=kdim, vdim=kdim,
                                                                 batch_first=True).eval()),
                             {nn.MultiheadAttention})[0]
    fresh.load_state_dict(sd)
    with ember.no_grad():
        np.testing.assert_array_equal(fresh(x, kv, kv)[0].numpy(), q(x, kv, kv)[0].numpy())
        np.testing.assert_array_equal(copy.deepcopy(q)(x, kv, kv)[0].numpy(),
                                      q(x, kv, kv)[0].numpy())


def test_fully_quantized_encoder_keeps_the_fastpath():
    ember.manual_seed(5)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), 2,
                                enable_nested_tensor=False).eval()
    q = quantize_dynamic(enc, {nn.Linear, nn.MultiheadAttention})
    assert isinstance(q.layers[0].self_attn, nnqd.MultiheadAttention)
    x = ember.randn(2, 6, 32)
    with ember.no_grad():
        assert ember.nn.why_not_fastpath(q, x) == ""
        fast = q(x)
        ember.backends.mha.set_fastpath_enabled(False)
        try:
            regular = q(x)
        finally:
            ember.backends.mha.set_fastpath_enabled(True)
        np.testing.assert_allclose(fast.numpy(), regular.numpy(), atol=1e-5)
        assert (fast - enc(x)).abs().max().item() < 0.2


@pytest.mark.parametrize("cls,kwargs", [
    (nn.LSTM, dict(num_layers=2, bidirectional=True)),
    (nn.LSTM, dict(proj_size=5, batch_first=True)),
    (nn.GRU, dict(num_layers=2)),
    (nn.GRU, dict(bidirectional=True, batch_first=True, bias=False)),
])
def test_dynamic_lstm_and_gru(cls, kwargs):
    ember.manual_seed(11)
    m = cls(8, 16, **kwargs).eval()
    q = quantize_dynamic(nn.Sequential(m))[0]  # the default set includes LSTM and GRU
    assert type(q).__name__ == cls.__name__ and q._get_name() == f"DynamicQuantized{q.mode}"
    assert repr(q).startswith(f"DynamicQuantized{q.mode}(8, 16")
    x = ember.randn(3, 7, 8) if kwargs.get("batch_first") else ember.randn(7, 3, 8)
    with ember.no_grad():
        (yf, hf), (yq, hq) = m(x), q(x)
        assert yq.shape == yf.shape
        assert (yq - yf).abs().max().item() < 0.02
        hf = hf if isinstance(hf, tuple) else (hf,)
        hq = hq if isinstance(hq, tuple) else (hq,)
        for a, b in zip(hf, hq):
            assert (a - b).abs().max().item() < 0.02
        packed = nn.utils.rnn.pack_padded_sequence(ember.randn(7, 3, 8), [7, 5, 2])
        if not kwargs.get("batch_first"):
            of, _ = m(packed)
            oq, _ = q(packed)
            assert (of.data - oq.data).abs().max().item() < 0.02
    fresh = quantize_dynamic(nn.Sequential(cls(8, 16, **kwargs).eval()))[0]
    fresh.load_state_dict(q.state_dict())
    with ember.no_grad():
        np.testing.assert_array_equal(fresh(x)[0].numpy(), q(x)[0].numpy())


def test_dynamic_lstm_matches_pytorch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.LSTM(8, 16, num_layers=2).eval()
    em = nn.LSTM(8, 16, num_layers=2).eval()
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    tq = torch.ao.quantization.quantize_dynamic(tm, {torch.nn.LSTM}, dtype=torch.qint8)
    eq = quantize_dynamic(em, {nn.LSTM})
    x = np.random.default_rng(12).standard_normal((6, 4, 8)).astype(np.float32)
    with torch.no_grad():
        want = tq(torch.from_numpy(x))[0].numpy()
    got = eq(ember.from_numpy(x))[0].detach().numpy()
    # The same weights and per-step quantization; the gate arithmetic may round differently.
    assert np.abs(got - want).max() < 2e-3


def test_float16_dynamic_quantization():
    """dtype=float16: weights rounded to float16, products in float32 (PyTorch's fp16 dynamic
    Linear / LSTM / GRU), state_dict round trips."""
    from ember.ao.quantization import float16_dynamic_qconfig

    ember.manual_seed(3)
    model = nn.Sequential(nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 4))
    lstm, gru = nn.LSTM(16, 8, num_layers=2), nn.GRU(16, 8, bidirectional=True)
    x, seq = ember.randn(5, 16), ember.randn(6, 3, 16)
    q = quantize_dynamic(model, dtype=ember.float16)
    assert q[0]._packed_params.dtype == ember.float16
    w16 = model[0].weight.detach().to(ember.float16).float()
    np.testing.assert_array_equal(q[0].weight().numpy(), w16.numpy())
    with ember.no_grad():
        want = nn.functional.linear(nn.functional.relu(nn.functional.linear(
            x, w16, model[0].bias)), model[2].weight.to(ember.float16).float(), model[2].bias)
        np.testing.assert_allclose(q(x).numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        for rnn in (lstm, gru):
            qr = quantize_dynamic(nn.Sequential(rnn), {type(rnn): float16_dynamic_qconfig})[0]
            assert (qr(seq)[0] - rnn(seq)[0]).abs().max().item() < 2e-3
    again = quantize_dynamic(nn.Sequential(nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 4)),
                             dtype=ember.float16)
    again.load_state_dict(q.state_dict())
    np.testing.assert_array_equal(again(x).detach().numpy(), q(x).detach().numpy())
    with pytest.raises(ValueError, match="qint8 or ember.float16"):
        quantize_dynamic(model, dtype=ember.quint8)


def test_float16_dynamic_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    w = rng.standard_normal((12, 16)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    x = rng.standard_normal((5, 16)).astype(np.float32)
    tl, el = torch.nn.Linear(16, 12), nn.Linear(16, 12)
    with torch.no_grad():
        tl.weight.copy_(torch.from_numpy(w))
        tl.bias.copy_(torch.from_numpy(b))
    el.weight.data, el.bias.data = ember.from_numpy(w.copy()), ember.from_numpy(b.copy())
    tq = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(tl), dtype=torch.float16)
    eq = quantize_dynamic(nn.Sequential(el), dtype=ember.float16)
    with torch.no_grad():
        want = tq(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(eq(ember.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-5)


def test_dynamic_rnn_cells():
    """quantize_dynamic's default set includes LSTMCell, GRUCell and RNNCell (as PyTorch's):
    int8 projections, float gates; batched and unbatched inputs, given or zero states, float16
    weights, state_dict round trips."""
    ember.manual_seed(5)
    x, x1 = ember.randn(4, 10), ember.randn(10)
    cells = (nn.LSTMCell(10, 6), nn.GRUCell(10, 6), nn.RNNCell(10, 6, nonlinearity="relu"),
             nn.RNNCell(10, 6, bias=False))
    for cell in cells:
        q = quantize_dynamic(nn.Sequential(cell))[0]
        assert type(q).__name__ == type(cell).__name__ and "DynamicQuantized" in repr(q)
        with ember.no_grad():
            state = (ember.randn(4, 6), ember.randn(4, 6)) if isinstance(cell, nn.LSTMCell) \
                else ember.randn(4, 6)
            for args in ((x,), (x, state)):
                got, want = q(*args), cell(*args)
                got = got[0] if isinstance(got, tuple) else got
                want = want[0] if isinstance(want, tuple) else want
                assert (got - want).abs().max().item() < 0.05
            one = q(x1)
            one = one[0] if isinstance(one, tuple) else one
            assert one.shape == (6,)
            q16 = quantize_dynamic(nn.Sequential(cell), dtype=ember.float16)[0]
            got16 = q16(x)
            got16 = got16[0] if isinstance(got16, tuple) else got16
            ref = cell(x)
            ref = ref[0] if isinstance(ref, tuple) else ref
            assert (got16 - ref).abs().max().item() < 1e-3
        extra = {"nonlinearity": cell.nonlinearity} if isinstance(cell, nn.RNNCell) else {}
        again = quantize_dynamic(nn.Sequential(type(cell)(10, 6, bias=cell.bias, **extra)))[0]
        again.load_state_dict(q.state_dict())
        a, b = again(x), q(x)
        a, b = (a[0], b[0]) if isinstance(a, tuple) else (a, b)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="1D or 2D"):
        quantize_dynamic(nn.Sequential(nn.GRUCell(10, 6)))[0](ember.randn(2, 3, 10))
    with pytest.raises(ValueError, match="nonlinearity"):
        ember.ao.nn.quantized.dynamic.RNNCell(3, 4, nonlinearity="gelu")


def test_dynamic_rnn_cells_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 10)).astype(np.float32)
    for t_cls, e_cls in ((torch.nn.LSTMCell, nn.LSTMCell), (torch.nn.GRUCell, nn.GRUCell)):
        tc, ec = t_cls(10, 6), e_cls(10, 6)
        with torch.no_grad():
            for name, p in tc.named_parameters():
                getattr(ec, name).data = ember.from_numpy(p.detach().numpy().copy())
        tq = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(tc))[0]
        eq = quantize_dynamic(nn.Sequential(ec))[0]
        with torch.no_grad():
            want = tq(torch.from_numpy(x))
        got = eq(ember.from_numpy(x))
        want = want[0].numpy() if isinstance(want, tuple) else want.numpy()
        got = got[0].numpy() if isinstance(got, tuple) else got.numpy()
        np.testing.assert_allclose(got, want, atol=2e-3)
