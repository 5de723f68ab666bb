"""The transformer encoder's inference fastpath (nn/modules/_fastpath.py, ops/nn/transformer.cpp):
nn.TransformerEncoderLayer and nn.TransformerEncoder in eval mode without autograd run one fused
C++ call, which must give the regular (composed) path's result to float rounding.

Sections: which path runs and why (ember.nn.why_not_fastpath, with `_fastpath.run` spied on to
see the fused call happen), the layer against the regular path for every option and mask, the
encoder (packed real tokens with zeros at padded positions, or dense), hooks, autograd, errors,
and (with torch installed) parity with PyTorch modules whose state_dicts are loaded."""

import contextlib

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.modules import _fastpath
from ember.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

# A bool padding mask with a float attention mask (e.g. the float causal mask) warns, as in
# PyTorch; test_nn_transformer.py checks the warning itself.
# PyTorch warns that its nested tensors (its encoder's padded inference path) are a prototype,
# and when an encoder cannot use them.
pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors:UserWarning"),
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")]

N, S, D, NH, FF = 3, 5, 8, 2, 16
F32_TOL = {"rtol": 1e-5, "atol": 1e-5}
F64_TOL = {"rtol": 1e-12, "atol": 1e-12}
TOL = {ember.float32: F32_TOL, ember.float64: F64_TOL}
NP_DTYPE = {ember.float32: np.float32, ember.float64: np.float64}


# ---------------------------------------------------------------- helpers and fixtures

def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def tensor(a, dtype=ember.float32):
    """An ember tensor of ``a``: bool arrays stay bool, the rest become ``dtype``."""
    if a.dtype == bool:
        return ember.tensor(a)
    return ember.tensor(np.asarray(a, dtype=NP_DTYPE[dtype]), dtype=dtype)


def randomize_(module, seed=0, scale=0.5):
    """Random values for every parameter (PyTorch's init zeroes the attention biases, which
    would hide bias mistakes); LayerNorm gains stay near 1."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, value in module.state_dict().items():
        noise = rng.standard_normal(tuple(value.shape)) * scale
        owner = name.rpartition(".")[0]
        if owner.endswith(("norm", "norm1", "norm2")) and name.endswith(".weight"):
            noise = 1.0 + noise * 0.2
        state[name] = ember.tensor(noise, dtype=value.dtype)
    module.load_state_dict(state)
    return module


def make_layer(d_model=D, nhead=NH, dtype=ember.float32, seed=0, **kw):
    kw.setdefault("dim_feedforward", FF)
    layer = nn.TransformerEncoderLayer(d_model, nhead, dtype=dtype, **kw)
    return randomize_(layer, seed).eval()


def make_encoder(d_model=D, nhead=NH, num_layers=2, norm=False, dtype=ember.float32, seed=0,
                 enable_nested_tensor=True, **kw):
    kw.setdefault("dim_feedforward", FF)
    layer = nn.TransformerEncoderLayer(d_model, nhead, dtype=dtype, **kw)
    final = nn.LayerNorm(d_model, dtype=dtype) if norm else None
    encoder = nn.TransformerEncoder(layer, num_layers, norm=final,
                                    enable_nested_tensor=enable_nested_tensor)
    return randomize_(encoder, seed).eval()


def src_of(n, s, d, batch_first, dtype=ember.float32, seed=1):
    return tensor(rand(*((n, s, d) if batch_first else (s, n, d)), seed=seed), dtype)


def batch_major(out, batch_first):
    """(N, S, E) NumPy view of an output in the module's layout."""
    a = out.numpy() if isinstance(out, ember.Tensor) else out
    return a if batch_first else a.transpose(1, 0, 2)


def padding(pattern, n=N, s=S, seed=3):
    """A bool (n, s) key padding mask (True = padded) of the named pattern."""
    kpm = np.zeros((n, s), bool)
    if pattern == "right":  # row i has i padded tokens at the end
        for i in range(n):
            kpm[i, s - i:] = True
    elif pattern == "left":
        for i in range(n):
            kpm[i, :i] = True
    elif pattern == "random":
        kpm = np.random.default_rng(seed).random((n, s)) < 0.4
        kpm[:, seed % s] = False
    elif pattern == "one_left":  # every row keeps a single token, each at another position
        kpm[:] = True
        for i in range(n):
            kpm[i, (2 * i + 1) % s] = False
    elif pattern == "full_row":  # row 1 is all padding
        kpm[0, s - 1] = True
        kpm[1, :] = True
    else:
        assert pattern == "none"
    return kpm


def causal(s, dtype=ember.float32):
    return nn.Transformer.generate_square_subsequent_mask(s, dtype=dtype)


@contextlib.contextmanager
def fastpath_off():
    ember.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        ember.backends.mha.set_fastpath_enabled(True)


@pytest.fixture(autouse=True)
def _fastpath_switch_restored():
    assert ember.backends.mha.get_fastpath_enabled()
    yield
    ember.backends.mha.set_fastpath_enabled(True)


@pytest.fixture
def runs(monkeypatch):
    """Records every call of ``_fastpath.run`` (the fused C++ call) and runs it."""
    calls = []
    real = _fastpath.run

    def spy(layers, src, batch_first, attn_mask, key_padding_mask, is_causal, pack_padding):
        calls.append({"layers": len(layers), "attn_mask": attn_mask is not None,
                      "key_padding_mask": key_padding_mask is not None,
                      "is_causal": bool(is_causal), "packed": pack_padding is not None})
        return real(layers, src, batch_first, attn_mask, key_padding_mask, is_causal,
                    pack_padding)

    monkeypatch.setattr(_fastpath, "run", spy)
    return calls


def fast_and_regular(module, runs, *args, **kwargs):
    """``module(*args, **kwargs)`` under no_grad on the fastpath (asserted to run once) and
    with the fastpath switched off (asserted not to run), as NumPy arrays."""
    with ember.no_grad():
        assert nn.why_not_fastpath(module, *args, **kwargs) == ""
        before = len(runs)
        fast = module(*args, **kwargs)
        assert len(runs) == before + 1
        with fastpath_off():
            assert "get_fastpath_enabled" in nn.why_not_fastpath(module, *args, **kwargs)
            regular = module(*args, **kwargs)
        assert len(runs) == before + 1
    assert not fast.requires_grad
    assert fast.shape == regular.shape and fast.dtype == regular.dtype
    return fast.numpy(), regular.numpy()


# ---------------------------------------------------------------- layer vs regular path

