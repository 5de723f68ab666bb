"""ember.optim without PyTorch: convergence, state_dict round trips, zero_grad and param groups,
hooks, the functional API, error messages, and the fused step's autograd, version-counter,
memory-overlap and large-tensor behaviour. (test_optim.py compares trajectories with torch.)"""

import copy
import warnings

import numpy as np
import pytest

import ember
import ember.optim as eoptim


def quadratic_problem(seed=0):
    rng = np.random.default_rng(seed)
    target = ember.from_numpy(rng.uniform(-2, 2, size=(6,)))
    p = ember.zeros(6, dtype=ember.float64, requires_grad=True)
    return p, target


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: eoptim.SGD(ps, lr=0.1),
        lambda ps: eoptim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
        lambda ps: eoptim.Adam(ps, lr=0.1),
        lambda ps: eoptim.AdamW(ps, lr=0.1, weight_decay=0.0),
        lambda ps: eoptim.RMSprop(ps, lr=0.05),
        lambda ps: eoptim.Adagrad(ps, lr=0.5),
        lambda ps: eoptim.Adadelta(ps, lr=10.0),
        lambda ps: eoptim.Adamax(ps, lr=0.1),
        lambda ps: eoptim.NAdam(ps, lr=0.1),
        lambda ps: eoptim.RAdam(ps, lr=0.1),
    ],
)
def test_converges_on_quadratic(make):
    p, target = quadratic_problem()
    opt = make([p])
    for _ in range(400):
        opt.zero_grad()
        loss = ((p - target) ** 2).sum()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), target.numpy(), atol=5e-2)


def test_lbfgs_converges_on_quadratic_with_closure():
    p, target = quadratic_problem()
    opt = eoptim.LBFGS([p], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((p - target) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(p.detach().numpy(), target.numpy(), atol=1e-6)


def sgd_closure_loop(opt, params, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((q - 0.5) ** 4).sum() for q in params)
        loss.backward()
        opt.step()


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: eoptim.SGD(ps, lr=0.05, momentum=0.9),
        lambda ps: eoptim.Adam(ps, lr=0.05, amsgrad=True),
        lambda ps: eoptim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
        lambda ps: eoptim.Adagrad(ps, lr=0.1),
        lambda ps: eoptim.Adadelta(ps),
        lambda ps: eoptim.Adamax(ps),
        lambda ps: eoptim.NAdam(ps),
        lambda ps: eoptim.RAdam(ps),
    ],
)
def test_state_dict_round_trip_restores_identical_steps(make):
    params = [
        ember.linspace(-1, 1, 6).reshape(2, 3).requires_grad_(True),
        ember.tensor([0.3, -0.2], requires_grad=True),
    ]
    opt = make(params)
    sgd_closure_loop(opt, params, 5)
    saved = copy.deepcopy(opt.state_dict())
    snapshot = [p.detach().clone() for p in params]
    sgd_closure_loop(opt, params, 5)
    expected = [p.detach().clone() for p in params]

    fresh = [s.clone().requires_grad_(True) for s in snapshot]
    opt2 = make(fresh)
    opt2.load_state_dict(saved)
    sgd_closure_loop(opt2, fresh, 5)
    for a, b in zip(fresh, expected):
        assert ember.equal(a.detach(), b)


def test_load_state_dict_casts_state_to_parameter_dtype():
    p = ember.zeros(3, requires_grad=True)
    opt = eoptim.Adam([p])
    p.grad = ember.ones(3)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    q = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    opt2 = eoptim.Adam([q])
    opt2.load_state_dict(sd)
    assert opt2.state[q]["exp_avg"].dtype == ember.float64
    assert opt2.state[q]["step"].dtype == ember.float32  # step keeps its dtype


def test_load_state_dict_errors():
    a, b = ember.zeros(2, requires_grad=True), ember.zeros(2, requires_grad=True)
    sd = eoptim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        eoptim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        eoptim.SGD([a], lr=0.1).load_state_dict(sd)


