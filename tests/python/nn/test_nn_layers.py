"""Forward and backward of every ember.nn layer.

Each layer is built in float64 in PyTorch and in Ember, the PyTorch weights are copied into the
Ember module through load_state_dict, and the outputs, the input gradients, the parameter
gradients and the buffers after the call must agree. Layers with randomness (Dropout) are
checked by their statistics; a few layers also against a NumPy reference, so that the suite
says something without PyTorch.
"""

from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape)


def rand(*shape):
    return RNG.random(shape)


def ints(high, *shape):
    return RNG.integers(0, high, size=shape).astype(np.int64)


# (layer, args, kwargs, inputs, indices of inputs that require grad, train mode)
CASES = [
    ("Identity", (), {}, lambda: [randn(2, 3)], [0], True),
    ("Linear", (4, 3), {}, lambda: [randn(5, 4)], [0], True),
    ("Linear", (4, 3), {"bias": False}, lambda: [randn(2, 6, 4)], [0], True),
    ("Linear", (4, 3), {}, lambda: [randn(4)], [0], True),
    ("Bilinear", (2, 3, 4), {}, lambda: [randn(5, 2), randn(5, 3)], [0, 1], True),
    ("Flatten", (), {}, lambda: [randn(2, 3, 4)], [0], True),
    ("Unflatten", (1, (2, 2)), {}, lambda: [randn(3, 4)], [0], True),
    ("Conv1d", (2, 4, 3), {}, lambda: [randn(2, 2, 9)], [0], True),
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 2, "dilation": 2, "groups": 2},
     lambda: [randn(2, 2, 11)], [0], True),
    ("Conv1d", (2, 4, 4), {"padding": "same"}, lambda: [randn(2, 2, 8)], [0], True),
    ("Conv1d", (2, 2, 3), {"padding": 1, "padding_mode": "reflect"}, lambda: [randn(1, 2, 6)],
     [0], True),
    ("Conv1d", (2, 2, 3), {"padding": 2, "padding_mode": "circular"},
     lambda: [randn(2, 7)], [0], True),
    ("Conv2d", (3, 6, 3), {}, lambda: [randn(2, 3, 7, 6)], [0], True),
    ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": (1, 0), "groups": 2,
                                "bias": False}, lambda: [randn(2, 4, 8, 5)], [0], True),
    ("Conv2d", (2, 2, 3), {"padding": "same", "dilation": 2, "padding_mode": "replicate"},
     lambda: [randn(1, 2, 6, 6)], [0], True),
    ("Conv2d", (2, 2, 3), {"padding": 1, "padding_mode": "zeros"}, lambda: [randn(2, 5, 5)],
     [0], True),
    ("ConvTranspose1d", (4, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1},
     lambda: [randn(2, 4, 5)], [0], True),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "groups": 2, "dilation": 2},
     lambda: [randn(2, 4, 4, 3)], [0], True),
    ("ConvTranspose2d", (2, 3, (3, 2)), {"padding": (1, 0), "bias": False},
     lambda: [randn(2, 5, 4)], [0], True),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, lambda: [randn(2, 3, 10)], [0], True),
    ("MaxPool1d", (2,), {"return_indices": True, "ceil_mode": True},
     lambda: [randn(2, 3, 7)], [0], True),
    ("MaxPool2d", (2,), {}, lambda: [randn(2, 3, 6, 6)], [0], True),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "dilation": 1, "return_indices": True},
     lambda: [randn(1, 2, 7, 7)], [0], True),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
     lambda: [randn(2, 3, 9)], [0], True),
    ("AvgPool2d", (2,), {}, lambda: [randn(2, 3, 6, 6)], [0], True),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "divisor_override": 5},
     lambda: [randn(1, 2, 8, 7)], [0], True),
    ("AdaptiveAvgPool1d", (4,), {}, lambda: [randn(2, 3, 10)], [0], True),
    ("AdaptiveAvgPool2d", ((3, 5),), {}, lambda: [randn(2, 3, 7, 11)], [0], True),
    ("AdaptiveAvgPool2d", (1,), {}, lambda: [randn(2, 3, 5, 5)], [0], True),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, lambda: [randn(2, 3, 7, 8)], [0], True),
    ("AdaptiveMaxPool2d", (3,), {"return_indices": True}, lambda: [randn(1, 2, 6, 6)], [0],
     True),
    ("BatchNorm1d", (4,), {}, lambda: [randn(8, 4)], [0], True),
    ("BatchNorm1d", (4,), {}, lambda: [randn(8, 4, 5)], [0], False),
    ("BatchNorm1d", (4,), {"momentum": None, "affine": False}, lambda: [randn(6, 4)], [0], True),
    ("BatchNorm1d", (4,), {"track_running_stats": False}, lambda: [randn(6, 4)], [0], False),
    ("BatchNorm2d", (3,), {}, lambda: [randn(4, 3, 5, 5)], [0], True),
    ("BatchNorm2d", (3,), {"momentum": 0.3}, lambda: [randn(4, 3, 5, 5)], [0], False),
    ("LayerNorm", (5,), {}, lambda: [randn(3, 4, 5)], [0], True),
    ("LayerNorm", ((4, 5),), {"elementwise_affine": False}, lambda: [randn(3, 4, 5)], [0],
     True),
    ("LayerNorm", (5,), {"bias": False}, lambda: [randn(2, 5)], [0], True),
    ("GroupNorm", (2, 4), {}, lambda: [randn(3, 4, 5, 2)], [0], True),
    ("GroupNorm", (4, 4), {"affine": False}, lambda: [randn(3, 4, 6)], [0], True),
    ("RMSNorm", (5,), {}, lambda: [randn(3, 4, 5)], [0], True),
    ("RMSNorm", ((4, 5),), {"eps": 1e-3}, lambda: [randn(3, 4, 5)], [0], True),
    ("Dropout", (0.3,), {}, lambda: [randn(4, 5)], [0], False),
    ("Dropout2d", (0.3,), {}, lambda: [randn(2, 3, 4, 4)], [0], False),
    ("Embedding", (10, 3), {}, lambda: [ints(10, 4, 5)], [], True),
    ("Embedding", (10, 3), {"padding_idx": 2}, lambda: [np.array([[2, 1, 2, 9]])], [], True),
    ("Embedding", (10, 3), {"scale_grad_by_freq": True},
     lambda: [np.array([1, 1, 3, 1, 0])], [], True),
    ("EmbeddingBag", (10, 3), {}, lambda: [ints(10, 4, 5)], [], True),
    ("EmbeddingBag", (10, 3), {"mode": "sum"}, lambda: [ints(10, 7), np.array([0, 2, 2, 5])],
     [], True),
    ("EmbeddingBag", (10, 3), {"mode": "max"}, lambda: [ints(10, 3, 4)], [], True),
    ("EmbeddingBag", (10, 3), {"mode": "sum", "include_last_offset": True, "padding_idx": 0},
     lambda: [np.array([0, 1, 2, 0, 3, 4]), np.array([0, 3, 6])], [], True),
    ("RNN", (3, 4), {}, lambda: [randn(5, 2, 3)], [0], True),
    ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bidirectional": True, "batch_first": True},
     lambda: [randn(2, 5, 3)], [0], True),
    ("RNN", (3, 4), {"bias": False}, lambda: [randn(5, 3), randn(1, 4)], [0, 1], True),
    ("LSTM", (3, 4), {}, lambda: [randn(6, 2, 3)], [0], True),
    ("LSTM", (3, 4, 2), {"bidirectional": True}, lambda: [randn(6, 2, 3)], [0], True),
    ("LSTM", (3, 4, 2), {"proj_size": 2, "batch_first": True}, lambda: [randn(2, 5, 3)], [0],
     True),
    ("LSTM", (3, 4), {}, lambda: [randn(5, 3)], [0], True),
    ("GRU", (3, 4), {}, lambda: [randn(5, 2, 3)], [0], True),
    ("GRU", (3, 4, 3), {"bidirectional": True, "bias": False}, lambda: [randn(4, 2, 3)], [0],
     True),
    ("GRU", (3, 4), {}, lambda: [randn(5, 2, 3), randn(1, 2, 4)], [0, 1], True),
    ("RNNCell", (3, 4), {}, lambda: [randn(2, 3), randn(2, 4)], [0, 1], True),
    ("RNNCell", (3, 4), {"nonlinearity": "relu", "bias": False}, lambda: [randn(3)], [0], True),
    ("LSTMCell", (3, 4), {}, lambda: [randn(2, 3)], [0], True),
    ("GRUCell", (3, 4), {}, lambda: [randn(2, 3), randn(2, 4)], [0, 1], True),
    ("Upsample", (), {"scale_factor": 2}, lambda: [randn(1, 2, 3, 3)], [0], True),
    ("Upsample", (), {"scale_factor": 2, "mode": "linear"}, lambda: [randn(1, 2, 5)], [0],
     True),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear", "align_corners": True},
     lambda: [randn(1, 2, 3, 4)], [0], True),
    ("Upsample", (), {"scale_factor": (2, 1.5), "mode": "bicubic"},
     lambda: [randn(1, 2, 4, 4)], [0], True),
    ("PixelShuffle", (2,), {}, lambda: [randn(2, 8, 3, 3)], [0], True),
    ("ReLU", (), {}, lambda: [randn(3, 4)], [0], True),
    ("ReLU6", (), {}, lambda: [randn(3, 4) * 5], [0], True),
    ("LeakyReLU", (0.2,), {}, lambda: [randn(3, 4)], [0], True),
    ("PReLU", (), {}, lambda: [randn(3, 4)], [0], True),
    ("PReLU", (4, 0.1), {}, lambda: [randn(2, 4, 3)], [0], True),
    ("ELU", (0.5,), {}, lambda: [randn(3, 4)], [0], True),
    ("SELU", (), {}, lambda: [randn(3, 4)], [0], True),
    ("CELU", (1.5,), {}, lambda: [randn(3, 4)], [0], True),
    ("GELU", (), {}, lambda: [randn(3, 4)], [0], True),
    ("GELU", (), {"approximate": "tanh"}, lambda: [randn(3, 4)], [0], True),
    ("SiLU", (), {}, lambda: [randn(3, 4)], [0], True),
    ("Mish", (), {}, lambda: [randn(3, 4)], [0], True),
    ("Sigmoid", (), {}, lambda: [randn(3, 4)], [0], True),
    ("Tanh", (), {}, lambda: [randn(3, 4)], [0], True),
    ("Hardtanh", (-0.5, 0.7), {}, lambda: [randn(3, 4)], [0], True),
    ("Hardsigmoid", (), {}, lambda: [randn(3, 4) * 4], [0], True),
    ("Hardswish", (), {}, lambda: [randn(3, 4) * 4], [0], True),
    ("Softplus", (2.0, 1.0), {}, lambda: [randn(3, 4)], [0], True),
    ("Softsign", (), {}, lambda: [randn(3, 4)], [0], True),
    ("Softmax", (1,), {}, lambda: [randn(3, 4)], [0], True),
    ("LogSoftmax", (0,), {}, lambda: [randn(3, 4)], [0], True),
    ("Softmin", (-1,), {}, lambda: [randn(3, 4)], [0], True),
    ("GLU", (), {}, lambda: [randn(3, 4)], [0], True),
    ("GLU", (0,), {}, lambda: [randn(4, 3)], [0], True),
    ("Threshold", (0.1, 20.0), {}, lambda: [randn(3, 4)], [0], True),
    # losses
    ("MSELoss", (), {}, lambda: [randn(3, 4), randn(3, 4)], [0, 1], True),
    ("MSELoss", (), {"reduction": "none"}, lambda: [randn(3, 4), randn(3, 4)], [0], True),
    ("L1Loss", (), {"reduction": "sum"}, lambda: [randn(3, 4), randn(3, 4)], [0, 1], True),
    ("SmoothL1Loss", (), {"beta": 0.5}, lambda: [randn(3, 4), randn(3, 4)], [0], True),
    ("HuberLoss", (), {"delta": 0.7, "reduction": "sum"}, lambda: [randn(3, 4), randn(3, 4)],
     [0], True),
    ("CrossEntropyLoss", (), {}, lambda: [randn(5, 4), ints(4, 5)], [0], True),
    ("CrossEntropyLoss", (), {"ignore_index": 1, "label_smoothing": 0.2},
     lambda: [randn(5, 4, 3), ints(4, 5, 3)], [0], True),
    ("CrossEntropyLoss", (), {"reduction": "none"}, lambda: [randn(5, 4), rand(5, 4)], [0],
     True),
    ("NLLLoss", (), {"reduction": "sum"}, lambda: [randn(5, 4), ints(4, 5)], [0], True),
    ("BCELoss", (), {}, lambda: [rand(3, 4) * 0.9 + 0.05, rand(3, 4)], [0], True),
    ("BCEWithLogitsLoss", (), {}, lambda: [randn(3, 4), rand(3, 4)], [0], True),
    ("KLDivLoss", (), {"reduction": "batchmean"}, lambda: [np.log(rand(3, 4) + 0.1),
                                                          rand(3, 4)], [0], True),
    ("KLDivLoss", (), {"log_target": True, "reduction": "sum"},
     lambda: [randn(3, 4), randn(3, 4)], [0, 1], True),
    ("CosineEmbeddingLoss", (), {"margin": 0.2},
     lambda: [randn(5, 3), randn(5, 3), np.array([1, -1, 1, -1, -1])], [0, 1], True),
    ("MarginRankingLoss", (), {"margin": 0.1},
     lambda: [randn(5), randn(5), np.array([1.0, -1.0, 1.0, 1.0, -1.0])], [0, 1], True),
    ("TripletMarginLoss", (), {"margin": 1.5, "swap": True},
     lambda: [randn(4, 3), randn(4, 3), randn(4, 3)], [0, 1, 2], True),
    ("PoissonNLLLoss", (), {}, lambda: [randn(3, 4), rand(3, 4) * 3], [0], True),
    ("PoissonNLLLoss", (), {"log_input": False, "full": True},
     lambda: [rand(3, 4) + 0.5, rand(3, 4) * 3 + 1], [0], True),
    ("GaussianNLLLoss", (), {}, lambda: [randn(3, 4), randn(3, 4), rand(3, 4) + 0.1],
     [0, 2], True),
]

