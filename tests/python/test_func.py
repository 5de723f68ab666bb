"""ember.func transforms against ember.autograd.functional, finite differences and (when
installed) torch.func."""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    stack_module_state,
    vjp,
)


def _x(*shape, seed=0):
    return ember.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def f_scalar(x):
    return (ember.sin(x) * x).sum() + (x**2).sum() / 3


def f_vector(x, y):
    return ember.tanh(x * y) + ember.exp(x).cumsum(0)


def test_grad_matches_autograd():
    x = _x(4)
    g = grad(f_scalar)(x)
    x2 = x.clone().requires_grad_()
    (expect,) = ember.autograd.grad(f_scalar(x2), x2)
    np.testing.assert_allclose(g.numpy(), expect.numpy())
    assert not g.requires_grad


def test_grad_argnums_aux_and_value():
    x, y = _x(3), _x(3, seed=1)

    def f(a, b):
        loss = (a * b).sum()
        return loss, {"a": a.detach()}

    (ga, gb), (value, aux) = grad_and_value(f, argnums=(0, 1), has_aux=True)(x, y)
    np.testing.assert_allclose(ga.numpy(), y.numpy())
    np.testing.assert_allclose(gb.numpy(), x.numpy())
    np.testing.assert_allclose(value.item(), (x * y).sum().item())
    np.testing.assert_array_equal(aux["a"].numpy(), x.numpy())
    gdict = grad(lambda d: (d["w"] ** 2).sum())({"w": x})
    np.testing.assert_allclose(gdict["w"].numpy(), 2 * x.numpy())


def test_grad_of_grad_is_second_derivative():
    x = _x(5)
    second = grad(lambda t: grad(lambda u: (u**3).sum())(t).sum())(x)
    np.testing.assert_allclose(second.numpy(), 6 * x.numpy())


def test_grad_errors():
    with pytest.raises(RuntimeError, match="scalar"):
        grad(lambda t: t * 2)(_x(3))
    with pytest.raises(RuntimeError, match="argnums"):
        grad(f_scalar, argnums=3)(_x(3))
    with pytest.raises(RuntimeError, match="floating point"):
        grad(lambda t: t.sum())(ember.arange(3))


