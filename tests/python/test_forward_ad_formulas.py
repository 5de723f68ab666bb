"""Explicit forward-mode formulas of the hot ops (FunctionNode::set_jvp): each case's output
tangent comes from a formula, not from the double-backward fallback; the forward-mode Jacobian
matches finite differences; the JVP is itself differentiable (reverse over forward) and nests
(forward over forward); and the tangents match PyTorch's when it is installed."""

import numpy as np
import pytest
from ember._C import _forward_ad_debug

import ember
import ember.autograd.forward_ad as fwAD
import ember.nn.functional as F

F64, C128 = ember.float64, ember.complex128


def rand(*shape, dtype=F64, seed=0, low=None):
    rng = np.random.default_rng(seed + 17 * len(shape) + sum(shape))
    a = rng.standard_normal(shape)
    if dtype == C128:
        a = a + 1j * rng.standard_normal(shape)
    if low is not None:
        a = np.abs(a) + low
    return ember.from_numpy(a)


def idx(values):
    return ember.tensor(values, dtype=ember.int64)


# (id, fn, inputs(dtype) -> list, complex supported). Floating inputs get tangents; integer ones
# (indices, targets) are passed as they are.
CASES = [
    (
        "add",
        lambda a, b: ember.add(a, b, alpha=2.5),
        lambda d: [rand(3, 4, dtype=d), rand(4, dtype=d)],
        True,
    ),
    (
        "sub",
        lambda a, b: ember.sub(a, b, alpha=-0.5),
        lambda d: [rand(3, 4, dtype=d), rand(3, 1, dtype=d)],
        True,
    ),
    ("mul", lambda a, b: a * b, lambda d: [rand(3, 4, dtype=d), rand(4, dtype=d, seed=1)], True),
    ("mul_number", lambda a: a * 3.0, lambda d: [rand(3, 4, dtype=d)], True),
    (
        "div",
        lambda a, b: a / b,
        lambda d: [rand(3, 4, dtype=d), rand(3, 4, dtype=d, low=0.5)],
        True,
    ),
    (
        "pow_tensor",
        lambda a, b: ember.pow(a, b),
        lambda d: [rand(3, 4, low=0.5), rand(3, 4, seed=2)],
        False,
    ),
    (
        "pow_complex",
        lambda a, b: ember.pow(a, b),
        lambda d: [rand(2, 3, dtype=C128, low=0.5), rand(2, 3, dtype=C128, seed=2)],
        False,
    ),
    ("pow_scalar", lambda a: a**3, lambda d: [rand(3, 4, dtype=d)], True),
    ("pow_scalar_frac", lambda a: a**1.5, lambda d: [rand(3, 4, low=0.2)], False),
    ("pow_number_base", lambda b: ember.pow(2.0, b), lambda d: [rand(3, 4)], False),
    ("maximum", ember.maximum, lambda d: [rand(3, 4), rand(3, 4, seed=3)], False),
    ("minimum", ember.minimum, lambda d: [rand(3, 4), rand(4, seed=3)], False),
    ("fmax", ember.fmax, lambda d: [rand(3, 4), rand(3, 4, seed=3)], False),
    (
        "where",
        lambda a, b: ember.where(a > 0, a, b),
        lambda d: [rand(3, 4), rand(3, 4, seed=4)],
        False,
    ),
    (
        "lerp_tensor",
        ember.lerp,
        lambda d: [rand(3, 4, dtype=d), rand(3, 4, dtype=d, seed=1), rand(3, 4, dtype=d, seed=2)],
        True,
    ),
    (
        "lerp_scalar",
        lambda a, b: ember.lerp(a, b, 0.3),
        lambda d: [rand(3, 4, dtype=d), rand(3, 4, dtype=d, seed=1)],
        True,
    ),
    ("mm", ember.mm, lambda d: [rand(3, 4, dtype=d), rand(4, 2, dtype=d)], True),
    ("bmm", ember.bmm, lambda d: [rand(2, 3, 4, dtype=d), rand(2, 4, 2, dtype=d)], True),
    ("matmul_batched", ember.matmul, lambda d: [rand(2, 3, 4, dtype=d), rand(4, 2, dtype=d)], True),
    ("mv", ember.mv, lambda d: [rand(3, 4, dtype=d), rand(4, dtype=d)], True),
    ("dot", ember.dot, lambda d: [rand(4, dtype=d), rand(4, dtype=d, seed=1)], True),
    ("vdot", ember.vdot, lambda d: [rand(4, dtype=d), rand(4, dtype=d, seed=1)], True),
    (
        "addmm",
        lambda c, a, b: ember.addmm(c, a, b, beta=0.5, alpha=2.0),
        lambda d: [rand(2, dtype=d), rand(3, 4, dtype=d), rand(4, 2, dtype=d)],
        True,
    ),
    (
        "addmm_beta0",
        lambda c, a, b: ember.addmm(c, a, b, beta=0.0),
        lambda d: [rand(3, 2), rand(3, 4), rand(4, 2)],
        False,
    ),
    (
        "addmv",
        ember.addmv,
        lambda d: [rand(3, dtype=d), rand(3, 4, dtype=d), rand(4, dtype=d)],
        True,
    ),
    (
        "baddbmm",
        lambda c, a, b: ember.baddbmm(c, a, b, alpha=0.5),
        lambda d: [rand(2, 3, 2, dtype=d), rand(2, 3, 4, dtype=d), rand(2, 4, 2, dtype=d)],
        True,
    ),
    (
        "addbmm",
        ember.addbmm,
        lambda d: [rand(3, 2, dtype=d), rand(2, 3, 4, dtype=d), rand(2, 4, 2, dtype=d)],
        True,
    ),
    ("linear", F.linear, lambda d: [rand(2, 3, 4), rand(5, 4, seed=1), rand(5, seed=2)], False),
    (
        "linear_nobias",
        lambda x, w: F.linear(x, w),
        lambda d: [rand(3, 4), rand(5, 4, seed=1)],
        False,
    ),
    ("sum", lambda x: x.sum(), lambda d: [rand(3, 4, dtype=d)], True),
    ("sum_dims", lambda x: x.sum((0, -1), keepdim=True), lambda d: [rand(2, 3, 4, dtype=d)], True),
    ("mean_dim", lambda x: x.mean(1), lambda d: [rand(3, 4, dtype=d)], True),
    (
        "nansum",
        lambda x: ember.nansum(ember.where(x > 1.0, float("nan"), x), 1),
        lambda d: [rand(3, 4)],
        False,
    ),
    ("prod", lambda x: x.prod(), lambda d: [rand(2, 3, dtype=d)], True),
    (
        "prod_dim_zero",
        lambda x: (x * ember.tensor([[1.0, 0.0, 1.0]], dtype=F64)).prod(1),
        lambda d: [rand(2, 3)],
        False,
    ),
    ("amax", lambda x: ember.amax(x, 1), lambda d: [rand(3, 4)], False),
    (
        "amin_ties",
        lambda x: ember.amin(ember.cat([x, x], 1), (0, 1)),
        lambda d: [rand(3, 2)],
        False,
    ),
    ("max_all", lambda x: x.max(), lambda d: [rand(3, 4)], False),
    ("max_dim", lambda x: ember.max(x, -1).values, lambda d: [rand(3, 4)], False),
    (
        "min_dim_keepdim",
        lambda x: ember.min(x, 0, keepdim=True).values,
        lambda d: [rand(3, 4)],
        False,
    ),
    ("logsumexp", lambda x: ember.logsumexp(x, 1), lambda d: [rand(3, 4, dtype=d)], True),
    ("var", lambda x: ember.var(x, 1), lambda d: [rand(3, 4, dtype=d)], True),
    ("var_all", lambda x: ember.var(x, correction=0), lambda d: [rand(3, 4)], False),
    ("std", lambda x: ember.std(x, (0,), keepdim=True), lambda d: [rand(3, 4, dtype=d)], True),
    ("var_mean", lambda x: ember.var_mean(x, 1), lambda d: [rand(3, 4)], False),
    ("std_mean", lambda x: ember.std_mean(x), lambda d: [rand(3, 4)], False),
    ("norm2", lambda x: ember.linalg.vector_norm(x, dim=1), lambda d: [rand(3, 4, dtype=d)], True),
    ("norm1", lambda x: ember.linalg.vector_norm(x, 1), lambda d: [rand(3, 4)], False),
    (
        "norm3",
        lambda x: ember.linalg.vector_norm(x, 3, dim=0, keepdim=True),
        lambda d: [rand(3, 4)],
        False,
    ),
    (
        "norm_inf",
        lambda x: ember.linalg.vector_norm(x, float("inf")),
        lambda d: [rand(3, 4)],
        False,
    ),
    ("softmax", lambda x: F.softmax(x, dim=1), lambda d: [rand(3, 4)], False),
    ("log_softmax", lambda x: F.log_softmax(x, dim=0), lambda d: [rand(3, 4)], False),
    ("relu", F.relu, lambda d: [rand(3, 4)], False),
    ("gelu", F.gelu, lambda d: [rand(3, 4)], False),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), lambda d: [rand(3, 4)], False),
    ("silu", F.silu, lambda d: [rand(3, 4)], False),
    ("mish", F.mish, lambda d: [rand(3, 4)], False),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda d: [rand(3, 4)], False),
    ("elu", F.elu, lambda d: [rand(3, 4)], False),
    ("softplus", lambda x: F.softplus(x, beta=2.0), lambda d: [rand(3, 4)], False),
    ("hardtanh", lambda x: F.hardtanh(x * 2), lambda d: [rand(3, 4)], False),
    ("glu", lambda x: F.glu(x, 0), lambda d: [rand(4, 3)], False),
    ("mse_loss", F.mse_loss, lambda d: [rand(3, 4), rand(3, 4, seed=1)], False),
    (
        "mse_loss_sum",
        lambda a, b: F.mse_loss(a, b, reduction="sum"),
        lambda d: [rand(3, 4), rand(3, 4, seed=1)],
        False,
    ),
    (
        "l1_loss_none",
        lambda a, b: F.l1_loss(a, b, reduction="none"),
        lambda d: [rand(3, 4), rand(3, 4, seed=1)],
        False,
    ),
    (
        "bce_logits",
        F.binary_cross_entropy_with_logits,
        lambda d: [rand(3, 4), ember.rand(3, 4, dtype=F64)],
        False,
    ),
    (
        "nll_loss",
        lambda x, t: F.nll_loss(x, t, ignore_index=1),
        lambda d: [rand(4, 3), idx([0, 1, 2, 2])],
        False,
    ),
    (
        "nll_loss_none",
        lambda x, t: F.nll_loss(x, t, reduction="none"),
        lambda d: [rand(4, 3), idx([0, 1, 2, 2])],
        False,
    ),
    ("cross_entropy", F.cross_entropy, lambda d: [rand(4, 3), idx([0, 1, 2, 2])], False),
    (
        "cross_entropy_smooth_none",
        lambda x, t: F.cross_entropy(x, t, reduction="none", label_smoothing=0.1),
        lambda d: [rand(4, 3, 2), idx([[0, 1], [2, 2], [1, 0], [0, 0]])],
        False,
    ),
    (
        "cross_entropy_probs",
        lambda x, p: F.cross_entropy(x, p),
        lambda d: [rand(4, 3), ember.softmax(rand(4, 3, seed=1), 1)],
        False,
    ),
    (
        "cat",
        lambda a, b: ember.cat([a, b], -1),
        lambda d: [rand(2, 3, dtype=d), rand(2, 2, dtype=d)],
        True,
    ),
    (
        "stack",
        lambda a, b: ember.stack([a, b], 1),
        lambda d: [rand(2, 3, dtype=d), rand(2, 3, dtype=d, seed=1)],
        True,
    ),
    (
        "index_select",
        lambda x, i: ember.index_select(x, 1, i),
        lambda d: [rand(3, 4, dtype=d), idx([3, 0, 0])],
        True,
    ),
    (
        "gather",
        lambda x, i: ember.gather(x, 1, i),
        lambda d: [rand(3, 4, dtype=d), idx([[0, 3], [1, 1], [2, 0]])],
        True,
    ),
    ("take", lambda x, i: ember.take(x, i), lambda d: [rand(3, 4), idx([0, 11, 5])], False),
    ("flip", lambda x: ember.flip(x, (0,)), lambda d: [rand(3, 4, dtype=d)], True),
    ("repeat", lambda x: x.repeat(2, 1), lambda d: [rand(3, 4)], False),
    (
        "embedding",
        lambda w, i: F.embedding(i, w),
        lambda d: [rand(5, 3), idx([[0, 4], [2, 2]])],
        False,
    ),
    ("clone", ember.clone, lambda d: [rand(3, 4, dtype=d)], True),
    ("contiguous", lambda x: x.t().contiguous(), lambda d: [rand(3, 4, dtype=d)], True),
    ("to_complex", lambda x: x.to(C128), lambda d: [rand(3, 4)], False),
    (
        "copy_",
        lambda a, b: ember.zeros(3, 4, dtype=F64).copy_(a * b),
        lambda d: [rand(3, 4), rand(4, seed=1)],
        False,
    ),
    (
        "conv2d",
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
        lambda d: [rand(1, 2, 5, 5), rand(3, 2, 3, 3, seed=1), rand(3, seed=2)],
        False,
    ),
    (
        "conv1d_groups",
        lambda x, w: F.conv1d(x, w, groups=2, dilation=2),
        lambda d: [rand(2, 4, 7), rand(4, 2, 2, seed=1)],
        False,
    ),
    (
        "conv_transpose2d",
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=1),
        lambda d: [rand(1, 2, 3, 3), rand(2, 3, 2, 2, seed=1), rand(3, seed=2)],
        False,
    ),
]

