"""ember.nn.utils: clip_grad_norm_, clip_grad_value_, parameters_to_vector,
vector_to_parameters (NumPy reference; PyTorch parity where installed)."""

import math
import types

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)


def params_with_grads(grads):
    ps = []
    for g in grads:
        p = nn.Parameter(ember.zeros(*np.asarray(g).shape))
        p.grad = ember.tensor(np.asarray(g, dtype=np.float32))
        ps.append(p)
    return ps


GRADS = [np.array([[3.0, -4.0], [1.0, 2.0]]), np.array([0.5, -12.0, 2.0])]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, 0.5, "inf"])
def test_clip_grad_norm_matches_numpy(norm_type):
    ps = params_with_grads(GRADS)
    nt = float(norm_type)
    flat = np.concatenate([g.ravel() for g in GRADS])
    if nt == math.inf:
        expected = np.abs(flat).max()
    else:
        expected = (np.abs(flat) ** nt).sum() ** (1.0 / nt)
    total = clip_grad_norm_(ps, max_norm=1.5, norm_type=norm_type)
    assert isinstance(total, ember.Tensor) and total.dim() == 0
    np.testing.assert_allclose(float(total), expected, rtol=1e-5)
    coef = min(1.0, 1.5 / (expected + 1e-6))
    for p, g in zip(ps, GRADS):
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=1e-5)


def test_clip_grad_norm_no_clip_when_small_and_skips_none():
    ps = params_with_grads(GRADS)
    extra = nn.Parameter(ember.ones(2))  # no grad
    total = clip_grad_norm_(ps + [extra], max_norm=100.0)
    for p, g in zip(ps, GRADS):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6)
    assert extra.grad is None
    assert float(total) > 0


def test_clip_grad_norm_single_tensor_and_empty():
    p = params_with_grads([np.array([3.0, 4.0])])[0]
    total = clip_grad_norm_(p, 1.0)
    np.testing.assert_allclose(float(total), 5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    assert float(clip_grad_norm_([], 1.0)) == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        clip_grad_norm_((x for x in []), 1.0)


def test_clip_grad_norm_nonfinite():
    ps = params_with_grads([np.array([1.0, np.inf])])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_(ps, 1.0, foreach=False)
    assert math.isinf(float(total))


def test_clip_grad_norm_does_not_record():
    p = nn.Parameter(ember.ones(3))
    (p * p).sum().backward(create_graph=True)
    assert p.grad.requires_grad
    clip_grad_norm_([p], 0.1)
    np.testing.assert_allclose(np.linalg.norm(p.grad.detach().numpy()), 0.1, rtol=1e-4)


def test_clip_grad_norm_matches_torch():
    torch = pytest.importorskip("torch")
    for nt in [2.0, 1.0, math.inf, 4.0]:
        ps = params_with_grads(GRADS)
        tps = []
        for g in GRADS:
            tp = torch.nn.Parameter(torch.zeros(g.shape))
            tp.grad = torch.tensor(g, dtype=torch.float32)
            tps.append(tp)
        e_total = clip_grad_norm_(ps, 2.0, nt)
        t_total = torch.nn.utils.clip_grad_norm_(tps, 2.0, nt)
        np.testing.assert_allclose(float(e_total), float(t_total), rtol=1e-6)
        for p, tp in zip(ps, tps):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6)


def test_clip_grad_value():
    ps = params_with_grads(GRADS)
    assert clip_grad_value_(ps, 1.5) is None
    for p, g in zip(ps, GRADS):
        np.testing.assert_allclose(p.grad.numpy(), np.clip(g, -1.5, 1.5))
    p = params_with_grads([np.array([5.0, -5.0])])[0]
    clip_grad_value_(p, 2, foreach=True)
    np.testing.assert_allclose(p.grad.numpy(), [2.0, -2.0])


def test_clip_grad_norm_deprecated_alias():
    ps = params_with_grads(GRADS)
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        nn.utils.clip_grad_norm(ps, 1.0)


def test_parameters_to_vector_and_back():
    m = nn.Module()
    m.a = nn.Parameter(ember.arange(6.0).reshape(2, 3))
    m.b = nn.Parameter(ember.tensor([7.0, 8.0]))
    v = parameters_to_vector(m.parameters())
    np.testing.assert_array_equal(v.detach().numpy(), [0, 1, 2, 3, 4, 5, 7, 8])
    assert v.requires_grad  # differentiable like torch.cat of views
    new = ember.arange(10.0, 18.0)
    a = m.a
    vector_to_parameters(new, m.parameters())
    assert m.a is a and isinstance(m.a, nn.Parameter)
    np.testing.assert_array_equal(m.a.detach().numpy(), [[10, 11, 12], [13, 14, 15]])
    np.testing.assert_array_equal(m.b.detach().numpy(), [16, 17])
    assert m.a.data_ptr() == new.data_ptr()  # views of the vector, as PyTorch
    with pytest.raises(TypeError, match="expected ember.Tensor, but got: list"):
        vector_to_parameters([1.0], m.parameters())


def test_generator_arguments_are_consumed_once():
    m = nn.Linear(3, 2)
    gen = (p for p in m.parameters())
    assert isinstance(gen, types.GeneratorType)
    v = parameters_to_vector(gen)
    assert v.shape == (8,)


def test_utils_namespace():
    for name in ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
                 "vector_to_parameters"]:
        assert hasattr(nn.utils, name)
