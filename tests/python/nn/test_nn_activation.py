"""Activations of ember.nn.functional: forward against NumPy references (all floating dtypes,
integer dtypes where PyTorch accepts them, NaN / inf / kinks, 0-d, empty, non-contiguous),
float64 gradcheck and gradgradcheck, in-place forms, node names, errors, and parity with
PyTorch where it is installed."""

import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def np_softplus(x, beta=1.0, threshold=20.0):
    bx = x * beta
    soft = (np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx)))) / beta
    return np.where(bx > threshold, x, soft)


def np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (ember function, NumPy reference); the functions take one tensor.
REFS = {
    "relu": (F.relu, lambda x: np.where(x < 0, 0.0, x)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    "threshold": (lambda x: F.threshold(x, 0.3, -2.0), lambda x: np.where(x <= 0.3, -2.0, x)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "elu": (lambda x: F.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x))),
    "selu": (F.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    "celu": (lambda x: F.celu(x, 0.7),
             lambda x: np.maximum(x, 0) + np.minimum(0, 0.7 * np.expm1(x / 0.7))),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + np_erf(x / math.sqrt(2)))),
    "gelu_tanh": (
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "silu": (F.silu, lambda x: x * np_sigmoid(x)),
    "mish": (F.mish, lambda x: x * np.tanh(np_softplus(x))),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0), lambda x: np_softplus(x, 2.0, 3.0)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "logsigmoid": (F.logsigmoid, lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "softshrink": (lambda x: F.softshrink(x, 0.4),
                   lambda x: np.where(x > 0.4, x - 0.4, np.where(x < -0.4, x + 0.4, 0.0))),
    "hardshrink": (lambda x: F.hardshrink(x, 0.4), lambda x: np.where(np.abs(x) > 0.4, x, 0.0)),
    "glu": (F.glu, lambda x: x[..., : x.shape[-1] // 2] * np_sigmoid(x[..., x.shape[-1] // 2:])),
    "sigmoid": (F.sigmoid, np_sigmoid),
    "tanh": (F.tanh, np.tanh),
}
NAMES = sorted(REFS)
# Activations that are smooth enough for a second derivative check away from kinks.
COMMON = ["relu", "leaky_relu", "elu", "selu", "celu", "gelu", "gelu_tanh", "silu", "mish",
          "softplus", "hardswish", "logsigmoid", "hardtanh", "glu", "softsign", "hardsigmoid"]


def data(shape=(4, 6), seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) * scale


@pytest.mark.parametrize("name", NAMES)
def test_forward_float64_matches_numpy(name):
    fn, ref = REFS[name]
    x = data()
    np.testing.assert_allclose(fn(ember.tensor(x)).numpy(), ref(x), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype,tol", [(ember.float32, 1e-5), (ember.float16, 2e-3),
                                       (ember.bfloat16, 2e-2)])
def test_forward_reduced_precision(name, dtype, tol):
    fn, ref = REFS[name]
    x = ember.tensor(data(seed=1), dtype=dtype)
    y = fn(x)
    assert y.dtype == dtype
    expected = ref(x.double().numpy())
    np.testing.assert_allclose(y.double().numpy(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "glu"])
def test_special_values_and_shapes(name):
    fn, ref = REFS[name]
    x = np.array([0.0, -0.0, 1e-30, -1e-30, 80.0, -80.0, 3.0, -3.0, 0.4, -0.4, 0.3])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(fn(ember.tensor(x)).numpy(), ref(x), rtol=1e-12, atol=1e-300)
    # NaN stays NaN.
    assert np.isnan(fn(ember.tensor([math.nan])).numpy()).all()
    # 0-d, empty and non-contiguous inputs.
    assert fn(ember.tensor(0.5, dtype=ember.float64)).shape == ()
    assert fn(ember.empty(0, 3)).shape == (0, 3)
    base = data((6, 8), seed=2)
    t = ember.tensor(base).t()[::2]
    np.testing.assert_allclose(fn(t).numpy(), ref(base.T[::2]), rtol=1e-12, atol=1e-14)


def test_infinities_follow_the_formulas():
    inf = math.inf
    x = ember.tensor([inf, -inf])
    np.testing.assert_array_equal(F.relu(x).numpy(), [inf, 0])
    np.testing.assert_array_equal(F.elu(x).numpy(), [inf, -1])
    np.testing.assert_array_equal(F.softplus(x).numpy(), [inf, 0])
    np.testing.assert_array_equal(F.logsigmoid(x).numpy(), [0, -inf])
    np.testing.assert_array_equal(F.hardsigmoid(x).numpy(), [1, 0])
    np.testing.assert_array_equal(F.hardtanh(x).numpy(), [1, -1])


@pytest.mark.parametrize("dtype", [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64])
def test_integer_inputs_where_pytorch_accepts_them(dtype):
    x = ember.tensor([0, 1, 2, 7], dtype=dtype)
    if dtype != ember.uint8:
        x = ember.tensor([-3, 0, 2, 7], dtype=dtype)
    v = x.numpy().astype(np.int64)
    for y, ref in [
        (F.relu(x), np.maximum(v, 0)),
        (x.relu(), np.maximum(v, 0)),
        (F.relu6(x), np.clip(v, 0, 6)),
        (F.threshold(x, 1, 5), np.where(v <= 1, 5, v)),
        (F.hardtanh(x, 0, 2), np.clip(v, 0, 2)),
    ]:
        assert y.dtype == dtype
        np.testing.assert_array_equal(y.numpy().astype(np.int64), ref)
    # softsign and tanhshrink are composites: integers give the default float dtype.
    assert F.softsign(x).dtype == ember.float32


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck(name):
    fn, _ = REFS[name]
    # Away from the kinks (at +-0.3, +-0.4, 0, +-3, 6) so finite differences are valid.
    x = data((3, 4), seed=3, scale=2.0)
    x = np.where(np.abs(x) < 0.6, x + 1.3, x)
    x = np.where(np.abs(np.abs(x) - 3) < 0.1, x + 0.5, x)
    t = ember.tensor(x, requires_grad=True)
    assert gradcheck(fn, (t,))


@pytest.mark.parametrize("name", COMMON)
def test_gradgradcheck(name):
    fn, _ = REFS[name]
    x = data((3, 4), seed=4, scale=2.0)
    x = np.where(np.abs(x) < 0.6, x + 1.3, x)
    x = np.where(np.abs(np.abs(x) - 3) < 0.1, x + 0.5, x)
    t = ember.tensor(x, requires_grad=True)
    assert gradgradcheck(fn, (t,))


def test_third_order_gradient_of_gelu_and_silu():
    # The double backward is built from public ops, so it can be differentiated again.
    for fn in (F.silu, F.gelu):
        x = ember.tensor([0.3, -1.2], dtype=ember.float64, requires_grad=True)
        (g,) = ember.autograd.grad(fn(x).sum(), x, create_graph=True)
        (g2,) = ember.autograd.grad(g.sum(), x, create_graph=True)
        (g3,) = ember.autograd.grad(g2.sum(), x)
        eps = 1e-4
        xp = ember.tensor([0.3 + eps, -1.2 + eps], dtype=ember.float64, requires_grad=True)
        xm = ember.tensor([0.3 - eps, -1.2 - eps], dtype=ember.float64, requires_grad=True)

        def second(t):
            (a,) = ember.autograd.grad(fn(t).sum(), t, create_graph=True)
            (b,) = ember.autograd.grad(a.sum(), t)
            return b.numpy()

        np.testing.assert_allclose(g3.numpy(), (second(xp) - second(xm)) / (2 * eps), rtol=1e-5)


def test_prelu_forward_and_gradients():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    w = np.array([0.1, 0.5, -0.3])
    y = F.prelu(ember.tensor(x), ember.tensor(w))
    ref = np.where(x > 0, x, w[None, :, None] * x)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-14)
    assert gradcheck(F.prelu, (ember.tensor(x, requires_grad=True),
                               ember.tensor(w, requires_grad=True)))
    assert gradgradcheck(F.prelu, (ember.tensor(x, requires_grad=True),
                                   ember.tensor(w, requires_grad=True)))
    # One shared weight, 1-D and 0-d inputs.
    w1 = ember.tensor([0.25], dtype=ember.float64, requires_grad=True)
    x1 = ember.tensor([1.0, -2.0], dtype=ember.float64, requires_grad=True)
    np.testing.assert_allclose(F.prelu(x1, w1).detach().numpy(), [1.0, -0.5])
    assert gradcheck(F.prelu, (x1, w1))
    np.testing.assert_allclose(ember.prelu(ember.tensor(-2.0), ember.tensor([0.5])).numpy(), -1.0)
    assert ember.tensor([-1.0, 2.0]).prelu(ember.tensor([0.5])).tolist() == [-0.5, 2.0]
    assert F.prelu(x1, w1).grad_fn.name() == "PreluKernelBackward0"


