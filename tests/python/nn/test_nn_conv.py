"""Linear layers and convolutions (ember.nn.functional.linear / bilinear / conv1d / conv2d /
conv_transpose1d / conv_transpose2d / unfold / fold): forward against NumPy references for
every option family and dtype, float64 gradcheck and gradgradcheck, parity with PyTorch
(values, gradients, node names) and the errors PyTorch raises."""

import nn_conv_refs as ref
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from opinfo import to_numpy

RNG = np.random.default_rng(1234)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def T(a, requires_grad=False, dtype=None):
    t = ember.tensor(a, dtype=dtype)
    return t.requires_grad_(requires_grad) if requires_grad else t


def close(got, want, rtol=1e-10, atol=1e-10):
    g = to_numpy(got)
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_allclose(g.astype(np.float64) if g.dtype.kind != "c" else g, want,
                               rtol=rtol, atol=atol)


# ---- conv2d / conv1d forward ----------------------------------------------------------------

CONV2D_CASES = [
    # stride, padding, dilation, groups, input (N, C, H, W), kernel (kh, kw), out channels
    (1, 0, 1, 1, (2, 3, 7, 6), (3, 3), 4),
    (1, 1, 1, 1, (2, 3, 7, 6), (3, 3), 4),
    (2, 1, 1, 1, (2, 3, 9, 8), (3, 3), 5),
    ((2, 1), (1, 0), (1, 2), 1, (1, 2, 8, 9), (3, 2), 3),
    (1, 2, 2, 1, (2, 3, 7, 7), (3, 3), 2),
    (1, 1, 1, 3, (2, 6, 5, 5), (3, 3), 9),
    (2, 0, 1, 2, (3, 4, 8, 7), (2, 2), 4),
    (3, 2, (2, 1), 1, (1, 1, 11, 10), (4, 3), 2),
    (1, 0, 1, 1, (2, 3, 4, 5), (1, 1), 6),
    (1, 0, 1, 1, (2, 3, 3, 3), (3, 3), 2),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride,padding,dilation,groups,shape,kernel,oc", CONV2D_CASES)
def test_conv2d_matches_numpy(stride, padding, dilation, groups, shape, kernel, oc, dtype):
    x, w, b = rand(*shape, dtype=dtype), rand(oc, shape[1] // groups, *kernel, dtype=dtype), rand(
        oc, dtype=dtype)
    got = F.conv2d(T(x), T(w), T(b), stride, padding, dilation, groups)
    want = ref.conv_nd(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride,
                       padding, dilation, groups)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    close(got, want, tol, tol)
    assert got.dtype == (ember.float32 if dtype == np.float32 else ember.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), (1, 3, 2, 1), (3, 0, 1, 2), (1, 1, 1, 4)])
