"""Loss functions: NumPy references for every loss and reduction, gradcheck (float64) per option
family, gradgradcheck for the common ones, PyTorch's errors and warnings, and PyTorch parity of
values and gradients. CTC is also checked against a brute-force sum over all alignments."""

import itertools
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

REDUCTIONS = ["none", "mean", "sum"]


def t64(a, requires_grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64)).requires_grad_(requires_grad)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def uniform(*shape, seed=0, lo=0.05, hi=0.95):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def reduce_np(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def close(got, want, tol=1e-10):
    np.testing.assert_allclose(
        np.asarray(got.detach().numpy()), np.asarray(want), rtol=tol, atol=tol
    )


# ---- pointwise losses ------------------------------------------------------------------------


def np_pointwise(name, x, y, beta=1.0, delta=1.0):
    d = x - y
    if name == "mse_loss":
        return d * d
    if name == "l1_loss":
        return np.abs(d)
    if name == "smooth_l1_loss":
        return np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)
    return np.where(np.abs(d) < delta, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_forward(name, reduction):
    x, y = rand(3, 4) * 2, rand(3, 4, seed=1) * 2
    kw = (
        {"beta": 0.7}
        if name == "smooth_l1_loss"
        else {"delta": 0.6}
        if name == "huber_loss"
        else {}
    )
    got = getattr(F, name)(t64(x), t64(y), reduction=reduction, **kw)
    close(got, reduce_np(np_pointwise(name, x, y, **kw), reduction))
    # float32, non-contiguous operands.
    x32, y32 = x.astype(np.float32).T, y.astype(np.float32).T
    got = getattr(F, name)(
        ember.tensor(x.astype(np.float32)).T,
        ember.tensor(y.astype(np.float32)).T,
        reduction=reduction,
        **kw,
    )
    assert got.dtype == ember.float32
    close(got, reduce_np(np_pointwise(name, x32.astype(np.float64), y32, **kw), reduction), 1e-5)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_weight(name, reduction):
    x, y, w = rand(3, 4), rand(3, 4, seed=1), uniform(3, 4, seed=2)
    loss = np_pointwise(name, x, y) * w
    want = {
        "none": loss,
        "sum": loss.sum(),
        "mean": loss.mean() if name == "huber_loss" else loss.sum() / w.sum(),
    }[reduction]
    close(getattr(F, name)(t64(x), t64(y), reduction=reduction, weight=t64(w)), want)


def test_pointwise_large_input_reduces_deterministically():
    # More than one reduction block (16384 elements), broadcast target.
    x, y = rand(300, 130), rand(130, seed=1)
    with pytest.warns(UserWarning, match="Using a target size"):
        got = F.mse_loss(t64(x), t64(y))
    close(got, np.mean((x - y) ** 2), 1e-12)
    x32 = ember.tensor(x.astype(np.float32))
    a = F.l1_loss(x32, ember.zeros(300, 130), reduction="sum").item()
    ember.set_num_threads(1)
    try:
        b = F.l1_loss(x32, ember.zeros(300, 130), reduction="sum").item()
    finally:
        ember.set_num_threads(2)
    assert a == b


def test_mse_dtype_promotion_and_special_cases():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert F.mse_loss(x, ember.arange(3)).dtype == ember.float32
    assert F.mse_loss(x, t64([1.0, 1.0, 1.0])).dtype == ember.float64
    assert math.isnan(F.mse_loss(ember.zeros(0), ember.zeros(0)).item())
    assert F.mse_loss(ember.zeros(0), ember.zeros(0), reduction="sum").item() == 0.0
    assert F.mse_loss(ember.zeros(0), ember.zeros(0), reduction="none").shape == (0,)
    assert F.mse_loss(t64(1.0), t64(3.0)).item() == 4.0
    h = ember.tensor([0.5, 1.5], dtype=ember.float16)
    assert F.mse_loss(h, h * 2).dtype == ember.float16
    assert F.smooth_l1_loss(t64([0.0]), t64([3.0]), beta=0.0).item() == 3.0  # l1


def np_bce(x, y, w=None):
    loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    return loss * (1 if w is None else w)


def np_bce_logits(x, y, w=None, pw=None):
    log_sig = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    log_1m_sig = np.minimum(-x, 0) - np.log1p(np.exp(-np.abs(x)))
    pw = 1 if pw is None else pw
    loss = -(pw * y * log_sig + (1 - y) * log_1m_sig)
    return loss * (1 if w is None else w)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    x, y, w = uniform(3, 5), uniform(3, 5, seed=1), uniform(5, seed=2)
    close(
        F.binary_cross_entropy(t64(x), t64(y), reduction=reduction),
        reduce_np(np_bce(x, y), reduction),
    )
    close(
        F.binary_cross_entropy(t64(x), t64(y), t64(w), reduction=reduction),
        reduce_np(np_bce(x, y, w), reduction),
    )
    # The logs are clamped at -100: x = 0 or 1 gives finite values.
    np.testing.assert_allclose(
        F.binary_cross_entropy(t64([0.0, 1.0]), t64([1.0, 0.0]), reduction="none").numpy(),
        [100.0, 100.0],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    x, y = rand(3, 5) * 4, uniform(3, 5, seed=1)
    w, pw = uniform(5, seed=2), uniform(5, seed=3, lo=0.5, hi=3)
    close(
        F.binary_cross_entropy_with_logits(t64(x), t64(y), reduction=reduction),
        reduce_np(np_bce_logits(x, y), reduction),
    )
    close(
        F.binary_cross_entropy_with_logits(
            t64(x), t64(y), t64(w), reduction=reduction, pos_weight=t64(pw)
        ),
        reduce_np(np_bce_logits(x, y, w, pw), reduction),
    )
    close(
        ember.binary_cross_entropy_with_logits(t64(x), t64(y), None, t64(pw), 2),
        np_bce_logits(x, y, None, pw).sum(),
    )
    # Stable for large logits.
    big = F.binary_cross_entropy_with_logits(
        t64([200.0, -200.0]), t64([0.0, 1.0]), reduction="none"
    )
    np.testing.assert_allclose(big.numpy(), [200.0, 200.0])


# ---- nll_loss / cross_entropy ----------------------------------------------------------------


def np_nll(lp, t, w=None, reduction="mean", ignore_index=-100):
    """lp: (N, C, ...) log-probabilities; t: (N, ...) class indices."""
    C = lp.shape[1]
    w = np.ones(C) if w is None else w
    valid = t != ignore_index
    ts = np.where(valid, t, 0)
    picked = np.take_along_axis(lp, ts[:, None], 1)[:, 0]
    wt = w[ts] * valid
    loss = -wt * picked
    if reduction == "none":
        return loss
    with np.errstate(invalid="ignore"):
        return loss.sum() / wt.sum() if reduction == "mean" else loss.sum()


def np_cross_entropy(x, t, w=None, reduction="mean", ignore_index=-100, ls=0.0):
    lsm = np_log_softmax(x, 1)
    C = x.shape[1]
    wv = np.ones(C) if w is None else w
    cs = (1, C) + (1,) * (x.ndim - 2)
    if t.dtype.kind == "f":  # probabilities
        tt = t * (1 - ls) + ls / C
        loss = -(lsm * tt * wv.reshape(cs)).sum(1)
        return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / loss.size}[reduction]
    valid = t != ignore_index
    ts = np.where(valid, t, 0)
    wt = wv[ts] * valid
    nll = -wt * np.take_along_axis(lsm, ts[:, None], 1)[:, 0]
    smooth = -(lsm * wv.reshape(cs)).sum(1) * valid
    loss = (1 - ls) * nll + ls / C * smooth
    if reduction == "none":
        return loss
    with np.errstate(invalid="ignore"):
        return loss.sum() / wt.sum() if reduction == "mean" else loss.sum()


CE_CASES = [  # (input shape, target shape)
    ((6, 5), (6,)),
    ((2, 4, 3, 5), (2, 3, 5)),
    ((3, 7, 70), (3, 70)),
    ((1, 3), (1,)),
]


@pytest.mark.parametrize("shapes", CE_CASES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_and_cross_entropy_indices(shapes, reduction, weighted):
    (xs, ts) = shapes
    x = rand(*xs)
    C = xs[1]
    t = np.random.default_rng(1).integers(0, C, ts)
    t.flat[0] = -100  # ignored
    if t.size > 2:
        t.flat[2] = 1 % C
    w = uniform(C, seed=2) if weighted else None
    ew = t64(w) if weighted else None
    lp = np_log_softmax(x, 1)
    close(
        F.nll_loss(t64(lp), ember.tensor(t), ew, reduction=reduction), np_nll(lp, t, w, reduction)
    )
    for ls in [0.0, 0.3]:
        close(
            F.cross_entropy(t64(x), ember.tensor(t), ew, reduction=reduction, label_smoothing=ls),
            np_cross_entropy(x, t, w, reduction, ls=ls),
        )
    # Another ignore_index.
    close(
        F.cross_entropy(
            t64(x), ember.tensor(np.where(t == -100, 0, t)), ew, ignore_index=0, reduction=reduction
        ),
        np_cross_entropy(x, np.where(t == -100, 0, t), w, reduction, ignore_index=0),
    )


@pytest.mark.parametrize("shapes", CE_CASES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities(shapes, reduction):
    xs = shapes[0]
    x = rand(*xs)
    p = np.exp(np_log_softmax(rand(*xs, seed=3), 1))
    w = uniform(xs[1], seed=2)
    close(
        F.cross_entropy(t64(x), t64(p), reduction=reduction),
        np_cross_entropy(x, p, None, reduction),
    )
    close(
        F.cross_entropy(t64(x), t64(p), t64(w), reduction=reduction, label_smoothing=0.2),
        np_cross_entropy(x, p, w, reduction, ls=0.2),
    )


def test_cross_entropy_unbatched_and_special_cases():
    x = rand(5)
    close(F.cross_entropy(t64(x), ember.tensor(2)), -np_log_softmax(x, 0)[2])
    close(F.cross_entropy(t64(x), ember.tensor([2])), -np_log_softmax(x, 0)[2])
    assert F.cross_entropy(t64(x), ember.tensor(2), reduction="none").shape == ()
    p = np.exp(np_log_softmax(rand(5, seed=1), 0))
    close(F.cross_entropy(t64(x), t64(p)), -(p * np_log_softmax(x, 0)).sum())
    # All targets ignored / empty batch: mean is nan, sum is 0 (as PyTorch).
    assert math.isnan(F.cross_entropy(t64(rand(2, 3)), ember.tensor([-100, -100])).item())
    assert math.isnan(F.nll_loss(t64(rand(2, 3)), ember.tensor([-100, -100])).item())
    assert math.isnan(F.cross_entropy(ember.zeros(0, 3), ember.zeros(0, dtype=ember.int64)).item())
    assert (
        F.cross_entropy(
            ember.zeros(0, 3), ember.zeros(0, dtype=ember.int64), reduction="sum"
        ).item()
        == 0.0
    )
    # uint8 targets, float16 input.
    close(
        F.cross_entropy(t64(rand(3, 4)), ember.tensor([1, 0, 3], dtype=ember.uint8)),
        np_cross_entropy(rand(3, 4), np.array([1, 0, 3])),
    )
    h = F.cross_entropy(ember.tensor(rand(3, 4).astype(np.float32)).half(), ember.tensor([1, 0, 3]))
    assert h.dtype == ember.float16
    # A float64 probability target promotes.
    assert F.cross_entropy(ember.randn(2, 3), t64(np.full((2, 3), 1 / 3))).dtype == ember.float64


def test_nll_loss_strided_input():
    x = rand(2, 4, 5, 6)
    t = np.random.default_rng(1).integers(0, 4, (2, 6, 5))
    xe = t64(x).permute(0, 1, 3, 2)  # (2, 4, 6, 5), non-contiguous
    close(
        F.nll_loss(xe, ember.tensor(t), reduction="none"),
        np_nll(x.transpose(0, 1, 3, 2), t, reduction="none"),
    )


# ---- the other losses ------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = np_log_softmax(rand(3, 4), 1)
    y = np.exp(np_log_softmax(rand(3, 4, seed=1), 1))
    y[0, 0] = 0.0
    target = np.log(y + 1e-30) if log_target else y
    loss = (
        np.exp(target) * (target - x)
        if log_target
        else np.where(y > 0, y * (np.log(np.where(y > 0, y, 1)) - x), -y * x)
    )
    want = loss.sum() / 3 if reduction == "batchmean" else reduce_np(loss, reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(F.kl_div(t64(x), t64(target), reduction=reduction, log_target=log_target), want, 1e-9)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ranking_and_embedding_losses(reduction):
    x1, x2, x3 = rand(4, 3), rand(4, 3, seed=1), rand(4, 3, seed=2)
    y = np.array([1.0, -1.0, 1.0, -1.0])
    close(
        F.margin_ranking_loss(
            t64(x1[:, 0]), t64(x2[:, 0]), t64(y), margin=0.3, reduction=reduction
        ),
        reduce_np(np.maximum(0, -y * (x1[:, 0] - x2[:, 0]) + 0.3), reduction),
    )
    cos = (x1 * x2).sum(1) / np.sqrt(((x1**2).sum(1) + 1e-12) * ((x2**2).sum(1) + 1e-12))
    close(
        F.cosine_embedding_loss(t64(x1), t64(x2), t64(y), margin=0.1, reduction=reduction),
        reduce_np(np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.1)), reduction),
    )

    def dist(a, b, p):
        return (np.abs(a - b + 1e-6) ** p).sum(-1) ** (1 / p)

    for p, swap in [(2, False), (1, True), (3, True)]:
        dn = dist(x1, x3, p)
        if swap:
            dn = np.minimum(dn, dist(x2, x3, p))
        close(
            F.triplet_margin_loss(
                t64(x1), t64(x2), t64(x3), margin=0.5, p=p, swap=swap, reduction=reduction
            ),
            reduce_np(np.maximum(0, dist(x1, x2, p) - dn + 0.5), reduction),
        )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_likelihood_losses(reduction):
    x, y = rand(3, 4), uniform(3, 4, seed=1, lo=0, hi=4)
    close(
        F.poisson_nll_loss(t64(x), t64(y), reduction=reduction),
        reduce_np(np.exp(x) - y * x, reduction),
    )
    xp = uniform(3, 4, seed=2)
    stirling = np.where(y > 1, y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y), 0)
    close(
        F.poisson_nll_loss(t64(xp), t64(y), log_input=False, full=True, reduction=reduction),
        reduce_np(xp - y * np.log(xp + 1e-8) + stirling, reduction),
    )
    var = uniform(3, 4, seed=3)
    var[0, 0] = 1e-9  # clamped to eps
    v = np.maximum(var, 1e-6)
    close(
        F.gaussian_nll_loss(t64(x), t64(y), t64(var), reduction=reduction),
        reduce_np(0.5 * (np.log(v) + (x - y) ** 2 / v), reduction),
    )
    close(
        F.gaussian_nll_loss(t64(x), t64(y), t64(var[:, 0]), full=True, reduction=reduction),
        reduce_np(
            0.5 * (np.log(v[:, :1]) + (x - y) ** 2 / v[:, :1]) + 0.5 * np.log(2 * np.pi), reduction
        ),
    )
    close(
        F.gaussian_nll_loss(t64(x), t64(y), 0.5, reduction=reduction),
        reduce_np(0.5 * (np.log(0.5) + (x - y) ** 2 / 0.5), reduction),
    )


# ---- CTC -------------------------------------------------------------------------------------


def ctc_brute_force(lp, target, blank=0):
    """-log of the total probability of the alignments of length T that collapse to target."""
    T, C = lp.shape
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total > 0 else math.inf


def test_ctc_matches_brute_force():
    rng = np.random.default_rng(5)
    T, N, C = 5, 4, 3
    lp = np_log_softmax(rng.standard_normal((T, N, C)), 2)
    targets = np.array([[1, 2, 0], [1, 1, 0], [2, 0, 0], [0, 0, 0]])
    tl, il = [2, 2, 1, 0], [5, 4, 5, 3]
    got = F.ctc_loss(t64(lp), ember.tensor(targets), il, tl, reduction="none").numpy()
    want = [ctc_brute_force(lp[: il[b], b], targets[b, : tl[b]]) for b in range(N)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    # Concatenated targets, another blank, the reductions.
    flat = np.array([0, 2, 0, 0, 2])  # blank = 1
    tl2 = [2, 2, 1, 0]
    got = F.ctc_loss(t64(lp), ember.tensor(flat), il, tl2, blank=1, reduction="none").numpy()
    pieces = np.split(flat, np.cumsum(tl2)[:-1])
    want = np.array([ctc_brute_force(lp[: il[b], b], pieces[b], blank=1) for b in range(N)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    close(F.ctc_loss(t64(lp), ember.tensor(flat), il, tl2, blank=1, reduction="sum"), want.sum())
    close(
        F.ctc_loss(t64(lp), ember.tensor(flat), il, tl2, blank=1),
        np.mean(want / np.maximum(tl2, 1)),
    )


def test_ctc_infinite_loss_and_unbatched():
    lp = np_log_softmax(rand(3, 2, 3), 2)
    targets = ember.tensor([[1, 1, 1], [2, 2, 2]])  # repeats need blanks: 5 frames, not 3
    loss = F.ctc_loss(t64(lp), targets, [3, 3], [3, 3], reduction="none")
    assert np.isinf(loss.numpy()).all()
    x = t64(lp, True)
    z = F.ctc_loss(x, targets, [3, 3], [3, 3], reduction="sum", zero_infinity=True)
    assert z.item() == 0.0
    z.backward()
    assert (x.grad.numpy() == 0).all()
    one = F.ctc_loss(
        t64(lp[:, 0]), ember.tensor([1, 2]), ember.tensor(3), ember.tensor(2), reduction="none"
    )
    assert one.shape == ()
    np.testing.assert_allclose(one.item(), ctc_brute_force(lp[:, 0], [1, 2]), rtol=1e-10)


# ---- errors and warnings ---------------------------------------------------------------------


def test_errors_and_warnings():
    x = ember.randn(2, 3)
    with pytest.warns(
        UserWarning,
        match=r"Using a target size \(ember.Size\(\[3\]\)\) that is "
        r"different to the input size \(ember.Size\(\[2, 3\]\)\)",
    ):
        F.mse_loss(x, x[0])
    with pytest.warns(
        UserWarning,
        match="size_average and reduce args will be deprecated, please use reduction='sum' instead",
    ):
        F.l1_loss(x, x, size_average=False)
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(x, x, weight=ember.ones(3))
    with pytest.raises(NotImplementedError, match="mse_loss"):
        F.mse_loss(ember.arange(3), ember.arange(3))
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values"):
        F.huber_loss(x, x, delta=0.0)
    with pytest.raises(
        ValueError,
        match=r"Using a target size \(ember.Size\(\[3\]\)\) that is "
        "different to the input size .* is deprecated",
    ):
        F.binary_cross_entropy(x.sigmoid(), x[0].sigmoid())
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(x, x.sigmoid())
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(x.sigmoid(), x + 2)
    with pytest.raises(RuntimeError, match="Found dtype int64 but expected float32"):
        F.binary_cross_entropy(x.sigmoid(), ember.ones(2, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.binary_cross_entropy(x.sigmoid(), x.sigmoid(), weight=ember.ones(3).requires_grad_())
    with pytest.raises(
        ValueError,
        match=r"Target size \(ember.Size\(\[3\]\)\) must be the same "
        r"as input size \(ember.Size\(\[2, 3\]\)\)",
    ):
        F.binary_cross_entropy_with_logits(x, x[0])
    with pytest.raises(RuntimeError, match="pos_weight"):
        F.binary_cross_entropy_with_logits(x, x, pos_weight=ember.ones(3).requires_grad_())
    with pytest.raises(IndexError, match=r"Target 3 is out of bounds\."):
        F.cross_entropy(x, ember.tensor([0, 3]))
    with pytest.raises(IndexError, match=r"Target -2 is out of bounds\."):
        F.nll_loss(x, ember.tensor([0, -2]))
    with pytest.raises(
        ValueError,
        match=r"Expected input batch_size \(2\) to match target "
        r"batch_size \(3\)\.",
    ):
        F.cross_entropy(x, ember.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        F.cross_entropy(x, ember.tensor([0.0, 1.0]))
    with pytest.raises(
        RuntimeError,
        match="weight tensor should be defined either for all 3 "
        r"classes or no classes but got weight tensor of shape: \[2\]",
    ):
        F.cross_entropy(x, ember.tensor([0, 1]), weight=ember.ones(2))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, ember.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(x, x.softmax(1), ignore_index=1)
    with pytest.raises(
        RuntimeError, match="Expected floating point type for target with class probabilities"
    ):
        F.cross_entropy(x, ember.ones(2, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 5\]"):
        F.cross_entropy(ember.randn(2, 3, 4), ember.zeros(2, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.nll_loss(x, ember.zeros(2, 1, dtype=ember.int64))
    with pytest.raises(ValueError, match="For 1D input, 1D target must have size 1"):
        F.nll_loss(x[0], ember.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"Expected 1 or more dimensions \(got 0\)"):
        F.nll_loss(ember.tensor(1.0), ember.tensor(0))
    with pytest.raises(NotImplementedError, match="cross_entropy"):
        F.cross_entropy(ember.ones(2, 3, dtype=ember.int64), ember.tensor([0, 1]))
    with pytest.raises(
        RuntimeError, match="nll_loss.*not differentiable with respect to argument 'weight'"
    ):
        F.nll_loss(x, ember.tensor([0, 1]), weight=ember.ones(3).requires_grad_())
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, x)
    with pytest.raises(RuntimeError, match="All input tensors should have same dimension"):
        F.margin_ranking_loss(ember.tensor(1.0), x[0], ember.ones(3))
    with pytest.raises(
        RuntimeError,
        match=r"1D target tensor expects 2D input tensors, but found "
        r"inputs with sizes \[2, 3, 4\] and \[2, 3, 4\]\.",
    ):
        F.cosine_embedding_loss(ember.randn(2, 3, 4), ember.randn(2, 3, 4), ember.ones(2))
    with pytest.raises(RuntimeError, match="expected to have the same number of dimensions"):
        F.triplet_margin_loss(x, x, x[0])
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(x, x, -ember.ones(2, 3))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, ember.ones(4))
    with pytest.raises(ValueError, match="x is not valid"):
        F.gaussian_nll_loss(x, x, ember.ones(2, 3), reduction="x")
    with pytest.raises(ValueError, match="x is not a valid value for reduction"):
        F.poisson_nll_loss(x, x, reduction="x")


def test_ctc_errors():
    lp = ember.randn(6, 2, 4).log_softmax(2)
    tg = ember.tensor([[1, 2, 3], [1, 1, 2]])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, [6, 5], [3, 2], blank=4)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [6], [3, 2])
    with pytest.raises(RuntimeError, match="target_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [6, 5], [3])
    with pytest.raises(
        RuntimeError, match="Expected input_lengths to have value at most 6, but got value 7"
    ):
        F.ctc_loss(lp, tg, [7, 5], [3, 2])
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at least 0"):
        F.ctc_loss(lp, tg, [-1, 5], [3, 2])
    with pytest.raises(RuntimeError, match="Expected target_lengths to have value at least 0"):
        F.ctc_loss(lp, tg, [6, 5], [3, -1])
    with pytest.raises(
        RuntimeError,
        match="Expected tensor to have size at least 4 at dimension "
        "1, but got size 3 for argument #2 'targets'",
    ):
        F.ctc_loss(lp, tg, [6, 5], [4, 2])
    with pytest.raises(
        RuntimeError, match="Expected tensor to have size 5 at dimension 0, but got size 3"
    ):
        F.ctc_loss(lp, ember.tensor([1, 2, 3]), [6, 5], [3, 2])
    with pytest.raises(IndexError, match="target 9 is out of bounds for 4 classes"):
        F.ctc_loss(lp, ember.tensor([[9, 1, 1], [1, 1, 1]]), [6, 5], [3, 2])
    with pytest.raises(NotImplementedError, match="ctc_loss"):
        F.ctc_loss(lp.half(), tg, [6, 5], [3, 2])
    with pytest.raises(RuntimeError, match="Expected 3-dimensional tensor"):
        F.ctc_loss(lp[0, 0], tg, [6, 5], [3, 2])
