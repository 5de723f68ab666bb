"""Forward-mode AD (ember.autograd.forward_ad): dual tensors through ops, against finite
differences and reverse-mode Jacobians, levels, views, in-place ops and composition with
reverse mode."""

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD


def fd_jvp(f, x, v, eps=1e-6):
    """Central finite-difference directional derivative of f at x along v (float64)."""
    xp = ember.from_numpy(x.numpy() + eps * v.numpy())
    xm = ember.from_numpy(x.numpy() - eps * v.numpy())
    return (f(xp).numpy() - f(xm).numpy()) / (2 * eps)


def jvp_of(f, x, v):
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, v))
        primal, tangent = fwAD.unpack_dual(y)
    return primal, tangent


UNARY = [
    ("exp", ember.exp, (-2, 2)),
    ("log", ember.log, (0.2, 3)),
    ("sin", ember.sin, (-3, 3)),
    ("tanh", ember.tanh, (-2, 2)),
    ("sigmoid", ember.sigmoid, (-3, 3)),
    ("sqrt", ember.sqrt, (0.2, 3)),
    ("erf", ember.erf, (-2, 2)),
    ("lgamma", ember.lgamma, (0.5, 4)),
]


@pytest.mark.parametrize("name,fn,domain", UNARY, ids=[u[0] for u in UNARY])
def test_table_unary_jvp_matches_finite_differences(name, fn, domain):
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.uniform(*domain, size=(3, 4)))
    v = ember.from_numpy(rng.standard_normal((3, 4)))
    primal, tangent = jvp_of(fn, x, v)
    np.testing.assert_allclose(primal.numpy(), fn(x).numpy())
    np.testing.assert_allclose(tangent.numpy(), fd_jvp(fn, x, v), rtol=1e-6, atol=1e-8)


def test_composite_function_jvp():
    rng = np.random.default_rng(1)
    w = ember.from_numpy(rng.standard_normal((5, 4)))
    b = ember.from_numpy(rng.standard_normal(5))

    def f(x):
        h = ember.tanh(x @ w.T + b)
        return (h * h).sum(dim=1) / 3 + ember.relu(x).mean(1)

    x = ember.from_numpy(rng.standard_normal((3, 4)))
    v = ember.from_numpy(rng.standard_normal((3, 4)))
    _, tangent = jvp_of(f, x, v)
    np.testing.assert_allclose(tangent.numpy(), fd_jvp(f, x, v), rtol=1e-6, atol=1e-8)


def test_jvp_equals_reverse_mode_jacobian_product():
    rng = np.random.default_rng(2)
    a = ember.from_numpy(rng.standard_normal((4, 4)))

    def f(x):
        return ember.softmax(a @ x, dim=0) * x.sum()

    x = ember.from_numpy(rng.standard_normal(4))
    jac = ember.autograd.functional.jacobian(f, x)
    for k in range(4):
        v = ember.zeros(4, dtype=ember.float64)
        v[k] = 1.0
        _, t = jvp_of(f, x, v)
        np.testing.assert_allclose(t.numpy(), jac.numpy()[:, k], rtol=1e-10, atol=1e-12)


def test_views_and_reshapes_carry_view_of_tangent():
    x = ember.arange(12.0, dtype=ember.float64).reshape(3, 4)
    v = ember.arange(12.0, dtype=ember.float64).reshape(3, 4) * 10
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        for y, expect in [
            (d[1], v[1]),
            (d.t(), v.t()),
            (d[:, 1:3], v[:, 1:3]),
            (d.reshape(12), v.reshape(12)),
            (d.transpose(0, 1).reshape(-1), v.transpose(0, 1).reshape(-1)),
            (d.unsqueeze(0).expand(2, 3, 4), v.unsqueeze(0).expand(2, 3, 4)),
            (d.diagonal(), v.diagonal()),
        ]:
            np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), expect.numpy())


def test_non_contiguous_tangent_is_laid_out_as_primal():
    x = ember.zeros(3, 4, dtype=ember.float64)
    v = ember.arange(12.0, dtype=ember.float64).reshape(4, 3).t()  # non-contiguous
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        t = fwAD.unpack_dual(d[0]).tangent
        np.testing.assert_array_equal(t.numpy(), v.numpy()[0])


def test_inplace_on_dual_updates_tangent():
    x = ember.tensor([0.5, 1.0, 2.0], dtype=ember.float64)
    v = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v).clone()
        d.exp_()
        d.mul_(2.0)
        t = fwAD.unpack_dual(d).tangent
    np.testing.assert_allclose(t.numpy(), 2 * np.exp(x.numpy()) * v.numpy())


