"""Shared pieces of the linalg tests (test_linalg_*.py): random inputs, tolerances per dtype and
a torch comparison of values and gradients."""

import numpy as np

import ember

DTYPES = [ember.float32, ember.float64, ember.complex64, ember.complex128]
NP_DTYPES = {
    ember.float32: np.float32,
    ember.float64: np.float64,
    ember.complex64: np.complex64,
    ember.complex128: np.complex128,
}


def tol(dtype):
    return 1e-4 if dtype in (ember.float32, ember.complex64) else 1e-10


def rand(shape, dtype=ember.float64, seed=0):
    """A numpy array of `dtype` with entries in [-1, 1) (complex: both parts)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=shape)
    if dtype.is_complex:
        a = a + 1j * rng.uniform(-1, 1, size=shape)
    return a.astype(NP_DTYPES[dtype])


def randn(shape, dtype, seed=0):
    """A numpy array of `dtype` with standard normal entries (complex: both parts)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(NP_DTYPES[dtype])


def hermitian(shape, dtype=ember.float64, seed=0):
    a = rand(shape, dtype, seed)
    return a + np.swapaxes(a, -1, -2).conj()


def leaf(a):
    return ember.tensor(a).requires_grad_()


def noncontiguous(a):
    """ember tensor holding `a` through a non-contiguous view (every other column of a wider
    buffer)."""
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    wide[..., ::2] = a
    t = ember.tensor(wide)[..., ::2]
    assert not t.is_contiguous()
    return t


def adjoint(a):
    return np.swapaxes(a, -1, -2).conj()


def compare_with_torch(torch, fn, arrays, *, rtol=1e-8, atol=1e-8, seed=1):
    """fn(module, *tensors) -> tensor: compares values and the gradients of sum(out * g) for a
    random g between ember and torch."""
    e_in = [ember.tensor(a).requires_grad_() for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_out, t_out = fn(ember, *e_in), fn(torch, *t_in)
    t_np = t_out.detach().numpy()
    np.testing.assert_allclose(e_out.detach().numpy(), t_np, rtol=rtol, atol=atol)
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(t_np.shape)
    if np.iscomplexobj(t_np):
        g = g + 1j * rng.standard_normal(t_np.shape)
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        np.testing.assert_allclose(
            e.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"gradient of input {i}"
        )
