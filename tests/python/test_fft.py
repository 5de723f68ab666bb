"""ember.fft's transforms against numpy.fft (and torch.fft when installed): every length class the
plans distinguish (powers of two, mixed radix, odd radices, Bluestein primes), float32/64 and
complex inputs, n / s padding and trimming, every norm, non-contiguous and negative dims, errors,
NaN/inf, round trips and Parseval. Gradients are in test_fft_grad.py, windows and stft in
test_fft_stft.py."""

import numpy as np
import pytest

import ember

# Every pass shape of the plans: radix 16 first passes (transposed in registers) and the 2 / 4 / 8
# remainders, odd radices after a 16, single-pass lengths, Bluestein primes.
LENGTHS = [1, 2, 3, 5, 7, 8, 12, 16, 17, 32, 48, 64, 97, 100, 101, 128, 210, 256, 512, 768, 1000]
LENGTHS += [1021, 2048, 4096, 8192, 3 * 4096, 16 * 35]
NORMS = [None, "backward", "ortho", "forward"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
REAL_IN = {"rfft", "ihfft", "rfftn", "ihfftn", "rfft2", "ihfft2"}


def rand(shape, complex_, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(np.result_type(dtype, np.complex64) if complex_ else dtype)


def check(got, want, precision, scale=None):
    """Relative to the result's magnitude: FFT errors grow with the largest term, not each one."""
    want = np.asarray(want)
    got = got.numpy() if isinstance(got, ember.Tensor) else got
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = (2e-5 if precision == 32 else 1e-12) * (scale or max(1.0, np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


def numpy_ref(name, x, **kw):
    np_name = {"hfftn": None, "ihfftn": None, "hfft2": None, "ihfft2": None}.get(name, name)
    if np_name is None:  # NumPy has no hfftn: the N-D Hermitian transforms by definition
        return hfftn_ref(name, x, **kw)
    return getattr(np.fft, np_name)(x, **kw)


def hfftn_ref(name, x, s=None, axes=None, norm=None):
    axes = list(range(x.ndim)) if axes is None else list(axes)
    if name.startswith("i"):  # ihfftn(x) = conj(rfftn(x)) with the inverse's normalisation
        inv = {"backward": "forward", None: "forward", "forward": "backward", "ortho": "ortho"}
        return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=inv[norm]))
    inv = {"backward": "forward", None: "forward", "forward": "backward", "ortho": "ortho"}
    return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=inv[norm])


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_1d_lengths(n, dtype):
    precision = 32 if dtype == np.float32 else 64
    c = rand((n,), True, dtype, seed=n)
    r = rand((n,), False, dtype, seed=n + 1)
    c64, r64 = c.astype(np.complex128), r.astype(np.float64)
    check(ember.fft.fft(ember.tensor(c)), np.fft.fft(c64), precision)
    check(ember.fft.ifft(ember.tensor(c)), np.fft.ifft(c64), precision)
    check(ember.fft.fft(ember.tensor(r)), np.fft.fft(r64), precision)
    check(ember.fft.rfft(ember.tensor(r)), np.fft.rfft(r64), precision)
    check(ember.fft.ihfft(ember.tensor(r)), np.fft.ihfft(r64), precision)
    half = c[: n // 2 + 1]
    check(
        ember.fft.irfft(ember.tensor(half), n),
        np.fft.irfft(half.astype(np.complex128), n),
        precision,
    )
    check(
        ember.fft.hfft(ember.tensor(half), n), np.fft.hfft(half.astype(np.complex128), n), precision
    )
    want_dtype = ember.complex64 if dtype == np.float32 else ember.complex128
    assert ember.fft.fft(ember.tensor(r)).dtype == want_dtype
    assert ember.fft.irfft(ember.tensor(half), n).dtype == ember.tensor(r).dtype


def test_large_power_of_two_and_prime():
    for n in (2**20, 1048573):
        x = rand((n,), True, seed=3)
        check(ember.fft.fft(ember.tensor(x)), np.fft.fft(x), 64)
    r = rand((2**20,), False, np.float32, seed=4)
    check(ember.fft.rfft(ember.tensor(r)), np.fft.rfft(r.astype(np.float64)), 32)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 12, 31])
