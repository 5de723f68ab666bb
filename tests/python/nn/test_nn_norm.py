"""Normalisation functions: layer_norm, rms_norm, group_norm, batch_norm (running statistics,
momentum, cumulative average, eval), instance_norm. NumPy references, gradcheck /
gradgradcheck, reduced precision, errors, and PyTorch parity (values, gradients, running
statistics over several steps)."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def t64(a, requires_grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64)).requires_grad_(requires_grad)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- NumPy references ----------------------------------------------------------------------


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def np_rms_norm(x, k, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    axes = tuple(range(x.ndim - k, x.ndim))
    y = x / np.sqrt((x * x).mean(axes, keepdims=True) + eps)
    return y * (1 if w is None else w)


def channel_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def np_group_norm(x, g, w=None, b=None, eps=1e-5):
    xg = x.reshape(x.shape[0], g, -1)
    y = ((xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + eps)).reshape(
        x.shape
    )
    if w is not None:
        y = y * w.reshape(channel_shape(x))
    if b is not None:
        y = y + b.reshape(channel_shape(x))
    return y


def np_batch_norm(x, mean, var, w=None, b=None, eps=1e-5):
    cs = channel_shape(x)
    y = (x - mean.reshape(cs)) / np.sqrt(var.reshape(cs) + eps)
    if w is not None:
        y = y * w.reshape(cs)
    if b is not None:
        y = y + b.reshape(cs)
    return y


def batch_axes(x):
    return (0,) + tuple(range(2, x.ndim))


# ---- layer_norm / rms_norm -------------------------------------------------------------------


@pytest.mark.parametrize("shape,k", [((4, 6), 1), ((2, 3, 5), 2), ((7,), 1), ((3, 5000), 1)])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_forward(shape, k, affine):
    x = rand(*shape) * 3 + 2
    w = rand(*shape[-k:], seed=1) if affine else None
    b = rand(*shape[-k:], seed=2) if affine else None
    got = F.layer_norm(
        t64(x), shape[-k:], None if w is None else t64(w), None if b is None else t64(b), eps=1e-4
    )
    np.testing.assert_allclose(got.numpy(), np_layer_norm(x, k, w, b, 1e-4), rtol=1e-10, atol=1e-12)
    x32 = x.astype(np.float32)
    got32 = ember.layer_norm(ember.tensor(x32), list(shape[-k:]))
    assert got32.dtype == ember.float32
    np.testing.assert_allclose(got32.numpy(), np_layer_norm(x32.astype(np.float64), k), atol=2e-5)


def test_layer_norm_weight_only_bias_only_and_large_offset():
    x = rand(5, 8) + 1e4  # a large mean: the one-pass statistics must not cancel
    w, b = rand(8, seed=1), rand(8, seed=2)
    np.testing.assert_allclose(
        F.layer_norm(t64(x), (8,), weight=t64(w)).numpy(),
        np_layer_norm(x, 1, w),
        rtol=1e-8,
        atol=1e-9,
    )
    np.testing.assert_allclose(
        F.layer_norm(t64(x), (8,), bias=t64(b)).numpy(),
        np_layer_norm(x, 1, None, b),
        rtol=1e-8,
        atol=1e-9,
    )
    x32 = ember.tensor(x.astype(np.float32))
    np.testing.assert_allclose(F.layer_norm(x32, (8,)).numpy(), np_layer_norm(x, 1), atol=2e-3)


@pytest.mark.parametrize("shape,k", [((4, 6), 1), ((2, 3, 5), 2)])
def test_rms_norm_forward(shape, k):
    x = rand(*shape)
    w = rand(*shape[-k:], seed=1)
    np.testing.assert_allclose(
        F.rms_norm(t64(x), shape[-k:], t64(w)).numpy(), np_rms_norm(x, k, w), rtol=1e-12
    )
    np.testing.assert_allclose(
        F.rms_norm(t64(x), shape[-k:], eps=0.1).numpy(), np_rms_norm(x, k, None, 0.1), rtol=1e-12
    )
    # eps=None is the machine epsilon of the dtype (visible for tiny inputs).
    tiny = (x * 1e-9).astype(np.float32)
    np.testing.assert_allclose(
        ember.rms_norm(ember.tensor(tiny), list(shape[-k:])).numpy(),
        np_rms_norm(tiny.astype(np.float64), k, None, float(np.finfo(np.float32).eps)),
        rtol=1e-4,
    )


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_norms_reduced_precision(dtype):
    x = rand(4, 16).astype(np.float32)
    xe = ember.tensor(x).to(dtype)
    for got, want in [
        (F.layer_norm(xe, [16]), np_layer_norm(x.astype(np.float64), 1)),
        (F.rms_norm(xe, [16]), np_rms_norm(x.astype(np.float64), 1, None, ember.finfo(dtype).eps)),
        (
            F.group_norm(xe.reshape(2, 4, 8), 2),
            np_group_norm(x.reshape(2, 4, 8).astype(np.float64), 2),
        ),
    ]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got.float().numpy().reshape(want.shape), want, atol=5e-2)
    # float32 parameters with a 16-bit input are allowed (PyTorch's mixed-dtype rule).
    y = F.layer_norm(xe, [16], ember.ones(16), ember.zeros(16))
    assert y.dtype == dtype


# ---- group_norm ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,g", [((2, 6, 5), 3), ((3, 4), 2), ((2, 8, 3, 3), 8), ((1, 4, 7), 1)]
)
def test_group_norm_forward(shape, g):
    x = rand(*shape) * 2 - 1
    w, b = rand(shape[1], seed=1), rand(shape[1], seed=2)
    np.testing.assert_allclose(
        F.group_norm(t64(x), g, t64(w), t64(b)).numpy(),
        np_group_norm(x, g, w, b),
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        F.group_norm(t64(x), g, eps=0.5).numpy(),
        np_group_norm(x, g, eps=0.5),
        rtol=1e-10,
        atol=1e-12,
    )


# ---- batch_norm / instance_norm ------------------------------------------------------------


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 3, 6, 7), (3, 5, 40)])
def test_batch_norm_training_forward_and_running_stats(shape):
    x = rand(*shape) * 2 + 1
    C = shape[1]
    rm, rv = ember.zeros(C, dtype=ember.float64), ember.ones(C, dtype=ember.float64)
    w, b = rand(C, seed=1), rand(C, seed=2)
    y = F.batch_norm(t64(x), rm, rv, t64(w), t64(b), training=True, momentum=0.2, eps=1e-3)
    axes = batch_axes(x)
    mean, var = x.mean(axes), x.var(axes)
    np.testing.assert_allclose(
        y.numpy(), np_batch_norm(x, mean, var, w, b, 1e-3), rtol=1e-10, atol=1e-12
    )
    n = x.size / C
    np.testing.assert_allclose(rm.numpy(), 0.2 * mean, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * var * n / (n - 1), rtol=1e-12)


def test_batch_norm_eval_uses_running_stats():
    x = rand(4, 3, 5)
    rm, rv = rand(3, seed=1), np.abs(rand(3, seed=2)) + 0.5
    rme, rve = t64(rm), t64(rv)
    y = F.batch_norm(t64(x), rme, rve, training=False)
    np.testing.assert_allclose(y.numpy(), np_batch_norm(x, rm, rv), rtol=1e-12)
    np.testing.assert_array_equal(rme.numpy(), rm)  # untouched
    np.testing.assert_array_equal(rve.numpy(), rv)


def test_batch_norm_training_without_running_stats_and_float32_stats():
    x = rand(6, 4)
    y = F.batch_norm(t64(x), None, None, training=True)
    np.testing.assert_allclose(y.numpy(), np_batch_norm(x, x.mean(0), x.var(0)), rtol=1e-10)
    # float32 input, float32 running stats updated in place (a version bump, same object).
    rm = ember.zeros(4)
    v0 = rm._version
    F.batch_norm(ember.tensor(x.astype(np.float32)), rm, ember.ones(4), training=True)
    assert rm._version > v0
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.mean(0), rtol=1e-5)


def test_batch_norm_cumulative_average():
    # nn.BatchNorm with momentum=None passes momentum = 1 / num_batches_tracked: the running
    # statistics are then the plain average of the batch statistics.
    rng = np.random.default_rng(3)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    means, vars_ = [], []
    for step in range(1, 6):
        x = rng.standard_normal((10, 3)) * step + step
        F.batch_norm(t64(x), rm, rv, training=True, momentum=1.0 / step)
        means.append(x.mean(0))
        vars_.append(x.var(0, ddof=1))
    np.testing.assert_allclose(rm.numpy(), np.mean(means, 0), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), np.mean(vars_, 0), rtol=1e-12)


def test_top_level_batch_norm_signature():
    x = t64(rand(4, 3))
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    y = ember.batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5, False)
    np.testing.assert_allclose(y.numpy(), F.batch_norm(x, None, None, training=True).numpy())


def test_instance_norm():
    x = rand(2, 3, 10)
    w, b = rand(3, seed=1), rand(3, seed=2)
    want = (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + 1e-5)
    want = want * w[None, :, None] + b[None, :, None]
    np.testing.assert_allclose(
        F.instance_norm(t64(x), weight=t64(w), bias=t64(b)).numpy(), want, rtol=1e-10, atol=1e-12
    )
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    F.instance_norm(t64(x), rm, rv, momentum=0.5)
    np.testing.assert_allclose(rm.numpy(), 0.5 * x.mean(2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * x.var(2, ddof=1).mean(0), rtol=1e-12)
    y = F.instance_norm(t64(x), rm, rv, use_input_stats=False)
    np.testing.assert_allclose(y.numpy(), np_batch_norm(x, rm.numpy(), rv.numpy()), rtol=1e-12)


def test_empty_inputs():
    assert F.layer_norm(ember.zeros(0, 4), [4]).shape == (0, 4)
    assert F.group_norm(ember.zeros(0, 4, 3), 2).shape == (0, 4, 3)
    x = ember.zeros(0, 4).requires_grad_()
    F.layer_norm(x, [4]).sum().backward()
    assert x.grad.shape == (0, 4)


# ---- errors --------------------------------------------------------------------------------


def test_errors():
    x = ember.randn(2, 3)
    with pytest.raises(
        RuntimeError,
        match=r"Given normalized_shape=\[4\], expected input with "
        r"shape \[\*, 4\], but got input of size\[2, 3\]",
    ):
        F.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*4\]"):
        F.rms_norm(x, [4])
    with pytest.raises(
        RuntimeError,
        match="Expected weight to be of same shape as "
        r"normalized_shape, but got weight of shape \[2\]",
    ):
        F.layer_norm(x, [3], ember.ones(2))
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        F.layer_norm(x, [3], None, ember.ones(2))
    with pytest.raises(RuntimeError, match="at least 1-dimensional"):
        F.layer_norm(x, [])
    with pytest.raises(TypeError, match="normalized_shape"):
        F.layer_norm(x, 3)
    with pytest.raises(NotImplementedError, match=r"\[layer_norm\].*int64"):
        F.layer_norm(ember.ones(2, 3, dtype=ember.int64), [3])
    with pytest.raises(RuntimeError, match="mixed dtype"):
        F.layer_norm(x, [3], ember.ones(3, dtype=ember.float64))
    with pytest.raises(
        RuntimeError,
        match="divisible by num_groups, but got input of shape "
        r"\[2, 6, 4\] and num_groups=4",
    ):
        F.group_norm(ember.randn(2, 6, 4), 4)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions"):
        F.group_norm(ember.randn(6), 3)
    with pytest.raises(
        RuntimeError, match="Expected weight to be a vector of size equal to the number of channels"
    ):
        F.group_norm(ember.randn(2, 6, 4), 3, ember.ones(5))
    with pytest.raises(ZeroDivisionError):
        F.group_norm(ember.randn(2, 6, 4), 0)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.group_norm(ember.randn(1, 6), 6)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(x, ember.zeros(4), ember.ones(3))
    with pytest.raises(RuntimeError, match="running_var should contain 3 elements not 2"):
        F.batch_norm(x, ember.zeros(3), ember.ones(2))
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 4"):
        F.batch_norm(x, ember.zeros(3), ember.ones(3), weight=ember.ones(4))
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(x, None, None)
    with pytest.raises(
        ValueError,
        match=r"Expected more than 1 value per channel when training, "
        r"got input size ember.Size\(\[1, 3\]\)",
    ):
        F.batch_norm(x[:1], None, None, training=True)
    with pytest.raises(NotImplementedError, match="batch_norm"):
        F.batch_norm(ember.ones(2, 3, dtype=ember.int64), None, None, training=True)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(ember.randn(2, 3, 1))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined"):
        F.instance_norm(ember.randn(2, 3, 4), use_input_stats=False)


# ---- gradients ------------------------------------------------------------------------------


NORM_CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, [4], w, b), [(3, 4), (4,), (4,)]),
    "layer_norm_2d": (lambda x, w, b: F.layer_norm(x, [2, 3], w, b), [(2, 2, 3), (2, 3), (2, 3)]),
    "layer_norm_plain": (lambda x: F.layer_norm(x, [5]), [(2, 5)]),
    "rms_norm": (lambda x, w: F.rms_norm(x, [4], w), [(3, 4), (4,)]),
    "rms_norm_plain": (lambda x: F.rms_norm(x, [2, 3], eps=1e-3), [(2, 2, 3)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    "group_norm_plain": (lambda x: F.group_norm(x, 3), [(2, 3, 2, 2)]),
    "batch_norm_train": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [(3, 2, 4), (2,), (2,)],
    ),
    "batch_norm_train_2d": (
        lambda x, w: F.batch_norm(x, None, None, w, training=True),
        [(5, 3), (3,)],
    ),
    "batch_norm_eval": (
        lambda x, w, b: F.batch_norm(x, t64([0.3, -0.2]), t64([1.5, 0.7]), w, b),
        [(3, 2, 4), (2,), (2,)],
    ),
    "instance_norm": (
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        [(2, 2, 4), (2,), (2,)],
    ),
}


@pytest.mark.parametrize("name", sorted(NORM_CASES))
def test_gradcheck(name):
    fn, shapes = NORM_CASES[name]
    args = [t64(rand(*s, seed=i) + (1.5 if i == 1 else 0), True) for i, s in enumerate(shapes)]
    assert gradcheck(fn, args)


@pytest.mark.parametrize(
    "name",
    [
        "layer_norm",
        "layer_norm_2d",
        "rms_norm",
        "group_norm",
        "batch_norm_train",
        "batch_norm_eval",
    ],
)
def test_gradgradcheck(name):
    fn, shapes = NORM_CASES[name]
    args = [t64(rand(*s, seed=i) + (1.5 if i == 1 else 0), True) for i, s in enumerate(shapes)]
    assert gradgradcheck(fn, args)


def test_grad_fn_names_and_partial_requires_grad():
    x = t64(rand(3, 4), True)
    assert F.layer_norm(x, [4]).grad_fn.name() == "NativeLayerNormBackward0"
    assert (
        F.group_norm(x.reshape(3, 4, 1).expand(3, 4, 2), 2).grad_fn.name()
        == "NativeGroupNormBackward0"
    )
    assert F.batch_norm(x, None, None, training=True).grad_fn.name() == "NativeBatchNormBackward0"
    # Only the weight requires grad: the input gets none.
    w = t64(np.ones(4), True)
    xd = t64(rand(3, 4))
    F.layer_norm(xd, [4], w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np_layer_norm(rand(3, 4), 1).sum(0), rtol=1e-10)
    assert xd.grad is None


# ---- PyTorch parity ------------------------------------------------------------------------


def _torch_pair(torch, arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a).requires_grad_() for a in arrays]
    return ts, es


@pytest.mark.parametrize("case", ["layer_norm", "rms_norm", "group_norm", "instance_norm"])
def test_torch_parity_values_and_grads(case):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(11)
    if case == "layer_norm":
        arrays = [
            rng.standard_normal((6, 5, 8)),
            rng.standard_normal((5, 8)),
            rng.standard_normal((5, 8)),
        ]
        fe = lambda x, w, b: F.layer_norm(x, [5, 8], w, b)  # noqa: E731
        ft = lambda x, w, b: tf.layer_norm(x, [5, 8], w, b)  # noqa: E731
    elif case == "rms_norm":
        arrays = [rng.standard_normal((6, 40)), rng.standard_normal((40,))]
        fe = lambda x, w: F.rms_norm(x, [40], w)  # noqa: E731
        ft = lambda x, w: tf.rms_norm(x, [40], w)  # noqa: E731
    elif case == "group_norm":
        arrays = [rng.standard_normal((4, 6, 7, 3)), rng.standard_normal(6), rng.standard_normal(6)]
        fe = lambda x, w, b: F.group_norm(x, 3, w, b)  # noqa: E731
        ft = lambda x, w, b: tf.group_norm(x, 3, w, b)  # noqa: E731
    else:
        arrays = [rng.standard_normal((3, 4, 9)), rng.standard_normal(4), rng.standard_normal(4)]
        fe = lambda x, w, b: F.instance_norm(x, weight=w, bias=b)  # noqa: E731
        ft = lambda x, w, b: tf.instance_norm(x, weight=w, bias=b)  # noqa: E731
    for dtype, tol in [(np.float64, 1e-10), (np.float32, 2e-5)]:
        arrs = [a.astype(dtype) for a in arrays]
        ts, es = _torch_pair(torch, arrs)
        ty, ey = ft(*ts), fe(*es)
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
        g = rng.standard_normal(ty.shape).astype(dtype)
        ty.backward(torch.tensor(g))
        ey.backward(ember.tensor(g))
        for a, b in zip(es, ts):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("shape", [(16, 5), (8, 4, 6), (4, 3, 5, 5), (2, 3, 50)])
def test_torch_parity_batch_norm_running_stats_over_steps(shape):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(12)
    C = shape[1]
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    t_rm, t_rv = torch.zeros(C, dtype=torch.float64), torch.ones(C, dtype=torch.float64)
    e_rm, e_rv = ember.zeros(C, dtype=ember.float64), ember.ones(C, dtype=ember.float64)
    for step in range(5):
        x = rng.standard_normal(shape) * (step + 1) + step
        (tx, tw, tb), (ex, ew, eb) = _torch_pair(torch, [x, w, b])
        ty = tf.batch_norm(tx, t_rm, t_rv, tw, tb, training=True, momentum=0.3, eps=1e-4)
        ey = F.batch_norm(ex, e_rm, e_rv, ew, eb, training=True, momentum=0.3, eps=1e-4)
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(e_rm.numpy(), t_rm.numpy(), rtol=1e-12)
        np.testing.assert_allclose(e_rv.numpy(), t_rv.numpy(), rtol=1e-12)
        g = rng.standard_normal(shape)
        ty.backward(torch.tensor(g))
        ey.backward(ember.tensor(g))
        for a, t in [(ex, tx), (ew, tw), (eb, tb)]:
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-9)
    # Evaluation with the accumulated statistics.
    x = rng.standard_normal(shape)
    (tx, tw, tb), (ex, ew, eb) = _torch_pair(torch, [x, w, b])
    ty = tf.batch_norm(tx, t_rm, t_rv, tw, tb, training=False)
    ey = F.batch_norm(ex, e_rm, e_rv, ew, eb, training=False)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(shape)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    for a, t in [(ex, tx), (ew, tw), (eb, tb)]:
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_torch_parity_batch_norm_cumulative_average():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    bn = torch.nn.BatchNorm1d(4, momentum=None, dtype=torch.float64)
    e_rm, e_rv = ember.zeros(4, dtype=ember.float64), ember.ones(4, dtype=ember.float64)
    for step in range(1, 7):
        x = rng.standard_normal((8, 4)) + step
        bn(torch.tensor(x))
        F.batch_norm(t64(x), e_rm, e_rv, training=True, momentum=1.0 / step)
    np.testing.assert_allclose(e_rm.numpy(), bn.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(e_rv.numpy(), bn.running_var.numpy(), rtol=1e-12)