IDS = [c[0] for c in CASES]
REAL_CASES = [pytest.param(c[1], c[2], F64, id=c[0]) for c in CASES]
COMPLEX_CASES = [pytest.param(c[1], c[2], C128, id=c[0] + "-complex") for c in CASES if c[3]]


def _duals(inputs, tangents):
    return [fwAD.make_dual(x, t) if t is not None else x for x, t in zip(inputs, tangents)]


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _tangent_for(x, seed):
    if not (x.is_floating_point() or x.is_complex()):
        return None
    return rand(*x.shape, dtype=x.dtype, seed=100 + seed)


@pytest.mark.parametrize("fn,make,dtype", REAL_CASES + COMPLEX_CASES)
def test_output_tangent_comes_from_a_formula(fn, make, dtype):
    inputs = make(dtype)
    float_pos = [k for k, x in enumerate(inputs) if x.is_floating_point() or x.is_complex()]
    # All inputs dual, then each alone: every partial-tangent path has a formula.
    subsets = [float_pos] + ([[k] for k in float_pos] if len(float_pos) > 1 else [])
    for subset in subsets:
        tangents = [_tangent_for(x, k) if k in subset else None for k, x in enumerate(inputs)]
        with fwAD.dual_level():
            out = fn(*_duals(inputs, tangents))
            outs = out if isinstance(out, tuple) else (out,)
            for o in outs:
                assert _forward_ad_debug.jvp_kind(o) == "formula", subset
                assert fwAD.unpack_dual(o).tangent is not None