WEIGHTED_LOSS_CASES = [
    ("CrossEntropyLoss", {"weight": [1.0, 2.0, 0.5, 1.5]}, {},
     lambda: [randn(5, 4), ints(4, 5)]),
    ("NLLLoss", {"weight": [1.0, 2.0, 0.5, 1.5]}, {"ignore_index": 2},
     lambda: [randn(5, 4), ints(4, 5)]),
    ("BCELoss", {"weight": [1.0, 2.0, 0.5, 1.5]}, {},
     lambda: [rand(3, 4) * 0.9 + 0.05, rand(3, 4)]),
    ("BCEWithLogitsLoss", {"weight": [1.0, 2.0, 0.5, 1.5], "pos_weight": [2.0, 1.0, 3.0, 0.5]},
     {}, lambda: [randn(3, 4), rand(3, 4)]),
]


def _ids(cases):
    return [f"{c[0]}-{i}" for i, c in enumerate(cases)]


def _flatten(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flatten(o))
        return res
    return [out]


def _copy_from_torch(tm, em):
    sd = OrderedDict((k, ember.from_numpy(v.detach().numpy().copy()))
                     for k, v in tm.state_dict().items())
    em.load_state_dict(sd)


def _to_lib(lib, a, requires_grad):
    if a.dtype == np.int64:
        return lib.tensor(a)
    t = lib.tensor(a, dtype=lib.float64)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _compare_module(name, args, kwargs, arrays, grad_idx, train, check_values=True):
    torch = pytest.importorskip("torch")
    t_mod = getattr(torch.nn, name)(*args, **kwargs).double().train(train)
    e_mod = getattr(nn, name)(*args, **kwargs).double().train(train)
    _copy_from_torch(t_mod, e_mod)
    t_in = [_to_lib(torch, a, i in grad_idx) for i, a in enumerate(arrays)]
    e_in = [_to_lib(ember, a, i in grad_idx) for i, a in enumerate(arrays)]
    t_out = _flatten(t_mod(*t_in))
    e_out = _flatten(e_mod(*e_in))
    assert len(t_out) == len(e_out)
    loss_t, loss_e = 0, 0
    for t, e in zip(t_out, e_out):
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        if check_values:
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-7,
                                       atol=1e-9)
        if t.requires_grad:
            w = RNG.standard_normal(tuple(t.shape))
            loss_t = loss_t + (t * torch.tensor(w)).sum()
            loss_e = loss_e + (e * ember.tensor(w)).sum()
    if isinstance(loss_t, torch.Tensor):
        loss_t.backward()
        loss_e.backward()
        for i in grad_idx:
            np.testing.assert_allclose(e_in[i].grad.numpy(), t_in[i].grad.numpy(), rtol=1e-6,
                                       atol=1e-9, err_msg=f"input {i}")
        t_params = dict(t_mod.named_parameters())
        for k, p in e_mod.named_parameters():
            tp = t_params[k]
            if tp.grad is None:
                assert p.grad is None or not p.grad.numpy().any(), k
            else:
                np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6,
                                           atol=1e-9, err_msg=k)
    for (k, ev), tv in zip(e_mod.state_dict().items(), t_mod.state_dict().values()):
        np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-7, atol=1e-12,
                                   err_msg=f"state {k}")
    return e_mod, e_out


