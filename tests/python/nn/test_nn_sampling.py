"""Padding and resampling (ember.nn.functional.pad, interpolate / upsample, pixel_shuffle /
pixel_unshuffle): forward against NumPy references for every mode, dtypes, float64 gradcheck and
gradgradcheck, PyTorch parity and errors."""

import warnings

import nn_conv_refs as ref
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from opinfo import to_numpy

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def T(a, requires_grad=False, dtype=None):
    t = ember.tensor(a, dtype=dtype)
    return t.requires_grad_(requires_grad) if requires_grad else t


def close(got, want, tol=1e-12):
    g = to_numpy(got)
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_allclose(g.astype(np.float64), want, rtol=tol, atol=tol)


# ---- pad --------------------------------------------------------------------------------------


def np_pad(x, pad, mode, value=0.0):
    """F.pad's semantics through np.pad: pairs from the last dim; negative pads crop first."""
    n = len(pad) // 2
    crop = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for i in range(n):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        crop[d] = slice(max(0, -lo), x.shape[d] - max(0, -hi))
        widths[d] = (max(0, lo), max(0, hi))
    if mode == "constant":
        return np.pad(x[tuple(crop)], widths, mode="constant", constant_values=value)
    if mode == "circular":
        return np.pad(x[tuple(crop)], widths, mode="wrap")
    # reflect / replicate index the uncropped input: negative pads only drop outputs.
    full = [(max(0, p[0]), max(0, p[1])) for p in widths]
    np_mode = {"reflect": "reflect", "replicate": "edge"}[mode]
    y = np.pad(x, full, mode=np_mode)
    sl = [slice(None)] * x.ndim
    for i in range(n):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        sl[d] = slice(max(0, -lo), y.shape[d] - max(0, -hi))
    return y[tuple(sl)]


@pytest.mark.parametrize("pad", [(1, 2), (0, 0, 2, 1), (1, 1, 2, 0, 0, 3), (-1, 2), (2, -2, 1, 1),
                                 (1, 0, 0, 1, 1, 0, 2, 1)])
def test_constant_pad_matches_numpy(pad):
    x = rand(2, 3, 4, 5)
    close(F.pad(T(x), pad), np_pad(x, pad, "constant"))
    close(F.pad(T(x), pad, value=-1.5), np_pad(x, pad, "constant", -1.5))
    close(ember.constant_pad_nd(T(x), pad, 2.0), np_pad(x, pad, "constant", 2.0))


def test_constant_pad_dtypes():
    xi = RNG.integers(-5, 5, (2, 3))
    got = F.pad(T(xi), (1, 1), value=2.7)
    assert got.dtype == ember.int64
    np.testing.assert_array_equal(to_numpy(got), np.pad(xi, [(0, 0), (1, 1)], constant_values=2))
    gb = F.pad(T(xi > 0), (1, 0), value=1.0)
    assert gb.dtype == ember.bool
    np.testing.assert_array_equal(to_numpy(gb), np.pad(xi > 0, [(0, 0), (1, 0)],
                                                       constant_values=True))
    assert tuple(F.pad(T(rand(3, 5)), (-2, -3)).shape) == (3, 0)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [
    ((2, 3, 6), (2, 3)), ((3, 6), (1, 0)), ((2, 3, 5, 6), (1, 2, 3, 1)), ((3, 5, 6), (2, 0, 0, 2)),
    ((2, 2, 3, 4, 5), (1, 2, 2, 1, 1, 2)), ((2, 3, 4, 5), (1, 1, 1, 1, 1, 1)),
    ((2, 3, 6), (-1, 2)), ((2, 3, 5, 6), (2, -1, -2, 1))])
