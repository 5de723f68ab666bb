"""ember.optim.swa_utils: AveragedModel (SWA mean, EMA, avg_fn / multi_avg_fn, use_buffers,
state_dict layout), SWALR's schedule against the closed form, update_bn against the batch
statistics, and a short SWA training run; PyTorch parity where installed."""

import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.optim.swa_utils import (
    SWALR,
    AveragedModel,
    get_ema_avg_fn,
    get_ema_multi_avg_fn,
    get_swa_avg_fn,
    update_bn,
)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_swa_mean(dtype):
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).to(dtype)
    swa = AveragedModel(model)
    snaps = []
    ember.manual_seed(0)
    for _ in range(5):
        with ember.no_grad():
            for p in model.parameters():
                p.add_(ember.randn_like(p))
        snaps.append([p.detach().numpy().copy() for p in model.parameters()])
        swa.update_parameters(model)
    assert swa.n_averaged.item() == 5 and swa.n_averaged.dtype == ember.long
    rtol = 1e-5 if dtype == ember.float32 else 1e-12
    for i, p in enumerate(swa.module.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), np.mean([s[i] for s in snaps], 0),
                                   rtol=rtol, atol=rtol)


@pytest.mark.parametrize("kind", ["ema_multi", "ema", "swa_fn"])
def test_ema_and_custom_fns(kind):
    decay = 0.9
    model = nn.Linear(3, 2).double()
    if kind == "ema_multi":
        avg = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay))
    elif kind == "ema":
        avg = AveragedModel(model, avg_fn=get_ema_avg_fn(decay))
    else:
        avg = AveragedModel(model, avg_fn=get_swa_avg_fn())
    ember.manual_seed(0)
    ref = None
    snaps = []
    for _ in range(4):
        with ember.no_grad():
            for p in model.parameters():
                p.add_(ember.randn_like(p))
        cur = [p.detach().numpy().copy() for p in model.parameters()]
        snaps.append(cur)
        if ref is None:
            ref = [c.copy() for c in cur]
        elif kind == "swa_fn":
            ref = [np.mean([s[i] for s in snaps], 0) for i in range(len(cur))]
        else:
            ref = [decay * r + (1 - decay) * c for r, c in zip(ref, cur)]
        avg.update_parameters(model)
    for p, r in zip(avg.module.parameters(), ref):
        np.testing.assert_allclose(p.detach().numpy(), r, rtol=1e-12)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        AveragedModel(model, avg_fn=get_swa_avg_fn(), multi_avg_fn=get_ema_multi_avg_fn())


def test_buffers_copied_or_averaged_and_state_dict_layout():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    avg = AveragedModel(model)
    keys = list(avg.state_dict())
    assert keys[0] == "n_averaged"  # own buffers come before the submodule's keys
    assert set(keys) == {"module." + k for k in model.state_dict()} | {"n_averaged"}
    model[1].running_mean.fill_(3.0)
    avg.update_parameters(model)
    model[1].running_mean.fill_(5.0)
    avg.update_parameters(model)
    # Without use_buffers, the buffers follow the model.
    np.testing.assert_allclose(avg.module[1].running_mean.numpy(), 5.0)
    avg_b = AveragedModel(model, use_buffers=True)
    model[1].running_mean.fill_(1.0)
    avg_b.update_parameters(model)
    model[1].running_mean.fill_(3.0)
    avg_b.update_parameters(model)
    np.testing.assert_allclose(avg_b.module[1].running_mean.numpy(), 2.0)
    # An AveragedModel's state_dict loads into another one.
    other = AveragedModel(model)
    other.load_state_dict(avg.state_dict())
    assert other.n_averaged.item() == 2


