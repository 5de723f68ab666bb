"""ember.onnx.export: each exported model passes onnx.checker and gives Ember's outputs in ONNX
Runtime, with dynamic batch axes where asked; an op without a translation is named."""

import io

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _run(model, inputs, dynamic_batch=False, other_batch=None, opset=None, tol=1e-5,
         **export_kwargs):
    """Exports model(*inputs), checks the graph, and compares ONNX Runtime with Ember on the
    same inputs (and, with dynamic_batch, on inputs with another batch size)."""
    model.eval()
    names = [f"in{i}" for i in range(len(inputs))]
    with ember.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    expected = [e for e in _flat(expected)]
    out_names = [f"out{i}" for i in range(len(expected))]
    dynamic = None
    if dynamic_batch:
        dynamic = {n: {0: "batch"} for n in names + out_names}
    buf = io.BytesIO()
    ember.onnx.export(model, tuple(inputs), buf, input_names=names, output_names=out_names,
                      dynamic_axes=dynamic, opset_version=opset, **export_kwargs)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {n: t.numpy() for n, t in zip(names, inputs)})
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=tol, atol=tol)
    if other_batch is not None:
        with ember.no_grad():
            expected = _flat(model(*other_batch))
        got = session.run(None, {n: t.numpy() for n, t in zip(names, other_batch)})
        for g, e in zip(got, expected):
            assert g.shape == tuple(e.shape)
            np.testing.assert_allclose(g, e.numpy(), rtol=tol, atol=tol)
    return proto


def _flat(obj):
    if isinstance(obj, ember.Tensor):
        return [obj]
    out = []
    for o in obj:
        out += _flat(o)
    return out


def _ops(proto):
    return {n.op_type for n in proto.graph.node}


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)