@pytest.mark.parametrize("fn,make,dtype", REAL_CASES + COMPLEX_CASES)
def test_forward_jacobian_matches_finite_differences(fn, make, dtype):
    inputs = [
        x.requires_grad_() if x.is_floating_point() or x.is_complex() else x for x in make(dtype)
    ]
    assert ember.autograd.gradcheck(fn, inputs, check_forward_ad=True, check_backward_ad=False)


@pytest.mark.parametrize("fn,make,dtype", REAL_CASES)
def test_jvp_is_differentiable_reverse_over_forward(fn, make, dtype):
    """The JVP as a function of (primals, tangents) has the right gradient: the formula records
    under grad mode, and its derivative in the tangent is the op's Jacobian."""
    inputs = make(dtype)
    pos = [k for k, x in enumerate(inputs) if x.is_floating_point()]
    tangents = [_tangent_for(inputs[k], k) for k in pos]

    def jvp_fn(*args):
        prim, tans = list(inputs), [None] * len(inputs)
        for j, k in enumerate(pos):
            prim[k], tans[k] = args[j], args[len(pos) + j]
        with fwAD.dual_level():
            t = fwAD.unpack_dual(_first(fn(*_duals(prim, tans)))).tangent
        return t

    args = [inputs[k].clone().requires_grad_() for k in pos]
    args += [t.clone().requires_grad_() for t in tangents]
    assert ember.autograd.gradcheck(jvp_fn, args)