def test_inplace_into_view_updates_base_tangent():
    base = ember.zeros(2, 3, dtype=ember.float64)
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    v = ember.tensor([4.0, 5.0, 6.0], dtype=ember.float64)
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, v)
        b = base.clone()
        b[1].copy_(dx * 2)
        t = fwAD.unpack_dual(b).tangent
    np.testing.assert_array_equal(t.numpy(), [[0, 0, 0], [8, 10, 12]])


def _older_views_see_inplace_writes(lib, fw):
    """Views made before an in-place write to their base (or to another view of it) see it, as
    their tangents are regions of the base's."""
    out = []
    with fw.dual_level():
        z = lib.zeros(3, 4, dtype=lib.float64)
        x = fw.make_dual(z, lib.ones(3, 4, dtype=lib.float64))
        base = x.clone()
        row, col = base[0], base[:, 1]
        col.mul_(3.0)
        out.append(fw.unpack_dual(row).tangent.numpy().copy())
        base.mul_(2.0)
        out += [fw.unpack_dual(row).tangent.numpy().copy()]
        out += [fw.unpack_dual(col).tangent.numpy().copy()]
        w = base.t()[2]  # a view through a transpose
        d = fw.make_dual(lib.zeros(4, dtype=lib.float64), lib.arange(4.0, dtype=lib.float64))
        base[2].add_(d)
        out += [fw.unpack_dual(w).tangent.numpy().copy()]
        out += [fw.unpack_dual(row * 1).tangent.numpy().copy()]  # read through an op
        out += [fw.unpack_dual(base).tangent.numpy().copy()]
    return out


def test_older_views_see_inplace_writes_to_their_base():
    got = _older_views_see_inplace_writes(ember, fwAD)
    want = [[1, 3, 1, 1], [2, 6, 2, 2], [6, 6, 6], [2, 2, 4], [2, 6, 2, 2]]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[-1], [[2, 6, 2, 2], [2, 6, 2, 2], [2, 7, 4, 5]])
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fw

    for g, w in zip(got, _older_views_see_inplace_writes(torch, torch_fw)):
        np.testing.assert_array_equal(g, w)


def test_older_view_of_a_base_whose_tangent_has_another_layout():
    # The base is a transpose; its tangent after the in-place op is laid out contiguously.
    with fwAD.dual_level():
        p = ember.zeros(4, 3, dtype=ember.float64).t()
        base = fwAD.make_dual(p, ember.ones(3, 4, dtype=ember.float64)).clone().t().t()
        v = base[:, 2]
        base.add_(
            fwAD.make_dual(
                ember.zeros(3, 4, dtype=ember.float64),
                ember.arange(12.0, dtype=ember.float64).reshape(3, 4),
            )
        )
        t = fwAD.unpack_dual(v).tangent
    np.testing.assert_array_equal(t.numpy(), [3, 7, 11])


def _views_made_before_their_base_became_dual(lib, fw):
    out = []
    with fw.dual_level():
        x = lib.zeros(3, dtype=lib.float64)
        v = x[:2]
        w = x.view(3, 1)
        assert fw.unpack_dual(v).tangent is None
        x.copy_(fw.make_dual(lib.ones(3, dtype=lib.float64), lib.arange(3.0, dtype=lib.float64)))
        out.append(fw.unpack_dual(v).tangent.numpy().copy())
        out.append(fw.unpack_dual(v * 2).tangent.numpy().copy())  # ops on the view carry it
        x.mul_(fw.make_dual(lib.full((3,), 2.0, dtype=lib.float64), lib.ones(3, dtype=lib.float64)))
        out.append(fw.unpack_dual(v).tangent.numpy().copy())
        out.append(fw.unpack_dual(w).tangent.numpy().reshape(-1).copy())
        y = lib.zeros(2, 3, dtype=lib.float64)
        col = y[:, 1]
        y.add_(fw.make_dual(lib.zeros(2, 3, dtype=lib.float64),
                            lib.arange(6.0, dtype=lib.float64).reshape(2, 3)))
        out.append(fw.unpack_dual(col.sin()).tangent.numpy().copy())
    return out


def test_views_made_before_their_base_became_dual_get_its_tangent():
    # As PyTorch's: a view's tangent is its region of the base's, even when the view was made
    # while the base had none.
    got = _views_made_before_their_base_became_dual(ember, fwAD)
    want = [[0, 1], [0, 2], [1, 3], [1, 3, 5], [1, 4]]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fw

    for g, w in zip(got, _views_made_before_their_base_became_dual(torch, torch_fw)):
        np.testing.assert_array_equal(g, w)


def test_reverse_over_forward_through_an_older_view():
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.zeros(2, 3, dtype=ember.float64), ember.stack([x, x * x]))
        base = d.clone()
        row = base[1]
        base.mul_(x)  # the tangent of row becomes x * x * x, rederived
        t = fwAD.unpack_dual(row).tangent
    t.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([1.0, 4.0, 9.0]))


