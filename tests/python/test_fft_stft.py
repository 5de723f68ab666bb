"""Window functions against NumPy's (and PyTorch's when installed), ember.stft / istft against a
NumPy reference and torch.stft / istft, round trips, their errors and gradients."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck


def periodic_or_symmetric(fn):
    """NumPy's windows are symmetric; the periodic one is the symmetric one of n + 1, cut."""
    return lambda n, sym: fn(n) if sym else fn(n + 1)[:-1]


WINDOWS = {
    "hann_window": periodic_or_symmetric(np.hanning),
    "hamming_window": periodic_or_symmetric(np.hamming),
    "blackman_window": periodic_or_symmetric(np.blackman),
    "bartlett_window": periodic_or_symmetric(np.bartlett),
    "kaiser_window": periodic_or_symmetric(lambda n: np.kaiser(n, 12.0)),
}


@pytest.mark.parametrize("name", list(WINDOWS))
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 257])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_against_numpy(name, n, periodic):
    w = getattr(ember, name)(n, periodic, dtype=ember.float64)
    assert w.shape == (n,) and w.dtype == ember.float64
    if n == 0:
        return
    want = np.ones(1) if n == 1 else WINDOWS[name](n, not periodic)
    np.testing.assert_allclose(w.numpy(), want, atol=1e-12)
    w32 = getattr(ember, name)(n, periodic)
    assert w32.dtype == ember.float32
    np.testing.assert_allclose(w32.numpy(), want, atol=1e-6)


def test_window_options_and_errors():
    np.testing.assert_allclose(
        ember.hamming_window(6, True, 0.5, 0.5, dtype=ember.float64).numpy(),
        ember.hann_window(6, dtype=ember.float64).numpy(),
        atol=1e-15,
    )
    k = ember.kaiser_window(7, False, 3.0, dtype=ember.float64).numpy()
    np.testing.assert_allclose(k, np.kaiser(7, 3.0), atol=1e-12)
    w = ember.hann_window(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert ember.hann_window(4, dtype=ember.float16).dtype == ember.float16
    with pytest.raises(RuntimeError, match="non-negative window_length"):
        ember.hann_window(-1)
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        ember.blackman_window(4, dtype=ember.int64)


def test_windows_torch_parity():
    torch = pytest.importorskip("torch")
    for name in WINDOWS:
        for n in (1, 6, 9):
            for p in (True, False):
                a = getattr(ember, name)(n, p, dtype=ember.float64).numpy()
                b = getattr(torch, name)(n, p, dtype=torch.float64).numpy()
                np.testing.assert_allclose(a, b, atol=1e-12)


def stft_ref(x, n_fft, hop, window, center, onesided, normalized):
    """The STFT by definition: reflect-pad, frame, window, DFT."""
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode="reflect")
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., f * hop : f * hop + n_fft] for f in range(n_frames)], -2)
    spec = (np.fft.rfft if onesided else np.fft.fft)(frames * window, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, -1, -2)


