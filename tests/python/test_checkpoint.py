"""ember.utils.checkpoint: gradients equal to the uncheckpointed run (both implementations),
RNG replay for dropout, kwargs / non-tensor arguments / inputs without grad, checkpoint_sequential,
the use_reentrant warning and errors, and lower peak memory (allocator statistics)."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


def make_mlp(p=0.3, width=16, depth=4):
    ember.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU(), nn.Dropout(p)]
    return nn.Sequential(*layers).double()


def grads_of(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def run_plain(model, x):
    model.zero_grad()
    ember.manual_seed(123)
    out = model(x)
    out.sum().backward()
    return out.detach().numpy().copy(), grads_of(model), x.grad.numpy().copy()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_mlp_with_dropout_gradients_match(use_reentrant):
    model = make_mlp()
    x = ember.randn(8, 16, dtype=ember.float64, requires_grad=True)
    ref_out, ref_grads, ref_xg = run_plain(model, x)
    x.grad = None
    model.zero_grad()
    ember.manual_seed(123)
    half1, half2 = model[:6], model[6:]
    h = checkpoint(half1, x, use_reentrant=use_reentrant)
    out = checkpoint(half2, h, use_reentrant=use_reentrant)
    # Drawing random numbers between forward and backward must not change the masks.
    ember.rand(100)
    out.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref_out)
    for g, r in zip(grads_of(model), ref_grads):
        np.testing.assert_array_equal(g, r)
    np.testing.assert_array_equal(x.grad.numpy(), ref_xg)


def test_preserve_rng_state_false_changes_masks():
    model = make_mlp(p=0.5)
    x = ember.randn(8, 16, dtype=ember.float64, requires_grad=True)
    _, ref_grads, _ = run_plain(model, x)
    model.zero_grad()
    ember.manual_seed(123)
    out = checkpoint(model, x, use_reentrant=False, preserve_rng_state=False,
                     determinism_check="none")
    out.sum().backward()
    assert any(not np.array_equal(g, r) for g, r in zip(grads_of(model), ref_grads))


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_matches(use_reentrant, segments):
    model = make_mlp(p=0.2, depth=3)
    x = ember.randn(4, 16, dtype=ember.float64, requires_grad=True)
    ref_out, ref_grads, ref_xg = run_plain(model, x)
    x.grad = None
    model.zero_grad()
    ember.manual_seed(123)
    out = checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)
    out.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref_out)
    for g, r in zip(grads_of(model), ref_grads):
        np.testing.assert_allclose(g, r, rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), ref_xg, rtol=1e-14)


def test_kwargs_non_tensor_args_and_tuple_outputs():
    lin = nn.Linear(3, 3).double()

    def fn(x, scale, *, bias, mode="add"):
        y = lin(x) * scale
        return (y + bias if mode == "add" else y - bias), int(x.shape[0])

    x = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True)
    (y, n) = checkpoint(fn, x, 2.0, bias=b, mode="sub", use_reentrant=False)
    assert n == 2
    y.pow(2).sum().backward()
    gx, gb, gw = x.grad.numpy().copy(), b.grad.numpy().copy(), lin.weight.grad.numpy().copy()
    x.grad = b.grad = None
    lin.zero_grad()
    fn(x, 2.0, bias=b, mode="sub")[0].pow(2).sum().backward()
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-14)
    np.testing.assert_allclose(gb, b.grad.numpy(), rtol=1e-14)
    np.testing.assert_allclose(gw, lin.weight.grad.numpy(), rtol=1e-14)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: bias"):
        checkpoint(fn, x, 2.0, bias=b, use_reentrant=True)


def test_inputs_not_requiring_grad():
    lin = nn.Linear(4, 2).double()
    x = ember.randn(3, 4, dtype=ember.float64)
    # Non-reentrant: the parameters still get their gradients.
    checkpoint(lin, x, use_reentrant=False).sum().backward()
    g = lin.weight.grad.numpy().copy()
    lin.zero_grad()
    lin(x).sum().backward()
    np.testing.assert_allclose(g, lin.weight.grad.numpy(), rtol=1e-14)
    # Reentrant: PyTorch's warning, and the output does not require grad.
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(lin, x, use_reentrant=True)
    assert not out.requires_grad


def test_non_reentrant_supports_autograd_grad_and_double_backward():
    w = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)

    def f(x):
        return ember.tanh(w @ x) ** 2

    y = checkpoint(f, x, use_reentrant=False)
    gx, gw = ember.autograd.grad(y.sum(), (x, w), create_graph=True)
    rx, rw = ember.autograd.grad(f(x).sum(), (x, w), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), rx.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(gw.detach().numpy(), rw.detach().numpy(), rtol=1e-14)
    # Second order through the recomputation.
    (ggx,) = ember.autograd.grad(gx.sum(), x)
    (rgx,) = ember.autograd.grad(rx.sum(), x)
    np.testing.assert_allclose(ggx.numpy(), rgx.numpy(), rtol=1e-12)
    assert ember.autograd.gradcheck(
        lambda x: checkpoint(f, x, use_reentrant=False), (x.detach().requires_grad_(),)
    )


def test_closure_tensor_with_history():
    # A non-leaf tensor the function closes over: its gradient reaches its own leaves.
    a = ember.randn(3, dtype=ember.float64, requires_grad=True)
    t = a * 2
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    out = checkpoint(lambda x: (x * t).sin(), x, use_reentrant=False)
    (out.sum() + t.sum()).backward()
    ga = a.grad.numpy().copy()
    a.grad = None
    t = a * 2
    ((x * t).sin().sum() + t.sum()).backward()
    np.testing.assert_allclose(ga, a.grad.numpy(), rtol=1e-14)


def test_use_reentrant_warning_and_argument_errors():
    x = ember.randn(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(ember.sin, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(ember.sin, x, use_reentrant=False)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(ember.sin, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(ember.sin, x, use_reentrant=True, debug=True)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint_sequential(nn.Sequential(nn.Linear(2, 2)), 1, x.reshape(1, 2))


def test_determinism_check_and_context_fn():
    sizes = iter([3, 4])

    def shape_changes(x):
        return x[: next(sizes)] * 2

    x = ember.randn(5, requires_grad=True)
    y = checkpoint(shape_changes, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        y.sum().backward()
    entered = []

    class Ctx:
        def __init__(self, tag):
            self.tag = tag

        def __enter__(self):
            entered.append(self.tag)

        def __exit__(self, *a):
            return False

    y = checkpoint(ember.sin, x, use_reentrant=False,
                   context_fn=lambda: (Ctx("forward"), Ctx("recompute")))
    y.sum().backward()
    assert entered == ["forward", "recompute"]


def test_no_grad_mode_runs_plainly():
    x = ember.randn(3, requires_grad=True)
    with ember.no_grad():
        y = checkpoint(ember.sin, x, use_reentrant=False)
    assert not y.requires_grad
    np.testing.assert_allclose(y.numpy(), np.sin(x.detach().numpy()))


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_peak_memory_is_lower(use_reentrant):
    # A deep float64 MLP on a large batch: without checkpointing every layer's activations are
    # alive at the loss; with 4 checkpointed segments only the segment boundaries are.
    ember.manual_seed(0)
    depth, width, batch = 16, 64, 8192
    model = nn.Sequential(*[m for _ in range(depth) for m in (nn.Linear(width, width),
                                                                nn.Tanh())]).double()
    x = ember.randn(batch, width, dtype=ember.float64, requires_grad=True)
    stats = ember._C._allocator_stats

    def peak(fn):
        model.zero_grad()
        x.grad = None
        base = stats()["current_bytes"]
        ember._C._reset_allocator_peak()
        fn().sum().backward()
        return stats()["peak_bytes"] - base

    plain = peak(lambda: model(x))
    ckpt = peak(lambda: checkpoint_sequential(model, 4, x, use_reentrant=use_reentrant))
    activation = batch * width * 8
    # Measured: plain ~19 activations, 4 segments ~11 (the boundaries, one segment being
    # recomputed, and the gradient buffers).
    assert ckpt < 0.7 * plain and plain - ckpt > 6 * activation, (plain, ckpt)
