"""ember.amp.GradScaler and ember.cuda.amp.GradScaler: training with the scaler equals training
without it when nothing overflows, injected infs/NaNs skip the step and back the scale off, the
scale grows after growth_interval good steps, state_dict / pickling round trips, the disabled
pass-through, the errors for misuse, and the scale sequence and parameters against
torch.amp.GradScaler("cpu") (skipped without torch)."""

import pickle
import warnings

import numpy as np
import pytest

import ember
from ember.amp import GradScaler
from ember.amp.grad_scaler import OptState

W0 = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
X = (np.arange(20, dtype=np.float32).reshape(5, 4) - 10.0) / 10.0
Y = np.linspace(0.0, 1.0, 15, dtype=np.float32).reshape(5, 3)


def make_model(lib=ember, momentum=0.9, lr=0.1):
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(W0))
        model.bias.copy_(lib.tensor([0.1, -0.2, 0.3]))
    opt = lib.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    return model, opt


def loss_of(lib, model):
    return ((model(lib.tensor(X)) - lib.tensor(Y)) ** 2).mean()


def params_of(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def train(lib, scaler, steps, infs=None):
    """Train with the scaler; infs maps step -> a value written into weight.grad[0, 0] after
    backward (an overflowing gradient). Returns the parameters and (scale, tracker) per step."""
    infs = infs or {}
    model, opt = make_model(lib)
    history = []
    for i in range(steps):
        opt.zero_grad()
        scaler.scale(loss_of(lib, model)).backward()
        if i in infs:
            model.weight.grad[0, 0] = infs[i]
        scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker()))
    return params_of(model), history


# --- training -----------------------------------------------------------------------------


def test_training_with_scaler_equals_training_without():
    model, opt = make_model()
    for _ in range(10):
        opt.zero_grad()
        loss_of(ember, model).backward()
        opt.step()
    expected = params_of(model)

    scaler = GradScaler(init_scale=2.0**16, growth_interval=4)
    got, history = train(ember, scaler, 10)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
    # no overflow: the scale only grew (every 4 steps)
    assert [s for s, _ in history] == [2.0**16] * 3 + [2.0**17] * 4 + [2.0**18] * 3


def test_scaled_loss_and_unscaled_grads():
    scaler = GradScaler(init_scale=1024.0)
    model, opt = make_model()
    loss = loss_of(ember, model)
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(loss.item() * 1024.0, rel=1e-6)
    scaled.backward()
    g_scaled = model.weight.grad.numpy().copy()
    scaler.unscale_(opt)
    np.testing.assert_allclose(model.weight.grad.numpy(), g_scaled / 1024.0, rtol=1e-6)
    assert scaler._found_inf_per_device(opt)[ember.device("cpu")].item() == 0.0


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_inf_or_nan_skips_step_and_halves_scale(bad):
    scaler = GradScaler(init_scale=4096.0, growth_interval=100)
    model, opt = make_model()
    # one good step first, so that the tracker is non-zero
    opt.zero_grad()
    scaler.scale(loss_of(ember, model)).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler._get_growth_tracker() == 1
    before = params_of(model)

    opt.zero_grad()
    scaler.scale(loss_of(ember, model)).backward()
    model.weight.grad[1, 2] = bad
    assert scaler.step(opt) is None
    for p, b in zip(params_of(model), before):
        np.testing.assert_array_equal(p, b)  # the step was skipped
    assert scaler._found_inf_per_device(opt)[ember.device("cpu")].item() == 1.0
    scaler.update()
    assert scaler.get_scale() == 2048.0
    assert scaler._get_growth_tracker() == 0
    # the momentum buffer was not touched either: the next good step works normally
    opt.zero_grad()
    scaler.scale(loss_of(ember, model)).backward()
    scaler.step(opt)
    scaler.update()
    assert all(np.isfinite(p).all() for p in params_of(model))


def test_growth_after_growth_interval():
    scaler = GradScaler(init_scale=8.0, growth_factor=3.0, growth_interval=3)
    _, history = train(ember, scaler, 7)
    assert history == [
        (8.0, 1),
        (8.0, 2),
        (24.0, 0),
        (24.0, 1),
        (24.0, 2),
        (72.0, 0),
        (72.0, 1),
    ]


