"""ember.autograd.Function, reentrant backward, anomaly mode and autograd.functional."""

import threading

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, once_differentiable
from ember.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def f64(values):
    return ember.tensor(values, dtype=ember.float64)


class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.scale, None


def test_function_forward_backward_and_gradcheck():
    x = f64([0.5, -1.0, 2.0]).requires_grad_()
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy() ** 2)
    assert gradcheck(lambda t: Cube.apply(t, 1.5), (x,))


def test_function_double_backward_through_python_backward():
    x = f64([0.5, 2.0]).requires_grad_()
    (g,) = ember.autograd.grad(Cube.apply(x, 1.0).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())


def test_needs_input_grad_and_non_tensor_args():
    seen = {}

    class F(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    a = f64([1.0]).requires_grad_()
    b = f64([2.0])
    F.apply(a, b, 3).sum().backward()
    assert seen["needs"] == (True, False, False)


def test_wrong_number_of_gradients_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    a = f64([1.0]).requires_grad_()
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(a).sum().backward()


def test_mark_dirty_and_non_differentiable():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    x = f64([1.0, 2.0]).requires_grad_()
    y = x * 2
    z = AddOneInPlace.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneInPlaceBackward"
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])

    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, a):
            v, i = a.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            out = ember.zeros_like(gv)
            out[i] = gv
            return out

    x = f64([3.0, 1.0, 2.0]).requires_grad_()
    v, i = SortWithIndex.apply(x)
    assert v.requires_grad and not i.requires_grad
    (v * f64([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [100.0, 1.0, 10.0])


def test_materialize_grads():
    got = {}

    class TwoOut(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            got["g2"] = g2
            return g1

    a = f64([1.0]).requires_grad_()
    o1, _ = TwoOut.apply(a)
    o1.sum().backward()
    assert got["g2"] is None


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    a = f64([3.0]).requires_grad_()
    # The grad_output requires grad, so the backward's result is differentiable in principle:
    # differentiating it must raise.
    go = f64([1.0]).requires_grad_()
    (g,) = ember.autograd.grad(Sq.apply(a), a, go, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [6.0])
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_exception_in_backward_reaches_caller_and_engine_stays_usable():
    class Boom(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    a = f64([1.0]).requires_grad_()
    with pytest.raises(ValueError, match="boom in backward"):
        Boom.apply(a).sum().backward()
    (a * 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0])


def _reentrant(depth):
    class Reenter(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            if depth > 0:
                inner = f64([1.0]).requires_grad_()
                with ember.enable_grad():  # backward runs with grad mode off
                    out = _reentrant(depth - 1).apply(inner * 2)
                    out.sum().backward()
                assert float(inner.grad) == 2.0
            return g

    return Reenter


@pytest.mark.parametrize("depth", [1, 5, 150])
def test_reentrant_backward(depth):
    # 150 nested backward calls: beyond the per-thread depth limit (60) they continue on pool
    # threads instead of growing the stack.
    a = f64([1.0]).requires_grad_()
    _reentrant(depth).apply(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0])


def test_concurrent_backward_on_independent_graphs():
    errors = []

    def work(seed):
        try:
            for _ in range(50):
                x = f64([float(seed), 2.0]).requires_grad_()
                (x * x).sum().backward()
                np.testing.assert_allclose(x.grad.numpy(), [2.0 * seed, 4.0])
        except Exception as e:  # noqa: BLE001 - collected for the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_anomaly_mode_names_node_and_forward_trace():
    x = f64([0.0, 1.0]).requires_grad_()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = ember.autograd.detect_anomaly()
    with ctx:
        y = x.sqrt()  # sqrt's backward at 0 divides 0 by 0
        z = (y * 0).sum()
        with pytest.raises(RuntimeError, match=r"(?s)Function 'SqrtBackward0' returned nan.*"
                           r"Traceback of forward call.*test_autograd_function"):
            z.backward()
    assert not ember._C._autograd.is_anomaly_enabled()
    with ember.autograd.set_detect_anomaly(True):
        assert ember._C._autograd.is_anomaly_enabled()
    assert not ember._C._autograd.is_anomaly_enabled()


def test_functional_api():
    x = f64([1.0, 2.0])
    v = f64([1.0, 1.0])
    np.testing.assert_allclose(jacobian(lambda t: t * t * t, x).numpy(), np.diag([3.0, 12.0]))
    out, g = vjp(lambda t: t * t, x, v)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    out, jv = jvp(lambda t: t * t, x, v)
    np.testing.assert_allclose(jv.numpy(), [2.0, 4.0])
    out, hv = hvp(lambda t: (t * t * t).sum(), x, v)
    np.testing.assert_allclose(hv.numpy(), [6.0, 12.0])
    out, vh = vhp(lambda t: (t * t * t).sum(), x, v)
    np.testing.assert_allclose(vh.numpy(), [6.0, 12.0])
    a, b = f64([1.0, 2.0]), f64([3.0])
    ja, jb = jacobian(lambda p, q: p * q, (a, b))
    assert tuple(ja.shape) == (2, 2) and tuple(jb.shape) == (2, 1)
    with pytest.raises(RuntimeError, match="independent of input"):
        jacobian(lambda p, q: p * 2, (a, b), strict=True)
    with pytest.raises(RuntimeError, match="single Tensor with a single element"):
        vjp(lambda t: t * 2, x)


def test_hessian():
    x = f64([1.0, 2.0])
    np.testing.assert_allclose(hessian(lambda t: (t * t * t).sum(), x).numpy(),
                               np.diag([6.0, 12.0]))