ACTIVATIONS = {
    "relu_str": lambda: "relu",
    "gelu_str": lambda: "gelu",
    "F.relu": lambda: F.relu,
    "F.gelu": lambda: F.gelu,
    "nn.ReLU": nn.ReLU,
    "nn.GELU": nn.GELU,
}


@pytest.mark.parametrize("act", list(ACTIVATIONS))
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_layer_options_match_regular(runs, act, norm_first, bias, batch_first):
    layer = make_layer(activation=ACTIVATIONS[act](), norm_first=norm_first, bias=bias,
                       batch_first=batch_first)
    assert layer.activation_relu_or_gelu == (2 if "gelu" in act.lower() else 1)
    x = src_of(N, S, D, batch_first)
    kpm = tensor(padding("right"))
    fast, regular = fast_and_regular(layer, runs, x, src_key_padding_mask=kpm)
    assert runs[-1]["layers"] == 1 and not runs[-1]["packed"]
    np.testing.assert_allclose(fast, regular, **F32_TOL)  # padded positions included


def layer_masks(case, n, s, heads, seed=5):
    """(src_mask, src_key_padding_mask, is_causal) as NumPy arrays / bool for a layer test."""
    rng = np.random.default_rng(seed)
    mask, kpm, is_causal = None, None, False
    float_causal = np.triu(np.full((s, s), -np.inf), 1)
    if case.startswith("kpm_") and case[4:] in ("right", "left", "random", "one_left",
                                                "full_row"):
        kpm = padding(case[4:], n, s)
    elif case == "kpm_float":
        kpm = rng.standard_normal((n, s))
    elif case == "kpm_float_neginf":
        kpm = np.where(padding("right", n, s), -np.inf, 0.0)
    elif case in ("causal_float", "causal_float_hint"):
        mask, is_causal = float_causal, case.endswith("hint")
    elif case == "causal_bool_hint":
        mask, is_causal = np.triu(np.ones((s, s), bool), 1), True
    elif case == "bool_2d":
        mask = rng.random((s, s)) < 0.4
        np.fill_diagonal(mask, False)
    elif case == "float_2d":
        mask = rng.standard_normal((s, s))
    elif case == "float_3d":
        mask = rng.standard_normal((n * heads, s, s))
    elif case == "bool_3d":
        mask = rng.random((n * heads, s, s)) < 0.4
        mask[:, np.arange(s), np.arange(s)] = False
    elif case == "kpm_and_causal_hint":
        kpm, mask, is_causal = padding("right", n, s), float_causal, True
    elif case == "kpm_and_float_2d":
        kpm, mask = padding("random", n, s), rng.standard_normal((s, s))
    elif case == "kpm_full_row_and_bool_3d":
        kpm = padding("full_row", n, s)
        mask = rng.random((n * heads, s, s)) < 0.3
        mask[:, np.arange(s), np.arange(s)] = False
    else:
        assert case == "none"
    return mask, kpm, is_causal


LAYER_MASK_CASES = [
    "none", "kpm_right", "kpm_left", "kpm_random", "kpm_one_left", "kpm_full_row", "kpm_float",
    "kpm_float_neginf", "causal_float", "causal_float_hint", "causal_bool_hint", "bool_2d",
    "float_2d", "float_3d", "bool_3d", "kpm_and_causal_hint", "kpm_and_float_2d",
    "kpm_full_row_and_bool_3d",
]


@pytest.mark.parametrize("case", LAYER_MASK_CASES)
@pytest.mark.parametrize("d_model,nhead,batch_first", [(8, 2, True), (15, 3, False),
                                                       (15, 5, True)])
def test_layer_masks_match_regular(runs, case, d_model, nhead, batch_first):
    layer = make_layer(d_model, nhead, batch_first=batch_first, norm_first=nhead == 3)
    mask, kpm, is_causal = layer_masks(case, N, S, nhead)
    kwargs = {"is_causal": is_causal}
    if mask is not None:
        kwargs["src_mask"] = tensor(mask)
    if kpm is not None:
        kwargs["src_key_padding_mask"] = tensor(kpm)
    x = src_of(N, S, d_model, batch_first)
    fast, regular = fast_and_regular(layer, runs, x, **kwargs)
    assert not np.isnan(fast).any()
    np.testing.assert_allclose(fast, regular, **F32_TOL)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("case", ["none", "kpm_random", "kpm_full_row", "causal_float_hint",
                                  "float_3d"])
def test_layer_float64_matches_regular(runs, norm_first, case):
    layer = make_layer(15, 5, dtype=ember.float64, norm_first=norm_first, activation="gelu")
    mask, kpm, is_causal = layer_masks(case, N, S, 5)
    kwargs = {"is_causal": is_causal}
    if mask is not None:
        kwargs["src_mask"] = tensor(mask, ember.float64)
    if kpm is not None:
        kwargs["src_key_padding_mask"] = tensor(kpm, ember.float64)
    fast, regular = fast_and_regular(layer, runs, src_of(N, S, 15, False, ember.float64),
                                     **kwargs)
    assert fast.dtype == np.float64
    np.testing.assert_allclose(fast, regular, **F64_TOL)


# ---------------------------------------------------------------- the encoder

ENCODER_CONFIGS = {
    "post_norm_bf": {"batch_first": True},
    "pre_norm_odd_heads": {"d_model": 15, "nhead": 5, "norm_first": True},
    "gelu_no_bias_norm": {"d_model": 15, "nhead": 3, "batch_first": True, "bias": False,
                          "activation": "gelu", "norm": True},
}


def encoder_case(config, dtype=ember.float32, **overrides):
    kw = {**ENCODER_CONFIGS[config], **overrides}
    enc = make_encoder(dtype=dtype, **kw)
    bf = kw.get("batch_first", False)
    d_model = kw.get("d_model", D)
    return enc, bf, d_model


ENCODER_MASKS = ["none", "float_causal", "bool_causal", "float_causal_hint"]


def encoder_mask(kind, s=S, dtype=ember.float32):
    """(mask, is_causal) for a packed encoder run: only causal masks keep packing."""
    if kind == "none":
        return None, None
    if kind == "bool_causal":
        return ember.tensor(np.triu(np.ones((s, s), bool), 1)), None
    return causal(s, dtype), True if kind.endswith("hint") else None


