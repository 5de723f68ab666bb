"""ember.func.vmap: batching rules against a Python loop over the samples, composition with
grad, and PyTorch's errors."""

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.func import _rules, functional_call, grad, jacrev, stack_module_state, vmap


def _t(*shape, seed=0, dtype=np.float64):
    return ember.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def loop(fn, *args, in_dims=0):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    outs = [
        fn(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)]) for i in range(size)
    ]
    if isinstance(outs[0], tuple):
        return tuple(ember.stack([o[j] for o in outs]) for j in range(len(outs[0])))
    return ember.stack(outs)


def check(fn, *args, in_dims=0, no_fallback=True, rtol=1e-12):
    before = sum(_rules.FALLBACK_COUNTS.values())
    got = vmap(fn, in_dims=in_dims)(*args)
    want = loop(fn, *args, in_dims=in_dims)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=rtol, atol=1e-12)
    else:
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=1e-12)
    if no_fallback:
        assert sum(_rules.FALLBACK_COUNTS.values()) == before, dict(_rules.FALLBACK_COUNTS)


CASES = {
    "sin": lambda x: ember.sin(x),
    "method_chain": lambda x: x.exp().clamp(0.5, 2.0).log1p(),
    "operators": lambda x: (x * 2 - 1) / (x.abs() + 1) ** 2,
    "sum_all": lambda x: x.sum(),
    "sum_dim_keepdim": lambda x: x.sum(dim=-1, keepdim=True),
    "mean_tuple_dims": lambda x: x.mean(dim=(0, 1)),
    "amax": lambda x: x.amax(0),
    "argmax_flat": lambda x: x.argmax().to(ember.float64),
    "max_dim": lambda x: x.max(dim=1).values,
    "softmax": lambda x: ember.softmax(x, dim=-1),
    "log_softmax_F": lambda x: F.log_softmax(x, dim=0),
    "cumsum": lambda x: ember.cumsum(x, 1),
    "var": lambda x: x.var(dim=1),
    "reshape": lambda x: x.reshape(-1, 2) * 1,
    "view": lambda x: x.contiguous().view(12),
    "permute": lambda x: x.permute(1, 0) + 0,
    "transpose": lambda x: x.transpose(0, 1).sum(0),
    "t": lambda x: x.t() @ x,
    "unsqueeze": lambda x: x.unsqueeze(-1) * x.unsqueeze(1),
    "squeeze": lambda x: x[:1].squeeze(0),
    "flatten": lambda x: x.flatten(),
    "expand": lambda x: x[:, :1].expand(3, 4) + 0,
    "getitem": lambda x: x[1:, ::2] + x[0, 1],
    "cat": lambda x: ember.cat([x, x * 2], dim=1),
    "stack": lambda x: ember.stack([x, x + 1], dim=-1),
    "where": lambda x: ember.where(x > 0, x, -x),
    "relu_gelu": lambda x: F.gelu(F.relu(x) - 0.1),
    "layer_norm": lambda x: F.layer_norm(x, (4,)),
    "zeros_like": lambda x: ember.zeros_like(x) + x,
    "chunk": lambda x: x.chunk(2, dim=1)[1] * 1,
    "mse": lambda x: F.mse_loss(x, x.flip(1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_loop(name):
    check(CASES[name], _t(5, 3, 4))


def test_broadcasting_batched_and_unbatched_of_other_ranks():
    x, y = _t(5, 3), _t(3, 4, seed=1)
    check(lambda a, b: a.unsqueeze(-1) + b, x, y, in_dims=(0, None))
    check(lambda a, b: a + b, _t(5, 4), _t(3, 4, seed=2), in_dims=(0, None))
    check(lambda a, b: a * b, _t(4, 6), _t(6, 4, seed=3), in_dims=(1, 0))


@pytest.mark.parametrize(
    "sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4))]
)
@pytest.mark.parametrize("batched", ["both", "left", "right"])
def test_matmul_shapes(sa, sb, batched):
    a = _t(*((5,) + sa if batched in ("both", "left") else sa))
    b = _t(*((5,) + sb if batched in ("both", "right") else sb), seed=1)
    dims = {"both": (0, 0), "left": (0, None), "right": (None, 0)}[batched]
    check(lambda p, q: p @ q, a, b, in_dims=dims)
    check(ember.matmul, a, b, in_dims=dims)


def test_linear_and_ensembles_with_stacked_parameters():
    models = [nn.Linear(4, 3).double() for _ in range(5)]
    params, _ = stack_module_state(models)
    x = _t(5, 2, 4)
    got = vmap(lambda p, xb: functional_call(models[0], p, (xb,)))(params, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(got[i].detach().numpy(), m(x[i]).detach().numpy(), rtol=1e-12)
    shared = vmap(lambda xb: F.linear(xb, params["weight"][0], params["bias"][0]))(x)
    np.testing.assert_allclose(shared.detach().numpy(), models[0](x).detach().numpy(), rtol=1e-12)


def test_cross_entropy_per_sample():
    logits, target = _t(6, 4, 5), ember.from_numpy(np.random.default_rng(1).integers(0, 5, (6, 4)))
    check(lambda a, t: F.cross_entropy(a, t), logits, target)
    w = ember.from_numpy(np.array([1.0, 2.0, 0.5, 1.0, 3.0]))
    check(lambda a, t: F.cross_entropy(a, t, weight=w, ignore_index=2), logits, target)
    check(lambda a, t: F.cross_entropy(a, t, reduction="sum"), logits, target)
    check(lambda a, t: F.nll_loss(F.log_softmax(a, -1), t), logits, target)


def test_in_dims_out_dims_and_pytrees():
    x, y = _t(3, 5), _t(5, seed=1)
    out = vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 1, "b": 0},))({"a": x, "b": y})
    np.testing.assert_allclose(out.numpy(), (x * y).t().numpy())
    out = vmap(lambda a: (a, a.sum()), in_dims=1, out_dims=(1, 0))(x)
    np.testing.assert_allclose(out[0].numpy(), x.numpy())
    np.testing.assert_allclose(out[1].numpy(), x.sum(0).numpy())
    const = vmap(lambda a: ember.ones(2, dtype=ember.float64))(x)  # unbatched output: expanded
    assert tuple(const.shape) == (3, 2)


def test_nested_vmap():
    x = _t(3, 4, 5)
    got = vmap(vmap(lambda r: (r * r).sum()))(x)
    np.testing.assert_allclose(got.numpy(), (x * x).sum(-1).numpy())
    a, b = _t(3, 4), _t(5, 4, seed=1)
    outer = vmap(vmap(lambda u, v: ember.dot(u, v), in_dims=(None, 0)), in_dims=(0, None))(a, b)
    np.testing.assert_allclose(outer.numpy(), (a @ b.t()).numpy(), rtol=1e-12)


def test_chunk_size_gives_the_same_result():
    x = _t(10, 3)
    np.testing.assert_allclose(vmap(ember.sin, chunk_size=3)(x).numpy(), ember.sin(x).numpy())


def test_fallback_runs_per_sample_and_is_counted():
    x = _t(4, 3, 3)
    before = _rules.FALLBACK_COUNTS.copy()
    check(lambda m: ember.linalg.det(m), x, no_fallback=False)
    assert sum(_rules.FALLBACK_COUNTS.values()) > sum(before.values())


def test_setitem_into_batched_target():
    x = _t(4, 3)

    def f(r):
        out = ember.zeros_like(r)
        out[1:] = r[:2] * 2
        return out

    check(f, x)


def test_per_sample_gradients_match_the_loop():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = _t(7, 6), ember.from_numpy(np.random.default_rng(2).integers(0, 3, 7))

    def loss(p, xb, yb):
        return F.cross_entropy(functional_call(model, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))

    got = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(7):
        want = grad(loss)(params, x[i], y[i])
        for k in params:
            np.testing.assert_allclose(got[k][i].numpy(), want[k].numpy(), rtol=1e-10, atol=1e-12)
    # Batched differentiated argument too.
    g = vmap(grad(lambda a, b: (a * b).sin().sum()))(x, x * 2)
    np.testing.assert_allclose(g.numpy(), (ember.cos(x * x * 2) * x * 2).numpy(), rtol=1e-12)


def test_vmap_of_jacrev():
    x = _t(4, 3)
    got = vmap(jacrev(lambda v: ember.sin(v) * v.sum()))(x)
    for i in range(4):
        want = jacrev(lambda v: ember.sin(v) * v.sum())(x[i])
        np.testing.assert_allclose(got[i].numpy(), want.numpy(), rtol=1e-12)


def test_randomness_modes():
    x = ember.ones(6, 100)
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: F.dropout(r, 0.5))(x)
    diff = vmap(lambda r: F.dropout(r, 0.5), randomness="different")(x)
    assert not all(ember.equal(diff[0], diff[i]) for i in range(1, 6))
    same = vmap(lambda r: F.dropout(r, 0.5), randomness="same")(x)
    assert all(ember.equal(same[0], same[i]) for i in range(1, 6))