SMOOTH = [
    ("gelu", F.gelu),
    ("silu", F.silu),
    ("mish", F.mish),
    ("elu", F.elu),
    ("softplus", F.softplus),
    ("softmax", lambda x: F.softmax(x, -1)),
    ("log_softmax", lambda x: F.log_softmax(x, -1)),
    ("logsumexp", lambda x: ember.logsumexp(x, 1)),
    ("std", lambda x: ember.std(x, 1)),
    ("norm3", lambda x: ember.linalg.vector_norm(x, 3, 1)),
    ("var", lambda x: ember.var(x, 1)),
    ("cross_entropy", lambda x: F.cross_entropy(x, idx([0, 2, 1]))),
    ("mse_loss", lambda x: F.mse_loss(x * x, x.t())),
    ("mlp", lambda x: ember.tanh(F.linear(F.gelu(x @ x.t()), x)).sum(1)),
]


@pytest.mark.parametrize("fn", [s[1] for s in SMOOTH], ids=[s[0] for s in SMOOTH])
def test_nested_levels_give_second_directional_derivative(fn):
    """Forward over forward: the inner JVP carries the outer tangent (fused backward kernels are
    not used while a formula is being differentiated)."""
    x, v = rand(3, 3), rand(3, 3, seed=9)

    def jvp(xx):
        with fwAD.dual_level():
            return fwAD.unpack_dual(fn(fwAD.make_dual(xx, v))).tangent

    with fwAD.dual_level() as outer:
        d1 = fwAD.make_dual(x, v, level=outer)
        with fwAD.dual_level() as inner:
            y = fn(fwAD.make_dual(d1, v, level=inner))
            first = fwAD.unpack_dual(y, level=inner).tangent
        second = fwAD.unpack_dual(first, level=outer).tangent
    eps = 1e-5
    fd = (jvp(x + eps * v).numpy() - jvp(x - eps * v).numpy()) / (2 * eps)
    np.testing.assert_allclose(second.numpy(), fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(first.numpy(), jvp(x).numpy(), rtol=1e-12)


def test_to_float32_tangent():
    x, v = rand(3, 4), rand(3, 4, seed=1)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, v).to(ember.float32)
        assert _forward_ad_debug.jvp_kind(y) == "formula"
        tangent = fwAD.unpack_dual(y).tangent
    assert tangent.dtype == ember.float32
    np.testing.assert_array_equal(tangent.numpy(), v.numpy().astype(np.float32))


