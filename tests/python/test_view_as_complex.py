"""ember.view_as_real / view_as_complex: views between a complex tensor and its real pairs,
sharing storage, differentiable, checked against NumPy's views and PyTorch where installed."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

COMPLEX = [
    (ember.complex64, np.complex64, np.float32),
    (ember.complex128, np.complex128, np.float64),
]


def _complex(shape, np_dtype, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype=np_dtype)


@pytest.mark.parametrize("dtype, np_c, np_r", COMPLEX)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
def test_view_as_real_matches_numpy(dtype, np_c, np_r, shape):
    z = _complex(shape, np_c)
    r = ember.view_as_real(ember.from_numpy(z))
    assert r.dtype == {np.float32: ember.float32, np.float64: ember.float64}[np_r]
    assert tuple(r.shape) == shape + (2,)
    np.testing.assert_array_equal(r.numpy(), np.stack([z.real, z.imag], axis=-1))


@pytest.mark.parametrize("dtype, np_c, np_r", COMPLEX)
def test_view_as_complex_matches_numpy_and_round_trips(dtype, np_c, np_r):
    x = np.random.default_rng(1).standard_normal((4, 3, 2)).astype(np_r)
    z = ember.view_as_complex(ember.from_numpy(x))
    assert z.dtype == dtype and tuple(z.shape) == (4, 3)
    np.testing.assert_array_equal(z.numpy(), x.view(np_c)[..., 0])
    np.testing.assert_array_equal(ember.view_as_real(z).numpy(), x)


def test_views_share_storage_both_ways():
    z = ember.from_numpy(_complex((2, 3), np.complex64))
    r = ember.view_as_real(z)
    r[1, 2, 1] = 7.0  # the imaginary part of z[1, 2]
    assert z[1, 2].item().imag == 7.0
    back = ember.view_as_complex(r)
    back[0, 0] = 1 + 2j
    assert r[0, 0].tolist() == [1.0, 2.0]
    assert z._version == r._version  # one version counter for the storage


def test_non_contiguous_and_offset_views():
    z = ember.from_numpy(_complex((4, 6), np.complex128))
    v = z[1:, ::2].t()  # offset, step and transpose
    expect = v.numpy()
    r = ember.view_as_real(v)
    np.testing.assert_array_equal(r.numpy(), np.stack([expect.real, expect.imag], axis=-1))
    np.testing.assert_array_equal(ember.view_as_complex(r).numpy(), expect)
    x = ember.arange(24, dtype=ember.float64).reshape(3, 4, 2)[::2]  # even strides
    np.testing.assert_array_equal(ember.view_as_complex(x).numpy(),
                                  x.numpy()[..., 0] + 1j * x.numpy()[..., 1])


def test_view_as_complex_refuses_what_cannot_be_viewed():
    with pytest.raises(RuntimeError, match=r"float32 and float64.*int64"):
        ember.view_as_complex(ember.zeros(3, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="no complex32"):
        ember.view_as_complex(ember.zeros(3, 2, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        ember.view_as_complex(ember.zeros(3, 3))
    with pytest.raises(RuntimeError, match="one or more dimensions"):
        ember.view_as_complex(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="stride 1"):
        ember.view_as_complex(ember.zeros(2, 3).t())
    with pytest.raises(RuntimeError, match="divisible by 2"):
        ember.view_as_complex(ember.zeros(3, 3)[:, :2])
    with pytest.raises(RuntimeError, match="storage_offset"):
        ember.view_as_complex(ember.zeros(7)[1:5].reshape(2, 2))
    with pytest.raises(RuntimeError, match="only supported for complex"):
        ember.view_as_real(ember.zeros(3))


def test_gradients():
    z = ember.from_numpy(_complex((3, 2), np.complex128)).requires_grad_()
    assert gradcheck(lambda t: ember.view_as_real(t) * 2.0, (z,))
    assert gradgradcheck(lambda t: ember.view_as_real(t * t), (z,))
    x = ember.randn(3, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: ember.view_as_complex(t) * (1 + 2j), (x,))
    assert gradgradcheck(lambda t: ember.view_as_complex(t * t), (x,))
    # a real loss through both views gives the plain gradient back
    y = ember.randn(4, 2, dtype=ember.float64, requires_grad=True)
    ember.view_as_real(ember.view_as_complex(y)).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.ones((4, 2)))


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    z = _complex((2, 5), np.complex64)
    np.testing.assert_array_equal(ember.view_as_real(ember.from_numpy(z)).numpy(),
                                  torch.view_as_real(torch.from_numpy(z)).numpy())
    x = np.random.default_rng(3).standard_normal((5, 2)).astype(np.float64)
    np.testing.assert_array_equal(ember.view_as_complex(ember.from_numpy(x)).numpy(),
                                  torch.view_as_complex(torch.from_numpy(x)).numpy())


def test_forward_mode_and_vmap():
    z = ember.from_numpy(_complex((3,), np.complex128))
    dz = ember.from_numpy(_complex((3,), np.complex128, seed=5))
    _, tangent = ember.func.jvp(ember.view_as_real, (z,), (dz,))
    np.testing.assert_array_equal(tangent.numpy(), ember.view_as_real(dz).numpy())
    x = ember.randn(3, 2, dtype=ember.float64)
    _, tangent = ember.func.jvp(ember.view_as_complex, (x,), (x * 2,))
    np.testing.assert_array_equal(tangent.numpy(), ember.view_as_complex(x * 2).numpy())
    batch = ember.from_numpy(_complex((4, 3), np.complex64))
    np.testing.assert_array_equal(ember.func.vmap(ember.view_as_real)(batch).numpy(),
                                  ember.view_as_real(batch).numpy())