def test_errors():
    x = _t(3, 2)
    with pytest.raises(RuntimeError, match="data-dependent"):
        vmap(lambda r: r.sum().item())(x)
    with pytest.raises(ValueError, match="same size"):
        vmap(lambda a, b: a + b)(x, _t(4, 2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda r: 3)(x)
    with pytest.raises(ValueError, match="at least one input"):
        vmap(lambda r: r, in_dims=None)(x)
    with pytest.raises(RuntimeError, match="inplace"):
        vmap(lambda r, c: c.add_(r), in_dims=(0, None))(x, ember.zeros(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: r, randomness="sometimes")
    assert not ember._C._profiler._observing()  # the hook is gone after vmap


def test_torch_parity_per_sample_grads():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 4))
    xs = rng.standard_normal((5, 4))

    def f(lib, wt, xb):
        return lib.tanh(xb @ wt.T).pow(2).sum()

    tg = torch.func.vmap(torch.func.grad(lambda a, b: f(torch, a, b)), in_dims=(None, 0))(
        torch.from_numpy(w), torch.from_numpy(xs)
    )
    eg = vmap(grad(lambda a, b: f(ember, a, b)), in_dims=(None, 0))(
        ember.from_numpy(w), ember.from_numpy(xs)
    )
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-12)


def _small_cnn():
    ember.manual_seed(1)
    return nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(3 * 2 * 2, 4),
    ).double()