def test_conv1d_matches_numpy(stride, padding, dilation, groups, dtype):
    x, w = rand(2, 4, 11, dtype=dtype), rand(8, 4 // groups, 3, dtype=dtype)
    b = rand(8, dtype=dtype)
    got = F.conv1d(T(x), T(w), T(b), stride, padding, dilation, groups)
    want = ref.conv_nd(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride,
                       padding, dilation, groups)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    close(got, want, tol, tol)


def test_conv_without_bias_and_positional_forms():
    x, w = rand(2, 3, 6, 6), rand(4, 3, 3, 3)
    close(F.conv2d(T(x), T(w)), ref.conv_nd(x, w))
    close(ember.conv2d(T(x), T(w), None, 1, 1), ref.conv_nd(x, w, padding=1))
    close(F.conv2d(T(x), T(w), padding=(1, 2), stride=[2, 1]),
          ref.conv_nd(x, w, padding=(1, 2), stride=(2, 1)))


def test_conv_unbatched_inputs():
    x, w, b = rand(3, 6, 7), rand(4, 3, 3, 2), rand(4)
    got = F.conv2d(T(x), T(w), T(b), padding=1)
    close(got, ref.conv_nd(x[None], w, b, padding=1)[0])
    x1, w1 = rand(3, 9), rand(5, 3, 4)
    close(F.conv1d(T(x1), T(w1), stride=2), ref.conv_nd(x1[None], w1, stride=2)[0])
    wt = rand(3, 2, 3, 3)
    close(F.conv_transpose2d(T(x), T(wt), stride=2),
          ref.conv_transpose_nd(x[None], wt, stride=2)[0])


@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("kernel", [(3, 3), (2, 4), (1, 5)])
def test_conv2d_padding_same_and_valid(kernel, dilation):
    x, w = rand(2, 3, 9, 10), rand(4, 3, *kernel)
    got = F.conv2d(T(x), T(w), padding="same", dilation=dilation)
    assert tuple(got.shape) == (2, 4, 9, 10)
    # 'same' pads dil * (k - 1) in total, the extra element of an odd total on the far side.
    pads = []
    for k in kernel:
        total = dilation * (k - 1)
        pads.append((total // 2, total - total // 2))
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    close(got, ref.conv_nd(xp, w, dilation=dilation))
    close(F.conv2d(T(x), T(w), padding="valid", dilation=dilation),
          ref.conv_nd(x, w, dilation=dilation))


def test_conv1d_padding_same_even_kernel():
    x, w = rand(2, 3, 9), rand(4, 3, 4)
    got = F.conv1d(T(x), T(w), padding="same")
    close(got, ref.conv_nd(np.pad(x, [(0, 0), (0, 0), (1, 2)]), w))


# ---- transposed convolutions ----------------------------------------------------------------

CONVT_CASES = [
    # stride, padding, output_padding, groups, dilation
    (1, 0, 0, 1, 1),
    (2, 0, 0, 1, 1),
    (2, 1, 1, 1, 1),
    ((2, 3), (1, 0), (1, 2), 1, 1),
    (2, 1, 0, 2, 2),
    (1, 0, 1, 1, 2),  # output_padding >= stride is allowed below the dilation
    (3, 2, 2, 3, (1, 2)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", CONVT_CASES)
def test_conv_transpose2d_matches_numpy(stride, padding, output_padding, groups, dilation, dtype):
    x = rand(2, 6, 5, 4, dtype=dtype)
    w = rand(6, 2, 3, 2, dtype=dtype)
    b = rand(2 * groups, dtype=dtype)
    got = F.conv_transpose2d(T(x), T(w), T(b), stride, padding, output_padding, groups, dilation)
    want = ref.conv_transpose_nd(x.astype(np.float64), w.astype(np.float64),
                                 b.astype(np.float64), stride, padding, output_padding, groups,
                                 dilation)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    close(got, want, tol, tol)


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", [
    (1, 0, 0, 1, 1), (3, 1, 2, 1, 1), (2, 2, 1, 2, 3)])
def test_conv_transpose1d_matches_numpy(stride, padding, output_padding, groups, dilation):
    x, w, b = rand(2, 4, 6), rand(4, 3, 4), rand(3 * groups)
    got = F.conv_transpose1d(T(x), T(w), T(b), stride, padding, output_padding, groups, dilation)
    close(got, ref.conv_transpose_nd(x, w, b, stride, padding, output_padding, groups, dilation))


def test_conv_transpose_padding_limits():
    x, w = rand(1, 2, 3, 3), rand(2, 2, 3, 3)
    close(F.conv_transpose2d(T(x), T(w), padding=2), ref.conv_transpose_nd(x, w, padding=2))
    with pytest.raises(RuntimeError, match=r"Given input size per channel: \(2 x 3\). Calculated "
                       r"output size per channel: \(0 x 3\). Output size is too small"):
        F.conv_transpose2d(T(x[:, :, :2]), T(w), padding=(2, 1))


# ---- dtypes and empty tensors ---------------------------------------------------------------


@pytest.mark.parametrize("dtype,tol", [(ember.float16, 2e-2), (ember.bfloat16, 6e-2)])
def test_conv_reduced_precision(dtype, tol):
    x, w, b = rand(2, 3, 6, 6), rand(4, 3, 3, 3) * 0.3, rand(4)
    got = F.conv2d(T(x, dtype=dtype), T(w, dtype=dtype), T(b, dtype=dtype), padding=1)
    assert got.dtype == dtype
    xr = to_numpy(T(x, dtype=dtype)).astype(np.float64)
    wr = to_numpy(T(w, dtype=dtype)).astype(np.float64)
    br = to_numpy(T(b, dtype=dtype)).astype(np.float64)
    close(got, ref.conv_nd(xr, wr, br, padding=1), tol, tol)
    gt = F.conv_transpose2d(T(x, dtype=dtype), T(w, dtype=dtype).transpose(0, 1), stride=2)
    close(gt, ref.conv_transpose_nd(xr, wr.transpose(1, 0, 2, 3), stride=2), tol, tol)


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.uint8])
def test_conv_integer_dtypes(dtype):
    x = RNG.integers(0, 5, (2, 3, 5, 5))
    w = RNG.integers(0, 3, (4, 3, 2, 2))
    got = F.conv2d(T(x, dtype=dtype), T(w, dtype=dtype), stride=1, padding=1)
    assert got.dtype == dtype
    want = ref.conv_nd(x, w, padding=1)
    np.testing.assert_array_equal(to_numpy(got), want.astype(to_numpy(got).dtype))


def test_conv_complex():
    x = rand(2, 2, 5, 5) + 1j * rand(2, 2, 5, 5)
    w = rand(3, 2, 3, 3) + 1j * rand(3, 2, 3, 3)
    close(F.conv2d(T(x), T(w), padding=1), ref.conv_nd(x, w, padding=1))


def test_conv_empty_batch_and_channels():
    w, b = rand(4, 3, 3, 3), rand(4)
    out = F.conv2d(T(rand(0, 3, 6, 6)), T(w), T(b))
    assert tuple(out.shape) == (0, 4, 4, 4)
    out = F.conv2d(T(rand(2, 0, 6, 6)), T(rand(4, 0, 3, 3)), T(b))
    assert tuple(out.shape) == (2, 4, 4, 4)
    close(out, np.broadcast_to(b.reshape(1, 4, 1, 1), (2, 4, 4, 4)))


def test_conv_non_contiguous_inputs():
    x = rand(2, 6, 8, 8)
    w = rand(3, 3, 3, 3)
    xt = T(x)[:, ::2].transpose(2, 3)
    wt = T(w).transpose(2, 3)
    want = ref.conv_nd(x[:, ::2].transpose(0, 1, 3, 2), w.transpose(0, 1, 3, 2))
    close(F.conv2d(xt, wt), want)
    close(F.conv2d(xt.float(), wt.float()), want, 1e-4, 1e-4)


def test_float32_fast_path_matches_float64_fallback():
    x, w, b = rand(4, 8, 12, 12), rand(16, 8, 3, 3), rand(16)
    f32 = F.conv2d(T(x).float(), T(w).float(), T(b).float(), stride=2, padding=1)
    f64 = F.conv2d(T(x), T(w), T(b), stride=2, padding=1)
    close(f32, to_numpy(f64), 1e-4, 1e-4)


# ---- linear / bilinear ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5), (0, 5), (2, 0, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_numpy(shape, bias):
    x, w, b = rand(*shape), rand(3, 5), rand(3)
    got = F.linear(T(x), T(w), T(b) if bias else None)
    close(got, x @ w.T + (b if bias else 0))


def test_linear_float32():
    x, w, b = rand(6, 5, dtype=np.float32), rand(3, 5, dtype=np.float32), rand(3, dtype=np.float32)
    close(F.linear(T(x), T(w), T(b)), x @ w.T + b, 1e-5, 1e-5)
    close(F.linear(T(x), T(w)), x @ w.T, 1e-5, 1e-5)


def test_linear_weight_vector_matches_numpy():
    x, v, b = rand(4, 5), rand(5), rand(1)
    close(F.linear(T(x), T(v)), x @ v)
    close(F.linear(T(x), T(v), T(b)), x @ v + b)


def test_bilinear_matches_numpy():
    x1, x2, w, b = rand(2, 4, 3), rand(2, 4, 5), rand(6, 3, 5), rand(6)
    want = np.einsum("...i,oij,...j->...o", x1, w, x2) + b
    close(F.bilinear(T(x1), T(x2), T(w), T(b)), want)
    close(ember.bilinear(T(x1[0, 0]), T(x2[0, 0]), T(w)), want[0, 0] - b)


# ---- unfold / fold --------------------------------------------------------------------------


@pytest.mark.parametrize("k,d,p,s", [(2, 1, 0, 1), ((2, 3), 2, 1, (2, 1)), (3, 1, 1, 2)])
def test_unfold_fold_match_numpy(k, d, p, s):
    x = rand(2, 3, 7, 8)
    cols = F.unfold(T(x), k, d, p, s)
    close(cols, ref.unfold(x, k, d, p, s))
    back = F.fold(T(to_numpy(cols)), (7, 8), k, d, p, s)
    close(back, ref.fold(to_numpy(cols), (7, 8), k, d, p, s))
    close(F.unfold(T(x[0]), k, d, p, s), ref.unfold(x[:1], k, d, p, s)[0])
    close(F.fold(T(to_numpy(cols)[0]), (7, 8), k, d, p, s),
          ref.fold(to_numpy(cols)[:1], (7, 8), k, d, p, s)[0])


# ---- gradients ------------------------------------------------------------------------------


def R(*shape):
    return T(rand(*shape), requires_grad=True)


GRAD_CASES = {
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2)),
               lambda: (R(2, 3, 6, 7), R(4, 3, 3, 2), R(4))),
    "conv2d_groups": (lambda x, w, b: F.conv2d(x, w, b, groups=2),
                      lambda: (R(2, 4, 5, 5), R(4, 2, 3, 3), R(4))),
    "conv2d_same": (lambda x, w: F.conv2d(x, w, padding="same"),
                    lambda: (R(1, 2, 5, 4), R(3, 2, 2, 3))),
    "conv2d_unbatched": (lambda x, w: F.conv2d(x, w), lambda: (R(2, 4, 4), R(3, 2, 2, 2))),
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2),
               lambda: (R(2, 3, 9), R(4, 3, 3), R(4))),
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                           groups=2),
        lambda: (R(2, 4, 4, 3), R(4, 3, 3, 3), R(6))),
    "conv_transpose2d_dilated": (
        lambda x, w: F.conv_transpose2d(x, w, stride=(1, 2), output_padding=(1, 0), dilation=2),
        lambda: (R(1, 2, 3, 3), R(2, 3, 2, 2))),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1),
                         lambda: (R(2, 3, 4), R(3, 2, 3), R(2))),
    "linear": (lambda x, w, b: F.linear(x, w, b), lambda: (R(2, 3, 4), R(5, 4), R(5))),
    "linear_1d": (lambda x, w: F.linear(x, w), lambda: (R(4), R(3, 4))),
    "bilinear": (lambda a, c, w, b: F.bilinear(a, c, w, b),
                 lambda: (R(3, 2), R(3, 4), R(5, 2, 4), R(5))),
    "unfold": (lambda x: F.unfold(x, (2, 3), padding=1, stride=2), lambda: (R(2, 3, 5, 6),)),
    "fold": (lambda x: F.fold(x, (4, 5), 2), lambda: (R(2, 8, 12),)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradcheck(name):
    fn, make = GRAD_CASES[name]
    assert gradcheck(fn, make())


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradgradcheck(name):
    fn, make = GRAD_CASES[name]
    assert gradgradcheck(fn, make())


def test_gradcheck_complex_conv():
    def c(*shape):
        return T(rand(*shape) + 1j * rand(*shape), requires_grad=True)

    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1), (c(1, 2, 4, 4), c(3, 2, 3, 3),
                                                                    c(3)))
    assert gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2), (c(1, 2, 3, 3),
                                                                      c(2, 2, 2, 2)))