def test_glu_dims_and_gradients():
    x = data((4, 6, 2), seed=6)
    for dim in (0, 1, -2):
        y = F.glu(ember.tensor(x), dim)
        a, b = np.split(x, 2, axis=dim)
        np.testing.assert_allclose(y.numpy(), a * np_sigmoid(b), rtol=1e-12)
    t = ember.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: F.glu(v, 1), (t,))
    assert gradgradcheck(lambda v: F.glu(v, 0), (t,))
    assert F.glu(t, 1).grad_fn.name() == "GluBackward0"


@pytest.mark.parametrize("name,fn,inplace_fn", [
    ("relu", F.relu, lambda x: F.relu(x, inplace=True)),
    ("relu_", F.relu, F.relu_),
    ("relu6", F.relu6, lambda x: F.relu6(x, inplace=True)),
    ("elu", F.elu, lambda x: F.elu(x, inplace=True)),
    ("selu", F.selu, lambda x: F.selu(x, inplace=True)),
    ("celu", F.celu, lambda x: F.celu(x, inplace=True)),
    ("leaky_relu", F.leaky_relu, lambda x: F.leaky_relu(x, inplace=True)),
    ("hardtanh", F.hardtanh, lambda x: F.hardtanh(x, inplace=True)),
    ("threshold", lambda x: F.threshold(x, 0.1, 2.0),
     lambda x: F.threshold(x, 0.1, 2.0, inplace=True)),
    ("silu", F.silu, lambda x: F.silu(x, inplace=True)),
    ("mish", F.mish, lambda x: F.mish(x, inplace=True)),
    ("hardsigmoid", F.hardsigmoid, lambda x: F.hardsigmoid(x, inplace=True)),
    ("hardswish", F.hardswish, lambda x: F.hardswish(x, inplace=True)),
])
def test_inplace_forms(name, fn, inplace_fn):
    x = data((3, 5), seed=7)
    x = np.where(np.abs(x) < 0.2, 0.7, x)
    t = ember.tensor(x)
    expected = fn(ember.tensor(x)).numpy()
    r = inplace_fn(t)
    assert r is t
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6)
    # Gradients through the in-place form equal those of the functional one.
    a = ember.tensor(x, dtype=ember.float64, requires_grad=True)
    b = ember.tensor(x, dtype=ember.float64, requires_grad=True)
    fn(a).sum().backward()
    inplace_fn(b * 1).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12)
    # In place on a leaf that requires grad is refused.
    with pytest.raises(RuntimeError, match="leaf"):
        inplace_fn(ember.tensor(x, requires_grad=True))