def test_backoff_factor_and_tracker_reset():
    scaler = GradScaler(init_scale=1000.0, backoff_factor=0.25, growth_interval=2)
    _, history = train(ember, scaler, 5, infs={1: float("inf"), 2: float("nan")})
    assert history == [(1000.0, 1), (250.0, 0), (62.5, 0), (62.5, 1), (125.0, 0)]


def test_growth_that_would_overflow_float32_is_not_applied():
    scaler = GradScaler(init_scale=3.0e38, growth_interval=1)
    model, opt = make_model(momentum=0.0, lr=0.0)
    opt.zero_grad()
    # the scaled loss itself is finite only if the loss is tiny: use a zero loss
    (scaler.scale(loss_of(ember, model)) * 0.0).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == pytest.approx(3.0e38, rel=1e-6)
    assert scaler._get_growth_tracker() == 0


def test_explicit_unscale_then_clip_then_step():
    scaler = GradScaler(init_scale=512.0)
    model, opt = make_model(momentum=0.0)
    ref_model, ref_opt = make_model(momentum=0.0)

    opt.zero_grad()
    scaler.scale(loss_of(ember, model)).backward()
    scaler.unscale_(opt)
    ember.nn.utils.clip_grad_norm_(model.parameters(), 0.05)
    scaler.step(opt)  # does not unscale a second time
    scaler.update()

    ref_opt.zero_grad()
    loss_of(ember, ref_model).backward()
    ember.nn.utils.clip_grad_norm_(ref_model.parameters(), 0.05)
    ref_opt.step()
    for p, r in zip(params_of(model), params_of(ref_model)):
        np.testing.assert_allclose(p, r, rtol=1e-6, atol=1e-7)


def test_two_optimizers_inf_in_one():
    scaler = GradScaler(init_scale=256.0)
    m1, o1 = make_model()
    m2, o2 = make_model()
    b1 = params_of(m1)
    o1.zero_grad()
    o2.zero_grad()
    l1, l2 = scaler.scale([loss_of(ember, m1), loss_of(ember, m2)])
    (l1 + l2).backward()
    m1.bias.grad[0] = float("inf")
    scaler.step(o1)
    scaler.step(o2)
    for p, b in zip(params_of(m1), b1):
        np.testing.assert_array_equal(p, b)
    assert not np.array_equal(params_of(m2)[0], W0)  # o2 stepped
    scaler.update()
    assert scaler.get_scale() == 128.0


def test_step_returns_optimizer_result_and_forwards_args():
    class Opt:
        def __init__(self, params):
            self.param_groups = [{"params": params}]
            self.calls = []

        def step(self, *args, **kwargs):
            self.calls.append((args, kwargs))
            return "stepped"

    p = ember.ones(2, requires_grad=True)
    opt = Opt([p])
    scaler = GradScaler()
    scaler.scale(p.sum()).backward()
    assert scaler.step(opt, 1, flag=True) == "stepped"
    assert opt.calls == [((1,), {"flag": True})]