def ref_swalr(lr0, swa_lr, anneal_epochs, strategy, steps):
    f = (lambda t: (1 - math.cos(math.pi * t)) / 2) if strategy == "cos" else (lambda t: t)
    out = []
    for step in range(steps):
        s = max(1, step) if anneal_epochs == 0 else step
        t = max(0.0, min(1.0, s / max(1, anneal_epochs)))
        a = f(t)
        out.append(swa_lr * a + lr0 * (1 - a))
    return out


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 5])
def test_swalr_schedule(strategy, anneal_epochs):
    p = nn.Parameter(ember.zeros(2))
    q = nn.Parameter(ember.zeros(2))
    opt = ember.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=1.0)
    sched = SWALR(opt, swa_lr=[0.05, 0.1], anneal_epochs=anneal_epochs,
                  anneal_strategy=strategy)
    got = [[g["lr"] for g in opt.param_groups]]
    for _ in range(8):
        opt.step()
        sched.step()
        got.append([g["lr"] for g in opt.param_groups])
    got = np.array(got)
    np.testing.assert_allclose(got[:, 0], ref_swalr(1.0, 0.05, anneal_epochs, strategy, 9),
                               rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], ref_swalr(0.5, 0.1, anneal_epochs, strategy, 9),
                               rtol=1e-12)
    assert opt.param_groups[0]["swa_lr"] == 0.05


def test_swalr_errors():
    opt = ember.optim.SGD([nn.Parameter(ember.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must by one of"):
        SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        SWALR(opt, [0.1, 0.2])


def test_update_bn_matches_batch_statistics():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2),
                          nn.BatchNorm1d(2))
    data = [ember.randn(8, 3) * 2 + 1 for _ in range(5)]
    model.eval()
    update_bn([(d, 0) for d in data], model)
    assert not model.training
    x = ember.cat(data)
    h = model[0](x).detach().numpy()
    np.testing.assert_allclose(model[1].running_mean.numpy(), h.mean(0), rtol=1e-4, atol=1e-6)
    # Cumulative average of the per-batch unbiased variances.
    var = np.mean([model[0](d).detach().numpy().var(0, ddof=1) for d in data], 0)
    np.testing.assert_allclose(model[1].running_var.numpy(), var, rtol=1e-4)
    assert model[1].momentum == 0.1
    update_bn(data, nn.Linear(2, 2))  # no BatchNorm: nothing to do


def test_swa_training_run_then_update_bn():
    # The usual recipe: train, then average the weights over the last epochs with SWALR, then
    # recompute the BatchNorm statistics for the averaged weights.
    ember.manual_seed(0)
    x = ember.randn(64, 4)
    y = (x @ ember.tensor([[1.0], [-2.0], [0.5], [3.0]])) + 0.1 * ember.randn(64, 1)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    swa_model = AveragedModel(model)
    sched = SWALR(opt, swa_lr=0.01, anneal_epochs=3)
    batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 64, 16)]
    snaps = []
    for epoch in range(12):
        for xb, yb in batches:
            opt.zero_grad()
            F.mse_loss(model(xb), yb).backward()
            opt.step()
        if epoch >= 6:
            swa_model.update_parameters(model)
            snaps.append([p.detach().numpy().copy() for p in model.parameters()])
            sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)
    for i, p in enumerate(swa_model.module.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), np.mean([s[i] for s in snaps], 0),
                                   rtol=1e-5, atol=1e-6)
    update_bn(batches, swa_model)
    swa_model.eval()
    loss = F.mse_loss(swa_model(x), y).item()
    assert loss < F.mse_loss(ember.zeros_like(y), y).item() * 0.2


def test_pytorch_parity_swalr_and_state_dict():
    torch = pytest.importorskip("torch")
    tp = torch.nn.Parameter(torch.zeros(2))
    topt = torch.optim.SGD([tp], lr=1.0)
    tsched = torch.optim.swa_utils.SWALR(topt, swa_lr=0.05, anneal_epochs=4)
    ep = nn.Parameter(ember.zeros(2))
    eopt = ember.optim.SGD([ep], lr=1.0)
    esched = SWALR(eopt, swa_lr=0.05, anneal_epochs=4)
    for _ in range(7):
        topt.step()
        tsched.step()
        eopt.step()
        esched.step()
        assert eopt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"], rel=1e-12)
    tm = torch.optim.swa_utils.AveragedModel(torch.nn.Sequential(torch.nn.Linear(2, 2),
                                                                 torch.nn.BatchNorm1d(2)))
    em = AveragedModel(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
    assert list(tm.state_dict()) == list(em.state_dict())