def test_grad_only_for_inputs_that_need_it():
    x, w = T(rand(2, 3, 5, 5)), R(4, 3, 3, 3)
    F.conv2d(x, w).sum().backward()
    assert x.grad is None and w.grad is not None
    close(w.grad, ref.conv_nd(np.swapaxes(to_numpy(x), 0, 1),
                              np.swapaxes(np.ones((2, 4, 3, 3)), 0, 1)).swapaxes(0, 1))


def test_node_names():
    x, w, b = R(2, 3, 5, 5), R(4, 3, 3, 3), R(4)
    assert F.conv2d(x, w, b).grad_fn.name() == "ConvolutionBackward0"
    assert F.conv2d(x[0], w).grad_fn.name() == "SqueezeBackward1"
    assert F.linear(R(2, 3), R(4, 3)).grad_fn.name() == "LinearBackward0"
    assert F.unfold(x, 2).grad_fn.name() == "Im2ColBackward0"
    with ember.no_grad():
        assert F.conv2d(x, w, b).grad_fn is None


# ---- errors (class and message) ---------------------------------------------------------------


def test_conv_errors():
    x, w = T(rand(2, 3, 8, 8)), T(rand(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                       r"to conv2d, but got input of size: \[8, 8\]"):
        F.conv2d(x[0, 0], w)
    with pytest.raises(RuntimeError, match=r"Expected 2D \(unbatched\) or 3D \(batched\) input "
                       r"to conv1d"):
        F.conv1d(x, w)
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[4, 2, 3, 3\], "
                       r"expected input\[2, 3, 8, 8\] to have 2 channels, but got 3 channels"):
        F.conv2d(x, w[:, :2])
    with pytest.raises(RuntimeError, match=r"expected bias to be 1-dimensional with 4 elements, "
                       r"but got bias of size \[3\]"):
        F.conv2d(x, w, T(rand(3)))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(RuntimeError, match="Invalid padding string: 'foo'"):
        F.conv2d(x, w, padding="foo")
    with pytest.raises(RuntimeError, match=r"expected padding to be a single integer value or a "
                       r"list of 2 values to match the convolution dimensions, but got "
                       r"padding=\[1, 2, 3\]"):
        F.conv2d(x, w, padding=(1, 2, 3))
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv2d(x, w, stride=0)
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        F.conv2d(x, w, padding=-1)
    with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
        F.conv2d(x, w, dilation=0)
    with pytest.raises(RuntimeError, match="non-positive groups is not supported"):
        F.conv2d(x, w, groups=0)
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 2 at dimension 0"):
        F.conv2d(x, T(rand(3, 1, 3, 3)), groups=2)
    with pytest.raises(RuntimeError, match="expected weight to be at least 3 at dimension 0"):
        F.conv2d(x, T(rand(1, 1, 3, 3)), groups=3)
    with pytest.raises(RuntimeError, match=r"Calculated padded input size per channel: \(2 x 2\). "
                       r"Kernel size: \(3 x 3\). Kernel size can't be greater than actual input"):
        F.conv2d(x[:, :, :2, :2], w)
    with pytest.raises(RuntimeError, match="Only zero batch or zero channel inputs are supported"):
        F.conv2d(x[:, :, :0], w, padding=2)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.conv2d(x.double(), w.float())
    with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\) "
                       "should be the same"):
        F.conv2d(x.float(), w.float(), T(rand(4)))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        F.conv2d(x.bool(), w.bool())
    with pytest.raises(RuntimeError, match=r"Expected 3-dimensional input for 3-dimensional "
                       r"weight \[3, 3, 3\], but got 4-dimensional input of size \[2, 3, 8, 8\]"):
        F.conv2d(x, w[0])
    with pytest.raises(TypeError):
        F.conv2d(x, w, stride=1.5)