def test_low_precision_grads():
    # bfloat16 gradients are unscaled (in float32 arithmetic); float16 ones are refused, as in
    # PyTorch (fp32 master weights are expected).
    scaler = GradScaler(init_scale=64.0)
    p = ember.zeros(3, dtype=ember.bfloat16, requires_grad=True)
    opt = ember.optim.SGD([p], lr=1.0)
    scaler.scale(ember.ones(1))  # initializes the scale
    p.grad = ember.tensor([64.0, 128.0, 32.0], dtype=ember.bfloat16)
    scaler.unscale_(opt)
    assert p.grad.dtype == ember.bfloat16
    assert p.grad.float().tolist() == [1.0, 2.0, 0.5]

    scaler.update(64.0)
    q = ember.zeros(2, dtype=ember.float16, requires_grad=True)
    q.grad = ember.ones(2, dtype=ember.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.unscale_(ember.optim.SGD([q], lr=1.0))


def test_params_without_grads_are_skipped_and_no_grads_at_all_asserts():
    scaler = GradScaler()
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([a, b], lr=0.1)
    scaler.scale(a.sum()).backward()
    assert b.grad is None
    scaler.step(opt)
    scaler.update()

    opt2 = ember.optim.SGD([ember.ones(2, requires_grad=True)], lr=0.1)
    scaler.scale(ember.ones(()))
    with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer"):
        scaler.step(opt2)


# --- scale() ------------------------------------------------------------------------------


def test_scale_nested_structures():
    scaler = GradScaler(init_scale=4.0)
    t = ember.tensor([1.0, 2.0])
    out = scaler.scale([t, (t, [t * 2]), (t,)])
    assert isinstance(out, list) and isinstance(out[1], tuple) and isinstance(out[1][1], list)
    assert out[0].tolist() == [4.0, 8.0]
    assert out[1][1][0].tolist() == [8.0, 16.0]
    assert out[2][0].tolist() == [4.0, 8.0]

    gen = scaler.scale(x for x in [t, t])
    assert not isinstance(gen, (list, tuple))  # a lazy map, as in PyTorch
    assert [x.tolist() for x in gen] == [[4.0, 8.0], [4.0, 8.0]]

    from collections import namedtuple

    Pair = namedtuple("Pair", "a b")
    pair = scaler.scale(Pair(t, t))
    assert isinstance(pair, Pair) and pair.b.tolist() == [4.0, 8.0]


def test_scale_rejects_non_tensors():
    scaler = GradScaler()
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale(3.0)
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale("loss")


def test_scale_keeps_dtype_and_creates_state_lazily():
    scaler = GradScaler(init_scale=2.0)
    assert scaler._scale is None and scaler.get_scale() == 2.0
    out = scaler.scale(ember.ones(2, dtype=ember.bfloat16))
    assert out.dtype == ember.bfloat16
    assert scaler._scale.dtype == ember.float32 and scaler._scale.dim() == 0
    assert scaler._growth_tracker.dtype == ember.int32


# --- misuse -------------------------------------------------------------------------------


def _scaled_backward(scaler):
    model, opt = make_model()
    opt.zero_grad()
    scaler.scale(loss_of(ember, model)).backward()
    return model, opt


def test_unscale_twice_raises():
    scaler = GradScaler()
    _, opt = _scaled_backward(scaler)
    scaler.unscale_(opt)
    assert scaler._per_optimizer_states[id(opt)]["stage"] is OptState.UNSCALED
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called"):
        scaler.unscale_(opt)


def test_unscale_after_step_raises():
    scaler = GradScaler()
    _, opt = _scaled_backward(scaler)
    scaler.step(opt)
    assert scaler._per_optimizer_states[id(opt)]["stage"] is OptState.STEPPED
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert len(scaler._per_optimizer_states) == 0


def test_use_before_scale_raises():
    scaler = GradScaler()
    _, opt = make_model()
    for call in (lambda: scaler.step(opt), lambda: scaler.unscale_(opt), scaler.update):
        with pytest.raises(AssertionError, match="but _scale is None"):
            call()


def test_update_without_step_raises():
    scaler = GradScaler()
    scaler.scale(ember.ones(()))
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        scaler.update()


def test_closure_is_refused():
    scaler = GradScaler()
    _, opt = _scaled_backward(scaler)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0.0)


def test_constructor_checks_factors():
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        GradScaler(growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        GradScaler(backoff_factor=1.0)
    GradScaler(growth_factor=1.0, enabled=False)  # not checked when disabled, as in PyTorch


# --- update(new_scale), getters and setters -----------------------------------------------


def test_update_with_new_scale():
    scaler = GradScaler(init_scale=8.0)
    scaler.scale(ember.ones(()))
    scaler.update(3.0)
    assert scaler.get_scale() == 3.0
    scaler.update(16)
    assert scaler.get_scale() == 16.0
    src = ember.tensor([5.0])
    scaler.update(src)
    src.fill_(7.0)  # later changes to the tensor do not affect the scaler
    assert scaler.get_scale() == 5.0
    for bad in (ember.tensor([1.0, 2.0]), ember.tensor(2.0, requires_grad=True), "x"):
        with pytest.raises(AssertionError, match="new_scale should be a float"):
            scaler.update(bad)


def test_getters_and_setters():
    scaler = GradScaler(init_scale=10.0, growth_factor=4.0, backoff_factor=0.1, growth_interval=7)
    assert scaler.is_enabled() is True
    assert scaler.get_scale() == 10.0
    assert scaler.get_growth_factor() == 4.0
    assert scaler.get_backoff_factor() == 0.1
    assert scaler.get_growth_interval() == 7
    scaler.set_growth_factor(3.0)
    scaler.set_backoff_factor(0.5)
    scaler.set_growth_interval(2)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor()) == (3.0, 0.5)
    assert scaler.get_growth_interval() == 2
    _, history = train(ember, scaler, 3, infs={2: float("inf")})
    assert history == [(10.0, 1), (30.0, 0), (15.0, 0)]