def test_cnn_forward_folds_the_batch():
    model = _small_cnn()
    x = _t(5, 6, 2, 4, 4)  # a vmap batch of 5, each an (N=6, C, H, W) batch
    check(lambda b: model(b), x, rtol=1e-10)
    check(lambda s: model(s.unsqueeze(0)).squeeze(0), _t(5, 2, 4, 4), rtol=1e-10)
    check(lambda s: F.avg_pool2d(F.conv2d(s, model[0].weight), 2), _t(3, 2, 2, 5, 5), rtol=1e-10)


def test_per_sample_gradients_of_a_cnn():
    model = _small_cnn()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = _t(4, 2, 4, 4), ember.from_numpy(np.random.default_rng(5).integers(0, 4, 4))

    def loss(p, xb, yb):
        return F.cross_entropy(functional_call(model, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))

    got = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(4):
        want = grad(loss)(params, x[i], y[i])
        for k in params:
            np.testing.assert_allclose(got[k][i].numpy(), want[k].numpy(), rtol=1e-9, atol=1e-12)


def test_special_functions_and_bmm_batch():
    check(lambda r: ember.special.i1e(r) + ember.special.ndtr(r), _t(4, 3))
    check(lambda a, b: ember.bmm(a, b), _t(3, 2, 4, 5), _t(3, 2, 5, 2, seed=1))


