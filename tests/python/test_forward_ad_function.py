"""Custom ``autograd.Function`` in forward mode: the ``jvp`` staticmethod (with
``ctx.save_for_forward`` and the ``setup_context`` style), its errors and its composition with
reverse mode, as PyTorch 2.x."""

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd import Function


def f64(*values):
    return ember.tensor(values, dtype=ember.float64)


X = f64(0.3, -1.2, 2.0)
V = f64(1.0, 0.5, -2.0)


class Sin(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        return ember.sin(x)

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * ember.cos(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ember.cos(x)


class ExpSetup(Function):
    """setup_context style: forward without ctx."""

    @staticmethod
    def forward(x):
        return ember.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(output)
        ctx.save_for_backward(output)

    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return t * y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulAdd(Function):
    """Two tensor inputs, a number and two outputs."""

    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_forward(x, y)
        ctx.k = k
        return x * y * k, x + 1

    @staticmethod
    def jvp(ctx, tx, ty, tk):
        x, y = ctx.saved_tensors
        ctx.seen = (tx is None, ty is None, tk)
        return (tx * y + x * ty) * ctx.k, tx

    @staticmethod
    def backward(ctx, g1, g2):
        return None, None, None


def jvp_of(fn, x, v):
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(x, v))
        return fwAD.unpack_dual(out)


def test_jvp_gives_the_output_tangent():
    primal, tangent = jvp_of(Sin.apply, X, V)
    np.testing.assert_allclose(primal.numpy(), np.sin(X.numpy()))
    np.testing.assert_allclose(tangent.numpy(), V.numpy() * np.cos(X.numpy()), rtol=1e-14)


def test_forward_ops_make_no_tangents_of_their_own():
    """forward's ops run with the level hidden: the tangent is jvp's alone (a jvp returning a
    deliberately different value shows it)."""

    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 5

    _, tangent = jvp_of(Twice.apply, X, V)
    np.testing.assert_allclose(tangent.numpy(), 5 * V.numpy())


def test_setup_context_style_and_save_for_forward_of_output():
    _, tangent = jvp_of(ExpSetup.apply, X, V)
    np.testing.assert_allclose(tangent.numpy(), V.numpy() * np.exp(X.numpy()), rtol=1e-14)


def test_missing_tangents_are_materialised_as_zeros_and_numbers_as_none():
    y = f64(2.0, 3.0, 4.0)
    with fwAD.dual_level():
        a, b = MulAdd.apply(X, fwAD.make_dual(y, V), 3.0)
        ta, tb = fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent
    np.testing.assert_allclose(ta.numpy(), 3 * X.numpy() * V.numpy())
    np.testing.assert_array_equal(tb.numpy(), np.zeros(3))


def test_set_materialize_grads_false_passes_none():
    seen = {}

    class M(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            return x * y

        @staticmethod
        def jvp(ctx, tx, ty):
            seen["none"] = (tx is None, ty is None)
            return tx * 2

    _, tangent = jvp_of(lambda d: M.apply(d, X), X, V)
    assert seen["none"] == (False, True)
    np.testing.assert_allclose(tangent.numpy(), 2 * V.numpy())


def test_no_dual_input_means_no_jvp_call_and_no_tangent():
    with fwAD.dual_level():
        out = Sin.apply(X)
        assert fwAD.unpack_dual(out).tangent is None


def test_without_jvp_raises_not_implemented():
    class NoJvp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        jvp_of(NoJvp.apply, X, V)
    # Reverse mode alone does not need one.
    x = X.clone().requires_grad_()
    NoJvp.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def _fn_with_jvp(result):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, (x > 0).long()

        @staticmethod
        def jvp(ctx, t):
            return result(t)

    return F


def test_jvp_result_errors():
    with pytest.raises(
        RuntimeError, match=r"invalid number of forward gradients \(expected 2 but got 1\)"
    ):
        jvp_of(lambda d: _fn_with_jvp(lambda t: t).apply(d)[0], X, V)
    with pytest.raises(
        RuntimeError,
        match="position 1, but  the corresponding forward output is not a differentiable",
    ):
        jvp_of(lambda d: _fn_with_jvp(lambda t: (t, t)).apply(d)[0], X, V)
    with pytest.raises(
        RuntimeError, match=r"expected Variable or None \(got float\) for grad output 0"
    ):
        jvp_of(lambda d: _fn_with_jvp(lambda t: (3.0, None)).apply(d)[0], X, V)
    with pytest.raises(RuntimeError, match="different size than that of the original Tensor"):
        jvp_of(lambda d: _fn_with_jvp(lambda t: (t[:2], None)).apply(d)[0], X, V)
    # An integer output takes None.
    primal, tangent = jvp_of(lambda d: _fn_with_jvp(lambda t: (t * 2, None)).apply(d)[0], X, V)
    np.testing.assert_allclose(tangent.numpy(), 2 * V.numpy())


def test_mark_non_differentiable_output_takes_none():
    class ND(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_non_differentiable(y)
            return y, x * 3

        @staticmethod
        def jvp(ctx, t):
            return None, t * 3

    with fwAD.dual_level():
        y1, y2 = ND.apply(fwAD.make_dual(X, V))
        assert fwAD.unpack_dual(y1).tangent is None
        np.testing.assert_allclose(fwAD.unpack_dual(y2).tangent.numpy(), 3 * V.numpy())


def test_save_for_forward_refuses_non_tensors():
    class B(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 3)
            return x

    with pytest.raises(
        AssertionError, match="save_for_forward expects all arguments to be tensors"
    ):
        B.apply(X)


def test_mark_dirty_inplace_function():
    class Double_(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)
            return t

    with fwAD.dual_level():
        d = fwAD.make_dual(X.clone(), V.clone())
        out = Double_.apply(d)
        assert out is d
        np.testing.assert_allclose(fwAD.unpack_dual(out).primal.numpy(), 2 * X.numpy())
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), 2 * V.numpy())


def test_tangent_cast_to_output_dtype():
    class ToF32(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def jvp(ctx, t):
            return t.to(ember.float32)

    _, tangent = jvp_of(ToF32.apply, X, V)
    assert tangent.dtype == ember.float64


def test_reverse_mode_still_works_with_a_dual_input_that_requires_grad():
    x = X.clone().requires_grad_()
    with fwAD.dual_level():
        y = Sin.apply(fwAD.make_dual(x, V))
        assert y.grad_fn is not None
        np.testing.assert_allclose(
            fwAD.unpack_dual(y).tangent.numpy(), V.numpy() * np.cos(X.numpy())
        )
        y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X.numpy()))