def test_1d_norm_and_n(name, norm, n):
    x = rand((3, 20), name not in REAL_IN, seed=1)
    kw = {"norm": norm} if norm is not None else {}
    got = getattr(ember.fft, name)(ember.tensor(x), n=n, dim=-1, **kw)
    check(got, getattr(np.fft, name)(x, n=n, axis=-1, **kw), 64)


@pytest.mark.parametrize("name", ONE_D)
def test_1d_dims_and_layouts(name):
    complex_ = name not in REAL_IN
    x = rand((6, 7, 10), complex_, seed=2)
    for dim in (0, 1, 2, -1, -2, -3):
        check(
            getattr(ember.fft, name)(ember.tensor(x), dim=dim),
            getattr(np.fft, name)(x, axis=dim),
            64,
        )
    # non-contiguous: a transposed and a strided view
    t = ember.tensor(x).transpose(0, 2)
    check(
        getattr(ember.fft, name)(t, dim=1), getattr(np.fft, name)(x.transpose(2, 1, 0), axis=1), 64
    )
    s = ember.tensor(x)[:, ::2, 1::3]
    check(getattr(ember.fft, name)(s, dim=1), getattr(np.fft, name)(x[:, ::2, 1::3], axis=1), 64)


@pytest.mark.parametrize("name", N_D + TWO_D)
@pytest.mark.parametrize("norm", NORMS)
def test_nd(name, norm):
    x = rand((4, 6, 5, 8), name not in REAL_IN, seed=5)
    two = name.endswith("2")
    base = name[:-1] + "n" if two else name
    cases = [dict(), dict(s=(3, 10)), dict(s=(4, -1)), dict(dim=(0, 2)), dict(dim=(-1, 1))]
    cases.append(dict(s=(6, 3), dim=(2, 0)))
    if not two:
        cases += [dict(dim=(1,)), dict(dim=(0, 1, 3)), dict(s=(4, 9, 7))]
    kw_norm = {"norm": norm} if norm is not None else {}
    for case in cases:
        kw = dict(case)
        if two and "dim" not in kw:
            kw["dim"] = (-2, -1)
        axes = kw.get("dim")
        s = kw.get("s")
        if axes is None and s is not None:
            axes = tuple(range(x.ndim - len(s), x.ndim))
        if s is not None and -1 in s:
            s_np = [x.shape[a] if v == -1 else v for a, v in zip(axes, s)]
            if base in ("irfftn", "hfftn") and s[-1] == -1:
                s_np[-1] = 2 * (x.shape[axes[-1]] - 1)
        else:
            s_np = s
        want = numpy_ref(base, x, s=s_np, axes=axes, **kw_norm)
        got = getattr(ember.fft, name)(ember.tensor(x), **case, **kw_norm)
        check(got, want, 64)


def test_fftn_of_real_and_all_dims():
    x = rand((3, 4, 5), False, seed=6)
    check(ember.fft.fftn(ember.tensor(x)), np.fft.fftn(x), 64)
    check(ember.fft.ifftn(ember.tensor(x)), np.fft.ifftn(x), 64)
    # dim=() transforms nothing and returns the complex input
    r = ember.fft.fftn(ember.tensor(x), dim=())
    assert r.dtype == ember.complex128
    check(r, x.astype(np.complex128), 64)
    # a 0-d input: fftn over no dims
    z = ember.fft.fftn(ember.tensor(2.5))
    assert z.shape == () and z.dtype == ember.complex64


def test_promotion():
    i = ember.arange(8)
    assert ember.fft.fft(i).dtype == ember.complex64
    check(ember.fft.fft(i), np.fft.fft(np.arange(8.0)), 32)
    b = ember.tensor([True, False, True])
    check(ember.fft.rfft(b), np.fft.rfft([1.0, 0.0, 1.0]), 32)
    for dt in (ember.float16, ember.bfloat16):
        with pytest.raises(NotImplementedError, match="Unsupported dtype"):
            ember.fft.fft(ember.ones(4, dtype=dt))


