"""Pooling (ember.nn.functional.max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d,
adaptive_max_pool1d/2d): forward and indices against NumPy references for every option,
dtypes, NaN, float64 gradcheck and gradgradcheck, PyTorch parity and errors."""

import nn_conv_refs as ref
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from opinfo import to_numpy

RNG = np.random.default_rng(99)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def T(a, requires_grad=False, dtype=None):
    t = ember.tensor(a, dtype=dtype)
    return t.requires_grad_(requires_grad) if requires_grad else t


def close(got, want, tol=1e-12):
    g = to_numpy(got)
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_allclose(g.astype(np.float64), want, rtol=tol, atol=tol)


# ---- max pooling ------------------------------------------------------------------------------

MAX_CASES = [
    # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    (3, 2, 1, 1, False),
    (3, 2, 1, 1, True),
    ((2, 3), (1, 2), (1, 1), 1, False),
    (2, 2, 1, 2, True),
    ((3, 2), 1, (1, 0), (2, 3), False),
    (3, 3, 0, 1, True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAX_CASES)
def test_max_pool2d_matches_numpy(kernel, stride, padding, dilation, ceil_mode, dtype):
    x = rand(2, 3, 9, 8, dtype=dtype)
    vals, idx = F.max_pool2d(T(x), kernel, stride, padding, dilation, ceil_mode,
                             return_indices=True)
    want_v, want_i = ref.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)
    close(vals, want_v)
    np.testing.assert_array_equal(to_numpy(idx), want_i)
    assert idx.dtype == ember.int64
    close(F.max_pool2d(T(x), kernel, stride, padding, dilation, ceil_mode), want_v)


def test_max_pool2d_unbatched_and_integers():
    x = rand(3, 6, 7)
    want_v, want_i = ref.max_pool2d(x[None], 2)
    v, i = F.max_pool2d(T(x), 2, return_indices=True)
    close(v, want_v[0])
    np.testing.assert_array_equal(to_numpy(i), want_i[0])
    xi = RNG.integers(-50, 50, (2, 2, 6, 6))
    for dtype in (ember.int64, ember.int32, ember.uint8, ember.int8):
        xt = T(xi if dtype != ember.uint8 else np.abs(xi), dtype=dtype)
        got = F.max_pool2d(xt, 3, 2, 1)
        assert got.dtype == dtype
        np.testing.assert_array_equal(to_numpy(got), ref.max_pool2d(to_numpy(xt), 3, 2, 1)[0])


def test_max_pool_nan_propagates():
    x = rand(1, 1, 4, 4)
    x[0, 0, 1, 2] = np.nan
    x[0, 0, 2, 0] = x[0, 0, 3, 1] = np.nan  # two NaNs in one window: the last one is reported
    for v, i in [F.max_pool2d(T(x), 2, return_indices=True),
                 F.adaptive_max_pool2d(T(x), 2, return_indices=True)]:
        assert np.isnan(to_numpy(v)[0, 0, 0, 1]) and np.isnan(to_numpy(v)[0, 0, 1, 0])
        assert to_numpy(i)[0, 0, 0, 1] == 1 * 4 + 2
        assert to_numpy(i)[0, 0, 1, 0] == 3 * 4 + 1
    want_v, want_i = ref.max_pool2d(x, 2)
    np.testing.assert_array_equal(to_numpy(F.max_pool2d(T(x), 2, return_indices=True)[1]), want_i)


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", [
    (2, None, 0, 1, False), (3, 2, 1, 1, True), (2, 1, 1, 2, False)])
def test_max_pool1d_matches_numpy(kernel, stride, padding, dilation, ceil_mode):
    x = rand(2, 3, 11)
    v, i = F.max_pool1d(T(x), kernel, stride, padding, dilation, ceil_mode, return_indices=True)
    s2 = None if stride is None else (1, stride)
    want_v, want_i = ref.max_pool2d(x[:, :, None], (1, kernel), s2, (0, padding),
                                    (1, dilation), ceil_mode)
    close(v, want_v[:, :, 0])
    np.testing.assert_array_equal(to_numpy(i), want_i[:, :, 0])
    close(F.max_pool1d(T(x[0]), kernel, stride, padding, dilation, ceil_mode), want_v[0, :, 0])
    vi = ember.max_pool1d_with_indices(T(x), kernel, [] if stride is None else stride, padding,
                                       dilation, ceil_mode)
    close(vi[0], want_v[:, :, 0])