@pytest.mark.parametrize("name,args,kwargs,make,grad_idx,train", CASES, ids=_ids(CASES))
def test_layer_matches_torch(name, args, kwargs, make, grad_idx, train):
    _compare_module(name, args, kwargs, make(), grad_idx, train,
                    check_values=not name.startswith("Dropout"))


@pytest.mark.parametrize("name,buffers,kwargs,make", WEIGHTED_LOSS_CASES,
                         ids=[c[0] for c in WEIGHTED_LOSS_CASES])
def test_weighted_losses_match_torch(name, buffers, kwargs, make):
    torch = pytest.importorskip("torch")
    arrays = make()
    t_mod = getattr(torch.nn, name)(**{k: torch.tensor(v, dtype=torch.float64)
                                       for k, v in buffers.items()}, **kwargs)
    e_mod = getattr(nn, name)(**{k: ember.tensor(v, dtype=ember.float64)
                                 for k, v in buffers.items()}, **kwargs)
    t_in = [_to_lib(torch, a, i == 0) for i, a in enumerate(arrays)]
    e_in = [_to_lib(ember, a, i == 0) for i, a in enumerate(arrays)]
    t_out, e_out = t_mod(*t_in), e_mod(*e_in)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-7)
    t_out.backward()
    e_out.backward()
    np.testing.assert_allclose(e_in[0].grad.numpy(), t_in[0].grad.numpy(), rtol=1e-6)


