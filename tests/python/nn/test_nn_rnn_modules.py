"""The RNN / LSTM / GRU modules' own machinery (layers, directions, batch_first, unbatched
input, initial states, projections, packed sequences, hidden-state permutation), run with
reference cells composed of core ops in place of the fused C++ cells, so that the module logic
is checked on its own: against a NumPy reference and, where installed, against PyTorch with the
same weights."""

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.modules import rnn as rnn_module

RNG = np.random.default_rng(1)


def _linear(x, w, b):
    y = ember.matmul(x, w.t())
    return y if b is None else y + b


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    return ember.tanh(_linear(x, w_ih, b_ih) + _linear(h, w_hh, b_hh))


def rnn_relu_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    y = _linear(x, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    return ember.where(y > 0, y, ember.zeros_like(y))


def lstm_cell(x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gates = _linear(x, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
    return ember.sigmoid(o) * ember.tanh(c), c


def gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    gi = _linear(x, w_ih, b_ih)
    gh = _linear(h, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = ember.sigmoid(i_r + h_r)
    z = ember.sigmoid(i_z + h_z)
    n = ember.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


PackedSequence = namedtuple(
    "PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


@pytest.fixture(autouse=True)
def reference_cells(monkeypatch):
    for fn in (rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell):
        monkeypatch.setattr(F, fn.__name__, fn, raising=False)
    monkeypatch.setattr(rnn_module, "_packed_sequence_class", lambda: PackedSequence)


def copy_from_torch(t_mod, e_mod):
    e_mod.load_state_dict(OrderedDict(
        (k, ember.from_numpy(v.detach().numpy().copy())) for k, v in t_mod.state_dict().items()
    ))


def flatten(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in flatten(o)]
    return [out]


# ---------------------------------------------------------------------------- NumPy reference
def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_gru_layer(x, h, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.shape[0]):
        gi = x[t] @ w_ih.T + b_ih
        gh = h @ w_hh.T + b_hh
        H = h.shape[1]
        r = np_sigmoid(gi[:, :H] + gh[:, :H])
        z = np_sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs), h


def test_bidirectional_two_layer_gru_numpy_reference():
    m = nn.GRU(3, 4, num_layers=2, bidirectional=True).double()
    x = RNG.standard_normal((6, 2, 3))
    out, h_n = m(ember.tensor(x))
    p = {k: v.detach().numpy() for k, v in m.named_parameters()}
    layer_in = x
    finals = []
    for layer in range(2):
        outs = []
        for suffix in ["", "_reverse"]:
            w = [p[f"{n}_l{layer}{suffix}"] for n in ["weight_ih", "weight_hh", "bias_ih",
                                                       "bias_hh"]]
            seq = layer_in if suffix == "" else layer_in[::-1]
            o, h = np_gru_layer(seq, np.zeros((2, 4)), *w)
            outs.append(o if suffix == "" else o[::-1])
            finals.append(h)
        layer_in = np.concatenate(outs, axis=2)
    np.testing.assert_allclose(out.detach().numpy(), layer_in, rtol=1e-10)
    np.testing.assert_allclose(h_n.detach().numpy(), np.stack(finals), rtol=1e-10)
    assert out.shape == (6, 2, 8) and h_n.shape == (4, 2, 4)


def test_packed_forward_matches_per_sequence_runs():
    """Each sequence of a packed batch gives what it gives alone (NumPy-free, no torch)."""
    m = nn.LSTM(3, 5, bidirectional=True).double()
    lengths = [4, 3, 1]  # sorted, as pack_padded_sequence(enforce_sorted=True) needs
    seqs = [RNG.standard_normal((n, 3)) for n in lengths]
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(max(lengths))]
    rows = [seqs[b][t] for t in range(max(lengths)) for b in range(batch_sizes[t])]
    packed = PackedSequence(ember.tensor(np.stack(rows)), ember.tensor(batch_sizes), None, None)
    out, (h, c) = m(packed)
    assert isinstance(out, PackedSequence) and out.data.shape == (sum(lengths), 10)
    offsets = np.cumsum([0] + batch_sizes)
    for b, seq in enumerate(seqs):
        alone, (h1, c1) = m(ember.tensor(seq[:, None, :]))
        got = np.stack([out.data.detach().numpy()[offsets[t] + b] for t in range(len(seq))])
        np.testing.assert_allclose(got, alone.detach().numpy()[:, 0], rtol=1e-10)
        np.testing.assert_allclose(h.detach().numpy()[:, b], h1.detach().numpy()[:, 0],
                                   rtol=1e-10)
        np.testing.assert_allclose(c.detach().numpy()[:, b], c1.detach().numpy()[:, 0],
                                   rtol=1e-10)


def test_errors_match_torch_messages():
    m = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        m(ember.zeros(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 5"):
        m(ember.zeros(2, 1, 5))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(1, 2, 4\\), got "
                                           "\\[1, 3, 4\\]"):
        m(ember.zeros(4, 2, 3), (ember.zeros(1, 3, 4), ember.zeros(1, 2, 4)))
    with pytest.raises(ValueError, match="RNN input dtype \\(ember.float64\\) does not match "
                                         "weight dtype \\(ember.float32\\)"):
        m(ember.zeros(2, 1, 3, dtype=ember.float64))
    g = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but "
                                           "got 2-D tensor"):
        g(ember.zeros(2, 1, 3), ember.zeros(1, 4))
    r = nn.RNN(3, 4)
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor "
                                         "instead"):
        r(ember.zeros(3))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        r(ember.zeros(2, 3), ember.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D"):
        nn.RNNCell(3, 4)(ember.zeros(1, 1, 3))


# ---------------------------------------------------------------------------- PyTorch parity
RECURRENT = [
    ("RNN", (3, 4), {}, (5, 2, 3), False),
    ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bidirectional": True}, (5, 2, 3), True),
    ("RNN", (3, 4), {"batch_first": True, "bias": False}, (2, 5, 3), True),
    ("RNN", (3, 4), {}, (5, 3), True),
    ("LSTM", (3, 4), {}, (6, 2, 3), False),
    ("LSTM", (3, 4, 3), {"bidirectional": True, "batch_first": True}, (2, 6, 3), True),
    ("LSTM", (3, 5, 2), {"proj_size": 2, "bidirectional": True}, (4, 2, 3), True),
    ("LSTM", (3, 4), {"bias": False}, (6, 3), True),
    ("GRU", (3, 4), {}, (5, 2, 3), False),
    ("GRU", (3, 4, 2), {"bidirectional": True, "batch_first": True}, (2, 5, 3), True),
    ("GRU", (3, 4), {}, (5, 3), True),
]


@pytest.mark.parametrize("name,args,kwargs,shape,with_hx", RECURRENT,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(RECURRENT)])
def test_recurrent_matches_torch(name, args, kwargs, shape, with_hx):
    torch = pytest.importorskip("torch")
    t_mod = getattr(torch.nn, name)(*args, **kwargs).double()
    e_mod = getattr(nn, name)(*args, **kwargs).double()
    copy_from_torch(t_mod, e_mod)
    x = RNG.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    t_args, e_args = [tx], [ex]
    if with_hx:
        num_dir = 2 if kwargs.get("bidirectional") else 1
        layers = args[2] if len(args) > 2 else 1
        batched = len(shape) == 3
        batch = (shape[0] if kwargs.get("batch_first") else shape[1]) if batched else None
        hsize = kwargs.get("proj_size") or args[1]
        hshape = (layers * num_dir,) + ((batch,) if batched else ()) + (hsize,)
        h = RNG.standard_normal(hshape)
        th, eh = torch.tensor(h, requires_grad=True), ember.tensor(h, requires_grad=True)
        if name == "LSTM":
            cshape = hshape[:-1] + (args[1],)
            c = RNG.standard_normal(cshape)
            t_args.append((th, torch.tensor(c)))
            e_args.append((eh, ember.tensor(c)))
        else:
            t_args.append(th)
            e_args.append(eh)
    t_out, e_out = flatten(t_mod(*t_args)), flatten(e_mod(*e_args))
    assert len(t_out) == len(e_out)
    lt, le = 0, 0
    for t, e in zip(t_out, e_out):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-9,
                                   atol=1e-12)
        w = RNG.standard_normal(tuple(t.shape))
        lt = lt + (t * torch.tensor(w)).sum()
        le = le + (e * ember.tensor(w)).sum()
    lt.backward()
    le.backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-12)
    if with_hx:
        np.testing.assert_allclose(eh.grad.numpy(), th.grad.numpy(), rtol=1e-8, atol=1e-12)
    tp = dict(t_mod.named_parameters())
    for k, p in e_mod.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tp[k].grad.numpy(), rtol=1e-8, atol=1e-12,
                                   err_msg=k)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_match_torch(name, enforce_sorted):
    torch = pytest.importorskip("torch")
    lengths = [5, 4, 2] if enforce_sorted else [2, 5, 4]
    t_mod = getattr(torch.nn, name)(3, 4, num_layers=2, bidirectional=True).double()
    e_mod = getattr(nn, name)(3, 4, num_layers=2, bidirectional=True).double()
    copy_from_torch(t_mod, e_mod)
    x = RNG.standard_normal((5, 3, 3))
    tx = torch.tensor(x, requires_grad=True)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    ex = ember.tensor(tp.data.detach().numpy(), requires_grad=True)

    def conv(t):
        return None if t is None else ember.tensor(t.numpy())

    ep = PackedSequence(ex, conv(tp.batch_sizes), conv(tp.sorted_indices),
                        conv(tp.unsorted_indices))
    hshape = (4, 3, 4)
    h0 = RNG.standard_normal(hshape)
    if name == "LSTM":
        c0 = RNG.standard_normal(hshape)
        t_hx, e_hx = (torch.tensor(h0), torch.tensor(c0)), (ember.tensor(h0), ember.tensor(c0))
    else:
        t_hx, e_hx = torch.tensor(h0), ember.tensor(h0)
    t_out, t_hidden = t_mod(tp, t_hx)
    e_out, e_hidden = e_mod(ep, e_hx)
    np.testing.assert_allclose(e_out.data.detach().numpy(), t_out.data.detach().numpy(),
                               rtol=1e-9)
    assert e_out.batch_sizes is ep.batch_sizes
    for t, e in zip(flatten(t_hidden), flatten(e_hidden)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-9)
    w = RNG.standard_normal(tuple(t_out.data.shape))
    ((t_out.data * torch.tensor(w)).sum() + flatten(t_hidden)[0].sum()).backward()
    ((e_out.data * ember.tensor(w)).sum() + flatten(e_hidden)[0].sum()).backward()
    np.testing.assert_allclose(ex.grad.numpy(), _packed_grad(tx.grad.numpy(), tp), rtol=1e-8)