@pytest.mark.parametrize("pattern", ["right", "left", "random", "one_left", "full_row"])
@pytest.mark.parametrize("mask_kind", ENCODER_MASKS)
@pytest.mark.parametrize("config", list(ENCODER_CONFIGS))
def test_encoder_packed_bool_padding(runs, pattern, mask_kind, config):
    """Real tokens packed: zeros (or norm(0)) at padded positions, the regular path's values
    at the real ones."""
    enc, bf, d_model = encoder_case(config)
    kpm = padding(pattern)
    mask, is_causal = encoder_mask(mask_kind)
    x = src_of(N, S, d_model, bf)
    fast, regular = fast_and_regular(enc, runs, x, mask=mask, src_key_padding_mask=tensor(kpm),
                                     is_causal=is_causal)
    assert runs[-1] == {"layers": 2, "attn_mask": False, "key_padding_mask": True,
                        "is_causal": mask_kind != "none", "packed": True}
    fast, regular = batch_major(fast, bf), batch_major(regular, bf)
    assert not np.isnan(fast).any()
    if enc.norm is None:
        padded_value = np.zeros(d_model, np.float32)
    else:
        with ember.no_grad():
            padded_value = enc.norm(ember.zeros(1, d_model)).numpy()[0]
        np.testing.assert_allclose(padded_value, enc.norm.bias.detach().numpy(), atol=1e-6)
    np.testing.assert_array_equal(fast[kpm], np.broadcast_to(padded_value, fast[kpm].shape))
    np.testing.assert_allclose(fast[~kpm], regular[~kpm], **F32_TOL)


DENSE_CASES = {
    # name: (enable_nested_tensor, kpm kind, mask kind, is_causal, expected call fields)
    "no_masks": (True, None, None, None, {"attn_mask": False, "is_causal": False}),
    "nested_off_bool_kpm": (False, "right", None, None, {"key_padding_mask": True}),
    "nested_off_full_row": (False, "full_row", None, None, {"key_padding_mask": True}),
    "nested_off_causal": (False, "random", "causal", None, {"attn_mask": True}),
    "float_kpm": (True, "float", None, None, {"key_padding_mask": True}),
    "float_kpm_neginf": (True, "float_neginf", None, None, {"key_padding_mask": True}),
    "bool_kpm_float_mask": (True, "left", "float_2d", None, {"attn_mask": True}),
    "bool_kpm_bool_mask": (True, "random", "bool_2d", None, {"attn_mask": True}),
    "bool_kpm_3d_mask": (True, "full_row", "float_3d", None, {"attn_mask": True}),
    "causal_no_kpm": (True, None, "causal", None, {"attn_mask": False, "is_causal": True}),
    "causal_hint_no_kpm": (True, None, "causal", True, {"attn_mask": False, "is_causal": True}),
    "lying_hint_no_kpm": (True, None, "float_2d", True, {"is_causal": True}),
    "lying_hint_with_kpm": (True, "right", "float_2d", True, {"attn_mask": True}),
}


@pytest.mark.parametrize("case", list(DENSE_CASES))
@pytest.mark.parametrize("config", ["post_norm_bf", "pre_norm_odd_heads"])
def test_encoder_dense_matches_regular_everywhere(runs, case, config):
    nested, kpm_kind, mask_kind, is_causal, expected = DENSE_CASES[case]
    enc, bf, d_model = encoder_case(config, enable_nested_tensor=nested, norm=True)
    heads = enc.layers[0].self_attn.num_heads
    rng = np.random.default_rng(11)
    kpm = None
    if kpm_kind == "float":
        kpm = tensor(rng.standard_normal((N, S)))
    elif kpm_kind == "float_neginf":
        kpm = tensor(np.where(padding("right"), -np.inf, 0.0))
    elif kpm_kind is not None:
        kpm = tensor(padding(kpm_kind))
    mask = None
    if mask_kind == "causal":
        mask = causal(S)
    elif mask_kind == "float_2d":
        mask = tensor(rng.standard_normal((S, S)))
    elif mask_kind == "bool_2d":
        m = rng.random((S, S)) < 0.4
        np.fill_diagonal(m, False)
        mask = tensor(m)
    elif mask_kind == "float_3d":
        mask = tensor(rng.standard_normal((N * heads, S, S)))
    fast, regular = fast_and_regular(enc, runs, src_of(N, S, d_model, bf), mask=mask,
                                     src_key_padding_mask=kpm, is_causal=is_causal)
    assert not runs[-1]["packed"]
    for key, value in expected.items():
        assert runs[-1][key] == value, key
    assert not np.isnan(fast).any()
    np.testing.assert_allclose(fast, regular, **F32_TOL)


def test_encoder_keeps_dense_batch_for_a_sliver_of_padding(runs):
    """One padded token in 8 x 64: the C++ cost model keeps the dense batch, and the padded
    position still comes out as zeros (then norm(0))."""
    n, s = 8, 64
    for norm in (False, True):
        enc = make_encoder(batch_first=True, norm=norm)
        kpm = np.zeros((n, s), bool)
        kpm[3, 40] = True
        fast, regular = fast_and_regular(enc, runs, src_of(n, s, D, True),
                                         src_key_padding_mask=tensor(kpm))
        assert runs[-1]["packed"]  # asked to pack; C++ decides
        expected = enc.norm.bias.detach().numpy() if norm else np.zeros(D, np.float32)
        np.testing.assert_allclose(fast[3, 40], expected, atol=1e-6)
        np.testing.assert_allclose(fast[~kpm], regular[~kpm], **F32_TOL)


def test_encoder_fully_padded_batch_gives_no_nan(runs):
    enc = make_encoder(batch_first=True, norm=True)
    kpm = np.ones((N, S), bool)
    for nested in (True, False):
        enc.enable_nested_tensor = nested
        fast, regular = fast_and_regular(enc, runs, src_of(N, S, D, True),
                                         src_key_padding_mask=tensor(kpm))
        assert runs[-1]["packed"] == nested
        assert np.isfinite(fast).all()
        if nested:
            np.testing.assert_allclose(
                fast, np.broadcast_to(enc.norm.bias.detach().numpy(), fast.shape), atol=1e-6)
        else:
            np.testing.assert_allclose(fast, regular, **F32_TOL)


@pytest.mark.parametrize("nested", [True, False])
def test_encoder_float64(runs, nested):
    enc = make_encoder(15, 3, dtype=ember.float64, batch_first=True, norm=True,
                       enable_nested_tensor=nested, activation="gelu")
    kpm = padding("random")
    fast, regular = fast_and_regular(enc, runs, src_of(N, S, 15, True, ember.float64),
                                     src_key_padding_mask=tensor(kpm))
    assert fast.dtype == np.float64
    np.testing.assert_allclose(fast[~kpm], regular[~kpm], **F64_TOL)
    if not nested:
        np.testing.assert_allclose(fast, regular, **F64_TOL)