def test_ctc_loss_matches_torch():
    torch = pytest.importorskip("torch")
    T, N, C, S = 12, 3, 5, 4
    logits = randn(T, N, C)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = RNG.integers(1, C, size=(N, S)).astype(np.int64)
    input_lengths = np.array([12, 10, 8])
    target_lengths = np.array([4, 3, 2])
    for reduction in ["mean", "sum", "none"]:
        tl = torch.tensor(log_probs, requires_grad=True)
        el = ember.tensor(log_probs, requires_grad=True)
        t_out = torch.nn.CTCLoss(reduction=reduction)(
            tl, torch.tensor(targets), torch.tensor(input_lengths), torch.tensor(target_lengths))
        e_out = nn.CTCLoss(reduction=reduction)(
            el, ember.tensor(targets), ember.tensor(input_lengths), ember.tensor(target_lengths))
        np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6)
        t_out.sum().backward()
        e_out.sum().backward()
        np.testing.assert_allclose(el.grad.numpy(), tl.grad.numpy(), rtol=1e-5, atol=1e-8)


# ---------------------------------------------------------------------------- NumPy references
def test_linear_numpy_reference():
    m = nn.Linear(4, 3).double()
    x = randn(5, 4)
    out = m(ember.tensor(x)).detach().numpy()
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    np.testing.assert_allclose(out, x @ w.T + b, rtol=1e-12)


