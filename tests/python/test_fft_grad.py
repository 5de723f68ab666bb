"""Float64 finite-difference gradients of every ember.fft transform (real and complex inputs, every
norm, n / s padding and trimming, several dims), second derivatives, and stft / istft."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

REAL_IN = {"rfft", "ihfft", "rfftn", "ihfftn", "rfft2", "ihfft2"}
C2R = {"irfft", "hfft", "irfftn", "hfftn", "irfft2", "hfft2"}


def leaf(shape, complex_, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return ember.tensor(x, requires_grad=True)


def real_view(f):
    """gradcheck of a complex-output function through real and imaginary parts (PyTorch's
    convention is the same; this keeps the check independent of complex-output support)."""

    def g(*args):
        y = f(*args)
        return (y.real, y.imag) if y.is_complex() else y

    return g


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 4, 9])
def test_gradcheck_1d(name, norm, n):
    inputs = [leaf((2, 7), name not in REAL_IN, seed=1)]
    if name in ("fft", "ifft"):
        inputs.append(leaf((2, 7), False, seed=2))  # the real-input route (r2c, two-sided)
    for x in inputs:
        f = real_view(lambda t: getattr(ember.fft, name)(t, n=n, dim=-1, norm=norm))
        assert gradcheck(f, (x,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "name", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fft2", "irfft2"]
)
@pytest.mark.parametrize("kw", [dict(), dict(s=(3, 6)), dict(dim=(0, 2), norm="ortho")])
def test_gradcheck_nd(name, kw):
    if name.endswith("2") and "dim" in kw:
        kw = dict(kw, dim=(0, 2))
    x = leaf((3, 4, 5), name not in REAL_IN, seed=3)
    f = real_view(lambda t: getattr(ember.fft, name)(t, **kw))
    assert gradcheck(f, (x,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfftn"])
def test_gradgradcheck(name):
    x = leaf((2, 6), name not in REAL_IN and name not in (), seed=4)
    f = real_view(lambda t: getattr(ember.fft, name)(t))
    assert gradgradcheck(f, (x,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("n", [16, 17])
def test_gradcheck_odd_even_and_bluestein(n):
    # 37 has a prime factor above the direct radices: the Bluestein path.
    for length in (n, 37):
        x = leaf((length,), False, seed=length)
        assert gradcheck(real_view(ember.fft.rfft), (x,), eps=1e-6, atol=1e-6)
        c = leaf((length // 2 + 1,), True, seed=length + 1)
        f = lambda t, length=length: ember.fft.irfft(t, length)  # noqa: E731
        assert gradcheck(f, (c,), eps=1e-6, atol=1e-6)


def test_gradient_values_against_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((3, 8)) + 0j
    for name in ("fft", "ifft", "hfft", "irfft"):
        for norm in (None, "ortho", "forward"):
            a = ember.tensor(x, requires_grad=True)
            b = torch.tensor(x, requires_grad=True)
            ya = getattr(ember.fft, name)(a, n=10, norm=norm)
            yb = getattr(torch.fft, name)(b, n=10, norm=norm)
            wa = ember.tensor(np.arange(ya.numel()).reshape(ya.shape) * 0.1)
            (ya.abs() * wa).sum().backward() if ya.is_complex() else (ya * wa).sum().backward()
            wb = torch.tensor(np.arange(yb.numel()).reshape(yb.shape) * 0.1)
            (yb.abs() * wb).sum().backward() if yb.is_complex() else (yb * wb).sum().backward()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)
