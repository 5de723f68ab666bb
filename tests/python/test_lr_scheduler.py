"""ember.optim.lr_scheduler: every scheduler's learning-rate (and momentum) sequence equals
torch's over 40 steps (skipped without torch), state_dict round trips, warnings and errors."""

import copy
import math
import warnings

import pytest

import ember
from ember.optim import lr_scheduler as elrs

STEPS = 40


def make_optimizer(lib, kind="SGD"):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.05}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


class Scale:
    """A callable object: its __dict__ is saved in state_dict (functions are not)."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, epoch):
        return self.factor**epoch


# name -> (optimizer kind, factory(lr_scheduler module, optimizer) -> scheduler)
SCHEDULERS = {
    "StepLR": ("SGD", lambda m, o: m.StepLR(o, step_size=5, gamma=0.5)),
    "StepLR-default-gamma": ("SGD", lambda m, o: m.StepLR(o, 3)),
    "MultiStepLR": ("SGD", lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3)),
    "ExponentialLR": ("SGD", lambda m, o: m.ExponentialLR(o, gamma=0.9)),
    "CosineAnnealingLR": ("SGD", lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    "CosineAnnealingLR-T7": ("Adam", lambda m, o: m.CosineAnnealingLR(o, T_max=7)),
    "CosineAnnealingWarmRestarts": (
        "SGD",
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    ),
    "CosineAnnealingWarmRestarts-T1": ("SGD", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7)),
    "LambdaLR": ("SGD", lambda m, o: m.LambdaLR(o, lambda e: 0.95**e)),
    "LambdaLR-per-group": (
        "SGD",
        lambda m, o: m.LambdaLR(o, [lambda e: 1.0 / (e + 1), Scale(0.9)]),
    ),
    "MultiplicativeLR": ("SGD", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.97)),
    "LinearLR": ("SGD", lambda m, o: m.LinearLR(o, start_factor=0.25, total_iters=8)),
    "LinearLR-decay": (
        "SGD",
        lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10),
    ),
    "ConstantLR": ("SGD", lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4)),
    "ConstantLR-default": ("SGD", lambda m, o: m.ConstantLR(o)),
    "PolynomialLR": ("SGD", lambda m, o: m.PolynomialLR(o, total_iters=10, power=2.0)),
    "PolynomialLR-default": ("SGD", lambda m, o: m.PolynomialLR(o)),
    "OneCycleLR": ("SGD", lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS)),
    "OneCycleLR-linear-3phase": (
        "SGD",
        lambda m, o: m.OneCycleLR(
            o, max_lr=0.8, epochs=4, steps_per_epoch=10, anneal_strategy="linear", three_phase=True
        ),
    ),
    "OneCycleLR-adam": (
        "Adam",
        lambda m, o: m.OneCycleLR(
            o, max_lr=0.01, total_steps=50, pct_start=0.25, div_factor=10.0, final_div_factor=100.0
        ),
    ),
    "OneCycleLR-no-momentum": (
        "SGD",
        lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=45, cycle_momentum=False),
    ),
    "CyclicLR": ("SGD", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "CyclicLR-triangular2": (
        "SGD",
        lambda m, o: m.CyclicLR(
            o,
            base_lr=[0.01, 0.02],
            max_lr=[0.1, 0.3],
            step_size_up=3,
            step_size_down=5,
            mode="triangular2",
        ),
    ),
    "CyclicLR-exp_range-adam": (
        "Adam",
        lambda m, o: m.CyclicLR(
            o,
            base_lr=0.001,
            max_lr=0.01,
            step_size_up=5,
            mode="exp_range",
            gamma=0.9,
            base_momentum=0.85,
            max_momentum=0.95,
        ),
    ),
    "CyclicLR-scale_fn": (
        "SGD",
        lambda m, o: m.CyclicLR(
            o,
            0.01,
            0.1,
            step_size_up=3,
            scale_fn=lambda x: 0.5 * (1 + math.sin(x)),
            scale_mode="iterations",
            cycle_momentum=False,
        ),
    ),
    "SequentialLR": (
        "SGD",
        lambda m, o: m.SequentialLR(
            o,
            [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)],
            milestones=[5],
        ),
    ),
    "SequentialLR-3": (
        "SGD",
        lambda m, o: m.SequentialLR(
            o,
            [
                m.LinearLR(o, start_factor=0.1, total_iters=5),
                m.CosineAnnealingLR(o, T_max=10),
                m.StepLR(o, step_size=4, gamma=0.5),
            ],
            milestones=[5, 15],
        ),
    ),
    "ChainedScheduler": (
        "SGD",
        lambda m, o: m.ChainedScheduler(
            [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)]
        ),
    ),
    "ChainedScheduler-warmup-cosine": (
        "Adam",
        lambda m, o: m.ChainedScheduler(
            [m.LinearLR(o, start_factor=0.2, total_iters=6), m.CosineAnnealingLR(o, T_max=9)],
            optimizer=o,
        ),
    ),
}


def group_values(opt):
    vals = []
    for g in opt.param_groups:
        vals.append(g["lr"])
        if "momentum" in g:
            vals.append(g["momentum"])
        if "betas" in g:
            vals.append(tuple(g["betas"]))
    return vals


def lr_sequence(lib, name, steps=STEPS):
    kind, factory = SCHEDULERS[name]
    opt = make_optimizer(lib, kind)
    sched = factory(lib.optim.lr_scheduler, opt)
    seq = [(sched.get_last_lr(), group_values(opt))]
    total = getattr(sched, "total_steps", steps + 1)
    for _ in range(min(steps, total - 1)):
        opt.step()
        sched.step()
        seq.append((list(sched.get_last_lr()), group_values(opt)))
    return seq, sched


def comparable(state):
    """A scheduler state_dict without entries that cannot be compared across libraries."""
    out = {}
    for k, v in state.items():
        if k == "_schedulers":
            out[k] = [comparable(s) for s in v]
        elif k in ("lr_lambdas", "_scale_fn_custom", "_scale_fn_ref"):
            out[k] = v if not callable(v) else "callable"
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_sequence_and_state_dict_match_torch(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_seq, e_sched = lr_sequence(ember, name)
        t_seq, t_sched = lr_sequence(torch, name)
    assert e_seq == t_seq
    assert type(e_sched).__name__ == type(t_sched).__name__
    e_sd, t_sd = comparable(e_sched.state_dict()), comparable(t_sched.state_dict())
    assert list(e_sd) == list(t_sd)
    assert e_sd == t_sd


@pytest.mark.parametrize(
    "name",
    [
        "StepLR",
        "CosineAnnealingLR",
        "OneCycleLR",
        "CyclicLR",
        "SequentialLR",
        "ChainedScheduler",
        "LambdaLR-per-group",
        "CosineAnnealingWarmRestarts",
        "PolynomialLR",
    ],
)
def test_state_dict_round_trip_resumes_the_schedule(name):
    kind, factory = SCHEDULERS[name]
    full, _ = lr_sequence(ember, name, steps=30)

    opt = make_optimizer(ember, kind)
    sched = factory(elrs, opt)
    for _ in range(12):
        opt.step()
        sched.step()
    opt_state, sched_state = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())

    opt2 = make_optimizer(ember, kind)
    sched2 = factory(elrs, opt2)
    sched2.load_state_dict(sched_state)
    opt2.load_state_dict(opt_state)
    resumed = []
    for _ in range(30 - 12):
        opt2.step()
        sched2.step()
        resumed.append((list(sched2.get_last_lr()), group_values(opt2)))
    assert resumed == full[13:]


@pytest.mark.parametrize(
    "modes",
    [
        dict(),
        dict(mode="max", factor=0.5, patience=2),
        dict(threshold_mode="abs", threshold=0.05, patience=1, cooldown=2),
        dict(mode="max", threshold_mode="abs", min_lr=[0.02, 0.001], patience=0),
        dict(factor=0.3, patience=3, min_lr=0.004, eps=1e-3),
    ],
)
def test_reduce_lr_on_plateau_matches_torch(modes):
    torch = pytest.importorskip("torch")
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.89, 0.9, 0.91, 0.5] * 5

    def run(lib):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **modes)
        out = []
        for i, m in enumerate(metrics):
            opt.step()
            sched.step(lib.tensor(m) if i % 2 else m)
            out.append(
                (
                    sched.get_last_lr(),
                    sched.num_bad_epochs,
                    sched.cooldown_counter,
                    sched.best,
                    sched.last_epoch,
                )
            )
        return out, sched

    (e_out, e_sched), (t_out, t_sched) = run(ember), run(torch)
    assert e_out == t_out
    assert e_sched.state_dict() == t_sched.state_dict()


def test_closed_form_with_epoch_argument_matches_torch():
    torch = pytest.importorskip("torch")
    for name in [
        "StepLR",
        "MultiStepLR",
        "ExponentialLR",
        "CosineAnnealingLR",
        "LinearLR",
        "ConstantLR",
        "PolynomialLR",
        "CosineAnnealingWarmRestarts",
    ]:
        kind, factory = SCHEDULERS[name]
        out = []
        for lib in (ember, torch):
            opt = make_optimizer(lib, kind)
            sched = factory(lib.optim.lr_scheduler, opt)
            seq = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for epoch in [3, 7, 2, 11, 4.5 if "Warm" in name else 4, 25]:
                    opt.step()
                    sched.step(epoch)
                    seq.append(sched.get_last_lr())
            out.append(seq)
        assert out[0] == out[1], name


def test_warning_when_scheduler_steps_before_optimizer():
    opt = make_optimizer(ember)
    sched = elrs.StepLR(opt, 2)
    with pytest.warns(
        UserWarning,
        match=r"Detected call of `lr_scheduler.step\(\)` before "
        r"`optimizer.step\(\)`",
    ):
        sched.step()
    opt = make_optimizer(ember)
    sched = elrs.StepLR(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_warning_when_optimizer_step_is_overridden():
    opt = make_optimizer(ember)
    sched = elrs.ExponentialLR(opt, 0.5)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
        sched.step()


def test_get_lr_outside_step_warns_and_deprecated_epoch_warns():
    opt = make_optimizer(ember)
    sched = elrs.ExponentialLR(opt, 0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(3)
    assert sched.get_last_lr() == [0.1 * 0.5**3, 0.05 * 0.5**3]
    assert sched.last_epoch == 3


def test_initial_lr_and_last_epoch():
    opt = make_optimizer(ember)
    with pytest.raises(KeyError, match=r"param 'initial_lr' is not specified in param_groups\[0\]"):
        elrs.StepLR(opt, 3, last_epoch=4)
    sched = elrs.StepLR(opt, 3)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
    assert sched.base_lrs == [0.1, 0.05] and sched.last_epoch == 0
    resumed = elrs.StepLR(opt, 3, last_epoch=5)
    assert resumed.last_epoch == 6


def test_tensor_lr_is_updated_in_place():
    p = ember.zeros(2, requires_grad=True)
    lr = ember.tensor(0.1)
    opt = ember.optim.SGD([p], lr=lr)
    sched = elrs.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and abs(lr.item() - 0.05) < 1e-9
    last = sched.get_last_lr()[0]
    assert isinstance(last, ember.Tensor) and last is not lr


def test_scheduler_errors():
    opt = make_optimizer(ember)
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        elrs.StepLR(3, 2)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        elrs.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got int"):
        elrs.MultiplicativeLR(opt, 3)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected"):
        elrs.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected"):
        elrs.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        elrs.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        elrs.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        elrs.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        elrs.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=2.0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        elrs.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        elrs.OneCycleLR(opt, max_lr=[0.1], total_steps=10)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        elrs.CyclicLR(opt, 0.1, 1.0, mode="bad")
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        elrs.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode other is unknown!"):
        elrs.ReduceLROnPlateau(opt, mode="other")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        elrs.ReduceLROnPlateau(opt, min_lr=[0.1])
    plateau = elrs.ReduceLROnPlateau(opt)
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        elrs.SequentialLR(opt, [plateau], milestones=[])
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        elrs.ChainedScheduler([])
    with pytest.raises(ValueError, match="number of milestone points"):
        elrs.SequentialLR(opt, [elrs.StepLR(opt, 2)], milestones=[3])
    other = make_optimizer(ember)
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        elrs.SequentialLR(opt, [elrs.StepLR(opt, 2), elrs.StepLR(other, 2)], milestones=[3])
    sgd_plain = ember.optim.Adagrad([ember.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        elrs.CyclicLR(sgd_plain, 0.1, 1.0)
    one = elrs.OneCycleLR(make_optimizer(ember), max_lr=0.1, total_steps=2)
    one.optimizer.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total"):
        one.step()


def test_lambda_state_dict_saves_callable_objects_only():
    opt = make_optimizer(ember)
    scale = Scale(0.9)
    sched = elrs.LambdaLR(opt, [lambda e: 1.0, scale])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"factor": 0.9}]
    scale2 = Scale(0.5)
    sched2 = elrs.LambdaLR(make_optimizer(ember), [lambda e: 1.0, scale2])
    sched2.load_state_dict(sd)
    assert scale2.factor == 0.9


def test_scheduler_and_base_classes_are_exported():
    for name in elrs.__all__:
        assert hasattr(elrs, name)
    assert issubclass(elrs.StepLR, elrs.LRScheduler)
    assert issubclass(elrs._LRScheduler, elrs.LRScheduler)