# --- state_dict and pickling --------------------------------------------------------------


def test_state_dict_round_trip():
    scaler = GradScaler(init_scale=64.0, growth_interval=3)
    train(ember, scaler, 5, infs={0: float("inf")})
    state = scaler.state_dict()
    assert state == {
        "scale": 64.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 3,
        "_growth_tracker": 1,
    }
    # into a fresh scaler (before its first scale()) ...
    fresh = GradScaler()
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    # ... and into one whose tensors exist already
    used = GradScaler(init_scale=2.0, growth_interval=50)
    train(ember, used, 2)
    used.load_state_dict(state)
    assert used.state_dict() == state
    assert used._scale.item() == 64.0 and used._growth_tracker.item() == 1
    # both continue identically: two more good steps reach the interval of 3
    _, h1 = train(ember, fresh, 2)
    _, h2 = train(ember, used, 2)
    assert h1 == h2 == [(64.0, 2), (128.0, 0)]


def test_load_state_dict_errors_and_disabled():
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        GradScaler().load_state_dict({})
    off = GradScaler(enabled=False)
    assert off.state_dict() == {}
    off.load_state_dict({"scale": 3.0})  # a no-op
    assert off.get_scale() == 1.0


def test_state_dict_saves_with_ember_save(tmp_path):
    scaler = GradScaler(init_scale=32.0)
    train(ember, scaler, 1)
    ember.save({"scaler": scaler.state_dict()}, tmp_path / "ckpt.pt")
    loaded = ember.load(tmp_path / "ckpt.pt")
    assert loaded["scaler"] == scaler.state_dict()


def test_pickle_round_trip():
    scaler = GradScaler(init_scale=128.0, growth_interval=4)
    train(ember, scaler, 2, infs={1: float("nan")})
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone._scale is None  # tensors are recreated by the first scale()
    assert (
        clone.state_dict()
        == scaler.state_dict()
        == {
            "scale": 64.0,
            "growth_factor": 2.0,
            "backoff_factor": 0.5,
            "growth_interval": 4,
            "_growth_tracker": 0,
        }
    )
    _, h1 = train(ember, clone, 4)
    _, h2 = train(ember, scaler, 4)
    assert h1 == h2


def test_pickle_mid_iteration_raises():
    scaler = GradScaler()
    _, opt = _scaled_backward(scaler)
    scaler.unscale_(opt)
    with pytest.raises(AssertionError, match="may only be pickled at the beginning"):
        pickle.dumps(scaler)


# --- disabled -----------------------------------------------------------------------------


def test_disabled_is_a_pass_through():
    scaler = GradScaler(enabled=False)
    assert scaler.is_enabled() is False
    model, opt = make_model()
    ref_model, ref_opt = make_model()
    loss = loss_of(ember, model)
    assert scaler.scale(loss) is loss
    outs = [loss, (loss,)]
    assert scaler.scale(outs) is outs
    loss.backward()
    g = model.weight.grad.numpy().copy()
    assert scaler.unscale_(opt) is None
    np.testing.assert_array_equal(model.weight.grad.numpy(), g)
    model.weight.grad[0, 0] = float("inf")  # not checked: the step runs
    ref_opt.zero_grad()
    loss_of(ember, ref_model).backward()
    ref_model.weight.grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.step(opt)  # no stage tracking either
    ref_opt.step()
    ref_opt.step()
    for p, r in zip(params_of(model), params_of(ref_model)):
        np.testing.assert_array_equal(p, r)
    assert scaler.update() is None
    assert scaler.get_scale() == 1.0
    assert scaler.state_dict() == {}
    assert scaler._get_growth_tracker() == 0
    pickle.loads(pickle.dumps(scaler))


def test_disabled_step_returns_optimizer_result():
    class Opt:
        param_groups = []

        def step(self, closure=None):
            return closure()

    assert GradScaler(enabled=False).step(Opt(), closure=lambda: 42) == 42


# --- CUDA forms on a machine without CUDA -------------------------------------------------


def test_cuda_amp_grad_scaler_disabled_constructs():
    with pytest.warns(FutureWarning, match="ember.cuda.amp.GradScaler\\(args...\\)` is deprecated"):
        scaler = ember.cuda.amp.GradScaler(enabled=False)
    assert isinstance(scaler, GradScaler)
    assert scaler.is_enabled() is False
    t = ember.ones(2)
    assert scaler.scale(t) is t
    assert scaler.get_scale() == 1.0