def test_max_pool_empty_batch():
    assert tuple(F.max_pool2d(T(rand(0, 3, 6, 6)), 2).shape) == (0, 3, 3, 3)
    assert tuple(F.max_pool1d(T(rand(0, 3, 6)), 2).shape) == (0, 3, 3)


# ---- average pooling --------------------------------------------------------------------------

AVG_CASES = [
    # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None),
    (3, 2, 1, False, True, None),
    (3, 2, 1, False, False, None),
    (3, 2, 1, True, True, None),
    (3, 2, 1, True, False, None),
    ((2, 3), (2, 1), (1, 1), True, False, None),
    (3, 2, 1, False, True, 5),
    (2, 3, 1, True, False, 2),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", AVG_CASES)
def test_avg_pool2d_matches_numpy(kernel, stride, padding, ceil_mode, count_include_pad, divisor,
                                  dtype):
    x = rand(2, 3, 9, 8, dtype=dtype)
    got = F.avg_pool2d(T(x), kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    want = ref.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    close(got, want, 1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("ceil_mode,count_include_pad", [(False, True), (True, False)])
def test_avg_pool1d_matches_numpy(ceil_mode, count_include_pad):
    x = rand(2, 3, 10)
    got = F.avg_pool1d(T(x), 3, 2, 1, ceil_mode, count_include_pad)
    want = ref.avg_pool2d(x[:, :, None], (1, 3), (1, 2), (0, 1), ceil_mode, count_include_pad)
    close(got, want[:, :, 0])
    close(F.avg_pool1d(T(x[0]), 3, 2, 1, ceil_mode, count_include_pad), want[0, :, 0])


def test_avg_pool_integers_truncate():
    x = RNG.integers(-20, 20, (1, 2, 6, 6))
    got = F.avg_pool2d(T(x), 2)
    assert got.dtype == ember.int64
    sums = x.reshape(1, 2, 3, 2, 3, 2).sum((3, 5))
    np.testing.assert_array_equal(to_numpy(got), np.trunc(sums / 4).astype(np.int64))


# ---- adaptive pooling -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(3, 4), (1, 1), (9, 8), (5, 2), (12, 3)])
def test_adaptive_avg_pool2d_matches_numpy(size):
    x = rand(2, 3, 9, 8)
    close(F.adaptive_avg_pool2d(T(x), size), ref.adaptive_avg_pool2d(x, size))
    close(F.adaptive_avg_pool2d(T(x[0]), size), ref.adaptive_avg_pool2d(x[0], size))


def test_adaptive_pool_output_size_forms():
    x = rand(2, 3, 9, 8)
    close(F.adaptive_avg_pool2d(T(x), 4), ref.adaptive_avg_pool2d(x, (4, 4)))
    close(F.adaptive_avg_pool2d(T(x), (None, 3)), ref.adaptive_avg_pool2d(x, (9, 3)))
    close(F.adaptive_max_pool2d(T(x), (2, None)), ref.adaptive_max_pool2d(x, (2, 8))[0])
    assert tuple(F.adaptive_avg_pool2d(T(x), (0, 3)).shape) == (2, 3, 0, 3)


@pytest.mark.parametrize("size", [(3, 4), (1, 1), (9, 8), (4, 11)])
def test_adaptive_max_pool2d_matches_numpy(size):
    x = rand(2, 3, 9, 8)
    v, i = F.adaptive_max_pool2d(T(x), size, return_indices=True)
    want_v, want_i = ref.adaptive_max_pool2d(x, size)
    close(v, want_v)
    np.testing.assert_array_equal(to_numpy(i), want_i)


def test_adaptive_1d_matches_numpy():
    x = rand(2, 3, 10)
    close(F.adaptive_avg_pool1d(T(x), 4), ref.adaptive_avg_pool2d(x[:, :, None], (1, 4))[:, :, 0])
    v, i = F.adaptive_max_pool1d(T(x), 3, return_indices=True)
    want_v, want_i = ref.adaptive_max_pool2d(x[:, :, None], (1, 3))
    close(v, want_v[:, :, 0])
    np.testing.assert_array_equal(to_numpy(i), want_i[:, :, 0])
    close(F.adaptive_max_pool1d(T(x[0]), 3), want_v[0, :, 0])


@pytest.mark.parametrize("dtype,tol", [(ember.float16, 1e-2), (ember.bfloat16, 5e-2)])
def test_pooling_reduced_precision(dtype, tol):
    x = T(rand(2, 3, 8, 8), dtype=dtype)
    xr = to_numpy(x).astype(np.float64)
    for got, want in [
        (F.max_pool2d(x, 2), ref.max_pool2d(xr, 2)[0]),
        (F.avg_pool2d(x, 3, 2, 1), ref.avg_pool2d(xr, 3, 2, 1)),
        (F.adaptive_avg_pool2d(x, 3), ref.adaptive_avg_pool2d(xr, (3, 3))),
    ]:
        assert got.dtype == dtype
        close(got, want, tol)


# ---- gradients --------------------------------------------------------------------------------


def R(*shape):
    return T(rand(*shape), requires_grad=True)


GRAD_CASES = {
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 7, 6)),
    "max_pool2d_dilated": (lambda x: F.max_pool2d(x, 2, 1, 1, 2), (1, 2, 6, 6)),
    "max_pool2d_unbatched": (lambda x: F.max_pool2d(x, 2), (2, 4, 4)),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 8)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, True, False), (2, 3, 7, 6)),
    "avg_pool2d_divisor": (lambda x: F.avg_pool2d(x, 2, divisor_override=3), (2, 3, 6, 6)),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, 1, False, True), (2, 3, 7)),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 3, 7, 6)),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 4), (2, 3, 7)),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (3, 4)), (2, 3, 7, 6)),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3), (2, 3, 7)),
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
    x = R(2, 3, 6, 6)
    assert F.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.adaptive_avg_pool2d(x, 2).grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    assert F.adaptive_max_pool2d(x, 2).grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    assert F.max_pool1d(x[0], 2).grad_fn.name() == "SqueezeBackward1"
    v, i = F.max_pool2d(x, 2, return_indices=True)
    assert i.grad_fn is None and not i.requires_grad


