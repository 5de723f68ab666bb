"""Weight-only quantized embeddings: quint4x2 and per_channel_affine_float_qparams tensors
(quantize, dequantize, int_repr packing, pickling, files), the float-qparams observers and
qconfigs, nn.quantized.Embedding / EmbeddingBag against the float lookup of the dequantized
table (sum, mean, max, per_sample_weights, include_last_offset, padding_idx, 2-D input), the
dynamic and static workflows, and PyTorch's quantized embeddings where PyTorch is installed."""

import copy
import io

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.ao import quantization as tq

nnq = ember.ao.nn.quantized


def _row_quantized(w, dtype):
    obs = (tq.default_float_qparams_observer if dtype == ember.quint8
           else tq.default_float_qparams_observer_4bit)()
    obs(w)
    scale, zp = obs.calculate_qparams()
    return ember.quantize_per_channel(w, scale, zp, 0, dtype), scale, zp


@pytest.mark.parametrize("dtype", [ember.quint8, ember.quint4x2])
def test_float_qparams_tensors(dtype):
    rng = np.random.default_rng(0)
    w_np = rng.standard_normal((7, 9)).astype(np.float32)
    w = ember.from_numpy(w_np)
    q, scale, zp = _row_quantized(w, dtype)
    levels = 255 if dtype == ember.quint8 else 15
    assert q.dtype == dtype and q.qscheme() == ember.per_channel_affine_float_qparams
    assert q.shape == (7, 9) and q.q_per_channel_axis() == 0
    assert q.q_per_channel_zero_points().dtype == ember.float32
    # Each row's minimum lands on 0 and its maximum on the top level: error <= half a step.
    lo, hi = w_np.min(1, keepdims=True), w_np.max(1, keepdims=True)
    step = (hi - lo) / levels
    np.testing.assert_allclose(scale.numpy(), step[:, 0], rtol=1e-6)
    np.testing.assert_allclose(zp.numpy(), -lo[:, 0] / step[:, 0], rtol=1e-5)
    err = np.abs(q.dequantize().numpy() - w_np)
    assert (err <= step / 2 + 1e-6).all()
    values = np.rint(w_np / step + (-lo / step)).clip(0, levels)
    ints = q.int_repr().numpy()
    if dtype == ember.quint4x2:  # packed: two a byte, the even element low
        flat = values.reshape(-1).astype(np.uint8)
        assert ints.shape == ((flat.size + 1) // 2,)
        np.testing.assert_array_equal(ints & 0xF, flat[0::2])
        np.testing.assert_array_equal(ints[: flat.size // 2] >> 4, flat[1::2])
    else:
        np.testing.assert_array_equal(ints, values)
    for back in (copy.deepcopy(q), _save_load(q)):
        assert back.dtype == dtype and back.qscheme() == q.qscheme()
        np.testing.assert_array_equal(back.dequantize().numpy(), q.dequantize().numpy())


def _save_load(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf)


def test_float_qparams_bad_input_raises():
    w = ember.randn(3, 4)
    with pytest.raises(TypeError, match="quint8 or quint4x2"):
        ember.quantize_per_channel(w, ember.ones(3), ember.zeros(3), 0, ember.qint8)
    with pytest.raises(ValueError, match="scale"):
        ember.quantize_per_channel(w, ember.zeros(3), ember.zeros(3), 0, ember.quint8)
    with pytest.raises(ValueError, match="3 scales"):
        ember.quantize_per_channel(w, ember.ones(3), ember.zeros(3), 1, ember.quint4x2)
    q8 = ember.quantize_per_channel(w, ember.ones(3).double(), ember.zeros(3).long(), 0,
                                    ember.quint8)
    with pytest.raises(RuntimeError, match="float_qparams"):
        ember._C._quantized.embedding_bag_prepack(q8)
    with pytest.raises(ValueError, match="packed bytes"):
        ember._C._quantized._make_quantized(ember.zeros(5, dtype=ember.uint8), ember.quint4x2,
                                            "per_channel_affine_float_qparams", [1.0] * 3,
                                            [0.0] * 3, 0, [3, 4])


def _reference_bag(table, idx, offsets, mode, psw=None, padding_idx=None, include_last=False):
    ends = list(offsets[1:]) + ([] if include_last else [len(idx)])
    starts = list(offsets[:-1] if include_last else offsets)
    out = []
    for s, e in zip(starts, ends):
        rows = [(table[i] * (psw[k] if psw is not None else 1.0))
                for k, i in enumerate(idx[s:e], start=s) if i != padding_idx]
        if not rows:
            out.append(np.zeros(table.shape[1], np.float32))
        elif mode == "sum":
            out.append(np.sum(rows, 0))
        elif mode == "mean":
            out.append(np.mean(rows, 0))
        else:
            out.append(np.max(rows, 0))
    return np.stack(out)


@pytest.mark.parametrize("dtype", [ember.quint8, ember.quint4x2])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_equals_float_lookup_of_the_dequantized_table(dtype, mode):
    rng = np.random.default_rng(1)
    w = ember.from_numpy(rng.standard_normal((20, 11)).astype(np.float32))
    q, _, _ = _row_quantized(w, dtype)
    bag = nnq.EmbeddingBag(20, 11, mode=mode, dtype=dtype)
    bag.set_weight(q)
    table = bag.weight().dequantize().numpy()
    if dtype == ember.quint4x2:  # the packed rows keep scale and bias in float16, as PyTorch
        tol = 2e-3 * np.abs(table).max()
    else:
        tol = 1e-5
    idx = [3, 7, 7, 0, 19, 5, 2, 2, 8]
    offsets = [0, 3, 3, 6]  # an empty bag
    got = bag(ember.tensor(idx), ember.tensor(offsets)).numpy()
    np.testing.assert_allclose(got, _reference_bag(table, idx, offsets, mode), atol=tol)
    # 2-D input: each row a bag
    idx2 = np.array([[1, 2, 3], [4, 4, 19]])
    got2 = bag(ember.from_numpy(idx2)).numpy()
    np.testing.assert_allclose(got2, _reference_bag(table, idx2.reshape(-1), [0, 3], mode),
                               atol=tol)
    # include_last_offset and padding_idx
    padded = nnq.EmbeddingBag(20, 11, mode=mode, dtype=dtype, include_last_offset=True,
                              padding_idx=7)
    padded.set_weight(q)
    got3 = padded(ember.tensor(idx), ember.tensor([0, 3, 3, 6, 9])).numpy()
    np.testing.assert_allclose(
        got3, _reference_bag(table, idx, [0, 3, 3, 6, 9], mode, padding_idx=7,
                             include_last=True), atol=tol)
    if mode == "sum":
        psw = rng.standard_normal(len(idx)).astype(np.float32)
        got4 = bag(ember.tensor(idx), ember.tensor(offsets), ember.from_numpy(psw)).numpy()
        np.testing.assert_allclose(got4, _reference_bag(table, idx, offsets, mode, psw),
                                   atol=tol * 4)


def test_embedding_lookup_and_bad_indices():
    w = ember.randn(12, 6)
    for dtype in (ember.quint8, ember.quint4x2):
        q, _, _ = _row_quantized(w, dtype)
        emb = nnq.Embedding(12, 6, dtype=dtype)
        emb.set_weight(q)
        table = emb.weight().dequantize()
        idx = ember.tensor([[0, 11, 3], [3, 3, 5]])
        tol = 1e-6 if dtype == ember.quint8 else 3e-3
        np.testing.assert_allclose(emb(idx).numpy(), F.embedding(idx, table).numpy(), atol=tol)
        assert emb(ember.tensor([], dtype=ember.int64)).shape == (0, 6)
        with pytest.raises(IndexError, match="out of range"):
            emb(ember.tensor([12]))
        with pytest.raises(TypeError, match="int64 or int32"):
            emb(ember.tensor([1.0]))
    bag = nnq.EmbeddingBag(12, 6)
    with pytest.raises(RuntimeError, match="offsets"):
        bag(ember.tensor([1, 2]), ember.tensor([1]))
    with pytest.raises(ValueError, match="offsets are required"):
        bag(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="per_sample_weights"):
        nnq.EmbeddingBag(12, 6, mode="mean")(ember.tensor([1, 2]), ember.tensor([0]),
                                             ember.ones(2))
    with pytest.raises(NotImplementedError, match="quint8 and quint4x2"):
        nnq.Embedding(3, 4, dtype=ember.qint8)


def test_dynamic_and_static_workflows_and_file_size():
    ember.manual_seed(0)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 64)
            self.bag = nn.EmbeddingBag(1000, 64, mode="sum")
            self.fc = nn.Linear(64, 4)

        def forward(self, idx, bag_idx, offsets):
            return self.fc(self.emb(idx).mean(1) + self.bag(bag_idx, offsets))

    model = Model().eval()
    idx = ember.randint(0, 1000, (8, 5))
    bag_idx, offsets = ember.randint(0, 1000, (24,)), ember.tensor([0, 3, 6, 9, 12, 15, 18, 21])
    want = model(idx, bag_idx, offsets)
    q8 = tq.quantize_dynamic(model, {nn.Embedding: tq.float_qparams_weight_only_qconfig,
                                     nn.EmbeddingBag: tq.float_qparams_weight_only_qconfig,
                                     nn.Linear: tq.default_dynamic_qconfig})
    assert isinstance(q8.emb, nnq.Embedding) and isinstance(q8.bag, nnq.EmbeddingBag)
    assert (q8(idx, bag_idx, offsets) - want).abs().max().item() < 0.05
    q4 = tq.quantize_dynamic(model, {nn.EmbeddingBag: tq.float_qparams_weight_only_qconfig_4bit})
    assert q4.bag.weight().dtype == ember.quint4x2
    assert (q4(idx, bag_idx, offsets) - want).abs().max().item() < 0.3

    def size(m):
        buf = io.BytesIO()
        ember.save(m.state_dict(), buf)
        return buf.tell()

    emb_only = nn.Sequential(nn.Embedding(1000, 64))
    emb_q8 = tq.quantize_dynamic(emb_only, {nn.Embedding: tq.float_qparams_weight_only_qconfig})
    emb_q4 = tq.quantize_dynamic(emb_only,
                                 {nn.Embedding: tq.float_qparams_weight_only_qconfig_4bit})
    # 64 values a row: 1 byte (or half) each, plus a float32 scale and zero point per row.
    assert size(emb_q8) < 0.3 * size(emb_only)
    assert size(emb_q4) < 0.18 * size(emb_only)
    loaded = tq.quantize_dynamic(emb_only,
                                 {nn.Embedding: tq.float_qparams_weight_only_qconfig_4bit})
    loaded.load_state_dict(_save_load(emb_q4.state_dict()))
    np.testing.assert_array_equal(loaded(idx).numpy(), emb_q4(idx).numpy())
    # Static: prepare / convert with the embedding's own weight-only qconfig.
    model.qconfig = None
    model.emb.qconfig = tq.float_qparams_weight_only_qconfig
    static = tq.convert(tq.prepare(model))
    assert isinstance(static.emb, nnq.Embedding) and isinstance(static.fc, nn.Linear)
    bad = Model().eval()
    bad.qconfig = tq.default_qconfig
    with pytest.raises(RuntimeError, match="float_qparams_weight_only_qconfig"):
        tq.prepare(bad)


def test_matches_pytorch_quantized_embeddings():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((30, 16)).astype(np.float32)
    idx = rng.integers(0, 30, 40)
    offsets = np.array([0, 5, 5, 17, 30])
    for t_dtype, e_dtype in ((torch.quint8, ember.quint8), (torch.quint4x2, ember.quint4x2)):
        t_obs = torch.ao.quantization.PerChannelMinMaxObserver(
            ch_axis=0, dtype=t_dtype, qscheme=torch.per_channel_affine_float_qparams)
        t_obs(torch.from_numpy(w))
        ts, tz = t_obs.calculate_qparams()
        tqw = torch.quantize_per_channel(torch.from_numpy(w), ts, tz, 0, t_dtype)
        eqw, es, ez = _row_quantized(ember.from_numpy(w), e_dtype)
        np.testing.assert_allclose(es.numpy(), ts.numpy(), rtol=1e-6)
        np.testing.assert_allclose(ez.numpy(), tz.numpy(), rtol=1e-5)
        np.testing.assert_array_equal(eqw.int_repr().numpy(), tqw.int_repr().numpy())
        # PyTorch's quantized EmbeddingBag always sums (its forward passes mode 0 whatever the
        # module's mode); Ember honours mode='mean' / 'max' (tested against the float lookup).
        for mode in ("sum",):
            tbag = torch.ao.nn.quantized.EmbeddingBag(30, 16, mode=mode, dtype=t_dtype)
            tbag.set_weight(tqw)
            ebag = nnq.EmbeddingBag(30, 16, mode=mode, dtype=e_dtype)
            ebag.set_weight(eqw)
            want = tbag(torch.from_numpy(idx), torch.from_numpy(offsets)).numpy()
            got = ebag(ember.from_numpy(idx), ember.from_numpy(offsets)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        temb = torch.ao.nn.quantized.Embedding(30, 16, dtype=t_dtype)
        temb.set_weight(tqw)
        eemb = nnq.Embedding(30, 16, dtype=e_dtype)
        eemb.set_weight(eqw)
        np.testing.assert_allclose(eemb(ember.from_numpy(idx)).numpy(),
                                   temb(torch.from_numpy(idx)).numpy(), rtol=1e-5, atol=1e-5)