def test_embedding_padding_row_gets_no_gradient_through_the_tangent():
    """As PyTorch: the JVP is embedding(weight_t, indices, padding_idx), so reverse mode
    through the tangent leaves the padding row out, as it does through the value."""
    w, tw = rand(5, 3), rand(5, 3, seed=1).requires_grad_()
    i = idx([[0, 4], [2, 0]])
    with fwAD.dual_level():
        t = fwAD.unpack_dual(F.embedding(i, fwAD.make_dual(w, tw), padding_idx=0)).tangent
    np.testing.assert_array_equal(t.detach().numpy(), tw.detach().numpy()[i.numpy()])
    (g,) = ember.autograd.grad(t.sum(), tw)
    np.testing.assert_array_equal(g.numpy()[:, 0], [0, 0, 1, 0, 1])


def test_dropout_tangent_uses_the_same_mask():
    ember.manual_seed(0)
    x, v = rand(50), rand(50, seed=1)
    with fwAD.dual_level():
        y = F.dropout(fwAD.make_dual(x, v), p=0.4, training=True)
        assert _forward_ad_debug.jvp_kind(y) == "formula"
        primal, tangent = fwAD.unpack_dual(y)
    scale = primal.numpy() / x.numpy()  # 0 or 1 / (1 - p) per element
    assert set(np.round(np.unique(scale), 12)) <= {0.0, round(1 / 0.6, 12)}
    np.testing.assert_allclose(tangent.numpy(), v.numpy() * scale, rtol=1e-12)


def test_inplace_ops_use_formulas_and_the_value_before_the_op():
    x, v = rand(3, 4), rand(3, 4, seed=1)
    b = rand(3, 4, seed=2)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), v)
        d.mul_(b)
        assert _forward_ad_debug.jvp_kind(d) == "formula"
        d.add_(d)
        d.div_(b)
        tangent = fwAD.unpack_dual(d).tangent
    np.testing.assert_allclose(tangent.numpy(), 2 * v.numpy(), rtol=1e-12)