def test_top_level_and_method_forms():
    x = ember.tensor([-1.0, 0.5, 2.0])
    assert ember.relu(x).tolist() == [0.0, 0.5, 2.0]
    assert x.relu().tolist() == [0.0, 0.5, 2.0]
    y = ember.tensor([-1.0, 0.5])
    assert y.relu_() is y and y.tolist() == [0.0, 0.5]
    assert ember.threshold(x, 1.0, 9.0).tolist() == [9.0, 9.0, 2.0]
    assert x.hardshrink(0.6).tolist() == [-1.0, 0.0, 2.0]
    np.testing.assert_allclose(ember.selu(x).numpy(), REFS["selu"][1](x.numpy()), rtol=1e-6)
    np.testing.assert_allclose(ember._C._nn.gelu(x, approximate="tanh").numpy(),
                               REFS["gelu_tanh"][1](x.double().numpy()), rtol=1e-6)
    out = ember.empty(3)
    assert ember._C._nn.softplus(x, out=out) is out
    np.testing.assert_allclose(out.numpy(), np_softplus(x.double().numpy()), rtol=1e-6)


def test_node_names_follow_pytorch():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    names = {
        "ReluBackward0": F.relu(x),
        "HardtanhBackward0": F.relu6(x),
        "LeakyReluBackward0": F.leaky_relu(x),
        "EluBackward0": F.selu(x),
        "CeluBackward0": F.celu(x),
        "GeluBackward0": F.gelu(x),
        "SiluBackward0": F.silu(x),
        "MishBackward0": F.mish(x),
        "SoftplusBackward0": F.softplus(x),
        "LogSigmoidBackward0": F.logsigmoid(x),
        "SoftshrinkBackward0": F.softshrink(x),
        "HardshrinkBackward0": F.hardshrink(x),
        "ThresholdBackward0": F.threshold(x, 0.0, 1.0),
        "LeakyReluBackward1": F.leaky_relu(x * 1, inplace=True),
        "EluBackward1": F.elu(x * 1, inplace=True),
        "ThresholdBackward1": F.threshold(x * 1, 0.0, 1.0, inplace=True),
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name


def test_gradient_at_the_kinks():
    x = ember.tensor([0.0, -3.0, 3.0, 1.0, -1.0], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(F.relu(x).sum(), x)
    assert g.tolist() == [0, 0, 1, 1, 0]
    (g,) = ember.autograd.grad(F.hardtanh(x).sum(), x)
    assert g.tolist() == [1, 0, 0, 0, 0]
    (g,) = ember.autograd.grad(F.leaky_relu(x, 0.1).sum(), x)
    np.testing.assert_allclose(g.numpy(), [0.1, 0.1, 1, 1, 0.1])
    (g,) = ember.autograd.grad(F.hardswish(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [0.5, 0, 1, 5 / 6, 1 / 6])
    (g,) = ember.autograd.grad(F.hardsigmoid(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [1 / 6, 0, 0, 1 / 6, 1 / 6])


def test_errors():
    x = ember.randn(3, 5)
    with pytest.raises(RuntimeError, match=r"\[gelu\] approximate argument must be either none"):
        F.gelu(x, approximate="fast")
    with pytest.raises(RuntimeError, match=r"\[softshrink\] lambda must be in range"):
        F.softshrink(x, -1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(x)
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(ember.tensor(1.0))
    with pytest.raises(IndexError):
        F.glu(x, 3)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel"):
        F.prelu(x, ember.ones(3))
    with pytest.raises(RuntimeError, match="Not allow zero-dim input tensor"):
        F.prelu(ember.tensor(1.0), ember.ones(3))
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 2.0, 1.0)
    with pytest.raises(NotImplementedError, match=r"\[leaky_relu\].*int64"):
        F.leaky_relu(ember.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match=r"\[gelu\].*int64"):
        F.gelu(ember.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="Boolean inputs not supported for relu"):
        F.relu(ember.tensor([True]))
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(x, alpha=0.0)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        ember._C._nn.silu(ember.randn(3, requires_grad=True), out=ember.empty(3))


def test_complex_silu_softsign_tanhshrink():
    z = np.array([0.5 + 1j, -1 - 0.25j])
    t = ember.tensor(z)
    np.testing.assert_allclose(F.silu(t).numpy(), z / (1 + np.exp(-z)), rtol=1e-6)
    np.testing.assert_allclose(F.softsign(t).numpy(), z / (1 + np.abs(z)), rtol=1e-6)
    np.testing.assert_allclose(F.tanhshrink(t).numpy(), z - np.tanh(z), rtol=1e-6)


# ---- parity with PyTorch ------------------------------------------------------------------------

TORCH_CASES = [
    ("relu", {}), ("relu6", {}), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 1.5}), ("selu", {}),
    ("celu", {"alpha": 0.7}), ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
    ("mish", {}), ("hardsigmoid", {}), ("hardswish", {}), ("softplus", {"beta": 2.0,
                                                                          "threshold": 3.0}),
    ("softsign", {}), ("logsigmoid", {}), ("tanhshrink", {}), ("softshrink", {"lambd": 0.4}),
    ("hardshrink", {"lambd": 0.4}), ("glu", {"dim": 0}),
]


@pytest.mark.parametrize("name,kwargs", TORCH_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(name, kwargs, dtype):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    x = data((6, 5), seed=8)
    # Exact kinks too: 0, +-3, the thresholds.
    x[0, :] = [0.0, 3.0, -3.0, 0.4, -0.4]
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    ty = getattr(TF, name)(tx, **kwargs)
    ey = getattr(F, name)(ex, **kwargs)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    w = np.linspace(-1, 1, ty.numel()).reshape(tuple(ty.shape))
    (ty * torch.tensor(w, dtype=ty.dtype)).sum().backward()
    (ey * ember.tensor(w, dtype=ey.dtype)).sum().backward()
    if name in ("celu", "hardsigmoid"):
        # PyTorch's backward rounds 1 / alpha (celu) and 1 / 6 (hardsigmoid) to float32 even
        # for float64 tensors; Ember keeps them in double.
        tol = max(tol, 1e-7)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol)


def test_prelu_matches_torch():
    torch = pytest.importorskip("torch")
    x = data((2, 3, 4, 5), seed=9)
    w = np.array([0.1, 0.5, -0.3])
    tx, tw = (torch.tensor(a, requires_grad=True) for a in (x, w))
    ex, ew = (ember.tensor(a, requires_grad=True) for a in (x, w))
    ty, ey = torch.nn.functional.prelu(tx, tw), F.prelu(ex, ew)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-14)
    (ty**2).sum().backward()
    (ey**2).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["gelu", "silu", "mish", "elu", "softplus", "logsigmoid",
                                  "hardswish"])
def test_double_backward_matches_torch(name):
    torch = pytest.importorskip("torch")
    x = data((7,), seed=10)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(getattr(torch.nn.functional, name)(tx).sum(), tx,
                                create_graph=True)
    (eg,) = ember.autograd.grad(getattr(F, name)(ex).sum(), ex, create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), tx)
    (egg,) = ember.autograd.grad((eg * eg).sum(), ex)
    np.testing.assert_allclose(egg.numpy(), tgg.numpy(), rtol=1e-10, atol=1e-12)