def test_bilinear_numpy_reference():
    m = nn.Bilinear(2, 3, 4).double()
    x1, x2 = randn(5, 2), randn(5, 3)
    out = m(ember.tensor(x1), ember.tensor(x2)).detach().numpy()
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    np.testing.assert_allclose(out, np.einsum("ni,kij,nj->nk", x1, w, x2) + b, rtol=1e-12)


def test_conv2d_numpy_reference():
    m = nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=1).double()
    x = randn(2, 2, 6, 5)
    out = m(ember.tensor(x)).detach().numpy()
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh = (6 + 2 - 3) // 2 + 1
    ow = (5 + 2 - 2) // 1 + 1
    ref = np.zeros((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, 2 * i:2 * i + 3, j:j + 2]
            ref[:, :, i, j] = np.einsum("ncij,ocij->no", patch, w) + b
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


def test_batchnorm_running_stats_numpy_reference():
    m = nn.BatchNorm1d(3, momentum=0.2).double()
    xs = [randn(6, 3) * 2 + 1 for _ in range(3)]
    rm, rv = np.zeros(3), np.ones(3)
    for x in xs:
        out = m(ember.tensor(x)).detach().numpy()
        mean, var = x.mean(0), x.var(0)
        np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-8)
        rm = 0.8 * rm + 0.2 * mean
        rv = 0.8 * rv + 0.2 * x.var(0, ddof=1)
    np.testing.assert_allclose(m.running_mean.numpy(), rm, rtol=1e-10)
    np.testing.assert_allclose(m.running_var.numpy(), rv, rtol=1e-10)
    assert int(m.num_batches_tracked) == 3
    m.eval()
    x = randn(4, 3)
    np.testing.assert_allclose(m(ember.tensor(x)).detach().numpy(),
                               (x - rm) / np.sqrt(rv + 1e-5), rtol=1e-8)
    # momentum=None: a cumulative average.
    c = nn.BatchNorm1d(3, momentum=None).double()
    for x in xs:
        c(ember.tensor(x))
    np.testing.assert_allclose(c.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-10)