def test_index_pad_matches_numpy(mode, shape, pad):
    x = rand(*shape)
    close(F.pad(T(x), pad, mode), np_pad(x, pad, mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_index_pad_dtypes(mode):
    xi = RNG.integers(-9, 9, (2, 3, 5))
    got = F.pad(T(xi), (2, 1), mode)
    assert got.dtype == ember.int64
    np.testing.assert_array_equal(to_numpy(got), np_pad(xi, (2, 1), mode))
    xh = T(rand(2, 3, 5), dtype=ember.float16)
    close(F.pad(xh, (2, 1), mode), np_pad(to_numpy(xh).astype(np.float64), (2, 1), mode))


# ---- interpolate --------------------------------------------------------------------------------

INTERP_CASES = [
    # mode, align_corners, kwargs
    ("nearest", None, dict(size=(11, 5))),
    ("nearest", None, dict(scale_factor=1.7)),
    ("nearest", None, dict(scale_factor=(2, 0.5))),
    ("nearest", None, dict(scale_factor=0.4)),
    ("nearest-exact", None, dict(size=(11, 5))),
    ("nearest-exact", None, dict(scale_factor=1.3)),
    ("bilinear", False, dict(size=(11, 5))),
    ("bilinear", True, dict(size=(11, 5))),
    ("bilinear", False, dict(scale_factor=1.7)),
    ("bilinear", False, dict(scale_factor=1.7, recompute_scale_factor=True)),
    ("bilinear", True, dict(scale_factor=(0.5, 2.5))),
    ("bilinear", False, dict(size=(7, 6))),
    ("bicubic", False, dict(size=(11, 5))),
    ("bicubic", True, dict(size=(11, 5))),
    ("bicubic", False, dict(scale_factor=2)),
    ("bicubic", True, dict(scale_factor=0.6)),
]


def _ref_interp(x, mode, align_corners, kw):
    nd = x.ndim - 2
    if "size" in kw:
        size = kw["size"]
        size = list(size) if isinstance(size, (list, tuple)) else [size] * nd
        scales = None
    else:
        sf = kw["scale_factor"]
        sf = list(sf) if isinstance(sf, (list, tuple)) else [sf] * nd
        size = [int(np.floor(x.shape[2 + i] * sf[i])) for i in range(nd)]
        scales = None if kw.get("recompute_scale_factor") else sf
    return ref.interpolate(x, size, mode, bool(align_corners), scales)


@pytest.mark.parametrize("mode,align_corners,kw", INTERP_CASES)
def test_interpolate_2d_matches_numpy(mode, align_corners, kw):
    x = rand(2, 3, 7, 6)
    got = F.interpolate(T(x), mode=mode, align_corners=align_corners, **kw)
    close(got, _ref_interp(x, mode, align_corners, kw), 1e-10)


@pytest.mark.parametrize("mode,align_corners,kw", [
    ("nearest", None, dict(scale_factor=2.3)), ("nearest-exact", None, dict(size=13)),
    ("linear", False, dict(scale_factor=2.3)), ("linear", True, dict(size=4))])
def test_interpolate_1d_matches_numpy(mode, align_corners, kw):
    x = rand(2, 3, 9)
    got = F.interpolate(T(x), mode=mode, align_corners=align_corners, **kw)
    close(got, _ref_interp(x, mode, align_corners, kw), 1e-10)


@pytest.mark.parametrize("mode,align_corners", [("nearest", None), ("trilinear", False),
                                                ("trilinear", True)])
def test_interpolate_3d_matches_numpy(mode, align_corners):
    x = rand(1, 2, 3, 4, 5)
    kw = dict(scale_factor=(2, 1.5, 0.5))
    got = F.interpolate(T(x), mode=mode, align_corners=align_corners, **kw)
    close(got, _ref_interp(x, mode, align_corners, kw), 1e-10)


def test_interpolate_area_is_adaptive_avg_pool():
    x = rand(2, 3, 9, 8)
    close(F.interpolate(T(x), size=(4, 3), mode="area"), ref.adaptive_avg_pool2d(x, (4, 3)))
    close(F.interpolate(T(x), scale_factor=0.5, mode="area"), ref.adaptive_avg_pool2d(x, (4, 4)))
    x1 = rand(2, 3, 9)
    close(F.interpolate(T(x1), size=4, mode="area"),
          ref.adaptive_avg_pool2d(x1[:, :, None], (1, 4))[:, :, 0])


def test_interpolate_float32_uint8_and_half():
    x = rand(2, 3, 5, 6, dtype=np.float32)
    got = F.interpolate(T(x), scale_factor=2, mode="bilinear")
    assert got.dtype == ember.float32
    close(got, _ref_interp(x.astype(np.float64), "bilinear", False, dict(scale_factor=2)), 1e-5)
    xu = RNG.integers(0, 255, (1, 2, 4, 5)).astype(np.uint8)
    gu = F.interpolate(T(xu), scale_factor=2)
    assert gu.dtype == ember.uint8
    np.testing.assert_array_equal(to_numpy(gu), xu.repeat(2, 2).repeat(2, 3))
    xh = T(x, dtype=ember.float16)
    close(F.interpolate(xh, size=(7, 9), mode="bicubic"),
          _ref_interp(to_numpy(xh).astype(np.float64), "bicubic", False, dict(size=(7, 9))), 2e-2)


def test_upsample_aliases_warn():
    x = T(rand(1, 1, 3, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        got = F.upsample(x, scale_factor=2, mode="bilinear", align_corners=True)
    close(got, _ref_interp(to_numpy(x), "bilinear", True, dict(scale_factor=2)))
    with pytest.warns(UserWarning):
        close(F.upsample_nearest(x, size=5), _ref_interp(to_numpy(x), "nearest", None,
                                                         dict(size=5)))
    with pytest.warns(UserWarning):
        close(F.upsample_bilinear(x, scale_factor=2),
              _ref_interp(to_numpy(x), "bilinear", True, dict(scale_factor=2)))


def test_named_upsample_kernels():
    x = rand(1, 2, 4, 5)
    nn = ember._C._nn
    close(nn.upsample_bilinear2d(T(x), (6, 7), False), ref.interpolate(x, (6, 7), "bilinear"))
    close(nn.upsample_bilinear2d(T(x), None, True, [1.5, 2.0]),
          ref.interpolate(x, (6, 10), "bilinear", True, [1.5, 2.0]))
    close(nn.upsample_nearest2d(T(x), (8, 10)), ref.interpolate(x, (8, 10), "nearest"))
    close(nn.upsample_nearest2d(T(x), None, [1.5, 1.5]),
          ref.interpolate(x, (6, 7), "nearest", False, [1.5, 1.5]))


# ---- pixel shuffle ------------------------------------------------------------------------------


def test_pixel_shuffle_matches_numpy():
    x = rand(2, 8, 3, 4)
    close(F.pixel_shuffle(T(x), 2), ref.pixel_shuffle(x, 2))
    close(F.pixel_shuffle(T(x[0]), 2), ref.pixel_shuffle(x[0], 2))
    y = rand(2, 1, 3, 6, 9)
    close(F.pixel_unshuffle(T(y), 3), ref.pixel_unshuffle(y, 3))
    close(F.pixel_unshuffle(F.pixel_shuffle(T(x), 2), 2), x)
    xi = RNG.integers(0, 9, (1, 4, 2, 2))
    np.testing.assert_array_equal(to_numpy(ember.pixel_shuffle(T(xi), 2)),
                                  ref.pixel_shuffle(xi, 2))


# ---- gradients ----------------------------------------------------------------------------------


def R(*shape):
    return T(rand(*shape), requires_grad=True)


GRAD_CASES = {
    "pad_constant": (lambda x: F.pad(x, (1, -1, 2, 0), value=1.5), (2, 3, 4, 5)),
    "pad_reflect_1d": (lambda x: F.pad(x, (2, 3), "reflect"), (2, 3, 5)),
    "pad_reflect_2d": (lambda x: F.pad(x, (1, 2, 2, 1), "reflect"), (2, 3, 4, 5)),
    "pad_replicate_2d": (lambda x: F.pad(x, (3, 2, 0, 1), "replicate"), (1, 2, 3, 4)),
    "pad_replicate_3d": (lambda x: F.pad(x, (1, 1, 1, 0, 0, 2), "replicate"), (1, 2, 2, 3, 3)),
    "pad_circular": (lambda x: F.pad(x, (1, 2, 0, 1, 1, 1), "circular"), (1, 2, 3, 4, 5)),
    "interp_nearest": (lambda x: F.interpolate(x, scale_factor=1.6), (2, 3, 4, 5)),
    "interp_nearest_exact": (lambda x: F.interpolate(x, size=(3, 7), mode="nearest-exact"),
                             (1, 2, 4, 5)),
    "interp_bilinear": (lambda x: F.interpolate(x, size=(7, 3), mode="bilinear"), (2, 3, 4, 5)),
    "interp_bilinear_ac": (lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear",
                                                   align_corners=True), (1, 2, 4, 5)),
    "interp_bicubic": (lambda x: F.interpolate(x, size=(7, 3), mode="bicubic"), (1, 2, 4, 5)),
    "interp_bicubic_ac": (lambda x: F.interpolate(x, size=(7, 3), mode="bicubic",
                                                  align_corners=True), (1, 2, 4, 5)),
    "interp_linear": (lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), (2, 3, 4)),
    "interp_trilinear": (lambda x: F.interpolate(x, scale_factor=1.5, mode="trilinear"),
                         (1, 2, 3, 4, 3)),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), (2, 8, 3, 2)),
    "pixel_unshuffle": (lambda x: F.pixel_unshuffle(x, 2), (2, 2, 4, 6)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradcheck(name):
    fn, shape = GRAD_CASES[name]
    assert gradcheck(fn, (R(*shape),))


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradgradcheck(name):
    fn, shape = GRAD_CASES[name]
    assert gradgradcheck(fn, (R(*shape),))


def test_node_names():
    x = R(2, 3, 4, 5)
    assert F.pad(x, (1, 1)).grad_fn.name() == "ConstantPadNdBackward0"
    assert F.pad(x, (1, 1, 1, 1), "reflect").grad_fn.name() == "ReflectionPad2DBackward0"
    assert F.pad(x[0], (1, 1), "replicate").grad_fn.name() == "ReplicationPad1DBackward0"
    assert F.interpolate(x, scale_factor=2).grad_fn.name() == "UpsampleNearest2DBackward0"
    assert (F.interpolate(x, scale_factor=2, mode="bilinear").grad_fn.name()
            == "UpsampleBilinear2DBackward0")
    assert (F.interpolate(x, scale_factor=2, mode="bicubic").grad_fn.name()
            == "UpsampleBicubic2DBackward0")
    assert F.pixel_shuffle(R(1, 4, 2, 2), 2).grad_fn.name() == "PixelShuffleBackward0"


# ---- errors -------------------------------------------------------------------------------------


def test_pad_errors():
    x = T(rand(2, 3, 5))
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two "
                       "times the input dimension but got padding length 8 and input of "
                       "dimension 3"):
        F.pad(x, (1,) * 8)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), "foo")
    with pytest.raises(RuntimeError, match='Padding mode "reflect" doesn\'t take in value'):
        F.pad(x, (1, 1), "reflect", 3.0)
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D input"):
        F.pad(T(rand(2, 3, 4, 5)), (1, 1), "reflect")
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding "
                       r"input dimension, but got: padding \(5, 2\) at dimension 2 of input "
                       r"\[2, 3, 5\]"):
        F.pad(x, (5, 2), "reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        F.pad(x, (6, 2), "circular")
    with pytest.raises(RuntimeError, match="Negative padding value is resulting in an empty"):
        F.pad(x, (-3, -3), "circular")
    with pytest.raises(RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor with "
                       r"possibly 0 batch size and other non-zero dimensions"):
        F.pad(x[:, :0], (1, 1), "replicate")
    with pytest.raises(NotImplementedError, match="reflection_pad1d\" not implemented for 'Bool'"):
        F.pad(x.bool(), (1, 1), "reflect")
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        F.pad(x, (-3, -3))
    with pytest.raises(RuntimeError, match="is too small"):
        F.pad(x, (-3, -3), "replicate")


def test_interpolate_errors():
    x = T(rand(2, 3, 4, 5))
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set with the "
                       "interpolating modes"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="Input and output must have the same number of spatial"):
        F.interpolate(x, size=(2, 3, 4))
    with pytest.raises(ValueError, match="Input and scale_factor must have the same number"):
        F.interpolate(x, scale_factor=(2, 3, 4))
    with pytest.raises(TypeError, match="expected size to be one of int or Tuple"):
        F.interpolate(x, size=(2.5, 3))
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(x, size=3, recompute_scale_factor=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(x[0], scale_factor=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(NotImplementedError, match="Input Error: Only 3D, 4D and 5D input"):
        F.interpolate(x[0, 0], scale_factor=2)
    with pytest.raises(RuntimeError, match=r"Input and output sizes should be greater than 0, but "
                       r"got input \(H: 4, W: 5\) output \(H: 0, W: 3\)"):
        F.interpolate(x, size=(0, 3))
    with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
        F.interpolate(x[:, :0], scale_factor=2)
    with pytest.raises(NotImplementedError, match="not implemented for 'int64'"):
        F.interpolate(x.long(), scale_factor=2)


def test_pixel_shuffle_errors():
    x = T(rand(2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="pixel_shuffle expects its input's 'channel' dimension "
                       r"to be divisible by the square of upscale_factor, but input.size\(-3\)=3 "
                       "is not divisible by 4"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects input to have at least 3 "
                       r"dimensions, but got input with 2 dimension\(s\)"):
        F.pixel_shuffle(x[0, 0], 2)
    with pytest.raises(RuntimeError, match="pixel_shuffle expects a positive upscale_factor, but "
                       "got 0"):
        F.pixel_shuffle(x, 0)
    with pytest.raises(RuntimeError, match=r"pixel_unshuffle expects width to be divisible by "
                       r"downscale_factor, but input.size\(-1\)=5 is not divisible by 2"):
        F.pixel_unshuffle(x, 2)
    with pytest.raises(RuntimeError, match="pixel_unshuffle expects a positive downscale_factor"):
        F.pixel_unshuffle(x, -1)


# ---- PyTorch parity -----------------------------------------------------------------------------


def _parity(torch, ef, tf, x, tol=1e-10):
    ex = T(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    eo, to = ef(ex), tf(tx)
    np.testing.assert_allclose(to_numpy(eo), to.detach().numpy(), rtol=tol, atol=tol)
    g = rand(*to.shape).astype(x.dtype)
    eo.backward(T(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [((2, 3, 6), (2, 3)), ((2, 3, 5, 6), (1, 2, 3, 1)),
                                       ((2, 2, 3, 4, 5), (1, 2, 2, 1, 1, 2)),
                                       ((2, 3, 6), (-1, 2)), ((2, 3, 5, 6), (2, -1, -2, 1))])
def test_torch_parity_pad(mode, shape, pad):
    torch = pytest.importorskip("torch")
    _parity(torch, lambda x: F.pad(x, pad, mode), lambda x: torch.nn.functional.pad(x, pad, mode),
            rand(*shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,align_corners,kw", INTERP_CASES)
def test_torch_parity_interpolate(mode, align_corners, kw, dtype):
    torch = pytest.importorskip("torch")
    tol = 1e-5 if dtype == np.float32 else 1e-10
    _parity(torch, lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, **kw),
            lambda x: torch.nn.functional.interpolate(x, mode=mode, align_corners=align_corners,
                                                      **kw), rand(2, 3, 7, 6, dtype=dtype), tol)


def test_torch_parity_interpolate_1d_3d_area():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    for mode, ac in [("nearest", None), ("nearest-exact", None), ("linear", False),
                     ("linear", True), ("area", None)]:
        _parity(torch, lambda x: F.interpolate(x, scale_factor=2.3, mode=mode, align_corners=ac),
                lambda x: TF.interpolate(x, scale_factor=2.3, mode=mode, align_corners=ac),
                rand(2, 3, 9))
    for mode, ac in [("nearest", None), ("trilinear", False), ("trilinear", True)]:
        _parity(torch, lambda x: F.interpolate(x, scale_factor=(2, 1.5, 0.5), mode=mode,
                                               align_corners=ac),
                lambda x: TF.interpolate(x, scale_factor=(2, 1.5, 0.5), mode=mode,
                                         align_corners=ac), rand(1, 2, 3, 4, 5))


def test_torch_parity_pixel_shuffle():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    _parity(torch, lambda x: F.pixel_shuffle(x, 3), lambda x: TF.pixel_shuffle(x, 3),
            rand(2, 18, 2, 3))
    _parity(torch, lambda x: F.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2),
            rand(2, 3, 4, 6))


def test_torch_parity_uint8_nearest():
    torch = pytest.importorskip("torch")
    xu = RNG.integers(0, 255, (1, 2, 5, 7)).astype(np.uint8)
    for kw in [dict(scale_factor=1.7), dict(size=(3, 11))]:
        got = F.interpolate(T(xu), **kw)
        want = torch.nn.functional.interpolate(torch.tensor(xu), **kw)
        np.testing.assert_array_equal(to_numpy(got), want.numpy())


def test_no_warning_from_interpolate():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.interpolate(T(rand(1, 1, 3, 3)), scale_factor=2, mode="bilinear")


# ---- interpolate(antialias=True) --------------------------------------------------------------

AA_CASES = [
    ((2, 3, 17, 23), {"size": (5, 7)}),
    ((1, 2, 9, 8), {"scale_factor": 0.37}),
    ((1, 1, 6, 6), {"size": (13, 4)}),  # upscaling rows: the plain filter width
    ((1, 1, 10, 10), {"scale_factor": (0.5, 2.5)}),
    ((1, 1, 5, 5), {"size": (1, 1)}),
]


def test_antialias_bilinear_halving_is_a_tent_filter():
    # Halving with the stretched linear filter: interior output pixels weigh 4 input pixels
    # (1, 3, 3, 1) / 8; the first output pixel, at the border, only 3 (3, 3, 1) / 7.
    x = rand(1, 1, 8, 8)
    w = np.zeros((4, 8))
    w[0, :3] = np.array([3, 3, 1]) / 7
    for i in range(1, 4):
        taps = np.array([1, 3, 3, 1], dtype=np.float64)[: 8 - (2 * i - 1)]
        w[i, 2 * i - 1: 2 * i - 1 + len(taps)] = taps / taps.sum()
    want = w @ x[0, 0] @ w.T
    got = F.interpolate(T(x), scale_factor=0.5, mode="bilinear", antialias=True)
    close(got, want[None, None])


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_antialias_keeps_constants_and_handles_views_and_empty_batches(mode, align_corners):
    x = np.full((2, 3, 11, 9), 2.5)
    got = F.interpolate(T(x), size=(4, 5), mode=mode, align_corners=align_corners, antialias=True)
    close(got, np.full((2, 3, 4, 5), 2.5))
    base = rand(2, 9, 11, 3)
    view = T(base).permute(0, 3, 1, 2)  # non-contiguous (2, 3, 9, 11)
    got = F.interpolate(view, size=(4, 6), mode=mode, align_corners=align_corners, antialias=True)
    want = F.interpolate(T(np.ascontiguousarray(base.transpose(0, 3, 1, 2))), size=(4, 6),
                         mode=mode, align_corners=align_corners, antialias=True)
    close(got, to_numpy(want))
    empty = F.interpolate(T(rand(0, 3, 8, 8)), size=(3, 3), mode=mode, antialias=True)
    assert tuple(empty.shape) == (0, 3, 3, 3)
    out32 = F.interpolate(T(rand(1, 1, 8, 8), dtype=ember.float32), size=(3, 3), mode=mode,
                          antialias=True)
    assert out32.dtype == ember.float32


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_gradcheck(mode):
    x = T(rand(1, 2, 7, 6), requires_grad=True)
    fn = lambda t: F.interpolate(t, size=(3, 4), mode=mode, antialias=True)  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_antialias_errors():
    x = T(rand(2, 3, 6))
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic"):
        F.interpolate(x, size=3, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(T(rand(1, 1, 4, 4)), size=2, mode="nearest", antialias=True)
    with pytest.raises(NotImplementedError, match="upsample_bilinear2d_aa.*int64"):
        F.interpolate(T(rand(1, 1, 4, 4)).long(), size=2, mode="bilinear", antialias=True)
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
        F.interpolate(T(rand(1, 1, 4, 4)), size=(0, 2), mode="bicubic", antialias=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,kw", AA_CASES)
def test_torch_parity_interpolate_antialias(shape, kw, mode, align_corners, dtype):
    torch = pytest.importorskip("torch")
    tol = 1e-5 if dtype == np.float32 else 1e-10
    _parity(torch, lambda x: F.interpolate(x, mode=mode, align_corners=align_corners,
                                           antialias=True, **kw),
            lambda x: torch.nn.functional.interpolate(x, mode=mode, align_corners=align_corners,
                                                      antialias=True, **kw),
            rand(*shape, dtype=dtype), tol)