def test_jacrev_and_jacfwd_match_functional_jacobian():
    x, y = _x(4), _x(4, seed=2)
    expect = ember.autograd.functional.jacobian(f_vector, (x, y))
    for jac_fn in (jacrev, jacfwd):
        jx, jy = jac_fn(f_vector, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(jx.numpy(), expect[0].numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(jy.numpy(), expect[1].numpy(), rtol=1e-12, atol=1e-12)
        assert not jx.requires_grad


def test_jacobian_shapes_for_matrix_inputs():
    w = _x(2, 3)
    j = jacfwd(lambda m: m @ m.t())(w)
    assert tuple(j.shape) == (2, 2, 2, 3)
    np.testing.assert_allclose(j.numpy(), jacrev(lambda m: m @ m.t())(w).numpy(), atol=1e-12)


@pytest.mark.parametrize("compose", ["fwd_rev", "rev_rev", "rev_fwd", "fwd_fwd"])
def test_hessian_by_every_composition(compose):
    x = _x(4, seed=3)
    outer, inner = {
        "fwd_rev": (jacfwd, jacrev),
        "rev_rev": (jacrev, jacrev),
        "rev_fwd": (jacrev, jacfwd),
        "fwd_fwd": (jacfwd, jacfwd),
    }[compose]
    h = outer(inner(f_scalar))(x)
    expect = ember.autograd.functional.hessian(f_scalar, x)
    np.testing.assert_allclose(h.numpy(), expect.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian(f_scalar)(x).numpy(), expect.numpy(), atol=1e-12)


def test_vjp_and_jvp_agree_with_the_jacobian():
    x, y = _x(3), _x(3, seed=4)
    jac = ember.autograd.functional.jacobian(f_vector, (x, y))
    v = _x(3, seed=5)
    out, vjp_fn = vjp(f_vector, x, y)
    np.testing.assert_allclose(out.numpy(), f_vector(x, y).numpy())
    gx, gy = vjp_fn(v)
    np.testing.assert_allclose(gx.numpy(), v.numpy() @ jac[0].numpy(), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), v.numpy() @ jac[1].numpy(), rtol=1e-12)
    tx, ty = _x(3, seed=6), _x(3, seed=7)
    out2, t = jvp(f_vector, (x, y), (tx, ty))
    np.testing.assert_allclose(out2.numpy(), out.numpy())
    np.testing.assert_allclose(
        t.numpy(), jac[0].numpy() @ tx.numpy() + jac[1].numpy() @ ty.numpy(), rtol=1e-12
    )
    out3, jvp_fn = linearize(f_vector, x, y)
    np.testing.assert_allclose(jvp_fn(tx, ty).numpy(), t.numpy())
    with pytest.raises(RuntimeError, match="same shape"):
        jvp(f_vector, (x, y), (tx, _x(4)))
    with pytest.raises(RuntimeError, match="shape"):
        vjp_fn(_x(5))


def test_functional_call_and_per_sample_grads_by_loop():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = _x(5, 3).float()
    out = functional_call(model, params, (x,))
    np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy())
    doubled = {k: v * 2 for k, v in params.items()}
    out2 = functional_call(model, doubled, (x,))
    assert not np.allclose(out2.detach().numpy(), out.detach().numpy())
    assert model[0].weight is dict(model.named_parameters())["0.weight"]  # restored

    def loss(p, sample):
        return functional_call(model, p, (sample.unsqueeze(0),)).sum()

    g0 = grad(loss)(params, x[0])
    model.zero_grad()
    model(x[:1]).sum().backward()
    np.testing.assert_allclose(g0["0.weight"].numpy(), model[0].weight.grad.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(model, {"0.weight": params["0.weight"]}, (x,), strict=True)


def test_stack_module_state():
    models = [nn.Linear(2, 3) for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert tuple(params["weight"].shape) == (4, 3, 2)
    assert params["weight"].requires_grad and params["weight"].is_leaf
    np.testing.assert_array_equal(
        params["bias"][2].detach().numpy(), models[2].bias.detach().numpy()
    )
    assert buffers == {}


def test_torch_func_parity():
    torch = pytest.importorskip("torch")
    xn = np.random.default_rng(8).standard_normal(4)

    def f(lib, x):
        return (lib.sin(x) * x).sum() + (x**2).sum() / 3

    th = torch.func.hessian(lambda t: f(torch, t))(torch.from_numpy(xn))
    eh = hessian(lambda t: f(ember, t))(ember.from_numpy(xn))
    np.testing.assert_allclose(eh.numpy(), th.numpy(), rtol=1e-12)
    tj = torch.func.jacfwd(lambda t: torch.tanh(t).cumsum(0))(torch.from_numpy(xn))
    ej = jacfwd(lambda t: ember.tanh(t).cumsum(0))(ember.from_numpy(xn))
    np.testing.assert_allclose(ej.numpy(), tj.numpy(), rtol=1e-12)


def test_grad_is_grads_batched():
    x = _x(3).requires_grad_()
    y = ember.stack([x[0] * x[1], x[2].sin(), x.sum()])
    eye = ember.eye(3, dtype=ember.float64)
    (jac,) = ember.autograd.grad(y, x, eye, is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), ember.autograd.functional.jacobian(
        lambda t: ember.stack([t[0] * t[1], t[2].sin(), t.sum()]), x.detach()).numpy())
    with pytest.raises(RuntimeError, match="batch"):
        ember.autograd.grad(y, x, ember.ones(3, dtype=ember.float64), is_grads_batched=True)


def test_jacfwd_of_jacfwd_of_a_result_saving_op():
    # tanh saves its result: the inner level's JVP reads that output's outer-level tangent
    # through the same node (once a deadlock).
    x = _x(3)
    h = jacfwd(jacfwd(ember.tanh))(x)
    t = np.tanh(x.numpy())
    expect = np.zeros((3, 3, 3))
    for i in range(3):
        expect[i, i, i] = -2 * t[i] * (1 - t[i] ** 2)
    np.testing.assert_allclose(h.numpy(), expect, rtol=1e-10, atol=1e-12)