def test_state_dict_indices_and_named_parameters():
    a, b, c = (ember.zeros(2, requires_grad=True) for _ in range(3))
    opt = eoptim.SGD(
        [{"params": [("a", a)]}, {"params": [("b", b), ("c", c)], "lr": 0.5}], lr=0.1, momentum=0.9
    )
    for p in (a, b, c):
        p.grad = ember.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1, 2]]
    assert [g["param_names"] for g in sd["param_groups"]] == [["a"], ["b", "c"]]
    assert sorted(sd["state"]) == [0, 1, 2]
    assert sd["param_groups"][1]["lr"] == 0.5
    assert opt.state[b] is sd["state"][1]


def test_zero_grad():
    p = ember.ones(3, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    p.grad = ember.ones(3)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_params_without_grad_are_skipped():
    a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    opt = eoptim.Adam([a, b], lr=0.1)
    a.grad = ember.ones(2)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
    assert a.tolist() != [1.0, 1.0] and opt.state[a]["step"].item() == 1.0


def test_add_param_group():
    a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    opt = eoptim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["lr"] == 0.01
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([a])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {ember.ones(1, requires_grad=True)}})


def test_duplicate_parameter_in_group_warns():
    a = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        eoptim.SGD([a, a], lr=0.1)


def test_required_parameter():
    from ember.optim.optimizer import required

    class Custom(eoptim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": required})

    assert repr(required) == "<required parameter>"
    with pytest.raises(ValueError, match="didn't specify a value of required optimization"):
        Custom([ember.ones(1, requires_grad=True)])
    assert Custom([{"params": [ember.ones(1, requires_grad=True)], "lr": 1}]).param_groups


def test_constructor_errors():
    p = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        eoptim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        eoptim.Adam([])
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        eoptim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the"):
        eoptim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        eoptim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero"):
        eoptim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        eoptim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        eoptim.RMSprop([p], eps=-1.0)
    with pytest.raises(ValueError, match="Invalid rho value"):
        eoptim.Adadelta([p], rho=1.5)
    with pytest.raises(ValueError, match="Invalid momentum_decay value"):
        eoptim.NAdam([p], momentum_decay=-1)
    with pytest.raises(ValueError, match="Invalid lr_decay value"):
        eoptim.Adagrad([p], lr_decay=-1)
    with pytest.raises(ValueError, match="betas must be either both floats or both Tensors"):
        eoptim.Adam([p], betas=(0.9, ember.tensor(0.99)))
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        eoptim.LBFGS([{"params": [p]}, {"params": [ember.ones(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        eoptim.Adam([p], fused=True, foreach=True)
    with pytest.warns(FutureWarning, match="ordering of tensors in sets"):
        eoptim.SGD({p}, lr=0.1)


def test_retained_grad_non_leaf_is_accepted():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    eoptim.SGD([y], lr=0.1)


def test_step_errors_name_the_parameter():
    p = ember.ones(3, requires_grad=True)
    opt = eoptim.Adam([p])
    p.grad = ember.ones(3)
    opt.step()
    opt.state[p]["exp_avg"] = ember.zeros(4)
    with pytest.raises(
        RuntimeError,
        match=r"\[adam\] exp_avg of parameter 0 has shape \(4,\) "
        r"but the parameter has shape \(3,\)",
    ):
        opt.step()
    opt.state[p]["exp_avg"] = ember.zeros(3, dtype=ember.float64)
    with pytest.raises(TypeError, match=r"\[adam\] exp_avg of parameter 0 has dtype float64 but"):
        opt.step()
    with pytest.raises(RuntimeError, match=r"\[sgd\] gradient of parameter 0 has shape \(2,\)"):
        ember._C._optim.sgd_step(
            [p],
            [ember.ones(2)],
            None,
            lr=0.1,
            momentum=0.0,
            dampening=0.0,
            weight_decay=0.0,
            nesterov=False,
            maximize=False,
        )
    q = ember.ones(3, dtype=ember.int64)
    with pytest.raises(TypeError, match="only floating point and complex parameters"):
        ember._C._optim.sgd_step(
            [q],
            [q],
            None,
            lr=0.1,
            momentum=0.0,
            dampening=0.0,
            weight_decay=0.0,
            nesterov=False,
            maximize=False,
        )
    with pytest.raises(ValueError, match=r"\[sgd\] expected 1 grads"):
        ember._C._optim.sgd_step(
            [p],
            [],
            None,
            lr=0.1,
            momentum=0.0,
            dampening=0.0,
            weight_decay=0.0,
            nesterov=False,
            maximize=False,
        )


def test_failed_step_leaves_everything_unchanged():
    # all tensors are validated before any update
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    opt = eoptim.Adam([a, b], lr=0.1)
    a.grad, b.grad = ember.ones(2), ember.ones(3)
    opt.step()
    opt.state[b]["exp_avg_sq"] = ember.zeros(5)
    before = (a.detach().clone(), opt.state[a]["step"].item())
    with pytest.raises(RuntimeError, match="parameter 1"):
        opt.step()
    assert ember.equal(a.detach(), before[0]) and opt.state[a]["step"].item() == before[1]


def test_differentiable_and_capturable_are_refused():
    p = ember.ones(2, requires_grad=True)
    p.grad = ember.ones(2)
    with pytest.raises(RuntimeError, match="differentiable=True is not supported"):
        eoptim.Adam([p], differentiable=True).step()
    with pytest.raises(AssertionError, match="If capturable=True, params and state_steps"):
        eoptim.Adam([p], capturable=True).step()


def test_step_records_no_history_and_bumps_versions():
    p = ember.ones(3, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1, momentum=0.9)
    y = (p * p).sum()  # saves p for backward
    y.backward(retain_graph=True)
    v = p._version
    with ember.enable_grad():
        opt.step()  # grad mode on: still no autograd history, no leaf in-place error
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p._version > v
    assert opt.state[p]["momentum_buffer"]._version == 0  # a fresh buffer
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_non_contiguous_parameters():
    base = ember.linspace(-1, 1, 12, dtype=ember.float64).reshape(3, 4)
    p = base.t().detach().requires_grad_(True)  # a leaf with transposed strides
    assert not p.is_contiguous()
    ref = p.detach().contiguous().requires_grad_(True)
    opts = [eoptim.Adam([p], lr=0.1), eoptim.Adam([ref], lr=0.1)]
    for _ in range(3):
        g = ember.cos(p.detach() * 3)
        p.grad = g.t().contiguous().t()  # non-contiguous gradient too
        ref.grad = g.contiguous()
        for o in opts:
            o.step()
    assert ember.equal(p.detach().contiguous(), ref.detach())
    assert p.stride() == (1, 4)


def test_lr_and_betas_as_tensors():
    a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    o1 = eoptim.Adam([a], lr=ember.tensor(0.1), betas=(ember.tensor(0.9), ember.tensor(0.99)))
    o2 = eoptim.Adam([b], lr=0.1, betas=(0.9, 0.99))
    for _ in range(3):
        a.grad, b.grad = a.detach() * 2, b.detach() * 2
        o1.step()
        o2.step()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        eoptim.SGD([a], lr=ember.ones(2))


def test_step_hooks_and_closure():
    p = ember.ones(2, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.5)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    g = eoptim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global"))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 2.0 and p.tolist() == [0.0, 0.0]
    assert calls == ["global", ("pre", True), ("post", True)]
    for h in (h1, h2, g):
        h.remove()
    opt.step(closure)
    assert len(calls) == 3


def test_pre_hook_can_replace_arguments():
    p = ember.ones(1, requires_grad=True)
    opt = eoptim.SGD([p], lr=1.0)
    p.grad = ember.ones(1)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: seen.append(1)}))
    opt.step()
    assert seen == [1]
    opt.register_step_pre_hook(lambda o, args, kwargs: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_state_dict_hooks():
    p = ember.ones(1, requires_grad=True)
    opt = eoptim.SGD([p], lr=1.0)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    seen = []
    opt.register_load_state_dict_pre_hook(lambda o, sd: seen.append("pre"))
    opt.register_load_state_dict_post_hook(lambda o: seen.append("post"), prepend=True)
    opt.load_state_dict(opt.state_dict())
    assert seen == ["pre", "post"]


def test_functional_api():
    p = ember.ones(3, requires_grad=True)
    bufs = [None]
    eoptim.functional.sgd(
        [p],
        [ember.ones(3)],
        bufs,
        weight_decay=0.0,
        momentum=0.9,
        lr=0.1,
        dampening=0.0,
        nesterov=False,
        maximize=False,
    )
    assert bufs[0].tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(p.detach().numpy(), [0.9] * 3, rtol=1e-6)
    steps = [ember.tensor(0.0)]
    m, v = ember.zeros(3), ember.zeros(3)
    eoptim.functional.adam(
        [p],
        [ember.ones(3)],
        [m],
        [v],
        [],
        steps,
        amsgrad=False,
        beta1=0.9,
        beta2=0.999,
        lr=0.1,
        weight_decay=0.0,
        eps=1e-8,
        maximize=False,
    )
    assert steps[0].item() == 1.0
    np.testing.assert_allclose(m.numpy(), [0.1] * 3, rtol=1e-6)
    with pytest.raises(RuntimeError, match="`state_steps` argument must contain a list of"):
        eoptim.functional.adam(
            [p],
            [ember.ones(3)],
            [m],
            [v],
            [],
            [1.0],
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=0.1,
            weight_decay=0.0,
            eps=1e-8,
            maximize=False,
        )


def test_large_parameter_is_updated_in_parallel_chunks():
    # above the kernels' grain size (and the GIL threshold): the parallel path equals NumPy's
    n = 300_000
    rng = np.random.default_rng(5)
    start, grad = rng.standard_normal(n), rng.standard_normal(n)
    p = ember.from_numpy(start.copy()).requires_grad_(True)
    opt = eoptim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01)
    buf = np.zeros(n)
    value = start.copy()
    for i in range(3):
        p.grad = ember.from_numpy(grad.copy())
        opt.step()
        d = grad + 0.01 * value
        buf = d if i == 0 else 0.9 * buf + d
        value = value - 0.1 * buf
    np.testing.assert_allclose(p.detach().numpy(), value, rtol=1e-12, atol=1e-12)


def test_no_warnings_in_plain_use():
    p = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt = eoptim.AdamW([p])
        p.grad = ember.ones(2)
        opt.step()
        opt.zero_grad()


def test_lbfgs_complex_parameter_converges():
    target = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    p = ember.zeros(3, dtype=ember.complex128, requires_grad=True)
    opt = eoptim.LBFGS([p], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        diff = p.detach().numpy() - target
        p.grad = ember.from_numpy(2 * diff)  # torch's convention: conj Wirtinger, real loss
        return ember.tensor(float((np.abs(diff) ** 2).sum()))

    opt.step(closure)
    np.testing.assert_allclose(p.detach().numpy(), target, atol=1e-6)


def test_overlapping_tensors():
    # a gradient that aliases the parameter is read from a copy (as if PyTorch's out-of-place
    # grad ops had run first); state sharing memory with the parameter is refused
    p = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    q = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ember._C._optim.sgd_step(
        [p],
        [p.detach()],
        None,
        lr=0.5,
        momentum=0.0,
        dampening=0.0,
        weight_decay=0.0,
        nesterov=False,
        maximize=False,
    )
    assert p.tolist() == [0.5, 1.0, 1.5]
    step = ember.tensor(0.0)
    with pytest.raises(
        RuntimeError,
        match=r"\[adam\] exp_avg_sq of parameter 0 shares memory "
        r"with exp_avg",
    ):
        buf = ember.zeros(3)
        ember._C._optim.adam_step(
            [q],
            [ember.ones(3)],
            [buf],
            [buf],
            None,
            [step],
            lr=0.1,
            beta1=0.9,
            beta2=0.99,
            eps=1e-8,
            weight_decay=0.0,
            amsgrad=False,
            maximize=False,
            decoupled_weight_decay=False,
        )
    # disjoint views of one storage are fine
    flat = ember.zeros(6)
    ember._C._optim.adam_step(
        [q],
        [ember.ones(3)],
        [flat[:3]],
        [flat[3:]],
        None,
        [step],
        lr=0.1,
        beta1=0.9,
        beta2=0.99,
        eps=1e-8,
        weight_decay=0.0,
        amsgrad=False,
        maximize=False,
        decoupled_weight_decay=False,
    )
    assert step.item() == 1.0 and flat[:3].tolist() == pytest.approx([0.1] * 3)