NO_GPU = pytest.mark.skipif(ember.cuda.is_available(), reason="checks the answers without a GPU")


@NO_GPU
def test_cuda_amp_grad_scaler_enabled_without_cuda_warns_and_disables():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = ember.cuda.amp.GradScaler(init_scale=1024.0)
    messages = [(w.category, str(w.message)) for w in caught]
    assert any(c is FutureWarning for c, _ in messages)
    assert any(
        c is UserWarning and "enabled, but CUDA is not available.  Disabling." in m
        for c, m in messages
    )
    # both warnings point at this file, not at the library
    assert all(w.filename == __file__ for w in caught)
    assert scaler.is_enabled() is False
    # the training loop of a script written for CUDA runs unchanged, without scaling
    model, opt = make_model()
    scaler.scale(loss_of(ember, model)).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1.0


@NO_GPU
def test_amp_grad_scaler_cuda_device_without_cuda():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = GradScaler("cuda")
    assert scaler.is_enabled() is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert GradScaler("cuda", enabled=False).is_enabled() is False
        assert GradScaler(ember.device("cpu")).is_enabled() is True


def test_cuda_amp_module():
    import ember.cuda.amp as cuda_amp

    assert ember.cuda.amp is cuda_amp
    assert cuda_amp.amp_definitely_not_available() is (not ember.cuda.is_available())
    assert cuda_amp.OptState is OptState
    with pytest.raises(AttributeError):
        ember.cuda.no_such_name  # noqa: B018


# --- parity with torch.amp.GradScaler("cpu") ----------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    "kwargs, infs",
    [
        ({"init_scale": 1024.0, "growth_interval": 3}, {2: "inf", 3: "nan", 7: "-inf"}),
        ({"init_scale": 2.0**16, "growth_interval": 2}, {0: "inf", 1: "inf", 9: "nan"}),
        (
            {
                "init_scale": 100.0,
                "growth_factor": 1.7,
                "backoff_factor": 0.3,
                "growth_interval": 2,
            },
            {1: "inf", 4: "nan", 5: "inf"},
        ),
        ({"init_scale": 3.0e38, "growth_interval": 1}, {}),
    ],
)
def test_scale_sequence_matches_torch(torch, kwargs, infs):
    infs = {k: float(v) for k, v in infs.items()}
    steps = 14
    e_params, e_hist = train(ember, GradScaler("cpu", **kwargs), steps, infs)
    t_params, t_hist = train(torch, torch.amp.GradScaler("cpu", **kwargs), steps, infs)
    assert e_hist == t_hist
    for e, t in zip(e_params, t_params):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


def test_state_dict_matches_torch(torch):
    infs = {1: float("inf")}
    e = GradScaler("cpu", init_scale=256.0, growth_interval=3)
    t = torch.amp.GradScaler("cpu", init_scale=256.0, growth_interval=3)
    train(ember, e, 4, infs)
    train(torch, t, 4, infs)
    assert e.state_dict() == t.state_dict()
    assert (
        GradScaler(enabled=False).state_dict()
        == torch.amp.GradScaler("cpu", enabled=False).state_dict()
    )


def test_unscaled_grads_match_torch(torch):
    e_model, e_opt = make_model(ember)
    t_model, t_opt = make_model(torch)
    e = GradScaler("cpu", init_scale=3.0)  # a reciprocal that float32 rounds
    t = torch.amp.GradScaler("cpu", init_scale=3.0)
    e.scale(loss_of(ember, e_model)).backward()
    t.scale(loss_of(torch, t_model)).backward()
    e.unscale_(e_opt)
    t.unscale_(t_opt)
    for ep, tp in zip(e_model.parameters(), t_model.parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_optimizer_with_step_supports_amp_scaling_takes_the_default_path():
    # Ember's fused Adam sets _step_supports_amp_scaling but does not read grad_scale/found_inf:
    # the scaler unscales and skips for it like for any other optimizer.
    scaler = GradScaler(init_scale=256.0)
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.Adam([p], lr=0.1, fused=True)
    assert opt._step_supports_amp_scaling is True
    scaler.scale((p * p).sum()).backward()
    p.grad[0] = float("nan")
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [1.0, 1.0, 1.0] and scaler.get_scale() == 128.0
    assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")

    opt.zero_grad()
    scaler.scale((p * p).sum()).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 0.9, 0.9], rtol=1e-6)