def test_encoder_single_layer_equals_its_layer_fastpath(runs):
    """An encoder of one layer without padding: the same call as the layer's own."""
    enc = make_encoder(num_layers=1, batch_first=True)
    x = src_of(N, S, D, True)
    with ember.no_grad():
        np.testing.assert_allclose(enc(x).numpy(), enc.layers[0](x).numpy(), **F32_TOL)
    assert len(runs) == 2


# ---------------------------------------------------------------- why_not_fastpath

class MyLinear(nn.Linear):
    pass


class MyAttention(nn.MultiheadAttention):
    pass


class MyLayer(nn.TransformerEncoderLayer):
    pass


@contextlib.contextmanager
def global_hook(register):
    fired = []
    handle = register(lambda *a: fired.append(1))
    try:
        yield fired
    finally:
        handle.remove()


def _layer_reason_case(name):
    """(layer, src, kwargs, context, expected reason substring, forward runs regularly)."""
    layer = make_layer(batch_first=True)
    x = src_of(N, S, D, True)
    kwargs, ctx, forward_ok = {}, contextlib.nullcontext(), True
    if name == "disabled":
        ctx, reason = fastpath_off(), "ember.backends.mha.get_fastpath_enabled() was not True"
    elif name == "unbatched":
        x, reason = tensor(rand(S, D)), "input not batched; expected src.dim() of 3 but got 2"
    elif name == "training":
        layer.train()
        layer.dropout.p = layer.dropout1.p = layer.dropout2.p = layer.self_attn.dropout = 0.0
        reason = "training is enabled"
    elif name == "grad_enabled":
        ctx, reason = ember.enable_grad(), "grad is enabled and at least one of query"
    elif name == "src_requires_grad":
        for p in layer.parameters():
            p.requires_grad_(False)
        x.requires_grad_()
        ctx, reason = ember.enable_grad(), "grad is enabled"
    elif name == "autocast":
        ctx, reason = ember.autocast("cpu"), "autocast is enabled"
    elif name == "bfloat16":
        layer = layer.to(ember.bfloat16)
        x, reason = x.to(ember.bfloat16), "src has dtype ember.bfloat16, not float32 or float64"
    elif name == "param_dtype":
        layer = layer.to(ember.float64)
        reason, forward_ok = "a parameter is ember.float64", False
    elif name == "gelu_tanh":
        layer.activation = nn.GELU(approximate="tanh")
        reason = "activation is GELU(approximate='tanh'), not relu or gelu"
    elif name == "lambda_activation":
        layer = make_layer(batch_first=True, activation=lambda t: F.relu(t) * 0.5)
        reason = "(activation_relu_or_gelu was not True)"
    elif name == "linear_subclass":
        lin = MyLinear(D, FF)
        lin.load_state_dict(layer.linear1.state_dict())
        layer.linear1 = lin.eval()
        reason = "linear1 is a MyLinear, not nn.Linear"
    elif name == "norm_identity":
        layer.norm2, reason = nn.Identity(), "norm2 is a Identity, not nn.LayerNorm"
    elif name == "attention_subclass":
        attn = MyAttention(D, NH, batch_first=True)
        attn.load_state_dict(layer.self_attn.state_dict())
        layer.self_attn = attn.eval()
        reason = "self_attn is a MyAttention, not nn.MultiheadAttention"
    elif name == "kdim":
        layer.self_attn = nn.MultiheadAttention(D, NH, kdim=4, batch_first=True).eval()
        reason, forward_ok = "self_attn._qkv_same_embed_dim was not True", False
    elif name == "bias_kv":
        layer.self_attn = nn.MultiheadAttention(D, NH, add_bias_kv=True, batch_first=True)
        layer.self_attn.eval()
        reason = "self_attn has add_bias_kv or add_zero_attn"
    elif name == "hook_self_attn":
        layer.self_attn.register_forward_hook(lambda *a: None)
        reason = "forward hooks or pre-hooks are attached to self_attn"
    elif name == "pre_hook_linear2":
        layer.linear2.register_forward_pre_hook(lambda *a: None)
        reason = "forward hooks or pre-hooks are attached to linear2"
    elif name == "global_hook":
        ctx = global_hook(register_module_forward_hook)
        reason = "global forward hooks (register_module_forward_hook)"
    elif name == "global_pre_hook":
        ctx = global_hook(register_module_forward_pre_hook)
        reason = "global forward hooks (register_module_forward_hook)"
    elif name == "wrong_d_model":
        x, reason, forward_ok = tensor(rand(N, S, 7)), "src.size(-1) is 7, not d_model 8", False
    elif name == "kpm_shape":
        kwargs["src_key_padding_mask"] = tensor(np.zeros((N, S - 1), bool))
        reason, forward_ok = "src_key_padding_mask has shape (3, 4), not (N, S) = (3, 5)", False
    elif name == "mask_shape":
        kwargs["src_mask"] = tensor(np.zeros((S - 1, S - 1)))
        reason = "src_mask has shape (4, 4), not (5, 5) or (N * nhead, S, S)"
        forward_ok = False
    elif name == "mask_3d_shape":
        kwargs["src_mask"] = tensor(np.zeros((N * NH + 1, S, S)))
        reason, forward_ok = "src_mask has shape (7, 5, 5)", False
    else:
        assert name == "causal_without_mask"
        kwargs["is_causal"], reason, forward_ok = True, "but src_mask is None", False
    return layer, x, kwargs, ctx, reason, forward_ok


LAYER_REASONS = [
    "disabled", "unbatched", "training", "grad_enabled", "src_requires_grad", "autocast",
    "bfloat16", "param_dtype", "gelu_tanh", "lambda_activation", "linear_subclass",
    "norm_identity", "attention_subclass", "kdim", "bias_kv", "hook_self_attn",
    "pre_hook_linear2", "global_hook", "global_pre_hook", "wrong_d_model", "kpm_shape",
    "mask_shape", "mask_3d_shape", "causal_without_mask",
]


@pytest.mark.parametrize("name", LAYER_REASONS)
def test_layer_why_not_fastpath(runs, name):
    layer, x, kwargs, ctx, reason, forward_ok = _layer_reason_case(name)
    with ember.no_grad(), ctx:
        got = nn.why_not_fastpath(layer, x, **kwargs)
        assert reason in got, got
        if forward_ok:
            out = layer(x, **kwargs)
            assert tuple(out.shape) == tuple(x.shape)
        else:
            with pytest.raises((RuntimeError, AssertionError)):
                layer(x, **kwargs)
    assert runs == []