def _packed_grad(padded_grad, packed):
    """The rows of a padded (T, B, *) gradient in a PackedSequence's data order."""
    rows = []
    order = packed.sorted_indices.numpy() if packed.sorted_indices is not None else None
    for t, bs in enumerate(packed.batch_sizes.tolist()):
        for j in range(bs):
            b = order[j] if order is not None else j
            rows.append(padded_grad[t, b])
    return np.stack(rows)


@pytest.mark.parametrize("name,args", [("RNNCell", (3, 4)), ("LSTMCell", (3, 4)),
                                       ("GRUCell", (3, 4))])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(name, args, batched):
    torch = pytest.importorskip("torch")
    t_mod = getattr(torch.nn, name)(*args).double()
    e_mod = getattr(nn, name)(*args).double()
    copy_from_torch(t_mod, e_mod)
    x = RNG.standard_normal((2, 3) if batched else (3,))
    t_out = flatten(t_mod(torch.tensor(x)))
    e_out = flatten(e_mod(ember.tensor(x)))
    for t, e in zip(t_out, e_out):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)


def test_permute_hidden_roundtrip():
    m = nn.GRU(2, 3)
    h = ember.arange(12.0).reshape(2, 2, 3)
    perm = ember.tensor([1, 0])
    np.testing.assert_array_equal(m.permute_hidden(h, perm).numpy(), h.numpy()[:, [1, 0]])
    assert m.permute_hidden(h, None) is h


def test_gradcheck_through_the_module_recurrence():
    m = nn.LSTM(2, 3, bidirectional=True).double()
    x = ember.tensor(RNG.standard_normal((3, 2, 2)), requires_grad=True)

    def f(inp):
        out, (h, c) = m(inp)
        return out.sum() + h.sum() + c.sum()

    assert ember.autograd.gradcheck(f, (x,))