def test_reverse_over_forward_through_jvp():
    """jvp runs with the caller's grad mode: its tangent is differentiable (a Hessian-vector
    product of sum(sin))."""
    x = X.clone().requires_grad_()
    with fwAD.dual_level():
        y = Sin.apply(fwAD.make_dual(x, V))
        t = fwAD.unpack_dual(y).tangent
    (hvp,) = ember.autograd.grad(t.sum(), x)
    np.testing.assert_allclose(hvp.numpy(), -np.sin(X.numpy()) * V.numpy(), rtol=1e-14)


def test_nested_levels_second_derivative():
    with fwAD.dual_level() as outer:
        d1 = fwAD.make_dual(X, V, level=outer)
        with fwAD.dual_level() as inner:
            y = Sin.apply(fwAD.make_dual(d1, V, level=inner))
            first = fwAD.unpack_dual(y, level=inner).tangent
        second = fwAD.unpack_dual(first, level=outer).tangent
    np.testing.assert_allclose(first.numpy(), V.numpy() * np.cos(X.numpy()), rtol=1e-14)
    np.testing.assert_allclose(second.numpy(), -np.sin(X.numpy()) * V.numpy() ** 2, rtol=1e-14)


def test_gradcheck_forward_ad_of_custom_function():
    x = X.clone().requires_grad_()
    assert ember.autograd.gradcheck(Sin.apply, (x,), check_forward_ad=True)
    assert ember.autograd.gradcheck(ExpSetup.apply, (x,), check_forward_ad=True)


def test_func_jvp_through_custom_function():
    _, t = ember.func.jvp(Sin.apply, (X,), (V,))
    np.testing.assert_allclose(t.numpy(), V.numpy() * np.cos(X.numpy()), rtol=1e-14)
    _, t = ember.func.jvp(lambda x: ExpSetup.apply(x) * 2, (X,), (V,))
    np.testing.assert_allclose(t.numpy(), 2 * np.exp(X.numpy()) * V.numpy(), rtol=1e-14)


def test_torch_parity_custom_function_jvp():
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_forward(x, y)
                return x**3 * y

            @staticmethod
            def jvp(ctx, tx, ty):
                x, y = ctx.saved_tensors
                return 3 * x**2 * y * tx + x**3 * ty

        return Cube

    xn, yn, vn = X.numpy(), np.array([1.5, -0.5, 0.25]), V.numpy()
    with tfw.dual_level():
        tx = torch.from_numpy(xn.copy())
        out = make(torch).apply(
            tfw.make_dual(tx, torch.from_numpy(vn.copy())), torch.from_numpy(yn)
        )
        expect = tfw.unpack_dual(out).tangent.numpy()
    with fwAD.dual_level():
        out = make(ember).apply(fwAD.make_dual(X, V), ember.from_numpy(yn))
        got = fwAD.unpack_dual(out).tangent.numpy()
    np.testing.assert_allclose(got, expect, rtol=1e-14)