def _encoder_reason_case(name):
    """(encoder, src, kwargs, expected reason substring, forward runs regularly)."""
    enc = make_encoder(batch_first=True)
    x = src_of(N, S, D, True)
    kwargs, forward_ok = {}, True
    if name == "no_layers":
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NH, FF), 0).eval()
        reason, forward_ok = "the encoder has no layers", False
    elif name == "training":
        enc.train()
        for m in enc.modules():
            if isinstance(m, nn.Dropout):
                m.p = 0.0
            elif isinstance(m, nn.MultiheadAttention):
                m.dropout = 0.0
        reason = "training is enabled"
    elif name == "layer_activation":
        enc.layers[1].activation = nn.GELU(approximate="tanh")
        reason = "layers.1.activation is GELU(approximate='tanh'), not relu or gelu"
    elif name == "layer_subclass":
        layer = MyLayer(D, NH, FF, batch_first=True).eval()
        layer.load_state_dict(enc.layers[1].state_dict())
        enc.layers[1] = layer
        reason = "layers.1 is a MyLayer, not nn.TransformerEncoderLayer"
    elif name == "layer_norm_identity":
        enc.layers[0].norm1 = nn.Identity()
        reason = "layers.0.norm1 is a Identity, not nn.LayerNorm"
    elif name == "batch_first_differs":
        enc.layers[1] = make_layer(batch_first=False)
        reason, forward_ok = "layers.1 has another batch_first than layers.0", False
    elif name == "d_model_differs":
        enc.layers[1] = make_layer(d_model=6, batch_first=True)
        reason, forward_ok = "layers.1 has another d_model than layers.0", False
    elif name == "heads_differ_3d_mask":
        enc.layers[1] = make_layer(nhead=4, batch_first=True)
        kwargs["mask"] = tensor(np.zeros((N * NH, S, S)))
        reason, forward_ok = "a 3-D mask with layers of different head counts", False
    elif name == "hook_nested":
        enc.layers[0].linear1.register_forward_hook(lambda *a: None)
        reason = "forward hooks or pre-hooks are attached to layers.0.linear1"
    elif name == "hook_layer":
        enc.layers[1].register_forward_pre_hook(lambda *a: None)
        reason = "forward hooks or pre-hooks are attached to layers.1"
    elif name == "wrong_d_model":
        x, reason, forward_ok = tensor(rand(N, S, 7)), "src.size(-1) is 7, not d_model 8", False
    elif name == "kpm_shape":
        kwargs["src_key_padding_mask"] = tensor(np.zeros((N + 1, S), bool))
        reason, forward_ok = "src_key_padding_mask has shape (4, 5), not (N, S) = (3, 5)", False
    elif name == "causal_without_mask":
        kwargs["is_causal"], reason, forward_ok = True, "but mask is None", False
    else:
        assert name == "mask_shape"
        kwargs["mask"] = tensor(np.zeros((S, S + 1)))
        reason, forward_ok = "mask has shape (5, 6), not (5, 5) or (N * nhead, S, S)", False
    return enc, x, kwargs, reason, forward_ok


ENCODER_REASONS = [
    "no_layers", "training", "layer_activation", "layer_subclass", "layer_norm_identity",
    "batch_first_differs", "d_model_differs", "heads_differ_3d_mask", "hook_nested",
    "hook_layer", "wrong_d_model", "kpm_shape", "mask_shape", "causal_without_mask",
]


@pytest.mark.parametrize("name", ENCODER_REASONS)
def test_encoder_why_not_fastpath(runs, name):
    enc, x, kwargs, reason, forward_ok = _encoder_reason_case(name)
    with ember.no_grad():
        got = nn.why_not_fastpath(enc, x, **kwargs)
        assert reason in got, got
        if forward_ok:
            with fastpath_off():
                expected = enc(x, **kwargs).numpy()
            out = enc(x, **kwargs).numpy()
            np.testing.assert_allclose(out, expected, **F32_TOL)
    assert all(call["layers"] == 1 for call in runs)  # layers may take their own fastpath


def test_encoder_why_not_fastpath_common_conditions():
    enc = make_encoder()
    x = src_of(N, S, D, False)
    assert nn.why_not_fastpath(enc, x).startswith("grad is enabled")
    with ember.no_grad():
        assert nn.why_not_fastpath(enc, x) == ""
        assert nn.why_not_fastpath(enc, x[:, 0]).startswith("input not batched")
        assert "not float32 or float64" in nn.why_not_fastpath(enc.to(ember.bfloat16),
                                                               x.to(ember.bfloat16))
        with ember.autocast("cpu"):
            assert nn.why_not_fastpath(enc, x) == "autocast is enabled"
        with fastpath_off():
            assert "get_fastpath_enabled" in nn.why_not_fastpath(enc, x)


@pytest.mark.parametrize("module", [nn.MultiheadAttention(D, NH), nn.Linear(D, D),
                                    nn.TransformerDecoderLayer(D, NH, FF)])
def test_why_not_fastpath_rejects_other_modules(module):
    with pytest.raises(TypeError, match="why_not_fastpath\\(\\) takes an "
                                        "nn.TransformerEncoderLayer or nn.TransformerEncoder"):
        nn.why_not_fastpath(module, src_of(N, S, D, False))


def test_why_not_fastpath_follows_the_switch():
    layer = make_layer()
    x = src_of(N, S, D, False)
    with ember.no_grad():
        assert nn.why_not_fastpath(layer, x) == ""
        with fastpath_off():
            assert not ember.backends.mha.get_fastpath_enabled()
            assert nn.why_not_fastpath(layer, x) != ""
        assert ember.backends.mha.get_fastpath_enabled()
        assert nn.why_not_fastpath(layer, x) == ""


# ---------------------------------------------------------------- hooks

def _recorder(log, name):
    def hook(module, args, output=None):
        log.append(name)
    return hook


def test_layer_submodule_hooks_force_regular_path_and_fire(runs):
    layer = make_layer(batch_first=True)
    x = src_of(N, S, D, True)
    with ember.no_grad(), fastpath_off():
        expected = layer(x).numpy()
    log = []
    handles = [layer.self_attn.register_forward_hook(_recorder(log, "self_attn")),
               layer.linear1.register_forward_pre_hook(_recorder(log, "linear1"))]
    with ember.no_grad():
        out = layer(x).numpy()
    assert runs == []
    assert log == ["self_attn", "linear1"]
    np.testing.assert_allclose(out, expected, **F32_TOL)
    for h in handles:
        h.remove()
    with ember.no_grad():
        layer(x)
    assert len(runs) == 1 and len(log) == 2