def test_conv_transpose_errors():
    x = T(rand(2, 3, 8, 8))
    with pytest.raises(RuntimeError, match=r"Given transposed=1, weight of size \[4, 3, 3, 3\], "
                       r"expected input\[2, 3, 8, 8\] to have 4 channels, but got 3 channels"):
        F.conv_transpose2d(x, T(rand(4, 3, 3, 3)))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or "
                       "dilation"):
        F.conv_transpose2d(x, T(rand(3, 2, 3, 3)), output_padding=1)
    with pytest.raises(RuntimeError, match="negative output_padding is not supported"):
        F.conv_transpose2d(x, T(rand(3, 2, 3, 3)), output_padding=-1)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 2 elements"):
        F.conv_transpose2d(x, T(rand(3, 2, 3, 3)), T(rand(3)))
    with pytest.raises(TypeError, match="argument 'padding' must be tuple of ints, not str"):
        F.conv_transpose2d(x, T(rand(3, 2, 3, 3)), padding="same")
    with pytest.raises(RuntimeError, match=r"Calculated output size per channel: \(-2 x -2\)"):
        F.conv_transpose2d(x, T(rand(3, 2, 3, 3)), padding=6)


def test_linear_and_bilinear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                       r"\(48x8 and 27x4\)"):
        F.linear(T(rand(2, 3, 8, 8)), T(rand(4, 27)))
    with pytest.raises(RuntimeError, match="both arguments to linear need to be at least 1D"):
        F.linear(T(np.array(1.0)), T(rand(2, 3)))
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        F.linear(T(rand(3)), T(rand(2, 3, 4)))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        F.linear(T(rand(3)), T(rand(2, 3)).float())
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but "
                       "expected 5"):
        F.bilinear(T(rand(5, 3)), T(rand(5, 4)), T(rand(6, 5, 4)))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match"):
        F.bilinear(T(rand(5, 3)), T(rand(4, 4)), T(rand(6, 3, 4)))
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 5 but "
                       "expected 6"):
        F.bilinear(T(rand(5, 3)), T(rand(5, 4)), T(rand(6, 3, 4)), T(rand(5)))
    with pytest.raises(RuntimeError, match="input dimensions do not match: got 2 and 3"):
        F.bilinear(T(rand(5, 3)), T(rand(5, 5, 4)), T(rand(6, 3, 4)))


