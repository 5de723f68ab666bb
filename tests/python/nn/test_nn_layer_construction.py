"""Every ember.nn layer, constructed: parameter / buffer names, shapes and dtypes, repr and
default initialisation, compared with PyTorch where it is installed (construction needs no
functional op, so these run before the forward tests)."""

import math
import re
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn

# (name, args, kwargs): every layer of the issue, with non-default arguments where they change
# the parameters, the buffers or the repr.
LAYERS = [
    ("Identity", (3,), {"unused": 1}),
    ("Linear", (4, 3), {}),
    ("Linear", (4, 3), {"bias": False}),
    ("Bilinear", (2, 3, 4), {}),
    ("Bilinear", (2, 3, 4), {"bias": False}),
    ("Flatten", (), {}),
    ("Flatten", (0, 2), {}),
    ("Unflatten", (1, (2, 3)), {}),
    ("Unflatten", (-1, [2, 2]), {}),
    ("Conv1d", (2, 4, 3), {}),
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2,
                           "bias": False, "padding_mode": "reflect"}),
    ("Conv1d", (2, 4, 3), {"padding": "same"}),
    ("Conv1d", (2, 4, 3), {"padding": "valid"}),
    ("Conv2d", (3, 6, 3), {}),
    ("Conv2d", (3, 6, (3, 5)), {"stride": (2, 1), "padding": (1, 2), "groups": 3,
                                "padding_mode": "circular"}),
    ("Conv2d", (4, 4, 3), {"padding": "same", "dilation": 2, "padding_mode": "replicate"}),
    ("ConvTranspose1d", (4, 2, 3), {}),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1,
                                    "groups": 2, "dilation": 2, "bias": False}),
    ("ConvTranspose2d", (4, 2, 3), {}),
    ("ConvTranspose2d", (4, 2, (3, 2)), {"stride": 2, "output_padding": (1, 0)}),
    ("MaxPool1d", (3,), {}),
    ("MaxPool1d", (3,), {"stride": 1, "padding": 1, "dilation": 2, "return_indices": True,
                         "ceil_mode": True}),
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", ((2, 3),), {"stride": (1, 2), "padding": 1}),
    ("AvgPool1d", (3,), {}),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True,
                         "count_include_pad": False}),
    ("AvgPool2d", (2,), {}),
    ("AvgPool2d", (3,), {"stride": 1, "padding": 1, "divisor_override": 2}),
    ("AdaptiveAvgPool1d", (5,), {}),
    ("AdaptiveAvgPool2d", ((5, 7),), {}),
    ("AdaptiveAvgPool2d", ((None, 7),), {}),
    ("AdaptiveMaxPool2d", (3,), {}),
    ("AdaptiveMaxPool2d", ((3, 4),), {"return_indices": True}),
    ("BatchNorm1d", (5,), {}),
    ("BatchNorm1d", (5,), {"eps": 1e-3, "momentum": None, "affine": False}),
    ("BatchNorm1d", (5,), {"track_running_stats": False}),
    ("BatchNorm2d", (3,), {}),
    ("BatchNorm2d", (3,), {"momentum": 0.3, "bias": False}),
    ("LayerNorm", (4,), {}),
    ("LayerNorm", ((2, 3),), {"eps": 1e-6, "elementwise_affine": False}),
    ("LayerNorm", ([3],), {"bias": False}),
    ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (2, 4), {"affine": False}),
    ("GroupNorm", (1, 4), {"bias": False, "eps": 0.1}),
    ("RMSNorm", (4,), {}),
    ("RMSNorm", ((2, 3),), {"eps": 1e-6, "elementwise_affine": False}),
    ("Dropout", (), {}),
    ("Dropout", (0.2,), {"inplace": True}),
    ("Dropout2d", (0.3,), {}),
    ("Embedding", (10, 3), {}),
    ("Embedding", (10, 3), {"padding_idx": -2, "max_norm": 1.0, "norm_type": 1.0,
                            "scale_grad_by_freq": True, "sparse": True}),
    ("EmbeddingBag", (10, 3), {}),
    ("EmbeddingBag", (10, 3), {"mode": "sum", "max_norm": 2.0, "padding_idx": 1,
                               "include_last_offset": True}),
    ("RNN", (3, 4), {}),
    ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bias": False, "batch_first": True,
                        "dropout": 0.5, "bidirectional": True}),
    ("LSTM", (3, 4), {}),
    ("LSTM", (3, 4, 2), {"bidirectional": True, "proj_size": 2}),
    ("LSTM", (3, 5), {"num_layers": 3, "bias": False, "proj_size": 3}),
    ("GRU", (3, 4), {}),
    ("GRU", (3, 4), {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("RNNCell", (3, 4), {}),
    ("RNNCell", (3, 4), {"bias": False, "nonlinearity": "relu"}),
    ("LSTMCell", (3, 4), {}),
    ("GRUCell", (3, 4), {"bias": False}),
    ("Upsample", (), {"scale_factor": 2}),
    ("Upsample", (), {"size": (3, 4), "mode": "bilinear", "align_corners": True}),
    ("Upsample", (), {"scale_factor": (2, 3), "mode": "bicubic"}),
    ("PixelShuffle", (2,), {}),
    # activations
    ("ReLU", (), {}),
    ("ReLU", (True,), {}),
    ("ReLU6", (), {"inplace": True}),
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2, True), {}),
    ("PReLU", (), {}),
    ("PReLU", (3, 0.1), {}),
    ("ELU", (), {}),
    ("ELU", (0.5, True), {}),
    ("SELU", (), {"inplace": True}),
    ("CELU", (2.0,), {}),
    ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}),
    ("Mish", (), {"inplace": True}),
    ("Sigmoid", (), {}),
    ("Tanh", (), {}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-2.0, 3.0, True), {}),
    ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}),
    ("Softplus", (), {}),
    ("Softplus", (2.0, 10.0), {}),
    ("Softsign", (), {}),
    ("Softmax", (), {"dim": 1}),
    ("Softmax", (), {}),
    ("LogSoftmax", (-1,), {}),
    ("Softmin", (0,), {}),
    ("GLU", (), {}),
    ("GLU", (1,), {}),
    ("Threshold", (0.1, 20.0), {}),
    ("Threshold", (0.1, 20.0, True), {}),
    # losses
    ("MSELoss", (), {}),
    ("MSELoss", (), {"reduction": "sum"}),
    ("L1Loss", (), {"reduction": "none"}),
    ("SmoothL1Loss", (), {"beta": 0.5}),
    ("HuberLoss", (), {"delta": 2.0}),
    ("CrossEntropyLoss", (), {}),
    ("CrossEntropyLoss", (), {"ignore_index": 1, "label_smoothing": 0.1}),
    ("NLLLoss", (), {"reduction": "sum"}),
    ("BCELoss", (), {}),
    ("BCEWithLogitsLoss", (), {}),
    ("KLDivLoss", (), {"reduction": "batchmean", "log_target": True}),
    ("CosineEmbeddingLoss", (), {"margin": 0.5}),
    ("MarginRankingLoss", (), {"margin": 0.1}),
    ("TripletMarginLoss", (), {"margin": 2.0, "p": 1.0, "swap": True}),
    ("CTCLoss", (), {"blank": 1, "zero_infinity": True}),
    ("PoissonNLLLoss", (), {"log_input": False, "full": True}),
    ("GaussianNLLLoss", (), {"full": True, "eps": 1e-3}),
]

