"""Loss functions: gradcheck (float64) per option family and reduction, gradgradcheck for the
common ones, gradient semantics (target gradients, broadcasting), and PyTorch parity of values
and gradients for every loss and reduction."""

import warnings

import numpy as np
import pytest
from test_nn_loss import REDUCTIONS, np_log_softmax, rand, t64, uniform

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

# ---- gradients ------------------------------------------------------------------------------


def away_from_kinks(shape, seed, kinks=(0.0,)):
    """Differences x - y whose magnitude stays 0.1 away from every kink."""
    d = uniform(*shape, seed=seed, lo=0.15, hi=2.0) * np.where(
        rand(*shape, seed=seed + 1) > 0, 1, -1
    )
    for k in kinks:
        d = np.where(np.abs(np.abs(d) - k) < 0.1, d + 0.25 * np.sign(d), d)
    return d


def _index_target(shape, C, seed=4, ignore=True):
    t = np.random.default_rng(seed).integers(0, C, shape)
    if ignore:
        t.flat[0] = -100
    return ember.tensor(t)


GRAD_CASES = {}
for _red in REDUCTIONS:
    GRAD_CASES[f"mse-{_red}"] = (
        lambda x, y, r=_red: F.mse_loss(x, y, reduction=r),
        lambda: [rand(3, 4), rand(3, 4, seed=1)],
    )
    GRAD_CASES[f"l1-{_red}"] = (
        lambda x, y, r=_red: F.l1_loss(x, y, reduction=r),
        lambda: [rand(3, 4), rand(3, 4) - away_from_kinks((3, 4), 2)],
    )
    GRAD_CASES[f"smooth_l1-{_red}"] = (
        lambda x, y, r=_red: F.smooth_l1_loss(x, y, reduction=r, beta=0.8),
        lambda: [rand(3, 4), rand(3, 4) - away_from_kinks((3, 4), 3, (0.0, 0.8))],
    )
    GRAD_CASES[f"huber-{_red}"] = (
        lambda x, y, r=_red: F.huber_loss(x, y, reduction=r, delta=0.7),
        lambda: [rand(3, 4), rand(3, 4) - away_from_kinks((3, 4), 4, (0.7,))],
    )
    GRAD_CASES[f"bce-{_red}"] = (
        lambda x, y, r=_red: F.binary_cross_entropy(x, y, t64(uniform(4, seed=9)), reduction=r),
        lambda: [uniform(3, 4), uniform(3, 4, seed=1)],
    )
    GRAD_CASES[f"bce_logits-{_red}"] = (
        lambda x, y, r=_red: F.binary_cross_entropy_with_logits(
            x, y, t64(uniform(4, seed=9)), reduction=r, pos_weight=t64(uniform(4, seed=8) + 1)
        ),
        lambda: [rand(3, 4), uniform(3, 4, seed=1)],
    )
    GRAD_CASES[f"nll-{_red}"] = (
        lambda x, r=_red: F.nll_loss(
            x, _index_target((3, 2), 4), t64(uniform(4, seed=9)), reduction=r
        ),
        lambda: [rand(3, 4, 2)],
    )
    GRAD_CASES[f"ce-{_red}"] = (
        lambda x, r=_red: F.cross_entropy(
            x, _index_target((5,), 4), t64(uniform(4, seed=9)), reduction=r, label_smoothing=0.2
        ),
        lambda: [rand(5, 4)],
    )
    GRAD_CASES[f"ce_kd-{_red}"] = (
        lambda x, r=_red: F.cross_entropy(
            x, _index_target((2, 3), 4), reduction=r, label_smoothing=0.1
        ),
        lambda: [rand(2, 4, 3)],
    )
    GRAD_CASES[f"ce_prob-{_red}"] = (
        lambda x, p, r=_red: F.cross_entropy(
            x, p, t64(uniform(4, seed=9)), reduction=r, label_smoothing=0.3
        ),
        lambda: [rand(3, 4), uniform(3, 4, seed=1)],
    )
    GRAD_CASES[f"kl-{_red}"] = (
        lambda x, y, r=_red: F.kl_div(x, y, reduction=r),
        lambda: [rand(3, 4), uniform(3, 4, seed=1)],
    )
    GRAD_CASES[f"kl_log-{_red}"] = (
        lambda x, y, r=_red: F.kl_div(x, y, reduction=r, log_target=True),
        lambda: [rand(3, 4), rand(3, 4, seed=1)],
    )
    GRAD_CASES[f"margin-{_red}"] = (
        lambda a, b, r=_red: F.margin_ranking_loss(a, b, t64([1.0, -1.0, 1.0]), 0.1, reduction=r),
        lambda: [rand(3), rand(3) + away_from_kinks((3,), 5, (0.1,))],
    )
    GRAD_CASES[f"cosine-{_red}"] = (
        lambda a, b, r=_red: F.cosine_embedding_loss(
            a, b, t64([1.0, -1.0, -1.0]), -0.5, reduction=r
        ),
        lambda: [rand(3, 4), rand(3, 4, seed=1)],
    )
    GRAD_CASES[f"triplet-{_red}"] = (
        lambda a, p, n, r=_red: F.triplet_margin_loss(
            a, p, n, margin=3.0, p=1.5, swap=True, reduction=r
        ),
        lambda: [rand(3, 4), rand(3, 4, seed=1), rand(3, 4, seed=2)],
    )
    GRAD_CASES[f"poisson-{_red}"] = (
        lambda x, y, r=_red: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction=r),
        lambda: [uniform(3, 4), uniform(3, 4, seed=1, lo=1.5, hi=3)],
    )
    GRAD_CASES[f"gaussian-{_red}"] = (
        lambda x, y, v, r=_red: F.gaussian_nll_loss(x, y, v, full=True, reduction=r),
        lambda: [rand(3, 4), rand(3, 4, seed=1), uniform(3, 4, seed=2)],
    )
    GRAD_CASES[f"ctc-{_red}"] = (
        lambda x, r=_red: F.ctc_loss(
            F.log_softmax(x, 2), ember.tensor([[1, 2], [1, 1]]), [5, 4], [2, 1], reduction=r
        ),
        lambda: [rand(5, 2, 3)],
    )