def test_errors():
    x = ember.randn(4)
    with pytest.raises(IndexError, match="no dimensions"):
        ember.fft.fft(ember.tensor(1.0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.fft.fft(x, dim=1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.fft.fft2(x)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        ember.fft.fft(ember.zeros(0))
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        ember.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        ember.fft.irfft(ember.zeros(1, dtype=ember.complex64))
    with pytest.raises(TypeError, match="rfft expects a real input tensor, but got ComplexFloat"):
        ember.fft.rfft(ember.zeros(3, dtype=ember.complex64))
    with pytest.raises(TypeError, match="ihfft expects a real input"):
        ember.fft.ihfft(ember.zeros(3, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        ember.fft.fft(x, norm="bad")
    m = ember.randn(3, 3)
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        ember.fft.fftn(m, dim=(0, 0))
    with pytest.raises(RuntimeError, match="must have the same length"):
        ember.fft.fftn(m, s=(2,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="Got shape with 3 values but input tensor only has 2"):
        ember.fft.fftn(m, s=(2, 2, 2))
    with pytest.raises(RuntimeError, match="rfftn must transform at least one axis"):
        ember.fft.rfftn(m, dim=())
    with pytest.raises(RuntimeError, match="expects a complex output tensor, but got Float"):
        ember.fft.fft(x, out=ember.zeros(4))
    with pytest.raises(RuntimeError, match="expects a floating point output tensor"):
        ember.fft.irfft(
            ember.zeros(3, dtype=ember.complex64), out=ember.zeros(4, dtype=ember.complex64)
        )


def test_empty_batch_and_out():
    e = ember.fft.fft(ember.zeros(3, 0), dim=0)
    assert e.shape == (3, 0) and e.dtype == ember.complex64
    x = rand((5,), True, seed=7)
    out = ember.empty(0, dtype=ember.complex128)
    r = ember.fft.fft(ember.tensor(x), out=out)
    assert r is out
    check(out, np.fft.fft(x), 64)
    # a complex64 result copied into a complex128 out
    out = ember.empty(5, dtype=ember.complex128)
    ember.fft.fft(ember.tensor(x.astype(np.complex64)), out=out)
    check(out, np.fft.fft(x.astype(np.complex64)), 32)


def test_nan_inf_propagate():
    x = np.zeros(16)
    x[3] = np.nan
    r = ember.fft.rfft(ember.tensor(x)).numpy()
    assert np.isnan(r).all()
    y = np.zeros(16)
    y[0] = np.inf
    # inf reaches every output; which ones become NaN (inf - inf) depends on the algorithm
    # (NumPy's and PyTorch's differ too), so only non-finiteness is checked.
    r = ember.fft.fft(ember.tensor(y)).numpy()
    assert (~np.isfinite(r)).all()
    z = np.zeros(17, dtype=np.complex128)
    z[2] = np.nan
    assert np.isnan(ember.fft.fft(ember.tensor(z)).numpy()).all()


@pytest.mark.parametrize("n", [1, 2, 7, 16, 97, 210, 1021])
def test_round_trips_and_parseval(n):
    x = rand((3, n), True, seed=n)
    t = ember.tensor(x)
    check(ember.fft.ifft(ember.fft.fft(t)), x, 64)
    r = rand((3, n), False, seed=n)
    check(ember.fft.irfft(ember.fft.rfft(ember.tensor(r)), n), r, 64)
    check(ember.fft.hfft(ember.fft.ihfft(ember.tensor(r)), n), r, 64)
    X = ember.fft.fft(t, norm="ortho").numpy()
    np.testing.assert_allclose((np.abs(X) ** 2).sum(-1), (np.abs(x) ** 2).sum(-1), rtol=1e-12)


def test_batched_rows_many_threads():
    x = rand((64, 4096), True, np.float32, seed=8)
    check(ember.fft.fft(ember.tensor(x)), np.fft.fft(x.astype(np.complex128)), 32)
    r = rand((64, 4096), False, np.float32, seed=9)
    check(ember.fft.rfft(ember.tensor(r)), np.fft.rfft(r.astype(np.float64)), 32)
    # transform along a strided dim
    check(ember.fft.fft(ember.tensor(x), dim=0), np.fft.fft(x.astype(np.complex128), axis=0), 32)


@pytest.mark.parametrize("rows", [1, 2, 5, 6])
@pytest.mark.parametrize("n", [3, 15, 33, 63, 255, 4095, 6, 48, 4096])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_real_rows(rows, n, dtype):
    """Odd lengths transform two real rows per complex transform (a last odd row alone); even
    lengths read and write the rows in place. Along the last dim and along a strided dim."""
    precision = 32 if dtype == np.float32 else 64
    r = rand((rows, n), False, dtype, seed=rows * n)
    half = rand((rows, n // 2 + 1), True, dtype, seed=rows + n)
    h64 = half.astype(np.complex128)
    for dim in (-1, 0):
        # dim 0 of a C-contiguous (n, rows) array: strided rows
        rr = r if dim == -1 else np.ascontiguousarray(r.T)
        hh = half if dim == -1 else np.ascontiguousarray(half.T)
        rr64, hh64 = rr.astype(np.float64), hh.astype(np.complex128)
        check(ember.fft.rfft(ember.tensor(rr), dim=dim), np.fft.rfft(rr64, axis=dim), precision)
        check(ember.fft.fft(ember.tensor(rr), dim=dim), np.fft.fft(rr64, axis=dim), precision)
        check(ember.fft.ihfft(ember.tensor(rr), dim=dim), np.fft.ihfft(rr64, axis=dim), precision)
        check(
            ember.fft.irfft(ember.tensor(hh), n, dim=dim),
            np.fft.irfft(hh64, n, axis=dim),
            precision,
        )
        check(
            ember.fft.hfft(ember.tensor(hh), n, dim=dim), np.fft.hfft(hh64, n, axis=dim), precision
        )
    # the imaginary part of X_0 (and X_{n/2}) is ignored, as a real signal's is zero
    check(ember.fft.irfft(ember.tensor(half), n), np.fft.irfft(h64, n), precision)


def test_fftfreq_and_shifts():
    assert ember.fft.fftfreq(0).shape == (0,)
    assert np.isnan(ember.fft.rfftfreq(0).numpy()).all()  # 0 * (1 / 0), as PyTorch
    for n in (1, 4, 5):
        for d in (1.0, 0.5):
            check(ember.fft.fftfreq(n, d), np.fft.fftfreq(n, d), 32)
            check(ember.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), 32)
    f = ember.fft.fftfreq(5, dtype=ember.float64, requires_grad=True)
    assert f.dtype == ember.float64 and f.requires_grad
    with pytest.raises(RuntimeError, match="floating point or complex dtype"):
        ember.fft.fftfreq(5, dtype=ember.int64)
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.fft.fftfreq(-1)
    x = np.arange(30.0).reshape(5, 6)
    for dim in (None, 0, 1, (0, 1), -1):
        axes = dim
        check(ember.fft.fftshift(ember.tensor(x), dim=dim), np.fft.fftshift(x, axes=axes), 64)
        check(ember.fft.ifftshift(ember.tensor(x), dim=dim), np.fft.ifftshift(x, axes=axes), 64)


# ---- parity with torch.fft ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ONE_D + N_D + TWO_D)
def test_torch_parity(name):
    torch = pytest.importorskip("torch")
    x = rand((4, 6, 9), name not in REAL_IN, seed=11)
    kwargs = [dict(), dict(norm="ortho"), dict(norm="forward")]
    for kw in kwargs:
        want = getattr(torch.fft, name)(torch.tensor(x), **kw)
        got = getattr(ember.fft, name)(ember.tensor(x), **kw)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        check(got, want.resolve_conj().numpy(), 64)
    f = getattr(torch.fft, name)(torch.tensor(x, requires_grad=True))
    g = getattr(ember.fft, name)(ember.tensor(x, requires_grad=True))
    assert g.grad_fn.name() == f.grad_fn.name().replace("torch::autograd::", "")