def test_own_hooks_fire_with_fastpath(runs):
    layer = make_layer(batch_first=True)
    enc = make_encoder(batch_first=True)
    x = src_of(N, S, D, True)
    for module in (layer, enc):
        seen = []
        module.register_forward_pre_hook(lambda m, args: seen.append(("pre", len(args))))
        module.register_forward_hook(lambda m, args, out: seen.append(("post", out)))
        with ember.no_grad():
            assert nn.why_not_fastpath(module, x) == ""
            out = module(x)
        assert [s[0] for s in seen] == ["pre", "post"]
        assert seen[1][1] is out
    assert [call["layers"] for call in runs] == [1, 2]


def test_encoder_nested_hook_runs_layers_separately(runs):
    """A hook on layers.1.linear2 puts the encoder on its regular path: layer 0 then takes the
    layer fastpath, layer 1 the regular one, and the hook fires once."""
    enc = make_encoder(batch_first=True, norm=True)
    x = src_of(N, S, D, True)
    with ember.no_grad(), fastpath_off():
        expected = enc(x).numpy()
    log = []
    enc.layers[1].linear2.register_forward_hook(_recorder(log, "linear2"))
    with ember.no_grad():
        out = enc(x).numpy()
    assert log == ["linear2"]
    assert runs == [{"layers": 1, "attn_mask": False, "key_padding_mask": False,
                     "is_causal": False, "packed": False}]
    np.testing.assert_allclose(out, expected, **F32_TOL)


def test_global_hooks_force_regular_path_everywhere(runs):
    enc = make_encoder(batch_first=True)
    x = src_of(N, S, D, True)
    with ember.no_grad(), fastpath_off():
        expected = enc(x).numpy()
    with global_hook(register_module_forward_hook) as fired, ember.no_grad():
        out = enc(x).numpy()
    assert runs == []
    # the encoder, 2 layers, and in each: self_attn, linear1, linear2, 2 norms, 3 dropouts
    assert len(fired) >= 1 + 2 * 8
    np.testing.assert_allclose(out, expected, **F32_TOL)
    with ember.no_grad():
        enc(x)
    assert len(runs) == 1


# ---------------------------------------------------------------- autograd

def test_grad_mode_decides_path(runs):
    layer = make_layer(batch_first=True)
    enc = make_encoder(batch_first=True)
    x = src_of(N, S, D, True)
    for module in (layer, enc):
        out = module(x)  # grad enabled, parameters require grad: regular path
        assert out.requires_grad and out.grad_fn is not None
        assert runs == []
        with ember.no_grad():
            assert not module(x).requires_grad
        assert len(runs) == 1
        runs.clear()


def test_frozen_parameters_take_fastpath_with_grad_enabled(runs):
    layer = make_layer(batch_first=True)
    enc = make_encoder(batch_first=True)
    kpm = tensor(padding("right"))
    for module in (layer, enc):
        for p in module.parameters():
            p.requires_grad_(False)
        x = src_of(N, S, D, True)
        assert ember.is_grad_enabled()
        assert nn.why_not_fastpath(module, x, src_key_padding_mask=kpm) == ""
        out = module(x, src_key_padding_mask=kpm)
        assert len(runs) == 1 and not out.requires_grad
        x.requires_grad_()
        assert nn.why_not_fastpath(module, x).startswith("grad is enabled")
        out = module(x, src_key_padding_mask=kpm)
        assert len(runs) == 1 and out.requires_grad
        out.sum().backward()
        assert x.grad is not None and tuple(x.grad.shape) == (N, S, D)
        runs.clear()


# ---------------------------------------------------------------- errors

def layer_fields(layer):
    return list(_fastpath.layer_tuple(layer))


def _bad_call(case):
    """Arguments of ember._C._nn._transformer_encoder_fastpath with one thing wrong."""
    layer = make_layer(batch_first=True)
    x = src_of(N, S, D, True)
    fields = layer_fields(layer)
    kpm, mask, pack = None, None, None
    expected = "does not fit d_model 8"
    if case == "in_proj_weight":
        fields[0] = ember.zeros(3 * D, D + 1)
    elif case == "in_proj_bias":
        fields[1] = ember.zeros(2 * D)
    elif case == "out_proj_weight":
        fields[2] = ember.zeros(D, D - 1)
    elif case == "norm1_weight":
        fields[4] = ember.zeros(D + 1)
    elif case == "norm2_bias_2d":
        fields[7] = ember.zeros(1, D)
    elif case == "linear1_bias":
        fields[9] = ember.zeros(FF + 1)
    elif case == "linear2_weight":
        fields[10] = ember.zeros(D, FF + 1)
    elif case == "linear1_weight_1d":
        fields[8], expected = ember.zeros(FF), "linear1.weight must be 2-D"
    elif case == "param_dtype":
        fields[3], expected = ember.zeros(D, dtype=ember.float64), "out_proj.bias is"
    elif case == "missing_weight":
        fields[0], expected = None, "the projection weights are required"
    elif case == "heads":
        fields[12], expected = 3, "not divisible by num_heads 3"
    elif case == "zero_heads":
        fields[12], expected = 0, "not divisible by num_heads 0"
    elif case == "activation":
        fields[14], expected = 0, "activation must be 1 \\(relu\\) or 2 \\(gelu\\), got 0"
    elif case == "short_tuple":
        fields, expected = fields[:16], "a layer is a tuple of 17 fields, got 16"
    elif case == "src_2d":
        x, expected = x[0], "expected src of shape \\(N, S, E\\)"
    elif case == "pack_shape":
        pack = ember.zeros(N, S + 1, dtype=ember.bool)
        kpm = ember.zeros(N, S)
        expected = "the padding mask must be bool of shape \\(3, 5\\)"
    elif case == "pack_dtype":
        pack, kpm = ember.zeros(N, S), ember.zeros(N, S)
        expected = "the padding mask must be bool"
    else:
        assert case == "pack_with_attn_mask"
        pack = tensor(padding("right"))
        mask = ember.zeros(S, S)
        expected = "a packed batch takes no attn_mask"
    return (x, [tuple(fields)], kpm, mask, False, pack), expected


BAD_CALLS = [
    "in_proj_weight", "in_proj_bias", "out_proj_weight", "norm1_weight", "norm2_bias_2d",
    "linear1_bias", "linear2_weight", "linear1_weight_1d", "param_dtype", "missing_weight",
    "heads", "zero_heads", "activation", "short_tuple", "src_2d", "pack_shape", "pack_dtype",
    "pack_with_attn_mask",
]