GRAD_CASES["ce_1d"] = (lambda x: F.cross_entropy(x, ember.tensor(2)), lambda: [rand(4)])
GRAD_CASES["ce_1d_prob"] = (lambda x, p: F.cross_entropy(x, p), lambda: [rand(4), uniform(4)])
GRAD_CASES["ce_ignore_0"] = (
    lambda x: F.cross_entropy(x, ember.tensor([0, 1, 2, 0]), ignore_index=0),
    lambda: [rand(4, 3)],
)
GRAD_CASES["ctc_zero_inf"] = (
    lambda x: F.ctc_loss(
        F.log_softmax(x, 2),
        ember.tensor([[1, 1, 1], [1, 2, 0]]),
        [3, 3],
        [3, 2],
        reduction="sum",
        zero_infinity=True,
    ),
    lambda: [rand(3, 2, 3)],
)
GRAD_CASES["ctc_concat"] = (
    lambda x: F.ctc_loss(F.log_softmax(x, 2), ember.tensor([2, 1, 2]), [4, 4], [2, 1], blank=0),
    lambda: [rand(4, 2, 3)],
)

GRADGRAD = [
    "mse-mean",
    "mse-none",
    "ce-mean",
    "ce-none",
    "ce_kd-sum",
    "ce_prob-mean",
    "ce_1d",
    "nll-mean",
    "bce-mean",
    "bce_logits-sum",
    "smooth_l1-mean",
    "huber-none",
    "l1-sum",
    "kl-mean",
]


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(name):
    fn, make = GRAD_CASES[name]
    args = [t64(a, True) for a in make()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(fn, args)


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck(name):
    fn, make = GRAD_CASES[name]
    args = [t64(a, True) for a in make()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradgradcheck(fn, args)


def test_grad_fn_names_and_target_gradients():
    x, y = t64(rand(3, 4), True), t64(rand(3, 4, seed=1), True)
    assert F.mse_loss(x, y).grad_fn.name() == "MseLossBackward0"
    assert F.cross_entropy(x, ember.tensor([0, 1, 2])).grad_fn.name() == "CrossEntropyLossBackward0"
    assert F.nll_loss(x, ember.tensor([0, 1, 2])).grad_fn.name() == "NllLossBackward0"
    assert (
        F.binary_cross_entropy_with_logits(x, y.sigmoid()).grad_fn.name()
        == "BinaryCrossEntropyWithLogitsBackward0"
    )
    F.mse_loss(x, y, reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (x.numpy() - y.numpy()))
    np.testing.assert_allclose(y.grad.numpy(), -2 * (x.numpy() - y.numpy()))
    # Broadcast target: its gradient is summed back to its shape.
    x, y = t64(rand(3, 4), True), t64(rand(4, seed=1), True)
    with pytest.warns(UserWarning):
        F.mse_loss(x, y).backward()
    np.testing.assert_allclose(y.grad.numpy(), (-2 * (x.numpy() - y.numpy()) / 12).sum(0))
    # Probability targets get a gradient; index targets cannot.
    p = t64(uniform(3, 4), True)
    F.cross_entropy(x.detach(), p).backward()
    np.testing.assert_allclose(p.grad.numpy(), -np_log_softmax(x.numpy(), 1) / 3, rtol=1e-12)


# ---- PyTorch parity ------------------------------------------------------------------------


def _parity(torch, fe, ft, arrays, grad_mask, tol, g_seed=0):
    ts = [torch.tensor(a, requires_grad=m) for a, m in zip(arrays, grad_mask)]
    es = [ember.tensor(a).requires_grad_(m) for a, m in zip(arrays, grad_mask)]
    ty, ey = ft(*ts), fe(*es)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(g_seed).standard_normal(tuple(ty.shape)).astype(arrays[0].dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    for e, t, m in zip(es, ts, grad_mask):
        if m:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 3e-5)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_torch_parity(dtype, tol, reduction):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    r = reduction
    x, y = rand(6, 5).astype(dtype), rand(6, 5, seed=1).astype(dtype)
    p, q = uniform(6, 5).astype(dtype), uniform(6, 5, seed=1).astype(dtype)
    w = uniform(5, seed=2).astype(dtype)
    tgt = np.array([0, 4, -100, 1, 3, 2])
    xk = rand(3, 5, 4, 70).astype(dtype)
    tk = np.random.default_rng(3).integers(0, 5, (3, 4, 70))
    tk[0, 0, 0] = -100
    cases = [
        ("mse_loss", {}, [x, y], [True, True]),
        ("l1_loss", {}, [x, y], [True, True]),
        ("smooth_l1_loss", {"beta": 0.5}, [x, y], [True, True]),
        ("huber_loss", {"delta": 0.5}, [x, y], [True, True]),
        ("binary_cross_entropy", {}, [p, q, w], [True, True, False]),
        ("binary_cross_entropy_with_logits", {"pos_weight": "w"}, [x, q, w], [True, True, False]),
        ("kl_div", {"log_target": True}, [x, y], [True, True]),
        ("poisson_nll_loss", {"full": True}, [x, q * 3], [True, True]),
        ("gaussian_nll_loss", {"full": True}, [x, y, p], [True, True, True]),
        ("triplet_margin_loss", {"swap": True}, [x, y, p], [True, True, True]),
    ]
    for name, kw, arrays, mask in cases:
        kw = dict(kw)
        extra = {}
        if kw.get("pos_weight") == "w":
            del kw["pos_weight"]
            extra = {"pos_weight": w + 1}
        fe = lambda *a, n=name, kw=kw, extra=extra: getattr(F, n)(  # noqa: E731
            *a, reduction=r, **kw, **{k: ember.tensor(v) for k, v in extra.items()}
        )
        ft = lambda *a, n=name, kw=kw, extra=extra: getattr(tf, n)(  # noqa: E731
            *a, reduction=r, **kw, **{k: torch.tensor(v) for k, v in extra.items()}
        )
        _parity(torch, fe, ft, arrays, mask, tol)
    for ls in [0.0, 0.25]:
        _parity(
            torch,
            lambda a, b: F.cross_entropy(a, ember.tensor(tgt), b, reduction=r, label_smoothing=ls),
            lambda a, b: tf.cross_entropy(a, torch.tensor(tgt), b, reduction=r, label_smoothing=ls),
            [x, w],
            [True, False],
            tol,
        )
        _parity(
            torch,
            lambda a, b: F.cross_entropy(a, b, reduction=r, label_smoothing=ls),
            lambda a, b: tf.cross_entropy(a, b, reduction=r, label_smoothing=ls),
            [x, p],
            [True, True],
            tol,
        )
        _parity(
            torch,
            lambda a: F.cross_entropy(a, ember.tensor(tk), reduction=r, label_smoothing=ls),
            lambda a: tf.cross_entropy(a, torch.tensor(tk), reduction=r, label_smoothing=ls),
            [xk],
            [True],
            tol,
        )
    _parity(
        torch,
        lambda a, b: F.nll_loss(a, ember.tensor(tgt), b, reduction=r),
        lambda a, b: tf.nll_loss(a, torch.tensor(tgt), b, reduction=r),
        [x, w],
        [True, False],
        tol,
    )
    _parity(
        torch,
        lambda a: F.nll_loss(a, ember.tensor(tk), reduction=r),
        lambda a: tf.nll_loss(a, torch.tensor(tk), reduction=r),
        [xk],
        [True],
        tol,
    )
    lab = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0], dtype=dtype)
    _parity(
        torch,
        lambda a, b, c: F.cosine_embedding_loss(a, b, c, 0.2, reduction=r),
        lambda a, b, c: tf.cosine_embedding_loss(a, b, c, 0.2, reduction=r),
        [x, y, lab],
        [True, True, False],
        tol,
    )
    _parity(
        torch,
        lambda a, b, c: F.margin_ranking_loss(a, b, c, 0.2, reduction=r),
        lambda a, b, c: tf.margin_ranking_loss(a, b, c, 0.2, reduction=r),
        [x[:, 0].copy(), y[:, 0].copy(), lab],
        [True, True, False],
        tol,
    )
    lp = np_log_softmax(rand(30, 4, 6, seed=5), 2).astype(dtype)
    ctg = np.random.default_rng(6).integers(1, 6, (4, 8))
    il, tl = [30, 25, 20, 12], [8, 5, 3, 0]
    _parity(
        torch,
        lambda a: F.ctc_loss(a, ember.tensor(ctg), il, tl, reduction=r),
        lambda a: tf.ctc_loss(a, torch.tensor(ctg), il, tl, reduction=r),
        [lp],
        [True],
        tol * 10,
    )