def test_mlp_with_dynamic_batch():
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 5),
                          nn.Softmax(dim=-1))
    proto = _run(model, [ember.randn(3, 10)], dynamic_batch=True,
                 other_batch=[ember.randn(7, 10)])
    assert {"Gemm", "Relu", "Softmax"} <= _ops(proto)
    names = {i.name for i in proto.graph.initializer}
    assert "0.weight" in names and "3.bias" in names  # parameters keep their names


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool(F.silu(self.conv2(x)))
        x = self.avg(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


def test_cnn_with_dynamic_batch():
    model = SmallCNN()
    # Running statistics that are not the defaults.
    model.bn1.running_mean.copy_(ember.randn(8) * 0.1)
    model.bn1.running_var.copy_(ember.rand(8) + 0.5)
    proto = _run(model, [ember.randn(2, 3, 16, 16)], dynamic_batch=True,
                 other_batch=[ember.randn(5, 3, 16, 16)], tol=1e-4)
    assert {"Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool", "Reshape"} <= \
        _ops(proto)


def test_conv1d_groupnorm_gelu_avgpool():
    model = nn.Sequential(nn.Conv1d(4, 8, 5, padding=2, dilation=1), nn.GroupNorm(2, 8),
                          nn.GELU(), nn.AvgPool1d(2), nn.Conv1d(8, 4, 3, padding="same"),
                          nn.GELU(approximate="tanh"), nn.Flatten())
    _run(model, [ember.randn(3, 4, 12)], dynamic_batch=True, other_batch=[ember.randn(1, 4, 12)],
         tol=1e-4)
    _run(model, [ember.randn(3, 4, 12)], opset=20, tol=1e-4)


def test_conv_transpose_and_norms():
    model = nn.Sequential(nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                          nn.InstanceNorm2d(6, affine=True), nn.LeakyReLU(0.1),
                          nn.Identity(),
                          nn.Upsample(scale_factor=2, mode="nearest"), nn.Hardswish(),
                          nn.ELU(), nn.Hardsigmoid(), nn.Tanh())
    _run(model, [ember.randn(2, 4, 5, 5)], tol=1e-4)
    model1d = nn.Sequential(nn.ConvTranspose1d(3, 2, 4, stride=2), nn.Softplus(), nn.Mish())
    _run(model1d, [ember.randn(2, 3, 7)], tol=1e-4)


class TextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.norm = nn.LayerNorm(16)
        self.proj = nn.Linear(16, 16, bias=False)

    def forward(self, tokens):
        x = self.norm(self.emb(tokens))
        return F.log_softmax(self.proj(x), dim=-1)


@pytest.mark.parametrize("opset", [13, 17])
def test_embedding_layernorm(opset):
    tokens = ember.randint(0, 50, (2, 7))
    _run(TextModel(), [tokens], dynamic_batch=True, other_batch=[ember.randint(0, 50, (4, 7))],
         opset=opset, tol=1e-4)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers(kind):
    cls = getattr(nn, kind)
    model = cls(6, 8, num_layers=2, batch_first=True)
    x = ember.randn(3, 5, 6)
    _run(model, [x], dynamic_batch=True, other_batch=[ember.randn(2, 5, 6)], tol=1e-4)


def test_multihead_attention_and_transformer_encoder():
    mha = nn.MultiheadAttention(16, 4, batch_first=True)

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    _run(SelfAttention(), [ember.randn(2, 6, 16)], dynamic_batch=True,
         other_batch=[ember.randn(3, 6, 16)], tol=1e-4)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    _run(encoder, [ember.randn(2, 6, 16)], dynamic_batch=True,
         other_batch=[ember.randn(4, 6, 16)], tol=1e-4)


class TensorOps(nn.Module):
    def forward(self, x, y):
        a = (x * 2 + 1 - y) / 3
        b = a.permute(0, 2, 1).transpose(1, 2).reshape(x.shape[0], -1)
        c = ember.cat([b, b * b], dim=1)
        s1, s2 = ember.split(c, [5, c.shape[1] - 5], dim=1)
        d = ember.stack([s1.sum(dim=1), s2.mean(dim=1)], dim=1)
        e = ember.where(x > 0, x, ember.zeros_like(x)).clamp(-0.5, 0.5)
        f = x[:, 1:3, ::2].unsqueeze(1).squeeze(1)
        g = ember.gather(x, 2, ember.zeros(x.shape[0], 4, 2, dtype=ember.int64))
        h = x.masked_fill(x < -1, 0.0).amax(dim=-1) + x.max(dim=1).values.sum(-1, keepdim=True)
        i = ember.matmul(x, y.transpose(1, 2)).softmax(-1).argmax(-1).to(ember.float32)
        j = x.var(dim=2) + x.std(dim=-1, keepdim=False) + x.abs().sqrt().exp().log().sum(2)
        k = ember.chunk(x, 2, dim=2)[1].flatten(1) @ ember.ones(8, 3)
        m = (x.ne(y) | (x >= y)).float()
        return d, e, f, g, h, i, j, k, m, x[0], x.expand(2, *x.shape).sum(0)


def test_tensor_ops_with_dynamic_batch():
    x, y = ember.randn(3, 4, 4), ember.randn(3, 4, 4)
    _run(TensorOps(), [x, y], tol=1e-4)
    _run(TensorOps(), [x, y], dynamic_batch=True,
         other_batch=[ember.randn(3, 4, 4), ember.randn(3, 4, 4)], tol=1e-4)


def test_int_inputs_and_scalar_promotion():
    class M(nn.Module):
        def forward(self, idx, x):
            return (idx * 2 + 1).float() * 0.5 + x, (idx > 3).sum(dim=1)

    _run(M(), [ember.arange(12).reshape(3, 4), ember.randn(3, 4)])


def test_folds_constant_subgraphs():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.randn(4, 4))

        def forward(self, x):
            return x @ (self.w.t() * 2).exp()  # a function of parameters only

    proto = _run(M(), [ember.randn(2, 4)])
    assert _ops(proto) == {"MatMul", "Identity"}
    unfolded = _run(M(), [ember.randn(2, 4)], do_constant_folding=False)
    assert {"Exp", "Mul", "Transpose"} <= _ops(unfolded)