@pytest.mark.parametrize("case", BAD_CALLS)
def test_fused_call_rejects_bad_layers(case):
    args, expected = _bad_call(case)
    with pytest.raises(RuntimeError, match=expected):
        ember._C._nn._transformer_encoder_fastpath(*args)


def test_fused_call_accepts_the_layer_tuple():
    layer = make_layer(batch_first=True)
    x = src_of(N, S, D, True)
    out = ember._C._nn._transformer_encoder_fastpath(x, [_fastpath.layer_tuple(layer)], None,
                                                     None, False, None)
    with ember.no_grad(), fastpath_off():
        expected = layer(x).numpy()
    np.testing.assert_allclose(out.numpy(), expected, **F32_TOL)
    assert len(_fastpath.layer_tuple(layer)) == 17


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("kind", ["layer", "encoder"])
def test_wrong_d_model_raises(grad, kind):
    module = make_layer() if kind == "layer" else make_encoder()
    with ember.set_grad_enabled(grad):
        with pytest.raises((RuntimeError, AssertionError), match="8.*7|7.*8"):
            module(tensor(rand(S, N, 7)))


@pytest.mark.parametrize("grad", [True, False])
def test_bad_padding_mask_shape_raises(grad):
    layer = make_layer()
    with ember.set_grad_enabled(grad):
        with pytest.raises((RuntimeError, AssertionError), match="key_padding_mask"):
            layer(src_of(N, S, D, False), src_key_padding_mask=tensor(np.zeros((N, S + 2), bool)))


@pytest.mark.parametrize("grad", [True, False])
def test_causal_hint_without_mask_raises(grad):
    """PyTorch raises here in training and ignores the hint in inference; Ember raises on both
    paths (a silently non-causal result would be unsafe) and says what to pass instead."""
    for module in (make_layer(), make_encoder()):
        with ember.set_grad_enabled(grad):
            with pytest.raises(RuntimeError,
                               match="Need attn_mask if specifying the is_causal|is_causal=True"):
                module(src_of(N, S, D, False), is_causal=True)


def test_replaced_norm_still_runs_regular_path():
    """A LayerNorm swapped for another module (no .weight) is a reason for the regular path,
    in training as in eval; the regular path composes whatever modules are there."""
    layer = make_layer(batch_first=True, dropout=0.0)
    layer.norm2 = nn.Identity()
    enc = make_encoder(batch_first=True, dropout=0.0)
    enc.layers[1].norm1 = nn.Identity()
    x = src_of(N, S, D, True)
    with ember.no_grad():
        expected = {id(layer): layer._regular_forward(x, None, None).numpy()}
        y = x
        for lyr in enc.layers:
            y = lyr._regular_forward(y, None, None)
        expected[id(enc)] = y.numpy()
        for module in (layer, enc):
            assert "is a Identity, not nn.LayerNorm" in nn.why_not_fastpath(module, x)
            for training in (True, False):
                module.train(training)
                np.testing.assert_allclose(module(x).numpy(), expected[id(module)], **F32_TOL)


# ---------------------------------------------------------------- parity with PyTorch

PARITY = {"rtol": 1e-5, "atol": 1e-5}


def torch_state_to_ember(module, tmodule):
    module.load_state_dict({k: ember.tensor(v.detach().cpu().numpy())
                            for k, v in tmodule.state_dict().items()})  # strict: same keys
    return module.eval()


def _perturb_(torch, tmodule):
    """PyTorch zeroes the attention biases at init; random ones catch bias mistakes."""
    torch.manual_seed(0)
    with torch.no_grad():
        for prm in tmodule.parameters():
            prm.add_(torch.randn_like(prm) * 0.1)
    return tmodule.eval()


def f32(*shape, seed=0):
    return rand(*shape, seed=seed).astype(np.float32)


LAYER_PARITY_CONFIGS = {
    "default_bf": {"batch_first": True},
    "seq_first": {},
    "pre_norm_gelu_bf": {"batch_first": True, "norm_first": True, "activation": "gelu"},
    "no_bias_bf": {"batch_first": True, "bias": False},
    "odd_heads_bf": {"d_model": 15, "nhead": 5, "batch_first": True},
}


@pytest.mark.parametrize("masks", ["none", "right_kpm", "causal"])
@pytest.mark.parametrize("config", list(LAYER_PARITY_CONFIGS))
def test_layer_fastpath_parity_with_torch(runs, config, masks):
    torch = pytest.importorskip("torch")
    kw = dict(LAYER_PARITY_CONFIGS[config])
    d_model, nhead = kw.pop("d_model", D), kw.pop("nhead", NH)
    tl = _perturb_(torch, torch.nn.TransformerEncoderLayer(d_model, nhead, FF, **kw))
    el = torch_state_to_ember(nn.TransformerEncoderLayer(d_model, nhead, FF, **kw), tl)
    bf = kw.get("batch_first", False)
    x = f32(*((N, S, d_model) if bf else (S, N, d_model)))
    t_kw, e_kw = {}, {}
    if masks == "right_kpm":
        kpm = padding("right")
        t_kw["src_key_padding_mask"], e_kw["src_key_padding_mask"] = (torch.tensor(kpm),
                                                                      ember.tensor(kpm))
    elif masks == "causal":
        m = causal(S).numpy()
        t_kw["src_mask"], e_kw["src_mask"] = torch.tensor(m), ember.tensor(m)
        t_kw["is_causal"] = e_kw["is_causal"] = True
    assert torch.backends.mha.get_fastpath_enabled()
    with torch.no_grad():
        t_out = tl(torch.tensor(x), **t_kw).numpy()
    with ember.no_grad():
        e_out = el(ember.tensor(x), **e_kw).numpy()
    assert len(runs) == 1
    np.testing.assert_allclose(e_out, t_out, **PARITY)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_nested_parity_with_torch(runs, norm, activation):
    """PyTorch's encoder (batch_first, post-norm, even heads) runs a right-padded bool mask as
    nested tensors under no_grad: zeros at padded positions, as Ember's packed batch."""
    torch = pytest.importorskip("torch")
    tlayer = torch.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True,
                                              activation=activation)
    te = _perturb_(torch, torch.nn.TransformerEncoder(
        tlayer, 2, norm=torch.nn.LayerNorm(D) if norm else None))
    ee = torch_state_to_ember(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(D, NH, FF, batch_first=True, activation=activation), 2,
        norm=nn.LayerNorm(D) if norm else None), te)
    assert te.use_nested_tensor and ee.use_nested_tensor
    x = f32(N, S, D)
    kpm = padding("right")
    kpm[0, S - 2:] = True  # every row padded, so PyTorch really nests
    with torch.no_grad():
        t_out = te(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)).numpy()
    with ember.no_grad():
        e_out = ee(ember.tensor(x), src_key_padding_mask=ember.tensor(kpm)).numpy()
    assert runs[-1]["packed"]
    if not norm:
        assert (t_out[kpm] == 0).all()  # the premise: PyTorch took the nested path
    np.testing.assert_allclose(e_out, t_out, **PARITY)  # padded positions included