# Losses whose weight / pos_weight buffers are tensors.
WEIGHTED = [
    ("CrossEntropyLoss", {"weight": [1.0, 2.0, 3.0]}),
    ("NLLLoss", {"weight": [1.0, 2.0]}),
    ("BCELoss", {"weight": [0.5]}),
    ("BCEWithLogitsLoss", {"weight": [1.0, 2.0], "pos_weight": [3.0, 4.0]}),
]


def ids(cases):
    return [f"{c[0]}-{i}" for i, c in enumerate(cases)]


def build(lib, name, args, kwargs):
    return getattr(lib.nn, name)(*args, **kwargs)


def layout(module):
    """(name, shape, dtype name, requires_grad or None for buffers) of the state and all
    parameters (including frozen ones)."""
    sd = module.state_dict()
    params = dict(module.named_parameters())
    out = []
    for k, v in sd.items():
        rg = params[k].requires_grad if k in params else None
        out.append((k, tuple(v.shape), str(v.dtype).split(".")[-1], rg))
    return out


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=ids(LAYERS))
def test_layer_constructs(name, args, kwargs):
    m = build(ember, name, args, kwargs)
    assert isinstance(m, nn.Module)
    repr(m)
    for _, p in m.named_parameters():
        assert isinstance(p, nn.Parameter) and p.is_leaf


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=ids(LAYERS))
def test_layer_matches_torch(name, args, kwargs):
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = build(torch, name, args, kwargs)
        e = build(ember, name, args, kwargs)
    assert layout(e) == layout(t)
    assert repr(e) == repr(t)
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert dict(e.state_dict()._metadata) == dict(t.state_dict()._metadata)
    # The attributes PyTorch code reads (kernel_size, stride, padding, ...).
    for attr in ["in_features", "out_features", "kernel_size", "stride", "padding", "dilation",
                 "groups", "output_padding", "padding_mode", "num_features", "eps", "momentum",
                 "affine", "track_running_stats", "normalized_shape", "num_groups",
                 "num_channels", "p", "inplace", "num_embeddings", "embedding_dim",
                 "padding_idx", "max_norm", "mode", "input_size", "hidden_size", "num_layers",
                 "bidirectional", "batch_first", "proj_size", "dropout", "reduction",
                 "ignore_index", "label_smoothing", "dim", "start_dim", "end_dim",
                 "unflattened_size", "scale_factor", "size", "align_corners", "upscale_factor",
                 "negative_slope", "alpha", "approximate", "beta", "threshold", "value",
                 "min_val", "max_val", "num_parameters", "margin", "blank", "zero_infinity",
                 "log_target", "delta", "return_indices", "ceil_mode", "count_include_pad",
                 "divisor_override", "output_size", "nonlinearity", "bias"]:
        if attr in t.__dict__:
            tv = t.__dict__[attr]
            ev = e.__dict__.get(attr, "missing")
            if isinstance(tv, torch.Tensor) or isinstance(tv, torch.nn.Module):
                continue
            assert ev == tv, (attr, ev, tv)


