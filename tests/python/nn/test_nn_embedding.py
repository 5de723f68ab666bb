"""embedding, embedding_bag and one_hot: forward against NumPy, gradients (duplicates,
padding_idx, scale_grad_by_freq, per_sample_weights, max mode), max_norm renormalisation,
gradcheck / gradgradcheck, errors, and parity with PyTorch where installed."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def weights(v=7, d=4, seed=0, dtype=ember.float64, requires_grad=False):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((v, d))
    return w, ember.tensor(w, dtype=dtype, requires_grad=requires_grad)


# ---- embedding -----------------------------------------------------------------------------------


@pytest.mark.parametrize("idx", [[3], [[0, 6, 2], [2, 2, 1]], 4, [], [[[1], [5]]]])
def test_embedding_forward_matches_numpy(idx):
    w, tw = weights()
    i = np.array(idx, dtype=np.int64)
    y = F.embedding(ember.tensor(i), tw)
    assert y.shape == i.shape + (4,)
    np.testing.assert_array_equal(y.numpy(), w[i])


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32, ember.int64])
def test_embedding_dtypes_and_int32_indices(dtype):
    w, _ = weights()
    tw = ember.tensor(w).to(dtype)
    i = ember.tensor([[1, 5], [0, 0]], dtype=ember.int32)
    y = F.embedding(i, tw)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y.double().numpy(), tw.double().numpy()[[[1, 5], [0, 0]]])


def test_embedding_non_contiguous_weight():
    w, tw = weights(6, 8)
    t = tw.t()  # (8, 6), strided
    np.testing.assert_array_equal(F.embedding(ember.tensor([7, 0]), t).numpy(), w.T[[7, 0]])


def test_embedding_gradient_accumulates_duplicates_and_skips_padding():
    _, tw = weights(requires_grad=True)
    idx = ember.tensor([[1, 2, 1], [4, 1, 2]])
    y = F.embedding(idx, tw, padding_idx=2)
    assert y.grad_fn.name() == "EmbeddingBackward0"
    g = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    y.backward(ember.tensor(g))
    expected = np.zeros((7, 4))
    for (b, s), k in np.ndenumerate(idx.numpy()):
        if k != 2:
            expected[k] += g[b, s]
    np.testing.assert_array_equal(tw.grad.numpy(), expected)
    # Forward still reads the padding row.
    np.testing.assert_array_equal(y.detach().numpy()[0, 1], tw.detach().numpy()[2])


def test_embedding_scale_grad_by_freq():
    _, tw = weights(requires_grad=True)
    idx = ember.tensor([1, 1, 1, 3, 5, 5])
    F.embedding(idx, tw, scale_grad_by_freq=True).sum().backward()
    expected = np.zeros((7, 4))
    expected[[1, 3, 5]] = 1.0  # each row: count * (1 / count)
    np.testing.assert_allclose(tw.grad.numpy(), expected, rtol=1e-15)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 0}, {"scale_grad_by_freq": True},
                                    {"padding_idx": -1, "scale_grad_by_freq": True}])
def test_embedding_gradcheck_and_gradgradcheck(kwargs):
    _, tw = weights(5, 3, requires_grad=True)
    idx = ember.tensor([[0, 4, 4], [2, 0, 1]])
    fn = lambda w: F.embedding(idx, w, **kwargs)  # noqa: E731
    if not kwargs:
        # padding_idx and scale_grad_by_freq change the gradient on purpose (it is no longer
        # the Jacobian), so only the plain lookup is checked against finite differences.
        assert gradcheck(fn, (tw,))
    # The backward is linear in grad: its own derivative is checked for every option.
    assert gradgradcheck(fn, (tw,))


def test_embedding_max_norm_renormalises_referenced_rows_in_place():
    w, tw = weights(6, 3, seed=1)
    w = w * 5
    tw = ember.tensor(w, requires_grad=True)
    idx = ember.tensor([0, 2, 2])
    y = F.embedding(idx, tw, max_norm=1.0)
    new = tw.detach().numpy()
    for r in range(6):
        norm = np.linalg.norm(w[r])
        if r in (0, 2) and norm > 1.0:
            np.testing.assert_allclose(new[r], w[r] * (1.0 / (norm + 1e-7)), rtol=1e-12)
        else:
            np.testing.assert_array_equal(new[r], w[r])
    np.testing.assert_allclose(np.linalg.norm(y.detach().numpy(), axis=1), 1.0, rtol=1e-6)
    # The gradient still flows to the (renormalised) weight.
    y.sum().backward()
    assert tw.grad.numpy()[2].tolist() == [2.0, 2.0, 2.0]
    # Other norms.
    for norm_type, fn in [(1.0, lambda v: np.abs(v).sum()), (np.inf, lambda v: np.abs(v).max())]:
        t = ember.tensor(w)
        F.embedding(ember.tensor([3]), t, max_norm=0.5, norm_type=norm_type)
        assert abs(fn(t.numpy()[3]) - 0.5) < 1e-6


def test_embedding_errors():
    _, tw = weights()
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([0, 7]), tw)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([-1]), tw)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types"):
        F.embedding(ember.tensor([0.0, 1.0]), tw)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ember.tensor([0]), tw, padding_idx=7)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ember.tensor([0]), tw, padding_idx=-8)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(ember.tensor([0]), ember.randn(5))
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(ember.tensor([0]), tw, sparse=True)


# ---- embedding_bag -------------------------------------------------------------------------------


def np_bag(w, idx, offsets, mode, psw=None, include_last=False, padding_idx=None):
    n = len(idx)
    bounds = list(offsets) + ([] if include_last else [n])
    out = []
    for b in range(len(bounds) - 1):
        rows = [k for k in range(bounds[b], bounds[b + 1]) if idx[k] != padding_idx]
        if not rows:
            out.append(np.zeros(w.shape[1]))
            continue
        vals = np.stack([w[idx[k]] * (psw[k] if psw is not None else 1.0) for k in rows])
        out.append({"sum": vals.sum(0), "mean": vals.mean(0), "max": vals.max(0)}[mode])
    return np.stack(out) if out else np.zeros((0, w.shape[1]))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_forward_matches_numpy(mode):
    w, tw = weights(9, 5, seed=2)
    idx = [1, 2, 4, 5, 4, 3, 2, 8]
    offsets = [0, 3, 3, 5]
    y = F.embedding_bag(ember.tensor(idx), tw, ember.tensor(offsets), mode=mode)
    np.testing.assert_allclose(y.numpy(), np_bag(w, idx, offsets, mode), rtol=1e-14)
    # include_last_offset: the last offset closes the last bag.
    y = F.embedding_bag(ember.tensor(idx), tw, ember.tensor([0, 3, 3, 5, 8]), mode=mode,
                        include_last_offset=True)
    np.testing.assert_allclose(y.numpy(), np_bag(w, idx, [0, 3, 3, 5, 8], mode, include_last=True),
                               rtol=1e-14)
    # padding_idx entries are left out (and not counted by mean).
    y = F.embedding_bag(ember.tensor(idx), tw, ember.tensor(offsets), mode=mode, padding_idx=4)
    np.testing.assert_allclose(y.numpy(), np_bag(w, idx, offsets, mode, padding_idx=4),
                               rtol=1e-14)


def test_embedding_bag_2d_input_and_per_sample_weights():
    w, tw = weights(9, 5, seed=3)
    idx = np.array([[1, 2, 3], [8, 8, 0]])
    y = F.embedding_bag(ember.tensor(idx), tw, mode="mean")
    np.testing.assert_allclose(y.numpy(), w[idx].mean(1), rtol=1e-14)
    psw = np.array([[0.5, 2.0, -1.0], [1.0, 1.0, 3.0]])
    y = F.embedding_bag(ember.tensor(idx), tw, mode="sum", per_sample_weights=ember.tensor(psw))
    np.testing.assert_allclose(y.numpy(), (w[idx] * psw[..., None]).sum(1), rtol=1e-14)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradcheck(mode):
    _, tw = weights(6, 3, seed=4, requires_grad=True)
    idx = ember.tensor([0, 2, 2, 5, 1, 0, 3])
    offsets = ember.tensor([0, 2, 2, 4])
    fn = lambda w: F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=1)  # noqa: E731
    assert gradcheck(fn, (tw,))
    assert gradgradcheck(fn, (tw,))
    assert fn(tw).grad_fn.name() == "EmbeddingBagBackward0"


def test_embedding_bag_per_sample_weights_gradcheck():
    _, tw = weights(6, 3, seed=5, requires_grad=True)
    idx = ember.tensor([0, 2, 2, 5, 1, 0, 3])
    offsets = ember.tensor([0, 2, 2, 4])
    psw = ember.tensor(np.linspace(-1, 2, 7), requires_grad=True)
    fn = lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum",  # noqa: E731
                                      per_sample_weights=p, padding_idx=5)
    assert gradcheck(fn, (tw, psw))
    assert gradgradcheck(fn, (tw, psw))


def test_embedding_bag_scale_grad_by_freq():
    _, tw = weights(6, 3, requires_grad=True)
    idx = ember.tensor([1, 1, 2, 1])
    F.embedding_bag(idx, tw, ember.tensor([0, 2]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    expected = np.zeros((6, 3))
    expected[1] = 1.0
    expected[2] = 1.0
    np.testing.assert_allclose(tw.grad.numpy(), expected, rtol=1e-15)


def test_embedding_bag_returns_torch_tuple():
    _, tw = weights(5, 2)
    out, offset2bag, bag_size, max_indices = ember.embedding_bag(
        tw, ember.tensor([0, 1, 2, 4]), ember.tensor([0, 2, 2]), False, 2)
    assert offset2bag.tolist() == [0, 0, 2, 2]
    assert bag_size.tolist() == [2, 0, 2]
    assert max_indices.shape == (3, 2)
    assert (out.numpy()[1] == 0).all()


def test_embedding_bag_errors():
    _, tw = weights(5, 2)
    idx = ember.tensor([0, 1, 2, 4])
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0"):
        F.embedding_bag(idx, tw, ember.tensor([1, 2]), mode="sum")
    with pytest.raises(RuntimeError, match=r"offsets\[-1\] can not be greater than input's length"):
        F.embedding_bag(idx, tw, ember.tensor([0, 5]), mode="sum")
    with pytest.raises(RuntimeError, match="non-decreasing"):
        F.embedding_bag(idx, tw, ember.tensor([0, 3, 2]), mode="sum")
    with pytest.raises(IndexError, match="not in the valid range"):
        F.embedding_bag(ember.tensor([0, 7]), tw, ember.tensor([0]), mode="sum")
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of embeddings"):
        F.embedding_bag(idx, tw, ember.tensor([0, 2]), padding_idx=7)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx, tw)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(idx.view(2, 2), tw, ember.tensor([0]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx, tw, ember.tensor([0]), mode="min")
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
        F.embedding_bag(idx, tw, ember.tensor([0]), mode="max", scale_grad_by_freq=True)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode"):
        F.embedding_bag(idx, tw, ember.tensor([0]), mode="mean",
                        per_sample_weights=ember.ones(4, dtype=ember.float64))
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        F.embedding_bag(idx, ember.randn(5), ember.tensor([0]))


# ---- one_hot -------------------------------------------------------------------------------------


def test_one_hot():
    y = F.one_hot(ember.tensor([[0, 2], [1, 0]]), 4)
    assert y.dtype == ember.int64 and y.shape == (2, 2, 4)
    np.testing.assert_array_equal(y.numpy(), np.eye(4, dtype=np.int64)[[[0, 2], [1, 0]]])
    assert F.one_hot(ember.tensor(2)).tolist() == [0, 0, 1]
    assert F.one_hot(ember.tensor([3, 1])).shape == (2, 4)
    assert F.one_hot(ember.tensor([], dtype=ember.int64), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(ember.tensor([0, 2]), 2)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(ember.tensor([0, -1]), 3)
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(ember.tensor([0, 1], dtype=ember.int32), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(ember.tensor([], dtype=ember.int64))


# ---- parity with PyTorch -----------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 3}, {"scale_grad_by_freq": True},
                                    {"max_norm": 1.5}])
def test_embedding_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    w, _ = weights(8, 5, seed=6)
    idx = np.array([[1, 3, 3, 7], [0, 1, 1, 1]])
    tw = torch.tensor(w, requires_grad=True)
    ew = ember.tensor(w, requires_grad=True)
    ty = torch.nn.functional.embedding(torch.tensor(idx), tw, **kwargs)
    ey = F.embedding(ember.tensor(idx), ew, **kwargs)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ew.detach().numpy(), tw.detach().numpy(), rtol=1e-12)
    g = np.linspace(-1, 1, ty.numel()).reshape(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_matches_torch(mode, padding_idx, include_last_offset):
    torch = pytest.importorskip("torch")
    w, _ = weights(8, 5, seed=7)
    idx = np.array([1, 2, 2, 7, 0, 2, 5, 5, 6])
    offsets = np.array([0, 2, 2, 6, 9]) if include_last_offset else np.array([0, 2, 2, 6])
    psw = np.linspace(0.5, 2.0, 9) if mode == "sum" else None
    tw = torch.tensor(w, requires_grad=True)
    ew = ember.tensor(w, requires_grad=True)
    tp = torch.tensor(psw, requires_grad=True) if psw is not None else None
    ep = ember.tensor(psw, requires_grad=True) if psw is not None else None
    ty = torch.nn.functional.embedding_bag(torch.tensor(idx), tw, torch.tensor(offsets), mode=mode,
                                           per_sample_weights=tp, padding_idx=padding_idx,
                                           include_last_offset=include_last_offset)
    ey = F.embedding_bag(ember.tensor(idx), ew, ember.tensor(offsets), mode=mode,
                         per_sample_weights=ep, padding_idx=padding_idx,
                         include_last_offset=include_last_offset)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-15)
    g = np.linspace(-1, 1, ty.numel()).reshape(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-15)
    if psw is not None:
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-12, atol=1e-15)