def test_fallback_list_is_current():
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    r = subprocess.run(
        [sys.executable, str(root / "scripts" / "vmap_fallbacks.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


def test_wrong_in_dims():
    x = _t(3, 2)
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        vmap(lambda a, b: a + b, in_dims=(0,))(x, x)
    with pytest.raises(ValueError, match="in_dim"):
        vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(ValueError, match="non-Tensor"):
        vmap(lambda a, n: a * n, in_dims=(0, 0))(x, 3)
    with pytest.raises(ValueError, match="expected `in_dims` to be int"):
        vmap(lambda a: a, in_dims=[0])(x)


def test_vmap_over_a_vjp_function_gives_the_jacobian():
    x = ember.tensor([0.1, 0.2, 0.3], dtype=ember.float64)
    _, fn = ember.func.vjp(ember.sin, x)
    (rows,) = vmap(fn)(ember.eye(3, dtype=ember.float64))
    np.testing.assert_allclose(rows.numpy(), np.diag(np.cos([0.1, 0.2, 0.3])), rtol=1e-12)


def test_jacrev_inside_vmap_with_an_unbatched_argument():
    w, xs = _t(3, 4), _t(5, 4, seed=1)
    got = vmap(jacrev(lambda a, b: (a @ b).tanh()), (None, 0))(w, xs)
    for i in range(5):
        want = jacrev(lambda a: (a @ xs[i]).tanh())(w)
        np.testing.assert_allclose(got[i].numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_random_factories_follow_randomness():
    """randn with no batched argument: 'error' raises, 'same' shares one draw, 'different' draws
    per sample (and per sample of every enclosing 'different' level)."""
    x = ember.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda t: t + ember.randn(3))(x)
    same = vmap(lambda t: t + ember.randn(3), randomness="same")(x)
    assert same.shape == (4, 3) and bool((same == same[0]).all())
    diff = vmap(lambda t: t + ember.randn(3), randomness="different")(x)
    assert diff.shape == (4, 3) and len({tuple(r) for r in diff.numpy().tolist()}) == 4
    inner = vmap(lambda t: t + ember.rand(()), randomness="different")
    nested = vmap(inner, randomness="different")
    out = nested(ember.zeros(5, 6)).numpy()
    assert out.shape == (5, 6) and len(set(out.ravel().tolist())) == 30
    perms = vmap(lambda t: ember.randperm(6), randomness="different")(x).numpy()
    assert perms.shape == (4, 6) and all(sorted(p) == list(range(6)) for p in perms.tolist())


def test_random_inplace_on_unbatched_tensor_and_eval_dropout():
    x = ember.ones(4, 3)
    with pytest.raises(RuntimeError, match="not batched"):
        vmap(lambda t: ember.empty(3).uniform_() + t, randomness="different")(x)
    same = vmap(lambda t: ember.empty(3).uniform_() + t, randomness="same")(x)
    assert bool((same == same[0]).all())
    # Dropout that draws nothing is not random: allowed in 'error' mode, batched or not.
    F = ember.nn.functional
    assert bool((vmap(lambda t: F.dropout(t, 0.5, training=False))(x) == x).all())
    assert bool((vmap(lambda t: F.dropout(t, 0.0))(x) == x).all())
    assert bool((vmap(lambda t: t + F.dropout(ember.ones(3), 0.5, training=False))(x) == 2).all())


def test_random_factories_outside_vmap_and_on_other_threads_are_untouched():
    import threading

    seen = []

    def other():
        seen.append(ember.randn(2).shape)

    def f(t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        return t * 2

    vmap(f)(ember.ones(3, 2))
    assert seen == [(2,)]
    assert ember.randn(3).shape == (3,)
