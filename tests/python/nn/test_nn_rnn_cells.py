"""Recurrent cells (ember.rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell) and the sequence
functions of ember.nn.functional._rnn: forward against NumPy, gradcheck / gradgradcheck,
optional biases, undefined gradients of one LSTM output, errors, and parity with PyTorch
(cells, and multi-layer / bidirectional / projected / packed sequences)."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import _rnn
from ember.nn.utils import rnn as rnn_utils

B, I, H = 3, 4, 5
GATES = {"lstm_cell": 4, "gru_cell": 3, "rnn_tanh_cell": 1, "rnn_relu_cell": 1}


def sig(x):
    return 1 / (1 + np.exp(-x))


def np_cell(kind, x, h, c, wi, wh, bi, bh):
    bi = 0 if bi is None else bi
    bh = 0 if bh is None else bh
    gi = x @ wi.T + bi
    gh = h @ wh.T + bh
    if kind == "lstm_cell":
        i, f, g, o = np.split(gi + gh, 4, axis=1)
        c2 = sig(f) * c + sig(i) * np.tanh(g)
        return sig(o) * np.tanh(c2), c2
    if kind == "gru_cell":
        ir, iz, inn = np.split(gi, 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r, z = sig(ir + hr), sig(iz + hz)
        n = np.tanh(inn + r * hn)
        return (1 - z) * n + z * h
    pre = gi + gh
    return np.tanh(pre) if kind == "rnn_tanh_cell" else np.maximum(pre, 0)


def arrays(kind, seed=0, bias=True):
    rng = np.random.default_rng(seed)
    g = GATES[kind]
    a = [rng.standard_normal(s) for s in [(B, I), (B, H), (B, H), (g * H, I), (g * H, H)]]
    a += [rng.standard_normal(g * H) for _ in range(2)] if bias else [None, None]
    return a


def call(kind, x, h, c, wi, wh, bi=None, bh=None):
    if kind == "lstm_cell":
        return ember.lstm_cell(x, (h, c), wi, wh, bi, bh)
    return getattr(ember, kind)(x, h, wi, wh, bi, bh)


@pytest.mark.parametrize("kind", sorted(GATES))
@pytest.mark.parametrize("bias", [True, False])
def test_cell_forward_matches_numpy(kind, bias):
    a = arrays(kind, bias=bias)
    t = [None if v is None else ember.tensor(v) for v in a]
    out = call(kind, *t)
    ref = np_cell(kind, *a)
    if kind == "lstm_cell":
        np.testing.assert_allclose(out[0].numpy(), ref[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(out[1].numpy(), ref[1], rtol=1e-12, atol=1e-14)
    else:
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", sorted(GATES))
@pytest.mark.parametrize("dtype,tol", [(ember.float32, 1e-5), (ember.bfloat16, 3e-2)])
def test_cell_reduced_precision(kind, dtype, tol):
    a = arrays(kind, seed=1)
    t = [ember.tensor(v, dtype=dtype) for v in a]
    out = call(kind, *t)
    first = out[0] if kind == "lstm_cell" else out
    assert first.dtype == dtype
    a32 = [ember.tensor(v, dtype=dtype).double().numpy() for v in a]
    ref = np_cell(kind, *a32)
    ref = ref[0] if kind == "lstm_cell" else ref
    np.testing.assert_allclose(first.double().numpy(), ref, rtol=tol, atol=tol * 5)


@pytest.mark.parametrize("kind", sorted(GATES))
@pytest.mark.parametrize("bias", [True, False])
def test_cell_gradcheck_and_gradgradcheck(kind, bias):
    a = arrays(kind, seed=2, bias=bias)
    if kind == "rnn_relu_cell":
        a[0] = a[0] * 0.3  # keep pre-activations away from 0
    t = tuple(ember.tensor(v, requires_grad=True) for v in a if v is not None)

    def fn(*args):
        args = list(args) + [None] * (7 - len(args))
        return call(kind, *args)

    assert gradcheck(fn, t)
    assert gradgradcheck(fn, t)


def test_lstm_cell_gradient_of_one_output_only():
    a = arrays("lstm_cell", seed=3)
    for which in (0, 1):
        t = [ember.tensor(v, requires_grad=True) for v in a]
        out = call("lstm_cell", *t)
        out[which].sum().backward()
        assert all(v.grad is not None for v in t)
    # Only cx's gradient through c' = f c + ... when h' is unused.
    t = [ember.tensor(v, requires_grad=True) for v in a]
    hy, cy = call("lstm_cell", *t)
    cy.sum().backward()
    f = sig(np.split(a[0] @ a[3].T + a[5] + a[1] @ a[4].T + a[6], 4, axis=1)[1])
    np.testing.assert_allclose(t[2].grad.numpy(), f, rtol=1e-12)
    assert hy.grad_fn.name() == "LstmCellBackward0"


def test_cell_node_names():
    for kind, name in [("gru_cell", "GruCellBackward0"), ("rnn_tanh_cell", "RnnTanhCellBackward0"),
                       ("rnn_relu_cell", "RnnReluCellBackward0")]:
        t = [ember.tensor(v, requires_grad=True) for v in arrays(kind)]
        assert call(kind, *t).grad_fn.name() == name


def test_cell_errors():
    a = [ember.tensor(v) for v in arrays("lstm_cell")]
    x, h, c, wi, wh, bi, bh = a
    with pytest.raises(RuntimeError, match=r"Expected 2D input \(batch x feature\), but got 1D"):
        ember.lstm_cell(x[0], (h[0], c[0]), wi, wh, bi, bh)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 4"):
        ember.lstm_cell(ember.randn(B, 5, dtype=ember.float64), (h, c), wi, wh, bi, bh)
    with pytest.raises(RuntimeError, match="Input batch size 3 doesn't match hidden0 batch size 1"):
        ember.lstm_cell(x, (h[:1], c), wi, wh, bi, bh)
    with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 6, expecte"):
        ember.lstm_cell(x, (h, ember.randn(B, 6, dtype=ember.float64)), wi, wh, bi, bh)
    with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states"):
        ember.lstm_cell(x, (h,), wi, wh, bi, bh)
    with pytest.raises(RuntimeError, match="of one dtype"):
        ember.lstm_cell(x.float(), (h, c), wi, wh, bi, bh)
    with pytest.raises(RuntimeError, match=r"expected biases of shape \(20\)"):
        ember.lstm_cell(x, (h, c), wi, wh, bi[:5], bh)
    g = [ember.tensor(v) for v in arrays("gru_cell")]
    with pytest.raises(RuntimeError, match="expected w_ih and w_hh with 3"):
        ember.gru_cell(g[0], g[1], wi, wh)
    with pytest.raises(RuntimeError, match="floating point"):
        ember.rnn_tanh_cell(ember.tensor([[1, 2]]), ember.tensor([[1]]), ember.tensor([[1, 2]]),
                            ember.tensor([[1]]))


@pytest.mark.parametrize("kind", sorted(GATES))
def test_cells_match_torch(kind):
    torch = pytest.importorskip("torch")
    a = arrays(kind, seed=4)
    et = [ember.tensor(v, requires_grad=True) for v in a]
    tt = [torch.tensor(v, requires_grad=True) for v in a]
    eo = call(kind, *et)
    if kind == "lstm_cell":
        to = torch.lstm_cell(tt[0], (tt[1], tt[2]), *tt[3:])
    else:
        to = getattr(torch, kind)(tt[0], tt[1], *tt[3:])
    eo = eo if isinstance(eo, tuple) else (eo,)
    to = to if isinstance(to, tuple) else (to,)
    for k, (e, t) in enumerate(zip(eo, to)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        w = np.linspace(-1, 1 + k, e.numel()).reshape(tuple(e.shape))
        (e * ember.tensor(w)).sum().backward(retain_graph=True)
        (t * torch.tensor(w)).sum().backward(retain_graph=True)
    for e, t in zip(et, tt):
        if t.grad is None:
            assert e.grad is None
            continue
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-13)


# ---- sequence functions ------------------------------------------------------------------------

MODES = {"LSTM": _rnn.lstm, "GRU": _rnn.gru, "RNN_TANH": _rnn.rnn_tanh, "RNN_RELU": _rnn.rnn_relu}


def torch_module(torch, mode, **kw):
    if mode == "LSTM":
        return torch.nn.LSTM(**kw)
    if mode == "GRU":
        return torch.nn.GRU(**kw)
    return torch.nn.RNN(nonlinearity="tanh" if mode == "RNN_TANH" else "relu", **kw)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_sequence_functions_match_torch(mode, bidirectional, batch_first):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    m = torch_module(torch, mode, input_size=4, hidden_size=5, num_layers=2,
                     bidirectional=bidirectional, batch_first=batch_first, dtype=torch.float64)
    d = 2 if bidirectional else 1
    x = torch.randn(3, 6, 4, dtype=torch.float64) if batch_first else torch.randn(
        6, 3, 4, dtype=torch.float64)
    x.requires_grad_()
    h0 = torch.randn(2 * d, 3, 5, dtype=torch.float64)
    c0 = torch.randn(2 * d, 3, 5, dtype=torch.float64)
    thx = (h0, c0) if mode == "LSTM" else h0
    to = m(x, thx)
    params = [ember.tensor(p.detach().numpy(), requires_grad=True) for p in m._flat_weights]
    ex = ember.tensor(x.detach().numpy(), requires_grad=True)
    ehx = ((ember.tensor(h0.numpy()), ember.tensor(c0.numpy())) if mode == "LSTM"
           else ember.tensor(h0.numpy()))
    eo = MODES[mode](ex, ehx, params, True, 2, 0.0, False, bidirectional, batch_first)
    np.testing.assert_allclose(eo[0].detach().numpy(), to[0].detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    th = to[1][0] if mode == "LSTM" else to[1]
    np.testing.assert_allclose(eo[1].detach().numpy(), th.detach().numpy(), rtol=1e-10, atol=1e-12)
    (to[0] ** 2).sum().backward()
    (eo[0] ** 2).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), x.grad.numpy(), rtol=1e-9, atol=1e-12)
    for e, t in zip(params, m._flat_weights):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode,proj", [("LSTM", 0), ("LSTM", 3), ("GRU", 0), ("RNN_TANH", 0)])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_sequences_match_torch(mode, bidirectional, proj):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    kw = {"proj_size": proj} if proj else {}
    m = torch_module(torch, mode, input_size=4, hidden_size=5, num_layers=2,
                     bidirectional=bidirectional, batch_first=True, dtype=torch.float64, **kw)
    d = 2 if bidirectional else 1
    x = torch.randn(3, 6, 4, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(2 * d, 3, proj or 5, dtype=torch.float64)
    c0 = torch.randn(2 * d, 3, 5, dtype=torch.float64)
    thx = (h0, c0) if mode == "LSTM" else h0
    lengths = [6, 4, 2]
    to = m(torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True), thx)
    params = [ember.tensor(p.detach().numpy(), requires_grad=True) for p in m._flat_weights]
    ex = ember.tensor(x.detach().numpy(), requires_grad=True)
    ehx = ((ember.tensor(h0.numpy()), ember.tensor(c0.numpy())) if mode == "LSTM"
           else ember.tensor(h0.numpy()))
    packed = rnn_utils.pack_padded_sequence(ex, lengths, batch_first=True)
    eo = MODES[mode](packed.data, packed.batch_sizes, ehx, params, True, 2, 0.0, False,
                     bidirectional)
    np.testing.assert_allclose(eo[0].detach().numpy(), to[0].data.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    th = to[1][0] if mode == "LSTM" else to[1]
    np.testing.assert_allclose(eo[1].detach().numpy(), th.detach().numpy(), rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(eo[2].detach().numpy(), to[1][1].detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    (to[0].data ** 2).sum().backward()
    (eo[0] ** 2).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), x.grad.numpy(), rtol=1e-9, atol=1e-12)
    for e, t in zip(params, m._flat_weights):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_sequence_function_without_torch():
    # One layer, forward only, against the cells stepped by hand.
    a = arrays("gru_cell", seed=5)
    x = np.random.default_rng(6).standard_normal((4, B, I))
    params = [ember.tensor(v) for v in a[3:]]
    out, h_n = _rnn.gru(ember.tensor(x), ember.tensor(a[1])[None], params, True, 1, 0.0, False,
                        False, False)
    h = a[1]
    for t in range(4):
        h = np_cell("gru_cell", x[t], h, None, *a[3:])
        np.testing.assert_allclose(out.numpy()[t], h, rtol=1e-12)
    np.testing.assert_allclose(h_n.numpy()[0], h, rtol=1e-12)
    # Dropout between layers only in training.
    two = params + params[:0]
    with pytest.raises(RuntimeError, match="expected 8 weight tensors"):
        _rnn.gru(ember.tensor(x), ember.zeros(2, B, H, dtype=ember.float64), two, True, 2, 0.5,
                 True, False, False)