@pytest.mark.parametrize("shape", [(200,), (3, 150)])
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(hop_length=5),
        dict(win_length=20),
        dict(center=False),
        dict(normalized=True),
        dict(onesided=False),
    ],
)
def test_stft_against_reference_and_roundtrip(shape, kw):
    n_fft = 32
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    win_length = kw.get("win_length", n_fft)
    w = WINDOWS["hann_window"](win_length, False)
    left = (n_fft - win_length) // 2
    wp = np.pad(w, (left, n_fft - win_length - left))
    hop = kw.get("hop_length", n_fft // 4)
    got = ember.stft(ember.tensor(x), n_fft, window=ember.tensor(w), return_complex=True, **kw)
    want = stft_ref(
        x,
        n_fft,
        hop,
        wp,
        kw.get("center", True),
        kw.get("onesided", True),
        kw.get("normalized", False),
    )
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    if kw.get("center", True):  # hann's zero endpoints break NOLA without centering
        kk = {k: v for k, v in kw.items()}
        y = ember.istft(got, n_fft, window=ember.tensor(w), length=shape[-1], **kk)
        np.testing.assert_allclose(y.numpy(), x, atol=1e-12)
    real = ember.stft(ember.tensor(x), n_fft, window=ember.tensor(w), return_complex=False, **kw)
    np.testing.assert_allclose(real.numpy(), np.stack([want.real, want.imag], -1), atol=1e-12)
    m = ember.tensor(x).stft(n_fft, window=ember.tensor(w), return_complex=True, **kw)
    np.testing.assert_allclose(m.numpy(), want, atol=1e-12)


def test_stft_istft_errors():
    x = ember.randn(100)
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
        ember.stft(x, 16)
    with pytest.raises(RuntimeError, match="expected hop_length > 0"):
        ember.stft(x, 16, hop_length=0, return_complex=True)
    with pytest.raises(RuntimeError, match="expected 0 < win_length <= n_fft"):
        ember.stft(x, 16, win_length=20, return_complex=True)
    with pytest.raises(RuntimeError, match="window tensor of size equal to win_length=16"):
        ember.stft(x, 16, window=ember.ones(8), return_complex=True)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        ember.stft(ember.randn(2, 2, 50), 16, return_complex=True)
    spec = ember.stft(x, 16, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        ember.istft(spec, 16, window=ember.zeros(16))
    with pytest.raises(RuntimeError, match="complex-valued input"):
        ember.istft(spec.real, 16)
    with pytest.raises(RuntimeError, match="n_fft / 2 \\+ 1"):
        ember.istft(spec[:5], 16, onesided=True)
    # complex input: two-sided by default, and onesided refused
    c = ember.randn(100, dtype=ember.complex64)
    assert ember.stft(c, 16).shape == (16, 26)
    with pytest.raises(RuntimeError, match="Cannot have onesided output"):
        ember.stft(c, 16, onesided=True)


def test_stft_torch_parity():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 300))
    w = np.hanning(33)[:-1]
    for kw in (dict(), dict(pad_mode="constant"), dict(hop_length=7, normalized=True)):
        a = ember.stft(ember.tensor(x), 32, window=ember.tensor(w), return_complex=True, **kw)
        b = torch.stft(torch.tensor(x), 32, window=torch.tensor(w), return_complex=True, **kw)
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)
        kk = {k: v for k, v in kw.items() if k != "pad_mode"}
        ia = ember.istft(a, 32, window=ember.tensor(w), length=290, **kk)
        ib = torch.istft(b, 32, window=torch.tensor(w), length=290, **kk)
        np.testing.assert_allclose(ia.numpy(), ib.numpy(), atol=1e-12)
    ta = torch.stft(
        torch.tensor(x, requires_grad=True), 32, return_complex=True, window=torch.tensor(w)
    )
    ea = ember.stft(
        ember.tensor(x, requires_grad=True), 32, return_complex=True, window=ember.tensor(w)
    )
    assert ea.shape == tuple(ta.shape)


def test_stft_istft_gradcheck():
    x = ember.tensor(np.random.default_rng(2).standard_normal(40), requires_grad=True)
    w = ember.tensor(WINDOWS["hann_window"](16, False), requires_grad=True)

    def f(x, w):
        s = ember.stft(x, 16, hop_length=4, window=w, return_complex=True)
        return s.real, s.imag

    assert gradcheck(f, (x, w), eps=1e-6, atol=1e-6)
    spec = ember.stft(x.detach(), 16, hop_length=4, window=w.detach(), return_complex=True)
    spec = spec.detach().requires_grad_(True)
    assert gradcheck(
        lambda s: ember.istft(s, 16, hop_length=4, window=w.detach(), length=40),
        (spec,),
        eps=1e-6,
        atol=1e-6,
    )