def test_batchnorm_input_dim_errors():
    with pytest.raises(ValueError, match="expected 2D or 3D input \\(got 4D input\\)"):
        nn.BatchNorm1d(3)(ember.zeros(2, 3, 4, 4))
    with pytest.raises(ValueError, match="expected 4D input \\(got 3D input\\)"):
        nn.BatchNorm2d(3)(ember.zeros(2, 3, 4))


def test_embedding_numpy_reference_and_padding_grad():
    m = nn.Embedding(6, 3, padding_idx=0).double()
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    out = m(ember.tensor(idx))
    np.testing.assert_allclose(out.detach().numpy(), m.weight.detach().numpy()[idx])
    out.sum().backward()
    g = m.weight.grad.numpy()
    np.testing.assert_allclose(g[0], 0)
    np.testing.assert_allclose(g[2], 3)
    np.testing.assert_allclose(g[1], 1)


def test_embedding_max_norm_renormalises_in_place():
    m = nn.Embedding(4, 3, max_norm=1.0).double()
    with ember.no_grad():
        m.weight.copy_(ember.tensor(np.arange(12.0).reshape(4, 3)))
    m(ember.tensor([1, 3]))
    norms = np.linalg.norm(m.weight.detach().numpy(), axis=1)
    assert norms[1] <= 1.0 + 1e-6 and norms[3] <= 1.0 + 1e-6
    assert norms[2] > 1.0  # not looked up, untouched