def test_fold_errors():
    x = T(rand(2, 3, 8, 8))
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        F.unfold(x, (0, 2))
    with pytest.raises(RuntimeError, match=r"calculated shape of the array of sliding blocks as "
                       r"\(0, 0\)"):
        F.unfold(x, 9)
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        F.unfold(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="padding should be non-negative"):
        F.unfold(x, 2, padding=-1)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor"):
        F.unfold(x[0, 0], 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'int64'"):
        F.unfold(x.long(), 2)
    with pytest.raises(RuntimeError, match="calculated number of sliding blocks 3 \\* 3 = 9, but "
                       "got input.size\\(2\\)=8"):
        F.fold(T(rand(2, 12, 8)), 4, 2)
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(T(rand(2, 13, 9)), 4, 2)
    with pytest.raises(RuntimeError, match=r"Expected 2D or 3D \(batch mode\) tensor"):
        F.fold(T(rand(12)), 4, 2)
    with pytest.raises(RuntimeError, match="expected output_size equals to 2, but got size 3"):
        F.fold(T(rand(2, 12, 9)), (4, 4, 4), 2)


def test_top_level_aliases():
    for name in ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "convolution",
                 "bilinear", "max_pool1d", "max_pool2d", "avg_pool1d", "adaptive_avg_pool1d",
                 "adaptive_max_pool1d", "pixel_shuffle", "pixel_unshuffle", "constant_pad_nd",
                 "max_pool1d_with_indices"]:
        assert callable(getattr(ember, name)), name
    for name in ["linear", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pad",
                 "im2col", "col2im", "upsample_bilinear2d", "upsample_nearest2d"]:
        assert callable(getattr(ember._C._nn, name)), name
    assert F.conv2d is ember.conv2d
    x, w = T(rand(1, 2, 5, 5)), T(rand(3, 2, 3, 3))
    close(ember.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
          ref.conv_nd(to_numpy(x), to_numpy(w), padding=1))


