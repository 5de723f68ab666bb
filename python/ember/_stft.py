"""ember.stft / ember.istft (and the Tensor methods): short-time Fourier transforms, composed of
differentiable ops (pad, unfold, the C++ FFTs of ember.fft, index_add for the overlap-add), with
PyTorch 2.x's signatures, defaults and checks. The transforms are the C++ work; this is glue."""

import ember

__all__ = ["istft", "stft"]


def _window_or_ones(window, win_length, n_fft, op, like):
    if window is None:
        window = ember.ones(win_length, dtype=_real_dtype(like.dtype), device=like.device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"[{op}] expected a 1D window tensor of size equal to win_length={win_length}, "
            f"but got window with size {list(window.shape)}"
        )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = ember.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def _real_dtype(dtype):
    if dtype == ember.complex64:
        return ember.float32
    if dtype == ember.complex128:
        return ember.float64
    return dtype if dtype.is_floating_point else ember.get_default_dtype()


def _lengths(n_fft, hop_length, win_length, op):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if n_fft <= 0:
        raise RuntimeError(f"[{op}] expected 0 < n_fft, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"[{op}] expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(
            f"[{op}] expected 0 < win_length <= n_fft, but got win_length={win_length}"
        )
    return hop_length, win_length


def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """The short-time Fourier transform: the DFT of n_fft-point windowed frames taken every
    hop_length samples, shaped (batch?, n_fft // 2 + 1 or n_fft, n_frames)."""
    window_complex = window is not None and window.is_complex()
    if return_complex is None:
        if not (input.is_complex() or window_complex):
            raise RuntimeError(
                "[stft] stft requires the return_complex parameter be given for real inputs, "
                "and will further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"[stft] expected a 1D or 2D tensor, but got {input.dim()}D")
    hop_length, win_length = _lengths(n_fft, hop_length, win_length, "stft")
    if align_to_window is not None and center:
        raise RuntimeError("[stft] stft align_to_window should only be set when center = false")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = ember.nn.functional.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    elif align_to_window:
        # Frames start where the (shorter) window begins rather than at the padded frame's edge.
        x = x[:, (n_fft - win_length) // 2 :]
    length = x.shape[-1]
    if n_fft > length:
        raise RuntimeError(f"[stft] expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    window = _window_or_ones(window, win_length, n_fft, "stft", x)
    frames = x.unfold(-1, n_fft, hop_length) * window  # (batch, n_frames, n_fft)
    complex_in = x.is_complex() or window_complex
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError(
            "[stft] Cannot have onesided output if window or input is complex; use onesided=False"
        )
    norm = "ortho" if normalized else "backward"
    if onesided:
        spec = ember.fft.rfft(frames, dim=-1, norm=norm)
    else:
        spec = ember.fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(1, 2)  # (batch, freq, n_frames)
    if not batched:
        spec = spec.squeeze(0)
    if not return_complex:
        spec = ember.stack([spec.real, spec.imag], -1)
    return spec


def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """The inverse of stft by windowed overlap-add; raises when the squared window's overlap-add
    vanishes somewhere (the NOLA condition)."""
    if not input.is_complex():
        raise RuntimeError(
            "[istft] istft requires a complex-valued input tensor matching the output from stft "
            "with return_complex=True."
        )
    if input.dim() not in (2, 3):
        raise RuntimeError(f"[istft] expected a 2D or 3D complex tensor, but got {input.dim()}D")
    hop_length, win_length = _lengths(n_fft, hop_length, win_length, "istft")
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError(
                f"[istft] expected the frequency dimension (3rd to the last) of the input tensor "
                f"to match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
            )
    elif n_fft != n_freq:
        raise RuntimeError(
            f"[istft] expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {n_freq}"
        )
    if n_frames == 0:
        raise RuntimeError("[istft] istft received an input with no frames")
    window = _window_or_ones(window, win_length, n_fft, "istft", spec)
    frames = spec.transpose(1, 2)  # (batch, n_frames, freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError(
                "[istft] cannot have onesided output if window or input is complex "
                "(return_complex=True needs onesided=False)"
            )
        frames = ember.fft.ifft(frames, n_fft, dim=-1, norm=norm)
    else:
        if window.is_complex():
            raise RuntimeError("[istft] Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames = frames[..., : n_fft // 2 + 1]
        frames = ember.fft.irfft(frames, n_fft, dim=-1, norm=norm)
    frames = frames * window
    total = n_fft + hop_length * (n_frames - 1)
    # Overlap-add: sample t of frame f lands at f * hop + t (index_add is differentiable).
    index = (
        ember.arange(n_frames).unsqueeze(1) * hop_length + ember.arange(n_fft).unsqueeze(0)
    ).reshape(-1)
    batch = frames.shape[0]
    y = ember.zeros(batch, total, dtype=frames.dtype, device=frames.device)
    y = y.index_add(1, index, frames.reshape(batch, -1))
    square = (window * window.conj()).real if window.is_complex() else window * window
    envelope = ember.zeros(total, dtype=square.dtype).index_add(
        0, index, square.expand(n_frames, n_fft).reshape(-1)
    )
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = total - n_fft // 2
    else:
        end = total
    y = y[:, start:end]
    envelope = envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(
            "[istft] window overlap add min: the squared window's overlap-add is below 1e-11 "
            "somewhere (the NOLA condition fails); use a window and hop_length that overlap"
        )
    y = y / envelope
    if end > total:
        y = ember.nn.functional.pad(y, (0, end - total))
    if not batched:
        y = y.squeeze(0)
    return y


def _tensor_stft(self, *args, **kwargs):
    return stft(self, *args, **kwargs)


def _tensor_istft(self, *args, **kwargs):
    return istft(self, *args, **kwargs)


_tensor_stft.__doc__ = stft.__doc__
_tensor_istft.__doc__ = istft.__doc__
ember.Tensor.stft = _tensor_stft
ember.Tensor.istft = _tensor_istft