def test_dropout_statistics():
    m = nn.Dropout(0.3)
    x = ember.ones(200_000)
    y = m(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    m.eval()
    assert m(x) is x or np.array_equal(m(x).numpy(), x.numpy())
    d2 = nn.Dropout2d(0.5)
    y = d2(ember.ones(64, 32, 4, 4)).numpy()
    per_channel = y.reshape(64, 32, 16)
    assert ((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all()
    assert abs((per_channel[..., 0] == 0).mean() - 0.5) < 0.05


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.shape[0]):
        gates = x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(gates, 4, axis=1)
        c = _np_sigmoid(f) * c + _np_sigmoid(i) * np.tanh(g)
        h = _np_sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def test_lstm_numpy_reference():
    m = nn.LSTM(3, 4).double()
    x = randn(5, 2, 3)
    out, (h, c) = m(ember.tensor(x))
    p = {k: v.detach().numpy() for k, v in m.named_parameters()}
    ref, rh, rc = _np_lstm(x, np.zeros((2, 4)), np.zeros((2, 4)), p["weight_ih_l0"],
                           p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"])
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(h.detach().numpy()[0], rh, rtol=1e-10)
    np.testing.assert_allclose(c.detach().numpy()[0], rc, rtol=1e-10)


def test_rnn_dropout_between_layers_only_in_training():
    m = nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = ember.tensor(randn(5, 2, 3))
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    ember.manual_seed(0)
    c, _ = m(x)
    assert not np.allclose(c.detach().numpy(), a.detach().numpy())


def test_packed_sequence_lstm_matches_torch():
    torch = pytest.importorskip("torch")
    from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    lengths = [5, 2, 4]
    x = randn(5, 3, 3)
    t_mod = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    e_mod = nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    _copy_from_torch(t_mod, e_mod)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    t_packed = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=False)
    e_packed = pack_padded_sequence(ex, lengths, enforce_sorted=False)
    t_out, (th, tc) = t_mod(t_packed)
    e_out, (eh, ec) = e_mod(e_packed)
    t_pad, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out)
    e_pad, _ = pad_packed_sequence(e_out)
    np.testing.assert_allclose(e_pad.detach().numpy(), t_pad.detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(eh.detach().numpy(), th.detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(ec.detach().numpy(), tc.detach().numpy(), rtol=1e-9)
    (t_pad.sum() + th.sum()).backward()
    (e_pad.sum() + eh.sum()).backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-8)


def test_conv_transpose_output_size():
    torch = pytest.importorskip("torch")
    t = torch.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1).double()
    e = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1).double()
    _copy_from_torch(t, e)
    x = randn(1, 2, 6, 6)
    to = t(torch.tensor(x), output_size=[12, 12])
    eo = e(ember.tensor(x), output_size=[12, 12])
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="requested an output size of \\[20, 20\\]"):
        e(ember.tensor(x), output_size=[20, 20])


def test_training_a_small_model_reduces_loss():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    x = ember.tensor(randn(64, 2), dtype=ember.float32)
    y = (x[:, :1] * x[:, 1:]).detach()
    loss_fn = nn.MSELoss()
    first = None
    for _ in range(200):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        with ember.no_grad():
            for p in model.parameters():
                p.sub_(0.1 * p.grad)
        first = float(loss) if first is None else first
    assert float(loss) < 0.5 * first


def test_functional_namespace_has_the_layer_ops():
    for name in ["linear", "bilinear", "conv1d", "conv2d", "conv_transpose1d",
                 "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
                 "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                 "batch_norm", "layer_norm", "group_norm", "rms_norm", "dropout", "dropout2d",
                 "embedding", "embedding_bag", "relu", "cross_entropy", "pad", "interpolate",
                 "pixel_shuffle"]:
        assert hasattr(F, name), name