# ---- PyTorch parity ---------------------------------------------------------------------------


def _torch_pair(torch, arrays, requires_grad=True):
    es = [T(a, requires_grad=requires_grad) for a in arrays]
    ts = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return es, ts


def _parity(torch, ef, tf, arrays, tol):
    es, ts = _torch_pair(torch, arrays)
    eo, to = ef(*es), tf(*ts)
    np.testing.assert_allclose(to_numpy(eo), to.detach().numpy(), rtol=tol, atol=tol)
    g = rand(*to.shape).astype(arrays[0].dtype)
    eo.backward(T(g))
    to.backward(torch.tensor(g))
    for e, t in zip(es, ts):
        np.testing.assert_allclose(to_numpy(e.grad), t.grad.numpy(), rtol=tol, atol=tol)
    assert eo.grad_fn.name() in (to.grad_fn.name(), "LinearBackward0")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 1, 1, 1), (2, 0, 1, 1), (1, 2, 2, 2), ((2, 1), (0, 1), (2, 1), 1)])
def test_torch_parity_conv2d(stride, padding, dilation, groups, dtype):
    torch = pytest.importorskip("torch")
    arrays = [rand(3, 4, 9, 8, dtype=dtype), rand(6, 4 // groups, 3, 3, dtype=dtype),
              rand(6, dtype=dtype)]
    tol = 1e-4 if dtype == np.float32 else 1e-10
    _parity(torch, lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups),
            lambda x, w, b: torch.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups),
            arrays, tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", CONVT_CASES[:5])