def test_max_pool_gradient_goes_to_argmax():
    x = T(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    want = np.zeros((4, 4))
    want[1::2, 1::2] = 1
    close(x.grad, want[None, None])


# ---- errors -----------------------------------------------------------------------------------


def test_pooling_errors():
    x = T(rand(2, 3, 8, 8))
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size, "
                       "but got pad=2, kernel_size=3 and dilation=1"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.max_pool2d(x, 3, stride=0)
    with pytest.raises(RuntimeError, match=r"Given input size: \(3x8x8\). Calculated output size: "
                       r"\(3x0x0\). Output size is too small"):
        F.max_pool2d(x, 9)
    with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
        F.max_pool2d(x, 3, dilation=0)
    with pytest.raises(RuntimeError, match=r"non-empty 3D or 4D \(batch mode\) tensor expected"):
        F.max_pool2d(x[0, 0], 2)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor with optional "
                       r"0 dim batch size for input, but got:\[2, 0, 8, 8\]"):
        F.max_pool2d(x[:, :0], 2)
    with pytest.raises(RuntimeError, match="kernel_size must either be a single int, or a tuple "
                       "of two ints"):
        F.max_pool2d(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match=r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor"):
        F.max_pool1d(x, 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'bool'"):
        F.max_pool2d(x.bool(), 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.avg_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions, but got 4-dimensional "
                       r"tensor for argument #1 'self' \(while checking arguments for "
                       "avg_pool1d"):
        F.avg_pool1d(x, 2)
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, "
                       r"but got \[8, 8\]"):
        F.adaptive_avg_pool2d(x[0, 0], 2)
    with pytest.raises(RuntimeError, match="Expected input to have non-zero size for non-batch "
                       "dimensions"):
        F.adaptive_avg_pool2d(x[:, :0], 2)
    with pytest.raises(RuntimeError, match="elements of output_size must be greater than or equal "
                       "to 0"):
        F.adaptive_avg_pool2d(x, (-1, 3))
    with pytest.raises(NotImplementedError, match="not implemented for 'int64'"):
        F.adaptive_avg_pool2d(x.long(), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'int64'"):
        F.adaptive_max_pool2d(x.long(), 2)
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions"):
        F.adaptive_avg_pool1d(x, 2)
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        F.adaptive_avg_pool2d(T(rand(4)), (None, 2))


# ---- PyTorch parity -----------------------------------------------------------------------------


def _parity(torch, ef, tf, x, tol=1e-6, check_indices=False):
    ex = T(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    eo, to = ef(ex), tf(tx)
    if check_indices:
        np.testing.assert_array_equal(to_numpy(eo[1]), to[1].numpy())
        eo, to = eo[0], to[0]
    np.testing.assert_allclose(to_numpy(eo), to.detach().numpy(), rtol=tol, atol=tol)
    g = rand(*to.shape).astype(x.dtype)
    eo.backward(T(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(), rtol=tol, atol=tol)
    assert eo.grad_fn.name() == to.grad_fn.name()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAX_CASES)
def test_torch_parity_max_pool2d(kernel, stride, padding, dilation, ceil_mode, dtype):
    torch = pytest.importorskip("torch")
    args = (kernel, stride, padding, dilation, ceil_mode)
    _parity(torch, lambda x: F.max_pool2d(x, *args, return_indices=True),
            lambda x: torch.nn.functional.max_pool2d(x, *args, return_indices=True),
            rand(2, 3, 9, 8, dtype=dtype), check_indices=True)


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", AVG_CASES)
def test_torch_parity_avg_pool2d(kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    torch = pytest.importorskip("torch")
    args = (kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    _parity(torch, lambda x: F.avg_pool2d(x, *args),
            lambda x: torch.nn.functional.avg_pool2d(x, *args), rand(2, 3, 9, 8))


def test_torch_parity_1d_and_adaptive():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x1, x2 = rand(2, 3, 11), rand(2, 3, 9, 7)
    _parity(torch, lambda x: F.max_pool1d(x, 3, 2, 1, 1, True, True),
            lambda x: TF.max_pool1d(x, 3, 2, 1, 1, True, True), x1, check_indices=True)
    _parity(torch, lambda x: F.avg_pool1d(x, 3, 2, 1, True, False),
            lambda x: TF.avg_pool1d(x, 3, 2, 1, True, False), x1)
    _parity(torch, lambda x: F.adaptive_avg_pool1d(x, 4), lambda x: TF.adaptive_avg_pool1d(x, 4),
            x1)
    _parity(torch, lambda x: F.adaptive_max_pool1d(x, 4, True),
            lambda x: TF.adaptive_max_pool1d(x, 4, True), x1, check_indices=True)
    for size in [(4, 3), (2, None), 5]:
        _parity(torch, lambda x: F.adaptive_avg_pool2d(x, size),
                lambda x: TF.adaptive_avg_pool2d(x, size), x2)
        _parity(torch, lambda x: F.adaptive_max_pool2d(x, size, True),
                lambda x: TF.adaptive_max_pool2d(x, size, True), x2, check_indices=True)


def test_torch_parity_double_backward_max_pool():
    torch = pytest.importorskip("torch")
    x = rand(2, 2, 6, 6)
    ex, tx = T(x, True), torch.tensor(x, requires_grad=True)
    (eg,) = ember.autograd.grad(F.max_pool2d(ex, 2).pow(2).sum(), [ex], create_graph=True)
    (tg,) = torch.autograd.grad(torch.nn.functional.max_pool2d(tx, 2).pow(2).sum(), [tx],
                                create_graph=True)
    assert eg.grad_fn.name() == tg.grad_fn.name()
    (eg * eg).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_max_pool_kernel_far_larger_than_the_input_ends_at_once():
    # kernel_size 2^63 - 1 with ceil_mode still gives one output; only the taps inside the
    # input are visited (a fuzzer-found hang).
    m = ember.nn.MaxPool2d((2**63 - 1, 3), ceil_mode=True)
    out = m(ember.tensor([[[-0.762]]], dtype=ember.float64))
    assert out.tolist() == [[[-0.762]]]
