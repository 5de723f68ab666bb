"""The autograd engine: backward / grad, graph structure, hooks, grad modes, in-place rules,
saved-tensor version checks, views (CopySlices) and deep graphs."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def leaf(*shape, dtype=ember.float64, lo=-1.0, hi=1.0):
    gen = np.random.default_rng(sum(shape) + 7)
    return ember.tensor(gen.uniform(lo, hi, shape), dtype=dtype).requires_grad_()


def test_backward_accumulates_into_leaves():
    x = ember.tensor([1.0, 2.0, 3.0]).requires_grad_()
    y = (x * x).sum()
    assert y.grad_fn.name() == "SumBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0, 9.0])


def test_leaf_and_requires_grad_flags():
    x = ember.ones(2)
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None
    x.requires_grad_()
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.ones(2, dtype=ember.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = False


def test_autograd_grad_does_not_accumulate_and_prunes():
    a, b = leaf(3), leaf(3)
    out = (a * b).sum() + b.exp().sum()
    (ga,) = ember.autograd.grad(out, a, retain_graph=True)
    np.testing.assert_allclose(ga.numpy(), b.detach().numpy())
    assert a.grad is None and b.grad is None
    c = leaf(3)
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        ember.autograd.grad(out, c, retain_graph=True)
    assert ember.autograd.grad(out, c, allow_unused=True, retain_graph=True) == (None,)
    (z,) = ember.autograd.grad(out, c, materialize_grads=True)
    assert z.shape == c.shape and float(z.abs().sum()) == 0.0


def test_backward_inputs_argument():
    a, b = leaf(2), leaf(2)
    (a * b).sum().backward(inputs=[a])
    assert a.grad is not None and b.grad is None
    with pytest.raises(RuntimeError, match="cannot be empty"):
        ember.autograd.backward((a * b).sum(), inputs=[])


def test_non_scalar_needs_gradient():
    x = leaf(3)
    y = x * 2
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    y.backward(ember.ones(3, dtype=ember.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_second_backward_without_retain_graph_raises():
    x = leaf(3)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_broadcast_and_dtype_promotion_gradients():
    a = leaf(3, 1)
    b = leaf(4, dtype=ember.float32)
    out = (a * b).sum()
    out.backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert b.grad.dtype == ember.float32
    want = np.full(3, b.detach().numpy().sum())
    np.testing.assert_allclose(a.grad.numpy()[:, 0], want, rtol=1e-6)


def test_no_grad_enable_grad_set_grad_enabled_inference_mode():
    x = leaf(2)
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled()
        t = ember.ones(2)
        assert not (x * 2).requires_grad
    assert not ember.is_inference_mode_enabled()
    with pytest.raises(RuntimeError, match="inference tensor"):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (x * t).sum()


def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.mul_(2)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0:2].mul_(2)
    with ember.no_grad():
        x.mul_(2)  # allowed without recording


def test_modified_saved_tensor_raises_with_versions():
    x = leaf(3)
    y = x * 1
    z = y.exp()  # saves its result
    z.add_(1)
    with pytest.raises(
        RuntimeError, match=r"output 0 of ExpBackward0.*version 1; expected version 0.*clone"
    ):
        z.sum().backward()


def test_inplace_ops_rebase_history():
    x = leaf(3)
    y = x * 2
    c = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    y.mul_(c)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    # The other operand shares y's version counter: saved, then modified by the op itself.
    z = x * 2
    z.mul_(z.detach())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_through_view_uses_copy_slices():
    x = leaf(4)
    y = x * 1
    v = y[1:3]
    v.mul_(10)
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 10.0, 10.0, 1.0])


def test_slice_assignment_into_plain_tensor_carries_gradient():
    w = leaf(2)
    buf = ember.zeros(4, dtype=ember.float64)
    buf[1:3] = w * 3
    assert buf.requires_grad
    buf.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0])


def test_view_of_base_modified_in_place_regenerates_grad_fn():
    x = leaf(4)
    y = x * 1
    v = y[0:2]
    y.mul_(3)
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 0.0, 0.0])


def test_tensor_hooks_and_retain_grad():
    x = leaf(3)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    seen = []
    h = y.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    x.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert len(seen) == 1
    # retain_grad's hook runs last, so .grad is the gradient after the other hooks (PyTorch 2).
    np.testing.assert_allclose(y.grad.numpy(), [10.0, 10.0, 10.0])
    np.testing.assert_allclose(x.grad.numpy(), [21.0, 21.0, 21.0])
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_post_accumulate_grad_hook_and_node_hooks():
    x = leaf(2)
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    y = x.exp()
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.grad_fn.register_hook(lambda gi, go: None)
    y.sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()))


def test_detach_shares_storage_and_version():
    x = leaf(3)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.zero_()
    assert float(y.detach().abs().sum()) == 0.0
    y2 = x * 2
    y2.detach_()
    assert y2.grad_fn is None and not y2.requires_grad


def test_deep_chain_does_not_overflow_the_stack():
    x = ember.tensor([1.0], dtype=ember.float64).requires_grad_()
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
    del y  # freeing a 100 000-node graph must not recurse either


def test_higher_order_gradients():
    x = leaf(3)
    y = (x * x * x).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())


def test_errors_are_clear():
    x = ember.ones(2)
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.sum().backward()
    w = leaf(2)
    with pytest.raises(RuntimeError, match="arguments don't support automatic differentiation"):
        ember.add(w, w, out=ember.empty(2, dtype=ember.float64))


def test_printing_shows_grad_fn():
    x = ember.tensor([1.0, 2.0]).requires_grad_()
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"


@pytest.mark.parametrize("name", [
    "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "atan", "sinh", "cosh",
    "asinh", "erf", "erfc", "expm1", "log1p", "log2", "log10", "exp2", "rsqrt", "reciprocal",
    "lgamma", "abs", "neg",
])
def test_unary_gradcheck(name):
    x = leaf(5, lo=0.5, hi=1.5)
    assert gradcheck(getattr(ember, name), (x,))
    assert gradgradcheck(getattr(ember, name), (x,))


@pytest.mark.parametrize("name", ["asin", "acos", "atanh", "erfinv"])
def test_unary_gradcheck_unit_interval(name):
    x = leaf(5, lo=-0.6, hi=0.6)
    assert gradcheck(getattr(ember, name), (x,))


def test_binary_reduction_view_gradcheck():
    a, b = leaf(3, 4), leaf(4, lo=0.5, hi=1.5)
    assert gradcheck(lambda a, b: (a * b - a / b + a - b).sum(1), (a, b))
    assert gradgradcheck(lambda a, b: (a * b / b).mean(), (a, b))
    assert gradcheck(lambda a: a.transpose(0, 1).reshape(-1)[2:9].unsqueeze(0).expand(2, 7), (a,))
    assert gradcheck(lambda a: a.permute(1, 0)[1].view(3, 1).squeeze(), (a,))
    assert gradcheck(lambda a: a.mean((0, 1), keepdim=True), (a,))


def test_complex_gradients_follow_conjugate_convention():
    z = ember.tensor([1 + 2j, -0.5 + 0.3j], dtype=ember.complex128).requires_grad_()
    assert gradcheck(lambda z: (z * z).exp(), (z,))
    (z.abs().sum()).backward()
    zn = z.detach().numpy()
    np.testing.assert_allclose(z.grad.numpy(), zn / np.abs(zn))


def test_memory_is_flat_over_many_iterations_and_saved_tensors_are_freed():
    stats = ember._C._allocator_stats
    x = leaf(256)
    w = leaf(256)

    def step():
        y = ((x * w).exp() * x).sum()
        y.backward()

    for _ in range(50):  # warm up: .grad buffers exist from here on
        step()
    before = stats()["current_bytes"]
    for _ in range(10_000):
        step()
    after = stats()["current_bytes"]
    assert after == before

    big = ember.zeros(1 << 16, dtype=ember.float64)
    base = stats()["current_bytes"]
    y = ((big + x.sum()) * (big + x.sum()).exp()).sum()
    held = stats()["current_bytes"]
    assert held - base >= 2 * (1 << 19)  # mul saves both 512 KiB operands
    y.backward()
    del y
    freed = stats()["current_bytes"]
    assert freed - base < (1 << 16)


def test_grad_mode_decorators_with_and_without_parentheses():
    x = leaf(1)

    @ember.no_grad
    def f(t):
        return t * 2

    @ember.enable_grad()
    def g(t):
        return t * 2

    @ember.inference_mode
    def h(t):
        return t * 2

    @ember.inference_mode(False)
    def k(t):
        return t * 2

    assert not f(x).requires_grad
    with ember.no_grad():
        assert g(x).requires_grad
    assert not h(x).requires_grad
    assert k(x).requires_grad

    @ember.no_grad()
    def gen():
        yield (x * 2).requires_grad

    assert list(gen()) == [False]


def test_retain_grad_follows_in_place_ops():
    x = leaf(3)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0, 6.0])


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128])
def test_a_leaf_as_its_own_gradient_with_create_graph(dtype):
    # The gradient is the leaf itself: recording the new .grad needs the leaf's own grad
    # accumulator, which once deadlocked on the leaf's lock (found by the fuzzer).
    x = ember.tensor([0.5], dtype=dtype).requires_grad_()
    x.backward(x, create_graph=True)
    assert x.grad is not x and x.grad.requires_grad and x.grad.grad_fn is not None
    assert x.grad.tolist() == x.tolist()
    x.backward(x, create_graph=True)  # accumulates, still recorded
    assert x.grad.tolist() == [2 * v for v in x.tolist()] and x.grad.grad_fn is not None
    (g,) = ember.autograd.grad(x.grad.sum().real if dtype.is_complex else x.grad.sum(), [x])
    assert g.tolist() == [2.0]