def test_torch_parity_conv_transpose2d(stride, padding, output_padding, groups, dilation, dtype):
    torch = pytest.importorskip("torch")
    arrays = [rand(2, 6, 5, 4, dtype=dtype), rand(6, 2, 3, 2, dtype=dtype),
              rand(2 * groups, dtype=dtype)]
    tol = 1e-4 if dtype == np.float32 else 1e-10
    args = (stride, padding, output_padding, groups, dilation)
    _parity(torch, lambda x, w, b: F.conv_transpose2d(x, w, b, *args),
            lambda x, w, b: torch.nn.functional.conv_transpose2d(x, w, b, *args), arrays, tol)


def test_torch_parity_conv1d_and_transpose1d():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    _parity(torch, lambda x, w: F.conv1d(x, w, padding="same", dilation=3),
            lambda x, w: TF.conv1d(x, w, padding="same", dilation=3),
            [rand(2, 3, 10), rand(5, 3, 4)], 1e-10)
    _parity(torch, lambda x, w, b: F.conv_transpose1d(x, w, b, 2, 1, 1),
            lambda x, w, b: TF.conv_transpose1d(x, w, b, 2, 1, 1),
            [rand(2, 3, 10), rand(3, 5, 4), rand(5)], 1e-10)


@pytest.mark.parametrize("shape", [(7,), (4, 7), (2, 3, 7)])
def test_torch_parity_linear(shape):
    torch = pytest.importorskip("torch")
    _parity(torch, F.linear, torch.nn.functional.linear,
            [rand(*shape, dtype=np.float32), rand(5, 7, dtype=np.float32),
             rand(5, dtype=np.float32)], 1e-5)


def test_torch_parity_bilinear_unfold_fold():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    _parity(torch, F.bilinear, TF.bilinear, [rand(4, 3), rand(4, 2), rand(5, 3, 2), rand(5)],
            1e-10)
    _parity(torch, lambda x: F.unfold(x, 3, 2, 1, 2), lambda x: TF.unfold(x, 3, 2, 1, 2),
            [rand(2, 3, 9, 8)], 1e-10)
    _parity(torch, lambda x: F.fold(x, (5, 6), 2, 1, 1, 2),
            lambda x: TF.fold(x, (5, 6), 2, 1, 1, 2), [rand(2, 8, 12)], 1e-10)


def test_torch_parity_double_backward_conv():
    torch = pytest.importorskip("torch")
    x, w = rand(2, 3, 6, 6), rand(4, 3, 3, 3)
    ex, ew = T(x, True), T(w, True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (egx,) = ember.autograd.grad(F.conv2d(ex, ew, stride=2).pow(2).sum(), [ex], create_graph=True)
    (tgx,) = torch.autograd.grad(torch.nn.functional.conv2d(tx, tw, stride=2).pow(2).sum(), [tx],
                                 create_graph=True)
    egx.sum().backward()
    tgx.sum().backward()
    np.testing.assert_allclose(to_numpy(ew.grad), tw.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_conv_from_several_python_threads():
    # Cached oneDNN plans run concurrently (the bindings release the GIL): results must match.
    import threading

    x, w = T(rand(8, 16, 12, 12, dtype=np.float32)), T(rand(32, 16, 3, 3, dtype=np.float32))
    want = to_numpy(F.conv2d(x, w, padding=1))
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(to_numpy(F.conv2d(x, w, padding=1)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 20
    for r in results:
        np.testing.assert_array_equal(r, want)