@pytest.mark.parametrize("name,kwargs", WEIGHTED, ids=[w[0] for w in WEIGHTED])
def test_weighted_loss_buffers(name, kwargs):
    e = build(ember, name, (), {k: ember.tensor(v) for k, v in kwargs.items()})
    assert [k for k, _ in e.named_buffers()] == list(kwargs)
    assert list(e.state_dict()) == list(kwargs)
    torch = pytest.importorskip("torch")
    t = build(torch, name, (), {k: torch.tensor(v) for k, v in kwargs.items()})
    assert layout(e) == layout(t)
    e.double()
    assert all(b.dtype == ember.float64 for b in e.buffers())


def test_legacy_reduction_arguments():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, "
                                         "please use reduction='sum' instead."):
        m = nn.MSELoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"


def test_constructor_errors_match_torch():
    torch = pytest.importorskip("torch")
    bad = [
        ("Conv2d", (3, 4, 3), {"groups": 2}),
        ("Conv2d", (4, 3, 3), {"groups": 2}),
        ("Conv2d", (4, 4, 3), {"groups": 0}),
        ("Conv2d", (4, 4, 3), {"padding": "full"}),
        ("Conv2d", (4, 4, 3), {"padding": "same", "stride": 2}),
        ("Conv2d", (4, 4, 3), {"padding_mode": "mirror"}),
        ("ConvTranspose2d", (4, 4, 3), {"padding_mode": "reflect"}),
        ("GroupNorm", (3, 4), {}),
        ("Dropout", (1.5,), {}),
        ("Dropout2d", (-0.1,), {}),
        ("RNN", (3, 4), {"nonlinearity": "gelu"}),
        ("RNN", (3, 4), {"proj_size": 2}),
        ("GRU", (3, 4), {"proj_size": 2}),
        ("LSTM", (3, 4), {"proj_size": 4}),
        ("LSTM", (3, 4), {"proj_size": -1}),
        ("LSTM", (3, 4), {"dropout": 2}),
        ("LSTM", (3, 0), {}),
        ("LSTM", (0, 3), {}),
        ("LSTM", (3, 4), {"num_layers": 0}),
        ("LSTM", (3.0, 4), {}),
        ("LSTM", (3, 4), {"bias": 1}),
        ("LSTM", (3, 4), {"batch_first": 1}),
        ("Embedding", (5, 2), {"padding_idx": 5}),
        ("Embedding", (5, 2), {"padding_idx": -6}),
        ("EmbeddingBag", (5, 2), {"padding_idx": 7}),
        ("Hardtanh", (1.0, 0.0), {}),
        ("Softmax", (), {"dim": 1.0}),
        ("LogSoftmax", (), {"dim": True}),
        ("HuberLoss", (), {"delta": "x"}),
        ("TripletMarginLoss", (), {"margin": 0.0}),
        ("Unflatten", (1, 3), {}),
        ("Unflatten", (1, (2, 1.5)), {}),
        ("Bilinear", (0, 2, 3), {}),
    ]
    for name, args, kwargs in bad:
        with pytest.raises(Exception) as t_info:
            build(torch, name, args, kwargs)
        with pytest.raises(Exception) as e_info:
            build(ember, name, args, kwargs)
        assert type(e_info.value) is type(t_info.value), name
        assert _normalise_sets(str(e_info.value)) == _normalise_sets(str(t_info.value)), name


