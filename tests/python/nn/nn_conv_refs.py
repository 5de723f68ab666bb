"""Plain NumPy references for the convolution, pooling and sampling tests (direct loops over
kernel offsets, written for clarity, not speed)."""

import math

import numpy as np


def _pair(v, n=2):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


# ---- convolutions ---------------------------------------------------------------------------


def conv_nd(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation over the trailing 1 or 2 dims of batched x (N, C, *spatial)."""
    nd = x.ndim - 2
    s, p, d = _pair(stride, nd), _pair(padding, nd), _pair(dilation, nd)
    k = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    out_sp = [(x.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    n, c = x.shape[:2]
    oc = w.shape[0]
    cg, ocg = c // groups, oc // groups
    acc = np.result_type(x.dtype, w.dtype)
    out = np.zeros((n, oc, *out_sp), dtype=acc)
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * ocg:(g + 1) * ocg]
        for off in np.ndindex(*k):
            sl = tuple(slice(off[i] * d[i], off[i] * d[i] + s[i] * (out_sp[i] - 1) + 1, s[i])
                       for i in range(nd))
            patch = xs[(slice(None), slice(None)) + sl]  # (N, Cg, *out)
            wk = ws[(slice(None), slice(None)) + off]  # (OCg, Cg)
            out[:, g * ocg:(g + 1) * ocg] += np.einsum("nc...,oc->no...", patch, wk)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def conv_transpose_nd(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                      dilation=1):
    """Transposed convolution: every input element scatters x * w into the output."""
    nd = x.ndim - 2
    s, p, d = _pair(stride, nd), _pair(padding, nd), _pair(dilation, nd)
    op = _pair(output_padding, nd)
    k = w.shape[2:]
    n, c = x.shape[:2]
    cg = c // groups
    ocg = w.shape[1]
    full = [(x.shape[2 + i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(nd)]
    acc = np.result_type(x.dtype, w.dtype)
    out = np.zeros((n, ocg * groups, *full), dtype=acc)
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        ws = w[g * cg:(g + 1) * cg]  # (Cg, OCg, *k)
        for off in np.ndindex(*k):
            sl = tuple(slice(off[i] * d[i], off[i] * d[i] + s[i] * (x.shape[2 + i] - 1) + 1, s[i])
                       for i in range(nd))
            contrib = np.einsum("nc...,co->no...", xs, ws[(slice(None), slice(None)) + off])
            out[(slice(None), slice(g * ocg, (g + 1) * ocg)) + sl] += contrib
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(nd))
    out = out[(slice(None), slice(None)) + crop]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd)
    return out


def unfold(x, k, d=1, p=0, s=1):
    k, d, p, s = _pair(k), _pair(d), _pair(p), _pair(s)
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                                  j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def fold(cols, output_size, k, d=1, p=0, s=1):
    k, d, p, s = _pair(k), _pair(d), _pair(p), _pair(s)
    h, w = output_size
    n, ckk, _ = cols.shape
    c = ckk // (k[0] * k[1])
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = cols.reshape(n, c, k[0], k[1], oh, ow)
    out = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), dtype=cols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]] += cols[:, :, i, j]
    return out[:, :, p[0]:p[0] + h, p[1]:p[1] + w]


# ---- pooling --------------------------------------------------------------------------------


def pool_out_size(n, k, s, p, d, ceil_mode):
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _argmax_last_nan(win):
    """First maximum along the last axis; a NaN wins, and of several NaNs the last (PyTorch)."""
    nan = np.isnan(win) if win.dtype.kind == "f" else np.zeros(win.shape, bool)
    last_nan = win.shape[-1] - 1 - nan[..., ::-1].argmax(-1)
    return np.where(nan.any(-1), last_nan, win.argmax(-1))


def max_pool2d(x, k, s=None, p=0, d=1, ceil_mode=False):
    """(values, flat indices into each H * W plane) of batched x (N, C, H, W)."""
    k = _pair(k)
    s = _pair(s) if s is not None else k
    p, d = _pair(p), _pair(d)
    n, c, h, w = x.shape
    oh = pool_out_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_out_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    vals = np.zeros((n, c, oh, ow), dtype=x.dtype)
    idx = np.zeros((n, c, oh, ow), dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            rows = [r for r in rows if 0 <= r < h]
            cols = [q for q in cols if 0 <= q < w]
            flat = np.array([r * w + q for r in rows for q in cols])
            win = x.reshape(n, c, h * w)[:, :, flat]
            pos = _argmax_last_nan(win)
            vals[:, :, i, j] = np.take_along_axis(win, pos[..., None], -1)[..., 0]
            idx[:, :, i, j] = flat[pos]
    return vals, idx


def avg_pool2d(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    k = _pair(k)
    s = _pair(s) if s is not None else k
    p = _pair(p)
    n, c, h, w = x.shape
    oh = pool_out_size(h, k[0], s[0], p[0], 1, ceil_mode)
    ow = pool_out_size(w, k[1], s[1], p[1], 1, ceil_mode)
    out = np.zeros((n, c, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            total = x[:, :, h0:h1, w0:w1].astype(np.float64).sum((-1, -2))
            div = divisor_override or (size if count_include_pad else (h1 - h0) * (w1 - w0))
            out[:, :, i, j] = total / div
    return out


def adaptive_windows(n, out):
    return [(math.floor(o * n / out), math.ceil((o + 1) * n / out)) for o in range(out)]


def adaptive_avg_pool2d(x, size):
    oh, ow = size
    out = np.zeros(x.shape[:-2] + (oh, ow), dtype=np.float64)
    for i, (h0, h1) in enumerate(adaptive_windows(x.shape[-2], oh)):
        for j, (w0, w1) in enumerate(adaptive_windows(x.shape[-1], ow)):
            out[..., i, j] = x[..., h0:h1, w0:w1].mean((-1, -2))
    return out


def adaptive_max_pool2d(x, size):
    oh, ow = size
    h, w = x.shape[-2:]
    vals = np.zeros(x.shape[:-2] + (oh, ow), dtype=x.dtype)
    idx = np.zeros(x.shape[:-2] + (oh, ow), dtype=np.int64)
    for i, (h0, h1) in enumerate(adaptive_windows(h, oh)):
        for j, (w0, w1) in enumerate(adaptive_windows(w, ow)):
            flat = np.array([r * w + q for r in range(h0, h1) for q in range(w0, w1)])
            win = x.reshape(x.shape[:-2] + (h * w,))[..., flat]
            pos = _argmax_last_nan(win)
            vals[..., i, j] = np.take_along_axis(win, pos[..., None], -1)[..., 0]
            idx[..., i, j] = flat[pos]
    return vals, idx


# ---- resampling -----------------------------------------------------------------------------


def _source_weights(in_size, out_size, mode, align_corners, scale):
    """(indices, weights) per output position along one dim, as PyTorch's CPU kernels."""
    rows = []
    inv = 1.0 / scale if scale else in_size / out_size
    if mode in ("nearest", "nearest-exact"):
        inv32 = np.float32(inv)
        for o in range(out_size):
            off = 0.5 if mode == "nearest-exact" else 0.0
            src = min(int(np.floor(np.float32(o + off) * inv32)), in_size - 1)
            rows.append(([src], [1.0]))
        return rows
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = inv
    for o in range(out_size):
        real = ratio * o if align_corners else ratio * (o + 0.5) - 0.5
        if mode == "linear":
            if in_size == out_size:
                rows.append(([o], [1.0]))
                continue
            real = max(real, 0.0)
            i0 = min(int(np.floor(real)), in_size - 1)
            lam = min(max(real - i0, 0.0), 1.0)
            i1 = i0 + (1 if i0 < in_size - 1 else 0)
            rows.append(([i0, i1], [1 - lam, lam]))
        else:  # cubic, A = -0.75, clamped taps
            a = -0.75
            i = int(np.floor(real))
            t = real - i

            def c1(x):
                return ((a + 2) * x - (a + 3)) * x * x + 1

            def c2(x):
                return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

            ws = [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]
            idx = [min(max(i - 1 + j, 0), in_size - 1) for j in range(4)]
            rows.append((idx, ws))
    return rows


def _interp_matrix(in_size, out_size, mode, align_corners, scale):
    m = np.zeros((out_size, in_size))
    for o, (idx, ws) in enumerate(_source_weights(in_size, out_size, mode, align_corners, scale)):
        for i, wv in zip(idx, ws):
            m[o, i] += wv
    return m


def interpolate(x, size, mode, align_corners=False, scales=None):
    """Separable resampling of x (N, C, *spatial) to `size` with per-dim matrices."""
    base = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    out = x.astype(np.float64)
    nd = x.ndim - 2
    for d in range(nd):
        scale = scales[d] if scales else None
        m = _interp_matrix(x.shape[2 + d], size[d], base, align_corners, scale)
        out = np.moveaxis(np.tensordot(m, np.moveaxis(out, 2 + d, 0), axes=(1, 0)), 0, 2 + d)
    return out


def pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    nl = len(lead)
    y = y.transpose(*range(nl), nl, nl + 3, nl + 1, nl + 4, nl + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    nl = len(lead)
    y = y.transpose(*range(nl), nl, nl + 2, nl + 4, nl + 1, nl + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)