def test_forward_ad_under_no_grad_and_without_requires_grad():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    v = ember.ones(2, dtype=ember.float64)
    with ember.no_grad(), fwAD.dual_level():
        y = ember.sin(fwAD.make_dual(x, v)) * 3
        assert not y.requires_grad and y.grad_fn is None
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 3 * np.cos([1.0, 2.0]))


def test_tangents_dropped_when_level_exits():
    x = ember.tensor([1.0], dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(1, dtype=ember.float64))
        y = d * 2
    assert fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None
        z = y * 3  # no tangent: an ordinary op
        assert fwAD.unpack_dual(z).tangent is None


def test_reverse_over_forward_gives_hessian_vector_product():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4))
    a = ember.from_numpy(a + a.T)

    def f(x):
        return (x * (a @ x)).sum() / 2 + ember.sin(x).sum()

    x = ember.from_numpy(rng.standard_normal(4)).requires_grad_()
    v = ember.from_numpy(rng.standard_normal(4))
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, v))
        jvp = fwAD.unpack_dual(y).tangent
    (hvp,) = ember.autograd.grad(jvp, x)
    expect = a.numpy() @ v.numpy() - np.sin(x.detach().numpy()) * v.numpy()
    np.testing.assert_allclose(hvp.numpy(), expect, rtol=1e-10)


def test_forward_over_reverse_gives_hessian_vector_product():
    rng = np.random.default_rng(4)
    x = ember.from_numpy(rng.standard_normal(5))
    v = ember.from_numpy(rng.standard_normal(5))
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone().requires_grad_(), v)
        y = (ember.exp(d) * d).sum()
        (g,) = ember.autograd.grad(y, d, create_graph=True)
        hvp = fwAD.unpack_dual(g).tangent
    xn = x.numpy()
    expect = np.exp(xn) * (xn + 2) * v.numpy()
    np.testing.assert_allclose(hvp.numpy(), expect, rtol=1e-10)


def test_nested_levels_give_second_derivative():
    x = ember.tensor([0.3, 1.2], dtype=ember.float64)
    one = ember.ones(2, dtype=ember.float64)
    with fwAD.dual_level() as outer:
        d1 = fwAD.make_dual(x, one, level=outer)
        with fwAD.dual_level() as inner:
            d2 = fwAD.make_dual(d1, one, level=inner)
            y = ember.sin(d2)
            first = fwAD.unpack_dual(y, level=inner).tangent  # cos(x), dual at the outer level
        second = fwAD.unpack_dual(first, level=outer).tangent
    np.testing.assert_allclose(second.numpy(), -np.sin(x.numpy()))


def test_complex_jvp_matches_finite_differences():
    rng = np.random.default_rng(5)
    z = ember.from_numpy(rng.standard_normal(3) + 1j * rng.standard_normal(3))
    v = ember.from_numpy(rng.standard_normal(3) + 1j * rng.standard_normal(3))

    def f(t):
        return ember.exp(t) * t

    _, tangent = jvp_of(f, z, v)
    np.testing.assert_allclose(tangent.numpy(), fd_jvp(f, z, v), rtol=1e-6)


def test_make_dual_errors():
    x = ember.zeros(3, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="dual level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, ember.zeros(4, dtype=ember.float64))
        with pytest.raises(RuntimeError, match="floating point"):
            fwAD.make_dual(ember.zeros(3, dtype=ember.int64), x)
        with pytest.raises(TypeError):
            fwAD.make_dual(x, 1.0)


def test_exit_order_is_enforced():
    a = fwAD.enter_dual_level()
    b = fwAD.enter_dual_level()
    with pytest.raises(RuntimeError, match="last one"):
        fwAD.exit_dual_level(level=a)
    fwAD.exit_dual_level(level=b)
    fwAD.exit_dual_level(level=a)


def test_unpack_without_level_returns_tensor():
    x = ember.ones(2)
    p, t = fwAD.unpack_dual(x)
    assert p is x and t is None


def test_torch_parity_jvp():
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    rng = np.random.default_rng(6)
    xn = rng.standard_normal((3, 5))
    vn = rng.standard_normal((3, 5))

    def f(lib, x):
        return lib.nn.functional.gelu(lib.log_softmax(x, dim=1) * x).cumsum(0)

    with tfw.dual_level():
        dual = tfw.make_dual(torch.from_numpy(xn), torch.from_numpy(vn))
        tt = tfw.unpack_dual(f(torch, dual)).tangent
    with fwAD.dual_level():
        dual = fwAD.make_dual(ember.from_numpy(xn), ember.from_numpy(vn))
        et = fwAD.unpack_dual(f(ember, dual)).tangent
    np.testing.assert_allclose(et.numpy(), tt.numpy(), rtol=1e-10, atol=1e-12)