def test_export_to_a_path_and_model_in_train_mode_restored(tmp_path):
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.2))
    model.train()
    path = tmp_path / "m.onnx"
    ember.onnx.export(model, (ember.randn(2, 3),), str(path))
    assert model.training
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ["input"]
    assert [o.name for o in proto.graph.output] == ["output_0"]


def test_unsupported_op_is_named():
    class M(nn.Module):
        def forward(self, x):
            return ember.cumprod(x, dim=0)

    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="cumprod"):
        ember.onnx.export(M(), (ember.randn(3),), io.BytesIO())
    assert not ember._C._profiler._observing()  # the tracer is removed after a failure


def test_is_in_onnx_export_and_bad_arguments():
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return x + 1

    ember.onnx.export(M(), ember.ones(2), io.BytesIO())
    assert seen == [True] and not ember.onnx.is_in_onnx_export()
    with pytest.raises(ValueError, match="opset"):
        ember.onnx.export(M(), ember.ones(2), io.BytesIO(), opset_version=5)
    with pytest.raises(ValueError, match="input_names"):
        ember.onnx.export(M(), ember.ones(2), io.BytesIO(), input_names=["a", "b"])


class OpsetSweep(nn.Module):
    """Ops whose ONNX form changed between opsets 9 and 18."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 8, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.norm = nn.LayerNorm(6)

    def forward(self, x):
        y = self.shuffle(self.conv(x))  # (N, 2, 8, 8)
        y = F.pad(y, (1, 1, 0, 2))  # (N, 2, 10, 10)
        y = F.interpolate(y, scale_factor=2, mode="nearest")[:, :, :6, 1:7]
        y = y.softmax(dim=1).clamp(0.1, 0.9) + F.hardswish(y)
        a, b = ember.split(y, [1, 1], dim=1)
        z = (a.squeeze(1) * b.squeeze(1)).unsqueeze(1).sum(dim=2)  # (N, 1, 6)
        z = z / (y.mean(dim=(1, 2, 3), keepdim=True).squeeze(1) + 1)
        return self.norm(z).flatten(1), (y >= 0.5).float().amax(dim=1)


@pytest.mark.parametrize("opset", [9, 10, 11, 12, 13, 17, 18, 21])
def test_opset_versions(opset):
    _run(OpsetSweep(), [ember.randn(3, 2, 4, 4)], opset=opset, tol=1e-4)
    _run(OpsetSweep(), [ember.randn(3, 2, 4, 4)], opset=opset, tol=1e-4, dynamic_batch=True,
         other_batch=[ember.randn(5, 2, 4, 4)])


def test_lstm_options_and_dynamic_sequence():
    model = nn.LSTM(4, 5, num_layers=2, bidirectional=True)
    x = ember.randn(7, 3, 4)  # (seq, batch, features)
    h0, c0 = ember.randn(4, 3, 5), ember.randn(4, 3, 5)

    class WithState(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = model

        def forward(self, x, h, c):
            out, (h_n, c_n) = self.rnn(x, (h, c))
            return out, h_n, c_n

    names = ["x", "h", "c"]
    dynamic = {"x": {0: "seq", 1: "batch"}, "h": {1: "batch"}, "c": {1: "batch"},
               "out0": {0: "seq", 1: "batch"}, "out1": {1: "batch"}, "out2": {1: "batch"}}
    buf = io.BytesIO()
    wrapped = WithState().eval()
    ember.onnx.export(wrapped, (x, h0, c0), buf, input_names=names,
                      output_names=["out0", "out1", "out2"], dynamic_axes=dynamic)
    assert "LSTM" in {n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node}
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for seq, batch in ((7, 3), (2, 6)):
        args = [ember.randn(seq, batch, 4), ember.randn(4, batch, 5), ember.randn(4, batch, 5)]
        with ember.no_grad():
            expected = wrapped(*args)
        got = session.run(None, {n: a.numpy() for n, a in zip(names, args)})
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=1e-5)


def test_gru_without_bias_and_unbatched_rnn():
    _run(nn.GRU(3, 4, bias=False, batch_first=True), [ember.randn(2, 5, 3)], tol=1e-5)
    _run(nn.RNN(3, 4, nonlinearity="relu"), [ember.randn(5, 3)], tol=1e-5)


class FullTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(16, 4, 2, 2, 32, batch_first=True, norm_first=True)

    def forward(self, src, tgt, pad):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return self.t(src, tgt, tgt_mask=mask, src_key_padding_mask=pad,
                      memory_key_padding_mask=pad)


def test_transformer_with_masks_and_dynamic_batch_and_sequence():
    pad = ember.zeros(3, 7, dtype=ember.bool)
    pad[0, 5:] = True
    inputs = [ember.randn(3, 7, 16), ember.randn(3, 5, 16), pad]
    names = ["src", "tgt", "pad"]
    dynamic = {"src": {0: "b", 1: "s"}, "tgt": {0: "b", 1: "t"}, "pad": {0: "b", 1: "s"},
               "out": {0: "b", 1: "t"}}
    model = FullTransformer().eval()
    buf = io.BytesIO()
    ember.onnx.export(model, tuple(inputs), buf, input_names=names, output_names=["out"],
                      dynamic_axes=dynamic)
    onnx.checker.check_model(onnx.load_from_string(buf.getvalue()), full_check=True)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    other_pad = ember.zeros(2, 9, dtype=ember.bool)
    other_pad[1, 6:] = True
    for args in (inputs, [ember.randn(2, 9, 16), ember.randn(2, 4, 16), other_pad]):
        with ember.no_grad():
            expected = model(*args)
        got = session.run(None, {n: a.numpy() for n, a in zip(names, args)})[0]
        assert got.shape == tuple(expected.shape)
        # The decoder masks the padded memory, so the fastpath's zeros there (where the graph,
        # the reference path, keeps values) do not reach the output.
        np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-5)


def test_encoder_graph_is_the_reference_path():
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, activation="gelu", bias=False)
    encoder = nn.TransformerEncoder(layer, 2).eval()
    x = ember.randn(3, 7, 16)
    pad = ember.zeros(3, 7, dtype=ember.bool)
    pad[0, 5:] = True

    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = encoder

        def forward(self, x, pad):
            return self.e(x, src_key_padding_mask=pad)

    buf = io.BytesIO()
    ember.onnx.export(Enc(), (x, pad), buf, input_names=["x", "pad"],
                      dynamic_axes={"x": {0: "b", 1: "s"}, "pad": {0: "b", 1: "s"}})
    got = ort.InferenceSession(buf.getvalue()).run(None, {"x": x.numpy(), "pad": pad.numpy()})[0]
    with ember.no_grad():
        fast = encoder(x, src_key_padding_mask=pad)  # the fastpath: zeros where padded
        ember.backends.mha.set_fastpath_enabled(False)
        try:
            reference = encoder(x, src_key_padding_mask=pad)
        finally:
            ember.backends.mha.set_fastpath_enabled(True)
    np.testing.assert_allclose(got, reference.numpy(), rtol=1e-4, atol=1e-5)
    keep = ~pad.numpy()
    np.testing.assert_allclose(got[keep], fast.numpy()[keep], rtol=1e-4, atol=1e-5)


def test_without_a_file_returns_a_program(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh()).eval()
    x = ember.randn(2, 4)
    program = ember.onnx.export(model, (x,), dynamo=True)
    assert isinstance(program, ember.onnx.ONNXProgram)
    with ember.no_grad():
        expected = model(x)
    np.testing.assert_allclose(program(x)[0].numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    program.optimize()
    path = tmp_path / "m.onnx"
    program.save(str(path))
    onnx.checker.check_model(onnx.load(str(path)))
    assert "Gemm" in _ops(program.model_proto)


def test_control_flow_only_nodes_are_dropped():
    class M(nn.Module):
        def forward(self, x):
            if bool((x > 100).any()):  # decides control flow only
                return x * 0
            return x + 1

    proto = onnx.load_from_string(_export_bytes(M(), (ember.randn(3),)))
    assert _ops(proto) == {"Add", "Identity"}


def _export_bytes(model, args):
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf)
    return buf.getvalue()