def _normalise_sets(msg):
    """The message with each "{...}" set display sorted: a set's printed order depends on the
    hash seed of the process that compiled the file."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", ")))
                  + "}", msg)


def test_dropout_warning_single_layer():
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last "
                                         "recurrent layer"):
        nn.LSTM(3, 4, dropout=0.5)


def _bound_ok(t, bound, rel=1e-6):
    a = t.detach().numpy()
    return a.min() >= -bound * (1 + rel) and a.max() <= bound * (1 + rel)


def _uniform_spread(t, bound):
    # A uniform on [-bound, bound]: std = bound / sqrt(3).
    a = t.detach().numpy().astype(np.float64)
    return abs(a.std() - bound / math.sqrt(3)) < 0.05 * bound and abs(a.mean()) < 0.05 * bound


def test_default_init_linear_conv():
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    assert _bound_ok(lin.weight, bound) and _uniform_spread(lin.weight, bound)
    assert _bound_ok(lin.bias, bound)
    conv = nn.Conv2d(8, 64, 5, groups=2)
    fan_in = 4 * 25
    bound = 1 / math.sqrt(fan_in)
    assert _bound_ok(conv.weight, bound) and _uniform_spread(conv.weight, bound)
    assert _bound_ok(conv.bias, bound)
    tconv = nn.ConvTranspose2d(16, 32, 3)
    # weight (in, out, k, k): fan_in is computed from dim 1 = out_channels / groups.
    bound = 1 / math.sqrt(32 * 9)
    assert _bound_ok(tconv.weight, bound) and _uniform_spread(tconv.weight, bound)
    bil = nn.Bilinear(20, 30, 40)
    bound = 1 / math.sqrt(20)
    assert _bound_ok(bil.weight, bound) and _uniform_spread(bil.weight, bound)


def test_default_init_rnn_norm_embedding():
    rnn = nn.LSTM(10, 50, num_layers=2, bidirectional=True)
    bound = 1 / math.sqrt(50)
    for _, p in rnn.named_parameters():
        assert _bound_ok(p, bound)
    assert _uniform_spread(rnn.weight_ih_l1_reverse, bound)
    bn = nn.BatchNorm2d(4)
    np.testing.assert_array_equal(bn.weight.detach().numpy(), np.ones(4))
    np.testing.assert_array_equal(bn.bias.detach().numpy(), np.zeros(4))
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(4))
    np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(4))
    assert bn.num_batches_tracked.dtype == ember.int64 and int(bn.num_batches_tracked) == 0
    emb = nn.Embedding(1000, 64, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert (w[3] == 0).all()
    assert abs(w.std() - 1.0) < 0.02 and abs(w.mean()) < 0.02
    prelu = nn.PReLU(3)
    np.testing.assert_allclose(prelu.weight.detach().numpy(), [0.25] * 3)


def test_dtype_and_device_kwargs():
    for name, args in [("Linear", (3, 2)), ("Conv2d", (2, 2, 3)), ("BatchNorm1d", (3,)),
                       ("LayerNorm", (3,)), ("Embedding", (5, 2)), ("GRU", (2, 3)),
                       ("Bilinear", (2, 2, 2)), ("PReLU", ()), ("GroupNorm", (1, 2)),
                       ("RMSNorm", (3,))]:
        m = getattr(nn, name)(*args, dtype=ember.float64, device="cpu")
        for k, v in m.state_dict().items():
            if k != "num_batches_tracked":
                assert v.dtype == ember.float64, (name, k)


def test_embedding_from_pretrained():
    w = ember.arange(6.0).reshape(3, 2)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e.weight.data_ptr() == w.data_ptr()
    assert e.num_embeddings == 3 and e.embedding_dim == 2
    e2 = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1)
    assert e2.weight.requires_grad and e2.padding_idx == 1
    b = nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert not b.weight.requires_grad and b.mode == "max"
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dim"):
        nn.Embedding.from_pretrained(ember.ones(3))
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        nn.Embedding(4, 2, _weight=w)


def test_rnn_weight_bookkeeping():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert m._flat_weights_names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                         "bias_hh_l0"]
    assert len(m.all_weights) == 4 and m.all_weights[1][0] is m.weight_ih_l0_reverse
    new = nn.Parameter(ember.zeros(16, 3))
    m.weight_ih_l0 = new
    assert m._flat_weights[0] is new
    m.double()
    assert m._flat_weights[0].dtype == ember.float64
    torch = pytest.importorskip("torch")
    t = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert t._flat_weights_names == m._flat_weights_names
    assert t._all_weights == m._all_weights


def test_state_dict_transfers_to_and_from_torch():
    torch = pytest.importorskip("torch")
    specs = [("Linear", (4, 3), {}), ("Conv2d", (2, 4, 3), {"groups": 2}),
             ("BatchNorm2d", (3,), {}), ("LSTM", (3, 4, 2), {"bidirectional": True}),
             ("GRU", (3, 4), {}), ("Embedding", (5, 2), {}), ("LayerNorm", ((2, 3),), {})]
    for name, args, kwargs in specs:
        t = build(torch, name, args, kwargs)
        e = build(ember, name, args, kwargs)
        tsd = OrderedDict((k, ember.from_numpy(v.detach().numpy().copy()))
                          for k, v in t.state_dict().items())
        e.load_state_dict(tsd)
        for (k, ev), tv in zip(e.state_dict().items(), t.state_dict().values()):
            np.testing.assert_array_equal(ev.numpy(), tv.numpy(), err_msg=f"{name}.{k}")
        back = OrderedDict((k, torch.from_numpy(v.numpy().copy()))
                           for k, v in e.state_dict().items())
        t.load_state_dict(back)


def _two_sample_ks(a, b):
    a, b = np.sort(np.ravel(a)), np.sort(np.ravel(b))
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return np.abs(fa - fb).max()


@pytest.mark.parametrize("name,args", [
    ("Linear", (300, 200)), ("Conv2d", (16, 32, 3)), ("ConvTranspose1d", (32, 16, 5)),
    ("Bilinear", (20, 30, 40)), ("LSTM", (50, 64)), ("GRUCell", (40, 50)),
    ("Embedding", (500, 64)), ("EmbeddingBag", (500, 32)), ("PReLU", (10,)),
])
def test_default_init_distribution_matches_torch(name, args):
    torch = pytest.importorskip("torch")
    ember.manual_seed(0)
    torch.manual_seed(0)
    e = getattr(nn, name)(*args)
    t = getattr(torch.nn, name)(*args)
    for (k, ep), tp in zip(e.named_parameters(), t.parameters()):
        a, b = ep.detach().numpy(), tp.detach().numpy()
        n = a.size
        if np.all(b == b.flat[0]):  # a constant (PReLU's 0.25)
            np.testing.assert_array_equal(a, b)
            continue
        # Two-sample Kolmogorov-Smirnov at the 0.1% level.
        assert _two_sample_ks(a, b) < 1.95 * math.sqrt(2.0 / n), (name, k)
