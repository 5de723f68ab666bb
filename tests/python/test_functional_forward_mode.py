"""ember.autograd.functional's forward-mode paths: jacobian(strategy="forward-mode") and
hessian(outer_jacobian_strategy="forward-mode") against the reverse-mode results (and
PyTorch's when it is installed), with PyTorch's errors."""

import numpy as np
import pytest

import ember
from ember.autograd.functional import hessian, jacobian


def t64(a):
    return ember.from_numpy(np.asarray(a, dtype=np.float64))


RNG = np.random.default_rng(0)
X = t64(RNG.standard_normal(4))
Y = t64(RNG.standard_normal((2, 3)))
W = t64(RNG.standard_normal((3, 4)))


def single(x):
    return ember.tanh(W @ x + 1.0)


def multi(x, y):
    return (x.sum() * y, ember.nn.functional.gelu(y @ W).sum(0), (x * 2).unsqueeze(0))


def scalar(x):
    return (ember.sin(x) * x).sum() + (x @ x) ** 2


def scalar2(x, y):
    return (ember.exp(y).sum(1) * x[:2]).sum() + (y * y).sum()


def _assert_same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for p, q in zip(a, b):
            _assert_same(p, q)
        return
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "fn,inputs",
    [(single, X), (single, (X,)), (multi, (X, Y)), (lambda x: x, X), (scalar, X)],
    ids=["single", "tuple-input", "multi", "identity", "scalar-output"],
)
def test_forward_mode_jacobian_matches_reverse_mode(fn, inputs):
    fwd = jacobian(fn, inputs, vectorize=True, strategy="forward-mode")
    rev = jacobian(fn, inputs)
    _assert_same(fwd, rev)


def test_forward_mode_jacobian_of_independent_input_is_zeros():
    jac = jacobian(lambda a, b: a * 2, (X, Y), vectorize=True, strategy="forward-mode")
    np.testing.assert_array_equal(jac[1].numpy(), np.zeros((4, 2, 3)))
    np.testing.assert_array_equal(jac[0].numpy(), 2 * np.eye(4))


def test_forward_mode_jacobian_integer_output_is_zeros_of_its_dtype():
    jac = jacobian(lambda a: (a > 0).long(), X, vectorize=True, strategy="forward-mode")
    assert jac.dtype == ember.int64
    np.testing.assert_array_equal(jac.numpy(), np.zeros((4, 4)))


def test_forward_mode_jacobian_of_input_that_requires_grad():
    x = X.clone().requires_grad_()
    fwd = jacobian(single, x, vectorize=True, strategy="forward-mode")
    # As PyTorch, forward mode does not detach: the tangents stay connected to x.
    assert fwd.requires_grad
    _assert_same(fwd.detach(), jacobian(single, X))


@pytest.mark.parametrize("fn,inputs", [(scalar, X), (scalar2, (X, Y))], ids=["one", "two"])
def test_forward_over_reverse_hessian_matches_reverse_mode(fn, inputs):
    fwd = hessian(fn, inputs, vectorize=True, outer_jacobian_strategy="forward-mode")
    rev = hessian(fn, inputs)
    _assert_same(fwd, rev)


def test_vectorized_reverse_mode_is_the_same():
    _assert_same(jacobian(multi, (X, Y), vectorize=True), jacobian(multi, (X, Y)))
    _assert_same(hessian(scalar, X, vectorize=True), hessian(scalar, X))


def test_errors_as_pytorch():
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        jacobian(single, X, strategy="forward-mode")
    with pytest.raises(RuntimeError, match='`strict=True` and `strategy="forward-mode"`'):
        jacobian(single, X, strategy="forward-mode", vectorize=True, strict=True)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True`"):
        jacobian(single, X, vectorize=True, strict=True)
    with pytest.raises(NotImplementedError, match='`create_graph=True` and `strategy="forward'):
        jacobian(single, X, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(AssertionError, match="Expected strategy to be either"):
        jacobian(single, X, strategy="bad")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        hessian(scalar, X, outer_jacobian_strategy="forward-mode")
    with pytest.raises(AssertionError, match="Expected strategy to be either"):
        hessian(scalar, X, vectorize=True, outer_jacobian_strategy="bad")


def test_torch_parity():
    torch = pytest.importorskip("torch")
    from torch.autograd.functional import hessian as thessian
    from torch.autograd.functional import jacobian as tjacobian

    tw = torch.from_numpy(W.numpy())

    def tsingle(x):
        return torch.tanh(tw @ x + 1.0)

    def tscalar(x):
        return (torch.sin(x) * x).sum() + (x @ x) ** 2

    tx = torch.from_numpy(X.numpy())
    got = jacobian(single, X, vectorize=True, strategy="forward-mode").numpy()
    expect = tjacobian(tsingle, tx, vectorize=True, strategy="forward-mode").numpy()
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-14)
    got = hessian(scalar, X, vectorize=True, outer_jacobian_strategy="forward-mode").numpy()
    expect = thessian(tscalar, tx, vectorize=True, outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(got, expect.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_vectorize_runs_the_vmap_transforms(monkeypatch):
    """vectorize=True batches the basis through ember.func.jacrev / jacfwd (one vmap), as
    PyTorch batches its vjps and jvps; create_graph=True keeps the per-row loop."""
    import ember.func

    used = []
    for name in ("jacrev", "jacfwd"):
        real = getattr(ember.func, name)

        def spy(*a, _real=real, _name=name, **k):
            used.append(_name)
            return _real(*a, **k)

        monkeypatch.setattr(ember.func, name, spy)
    _assert_same(jacobian(multi, (X, Y), vectorize=True), jacobian(multi, (X, Y)))
    _assert_same(
        jacobian(multi, (X, Y), vectorize=True, strategy="forward-mode"), jacobian(multi, (X, Y))
    )
    assert used == ["jacrev", "jacfwd"]
    used.clear()
    g = jacobian(single, X.clone().requires_grad_(), vectorize=True, create_graph=True)
    assert used == [] and g.requires_grad