def test_mlp_forward_ad_has_no_derived_jvp():
    """Every node of a small MLP (linear, relu/gelu, log_softmax, nll) has its formula."""
    w1, b1, w2, b2 = rand(8, 4), rand(8), rand(3, 8, seed=1), rand(3, seed=1)
    x, target = rand(5, 4, seed=2), idx([0, 2, 1, 1, 0])
    with fwAD.dual_level():
        h = F.linear(x, fwAD.make_dual(w1, ember.ones_like(w1)), b1)
        assert _forward_ad_debug.jvp_kind(h) == "formula"
        a = F.relu(h)
        assert _forward_ad_debug.jvp_kind(a) == "formula"
        z = F.linear(F.gelu(a), w2, fwAD.make_dual(b2, ember.ones_like(b2)))
        assert _forward_ad_debug.jvp_kind(z) == "formula"
        loss = F.nll_loss(F.log_softmax(z, 1), target)
        assert _forward_ad_debug.jvp_kind(loss) == "formula"
        assert fwAD.unpack_dual(loss).tangent is not None


def test_jvp_kind_reports_fallback_and_resolution():
    x = rand(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones_like(x))
        assert _forward_ad_debug.jvp_kind(d) == "resolved"
        y = ember.atan2(d, x)  # no explicit formula: the JVP is derived from the backward
        assert _forward_ad_debug.jvp_kind(y) == "derived"
        fwAD.unpack_dual(y)
        assert _forward_ad_debug.jvp_kind(y) == "resolved"
    assert _forward_ad_debug.jvp_kind(x) == "none"


# PyTorch's spelling of some cases (same arguments).
TORCH_FNS = {
    "mul": lambda T, TF: lambda a, b: a * b,
    "div": lambda T, TF: lambda a, b: a / b,
    "pow_tensor": lambda T, TF: T.pow,
    "maximum": lambda T, TF: T.maximum,
    "addmm": lambda T, TF: lambda c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0),
    "baddbmm": lambda T, TF: lambda c, a, b: T.baddbmm(c, a, b, alpha=0.5),
    "linear": lambda T, TF: TF.linear,
    "prod": lambda T, TF: lambda x: x.prod(),
    "amax": lambda T, TF: lambda x: T.amax(x, 1),
    "logsumexp": lambda T, TF: lambda x: T.logsumexp(x, 1),
    "std": lambda T, TF: lambda x: T.std(x, (0,), keepdim=True),
    "var_mean": lambda T, TF: lambda x: T.var_mean(x, 1),
    "norm3": lambda T, TF: lambda x: T.linalg.vector_norm(x, 3, dim=0, keepdim=True),
    "softmax": lambda T, TF: lambda x: TF.softmax(x, dim=1),
    "log_softmax": lambda T, TF: lambda x: TF.log_softmax(x, dim=0),
    "gelu": lambda T, TF: TF.gelu,
    "mish": lambda T, TF: TF.mish,
    "softplus": lambda T, TF: lambda x: TF.softplus(x, beta=2.0),
    "cross_entropy_smooth_none": lambda T, TF: (
        lambda x, t: TF.cross_entropy(x, t, reduction="none", label_smoothing=0.1)
    ),
    "cross_entropy_probs": lambda T, TF: TF.cross_entropy,
    "nll_loss": lambda T, TF: lambda x, t: TF.nll_loss(x, t, ignore_index=1),
    "mse_loss": lambda T, TF: TF.mse_loss,
    "conv2d": lambda T, TF: lambda x, w, b: TF.conv2d(x, w, b, stride=2, padding=1),
    "conv_transpose2d": lambda T, TF: (
        lambda x, w, b: TF.conv_transpose2d(x, w, b, stride=2, output_padding=1)
    ),
    "embedding": lambda T, TF: lambda w, i: TF.embedding(i, w),
    "cat": lambda T, TF: lambda a, b: T.cat([a, b], -1),
    "gather": lambda T, TF: lambda x, i: T.gather(x, 1, i),
}


@pytest.mark.parametrize("name", sorted(TORCH_FNS))
def test_tangents_match_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    case = CASES[IDS.index(name)]
    inputs = case[2](F64)
    tangents = [_tangent_for(x, k) for k, x in enumerate(inputs)]

    def to_torch(x):
        return None if x is None else torch.from_numpy(x.numpy().copy())

    with fwAD.dual_level():
        got = fwAD.unpack_dual(_first(case[1](*_duals(inputs, tangents)))).tangent.numpy()
    tfn = TORCH_FNS[name](torch, torch.nn.functional)
    with tfw.dual_level():
        duals = [
            tfw.make_dual(to_torch(x), to_torch(t)) if t is not None else to_torch(x)
            for x, t in zip(inputs, tangents)
        ]
        expect = tfw.unpack_dual(_first(tfn(*duals))).tangent.numpy()
    np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-12)