@pytest.mark.parametrize("case", ["no_padding", "causal", "nested_off"])
def test_encoder_dense_parity_with_torch(runs, case):
    torch = pytest.importorskip("torch")
    te = _perturb_(torch, torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True), 2,
        norm=torch.nn.LayerNorm(D), enable_nested_tensor=case != "nested_off"))
    ee = torch_state_to_ember(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(D, NH, FF, batch_first=True), 2, norm=nn.LayerNorm(D),
        enable_nested_tensor=case != "nested_off"), te)
    x = f32(N, S, D)
    kw = {}
    if case == "causal":
        kw["mask"] = causal(S).numpy()
    elif case == "nested_off":
        kw["src_key_padding_mask"] = padding("right")
    with torch.no_grad():
        t_out = te(torch.tensor(x), **{k: torch.tensor(v) for k, v in kw.items()}).numpy()
    with ember.no_grad():
        e_out = ee(ember.tensor(x), **{k: ember.tensor(v) for k, v in kw.items()}).numpy()
    assert len(runs) == 1 and not runs[0]["packed"]
    np.testing.assert_allclose(e_out, t_out, **PARITY)


@pytest.mark.parametrize("config", ["pre_norm", "seq_first", "left_padding", "float_kpm"])
def test_encoder_padding_parity_with_torch_at_real_positions(runs, config):
    """The padded positions' values differ by design where one library packs and the other
    does not: PyTorch does not nest for norm_first, batch_first=False or a padding mask that is
    not right-aligned (it computes values there, Ember's packed batch gives zeros), and it does
    nest a float padding mask (its nonzero entries as padding) that Ember runs dense. The real
    positions agree."""
    torch = pytest.importorskip("torch")
    kw = {"norm_first": True, "batch_first": True} if config == "pre_norm" else (
        {} if config == "seq_first" else {"batch_first": True})
    te = _perturb_(torch, torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(D, NH, FF, **kw), 2, norm=torch.nn.LayerNorm(D)))
    ee = torch_state_to_ember(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(D, NH, FF, **kw), 2, norm=nn.LayerNorm(D)), te)
    bf = kw.get("batch_first", False)
    x = f32(*((N, S, D) if bf else (S, N, D)))
    kpm = padding("left" if config == "left_padding" else "right")
    mask = np.where(kpm, -np.inf, 0.0).astype(np.float32) if config == "float_kpm" else kpm
    with torch.no_grad():
        t_out = te(torch.tensor(x), src_key_padding_mask=torch.tensor(mask)).numpy()
    with ember.no_grad():
        e_out = ee(ember.tensor(x), src_key_padding_mask=ember.tensor(mask)).numpy()
    assert runs[-1]["packed"] == (config != "float_kpm")
    e_out, t_out = batch_major(e_out, bf), batch_major(t_out, bf)
    np.testing.assert_allclose(e_out[~kpm], t_out[~kpm], **PARITY)


def _error_class(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    raise AssertionError("no exception raised")


@pytest.mark.parametrize("error,grad", [
    ("wrong_d_model", True), ("wrong_d_model", False), ("kpm_shape", True), ("kpm_shape", False),
    # under no_grad PyTorch's fused kernel ignores the hint instead of raising
    ("causal_without_mask", True),
])
@pytest.mark.parametrize("kind", ["layer", "encoder"])
def test_error_classes_match_torch(grad, error, kind):
    torch = pytest.importorskip("torch")

    def build(lib, t):
        layer = lib.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True)
        return (layer if kind == "layer" else lib.nn.TransformerEncoder(layer, 2)).eval()

    def call(lib, module, t):
        x = t(f32(N, S, 7 if error == "wrong_d_model" else D))
        if error == "kpm_shape":
            return module(x, src_key_padding_mask=t(np.zeros((N, S - 1), bool)))
        if error == "causal_without_mask":
            return module(x, is_causal=True)
        return module(x)

    tm, em = build(torch, torch.tensor), build(ember, ember.tensor)
    with torch.set_grad_enabled(grad):
        t_cls = _error_class(lambda: call(torch, tm, torch.tensor))
    with ember.set_grad_enabled(grad):
        e_cls = _error_class(lambda: call(ember, em, ember.tensor))
    assert e_cls is t_cls, (e_cls, t_cls)


def test_mask_of_another_float_dtype_takes_the_regular_path_and_its_error():
    """A float64 mask for float32 src: the regular path's attention rejects it (as PyTorch's
    does), so the fastpath steps aside instead of accepting it."""
    layer = make_layer(batch_first=True).eval()
    x = src_of(N, S, D, True)
    mask = tensor(np.zeros((S, S)), dtype=ember.float64)
    with ember.no_grad():
        assert "src_mask is ember.float64 but src is ember.float32" in nn.why_not_fastpath(
            layer, x, src_mask=mask)
        with pytest.raises(RuntimeError, match="attn_mask dtype"):
            layer(x, src_mask=mask)


def test_direct_call_converts_mask_dtype_and_checks_mask_shapes():
    layer = make_layer(batch_first=True).eval()
    x = src_of(N, S, D, True)
    bias = rand(S, S, seed=11).astype(np.float64)
    fields = [_fastpath.layer_tuple(layer)]
    fast = ember._C._nn._transformer_encoder_fastpath
    with ember.no_grad():
        got = fast(x, fields, None, tensor(bias, dtype=ember.float64))
        expected = layer(x, src_mask=tensor(bias))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-5)
    with pytest.raises(RuntimeError, match=r"key_padding_mask of shape \(5, 3\)"):
        fast(x, fields, tensor(np.zeros((S, N))))
    with pytest.raises(RuntimeError, match=r"attn_mask of shape \(5, 6\)"):
        fast(x, fields, None, tensor(np.zeros((S, S + 1))))
    with pytest.raises(RuntimeError, match="must be a float"):
        fast(x, fields, ember.zeros(N, S, dtype=ember.bool))
