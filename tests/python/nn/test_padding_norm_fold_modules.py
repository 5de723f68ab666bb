"""The padding layers (Zero/Constant/Reflection/Replication/CircularPad 1d-3d), InstanceNorm1d-3d,
Fold / Unfold, ChannelShuffle and LocalResponseNorm (with F.channel_shuffle and
F.local_response_norm): NumPy references over batched and unbatched inputs, running
statistics, float64 gradcheck, errors, and parity with PyTorch's modules where it is installed.
"""

import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def et(a, requires_grad=False):
    return ember.tensor(np.asarray(a)).requires_grad_(requires_grad)


def npy(t):
    return t.detach().numpy()


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


# ---- padding ---------------------------------------------------------------------------------

# (layer prefix, np.pad mode, extra constructor args)
PAD_KINDS = [
    ("Zero", "constant", ()),
    ("Constant", "constant", (2.5,)),
    ("Reflection", "reflect", ()),
    ("Replication", "edge", ()),
    ("Circular", "wrap", ()),
]
# Asymmetric paddings in F.pad's order (last dim first), each smaller than the spatial sizes.
ASYM_PAD = {1: (2, 1), 2: (1, 2, 0, 3), 3: (1, 0, 2, 1, 0, 2)}
SPATIAL = {1: (5,), 2: (4, 5), 3: (4, 5, 6)}


def np_pad(x, padding, mode, value=0.0):
    """np.pad with F.pad's padding order: (last-dim left, right, second-last left, right, ...)."""
    n = len(padding) // 2
    width = [(0, 0)] * (x.ndim - n) + [
        (padding[2 * i], padding[2 * i + 1]) for i in reversed(range(n))
    ]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode=mode)


def pad_layer(prefix, nd, padding, extra=()):
    return getattr(nn, f"{prefix}Pad{nd}d")(padding, *extra)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("prefix,np_mode,extra", PAD_KINDS)
def test_padding_matches_numpy(prefix, np_mode, extra, nd, batched, dtype):
    shape = ((2, 3) if batched else (3,)) + SPATIAL[nd]
    x = rand(*shape, seed=nd, dtype=dtype)
    layer = pad_layer(prefix, nd, ASYM_PAD[nd], extra)
    y = layer(et(x))
    expected = np_pad(x, ASYM_PAD[nd], np_mode, *extra)
    assert y.dtype == et(x).dtype
    assert tuple(y.shape) == expected.shape
    np.testing.assert_array_equal(npy(y), expected.astype(dtype))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("prefix,np_mode,extra", PAD_KINDS)
def test_int_padding_pads_every_side(prefix, np_mode, extra, nd):
    layer = pad_layer(prefix, nd, 2, extra)
    # PyTorch's _ntuple: an int becomes 2 * nd equal values, a tuple is kept as a tuple.
    assert layer.padding == (2,) * (2 * nd)
    x = rand(1, 2, *SPATIAL[nd], seed=3)
    np.testing.assert_array_equal(npy(layer(et(x))), np_pad(x, (2,) * (2 * nd), np_mode, *extra))


def test_padding_list_is_stored_as_tuple_and_repr():
    assert nn.CircularPad2d([1, 2, 3, 4]).padding == (1, 2, 3, 4)
    assert repr(nn.ZeroPad1d(2)) == "ZeroPad1d((2, 2))"
    assert repr(nn.ZeroPad2d((1, 0, 2, 3))) == "ZeroPad2d((1, 0, 2, 3))"
    assert repr(nn.ConstantPad1d((1, 2), 3.5)) == "ConstantPad1d(padding=(1, 2), value=3.5)"
    assert repr(nn.ConstantPad3d(1, 0)) == (
        "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0)")
    assert repr(nn.ReflectionPad3d(1)) == "ReflectionPad3d((1, 1, 1, 1, 1, 1))"
    assert repr(nn.ReplicationPad1d((0, 3))) == "ReplicationPad1d((0, 3))"
    assert repr(nn.CircularPad2d(1)) == "CircularPad2d((1, 1, 1, 1))"
    zero = nn.ZeroPad3d(1)
    assert isinstance(zero, nn.ConstantPad3d) and zero.value == 0.0
    # No parameters or buffers: nothing in the state_dict.
    assert list(zero.state_dict().keys()) == [] and list(zero.parameters()) == []


def test_constant_pad_negative_padding_crops():
    x = rand(2, 3, 5, 6)
    y = nn.ConstantPad2d((-1, 2, 1, -2), 1.5)(et(x))
    expected = np.pad(x[:, :, :-2, 1:], [(0, 0), (0, 0), (1, 0), (0, 2)], constant_values=1.5)
    np.testing.assert_array_equal(npy(y), expected)


def test_constant_pad1d_pads_the_last_dim_of_any_rank():
    # Constant padding has no rank limit (F.pad's constant mode), unlike the other modes.
    x = rand(2, 3, 4, 5)
    np.testing.assert_array_equal(npy(nn.ConstantPad1d(1, -1.0)(et(x))),
                                  np_pad(x, (1, 1), "constant", -1.0))


def test_circular_negative_padding_wraps_the_cropped_range():
    x = rand(2, 7)
    y = nn.CircularPad1d((-2, 3))(et(x))
    # Crop two on the left, then wrap three on the right around what is left.
    np.testing.assert_array_equal(npy(y), np.pad(x[:, 2:], [(0, 0), (0, 3)], mode="wrap"))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("prefix", ["Constant", "Reflection", "Replication", "Circular"])
def test_padding_gradcheck(prefix, nd):
    extra = (0.5,) if prefix == "Constant" else ()
    layer = pad_layer(prefix, nd, ASYM_PAD[nd], extra)
    # Small inputs (gradcheck is one backward per output element), each dim > its padding.
    spatial = (3, 3, 3) if nd == 3 else (4,) * nd
    x = et(rand(1, 2, *spatial, seed=5), requires_grad=True)
    assert gradcheck(layer, (x,))


def test_padding_gradient_sums_over_reused_inputs():
    # Replicate padding by 2 on each side: each edge value appears 3 times in the output.
    x = et(rand(1, 1, 4), requires_grad=True)
    nn.ReplicationPad1d(2)(x).sum().backward()
    np.testing.assert_array_equal(npy(x.grad), [[[3.0, 1.0, 1.0, 3.0]]])


@pytest.mark.parametrize(
    "make,shape,exc,match",
    [
        (lambda: nn.ReflectionPad1d(4), (2, 3, 4), RuntimeError,
         "Padding size should be less than the corresponding input dimension"),
        (lambda: nn.ReflectionPad2d((1, 1, 3, 0)), (1, 3, 3), RuntimeError,
         "Padding size should be less than the corresponding input dimension"),
        (lambda: nn.CircularPad1d(5), (2, 3, 4), RuntimeError, "wrapping around more than once"),
        (lambda: nn.CircularPad2d(1), (4, 4), ValueError, r"expected 3D or 4D input \(got 2D"),
        (lambda: nn.CircularPad3d(1), (1, 2, 3, 3, 3, 3), ValueError,
         r"expected 4D or 5D input \(got 6D"),
        (lambda: nn.ReplicationPad3d(1), (3, 4, 4), NotImplementedError,
         "Padding size 6 is not supported for 3D input"),
        (lambda: nn.ReflectionPad1d(1), (2, 3, 4, 4), NotImplementedError,
         "Padding size 2 is not supported for 4D input"),
        (lambda: nn.ReflectionPad1d((1, 2, 3)), (2, 3, 4), RuntimeError, "divisible by 2"),
        (lambda: nn.ZeroPad2d(1), (4,), RuntimeError, "two times the input dimension"),
        (lambda: nn.ConstantPad1d(-3, 0.0), (2, 4), RuntimeError, "negative output size"),
    ],
)
def test_padding_errors(make, shape, exc, match):
    with pytest.raises(exc, match=match):
        make()(ember.zeros(*shape))


# ---- InstanceNorm ----------------------------------------------------------------------------


def np_instance_norm(x, w=None, b=None, eps=1e-5, mean=None, var=None):
    """Per-(sample, channel) normalisation over the spatial dims, or with the given stats."""
    axes = tuple(range(2, x.ndim))
    cshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if mean is None:
        mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    else:
        mean, var = mean.reshape(cshape), var.reshape(cshape)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * w.reshape(cshape) + b.reshape(cshape)
    return y


def np_running_update(x, rm, rv, momentum):
    """PyTorch's instance-norm update: the batch average of the per-instance mean and the
    per-instance unbiased variance."""
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axes).mean(0)
    var = x.var(axes, ddof=1).mean(0)
    return (1 - momentum) * rm + momentum * mean, (1 - momentum) * rv + momentum * var


IN_SPATIAL = {1: (7,), 2: (4, 5), 3: (3, 4, 2)}


def instance_norm_layer(nd, c, **kw):
    return getattr(nn, f"InstanceNorm{nd}d")(c, **kw)


def set_affine(layer, seed=1):
    c = layer.num_features
    w, b = rand(c, seed=seed) + 1.5, rand(c, seed=seed + 1)
    with ember.no_grad():
        layer.weight.copy_(ember.tensor(w, dtype=layer.weight.dtype))
        layer.bias.copy_(ember.tensor(b, dtype=layer.bias.dtype))
    return w, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_instance_norm_matches_numpy(nd, batched, affine, dtype):
    edtype = ember.float32 if dtype == np.float32 else ember.float64
    layer = instance_norm_layer(nd, 3, affine=affine, dtype=edtype)
    w = b = None
    if affine:
        w, b = set_affine(layer)
    x = rand(*(((2, 3) if batched else (3,)) + IN_SPATIAL[nd]), seed=nd, dtype=dtype) * 3 + 1
    y = layer(et(x))
    # Unbatched input is normalised as a batch of one and keeps its rank.
    expected = np_instance_norm(x if batched else x[None], w, b)
    expected = expected if batched else expected[0]
    assert tuple(y.shape) == x.shape and y.dtype == edtype
    np.testing.assert_allclose(npy(y), expected, **tol(dtype))


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_instance_norm_running_stats_train_then_eval(nd, batched):
    layer = instance_norm_layer(nd, 3, affine=True, track_running_stats=True, momentum=0.2,
                                dtype=ember.float64)
    w, b = set_affine(layer)
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(3):
        x = rand(*(((4, 3) if batched else (3,)) + IN_SPATIAL[nd]), seed=10 + step) * 2 + step
        xb = x if batched else x[None]
        y = layer(et(x))
        # Training normalises with the input's own statistics...
        np.testing.assert_allclose(npy(y), np_instance_norm(xb, w, b).reshape(x.shape),
                                   rtol=1e-10, atol=1e-10)
        rm, rv = np_running_update(xb, rm, rv, 0.2)
        np.testing.assert_allclose(npy(layer.running_mean), rm, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(npy(layer.running_var), rv, rtol=1e-12, atol=1e-12)
    # ...and, unlike the batch norms, never counts batches (PyTorch's behaviour).
    assert int(layer.num_batches_tracked) == 0
    layer.eval()
    x = rand(*(((2, 3) if batched else (3,)) + IN_SPATIAL[nd]), seed=99)
    xb = x if batched else x[None]
    y = layer(et(x))
    np.testing.assert_allclose(npy(y), np_instance_norm(xb, w, b, mean=rm, var=rv).reshape(x.shape),
                               rtol=1e-10, atol=1e-10)
    # Eval mode leaves the statistics alone.
    np.testing.assert_allclose(npy(layer.running_mean), rm, rtol=1e-12, atol=1e-12)


def test_instance_norm_eval_without_running_stats_uses_input_stats():
    layer = nn.InstanceNorm2d(3, dtype=ember.float64).eval()
    x = rand(2, 3, 4, 4) * 5 - 2
    np.testing.assert_allclose(npy(layer(et(x))), np_instance_norm(x), rtol=1e-10, atol=1e-10)


def test_instance_norm_momentum_none_leaves_running_stats():
    layer = nn.InstanceNorm1d(3, momentum=None, track_running_stats=True, dtype=ember.float64)
    layer(et(rand(2, 3, 6) + 4))
    # momentum=None is passed to F.instance_norm as 0: no update at all.
    np.testing.assert_array_equal(npy(layer.running_mean), np.zeros(3))
    np.testing.assert_array_equal(npy(layer.running_var), np.ones(3))


def test_instance_norm_parameters_buffers_and_repr():
    plain = nn.InstanceNorm2d(4)
    assert plain.weight is None and plain.bias is None and plain.running_mean is None
    assert list(plain.state_dict().keys()) == []
    assert repr(plain) == ("InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=False, "
                           "bias=False, track_running_stats=False)")
    full = nn.InstanceNorm1d(4, eps=1e-3, momentum=0.3, affine=True, track_running_stats=True)
    assert [n for n, _ in full.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in full.named_buffers()] == [
        "running_mean", "running_var", "num_batches_tracked"]
    assert list(full.state_dict().keys()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    np.testing.assert_array_equal(npy(full.weight), np.ones(4))
    np.testing.assert_array_equal(npy(full.bias), np.zeros(4))
    assert full.num_batches_tracked.dtype == ember.int64
    assert repr(full) == ("InstanceNorm1d(4, eps=0.001, momentum=0.3, affine=True, bias=True, "
                          "track_running_stats=True)")
    nobias = nn.InstanceNorm3d(2, affine=True, bias=False)
    assert nobias.bias is None and [n for n, _ in nobias.named_parameters()] == ["weight"]
    assert nn.InstanceNorm1d(2, affine=True, dtype=ember.float64).weight.dtype == ember.float64


@pytest.mark.parametrize(
    "layer,shape,match",
    [
        (nn.InstanceNorm1d(3), (3,), r"expected 2D or 3D input \(got 1D input\)"),
        (nn.InstanceNorm1d(3), (1, 3, 4, 4), r"expected 2D or 3D input \(got 4D input\)"),
        (nn.InstanceNorm2d(3), (3, 4), r"expected 3D or 4D input \(got 2D input\)"),
        (nn.InstanceNorm3d(3), (1, 1, 3, 2, 2, 2), r"expected 4D or 5D input \(got 6D input\)"),
        (nn.InstanceNorm2d(4, affine=True), (2, 3, 4, 4),
         r"expected input's size at dim=1 to match num_features \(4\), but got: 3"),
        (nn.InstanceNorm2d(4, affine=True), (3, 4, 4),
         r"expected input's size at dim=0 to match num_features \(4\), but got: 3"),
        (nn.InstanceNorm1d(3), (2, 3, 1), "Expected more than 1 spatial element when training"),
    ],
)
def test_instance_norm_errors(layer, shape, match):
    with pytest.raises(ValueError, match=match):
        layer(ember.zeros(*shape))


def test_instance_norm_num_features_mismatch_warns_without_affine():
    layer = nn.InstanceNorm1d(5, dtype=ember.float64)
    x = rand(2, 3, 6)
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        y = layer(et(x))
    # num_features is unused without affine parameters or running statistics.
    np.testing.assert_allclose(npy(y), np_instance_norm(x), rtol=1e-10, atol=1e-10)
    # With running statistics the buffers are too small: the op refuses, as in PyTorch.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="running_mean should contain 6 elements not 10"):
            nn.InstanceNorm1d(5, track_running_stats=True)(ember.zeros(2, 3, 6))


def test_instance_norm_eval_with_running_stats_accepts_one_spatial_element():
    layer = nn.InstanceNorm1d(3, track_running_stats=True, dtype=ember.float64).eval()
    x = rand(2, 3, 1)
    # Running statistics (0, 1) in eval: y = x / sqrt(1 + eps).
    np.testing.assert_allclose(npy(layer(et(x))), x / np.sqrt(1 + 1e-5), rtol=1e-12)


def test_instance_norm_unversioned_checkpoint_with_running_stats_is_reported():
    # A pre-0.4 checkpoint (no _metadata version) of an untracking InstanceNorm.
    state = OrderedDict(running_mean=ember.zeros(3), running_var=ember.ones(3))
    with pytest.raises(RuntimeError, match="state_dict holds running statistics"):
        nn.InstanceNorm1d(3).load_state_dict(state)
    # A current checkpoint round-trips.
    src = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    with ember.no_grad():
        src.running_mean.fill_(2.0)
    dst = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    dst.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(npy(dst.running_mean), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_instance_norm_gradcheck(nd):
    layer = instance_norm_layer(nd, 2, affine=True, dtype=ember.float64)
    x = et(rand(2, 2, *([3] * nd), seed=nd), requires_grad=True)
    assert gradcheck(layer, (x,))
    w = et(rand(2, seed=7) + 1.5, requires_grad=True)
    b = et(rand(2, seed=8), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (x, w, b))


def test_instance_norm_parameters_receive_gradients():
    layer = nn.InstanceNorm1d(2, affine=True, dtype=ember.float64)
    x = rand(3, 2, 5)
    layer(et(x)).mul(et(rand(3, 2, 5, seed=4))).sum().backward()
    g = rand(3, 2, 5, seed=4)
    np.testing.assert_allclose(npy(layer.bias.grad), g.sum((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(npy(layer.weight.grad), (np_instance_norm(x) * g).sum((0, 2)),
                               rtol=1e-10)


# ---- Fold / Unfold ---------------------------------------------------------------------------


def np_unfold(x, k, d=(1, 1), p=(0, 0), s=(1, 1)):
    """im2col of (N, C, H, W): (N, C * kh * kw, L), channel-major then kernel row-major."""
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.empty((n, c, k[0], k[1], oh, ow), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0],
                                  j * d[1]:j * d[1] + s[1] * ow:s[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unfold_matches_numpy_batched_and_unbatched(dtype):
    x = rand(2, 3, 6, 7, dtype=dtype)
    layer = nn.Unfold((2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    expected = np_unfold(x, (2, 3), (2, 1), (1, 1), (1, 2))
    np.testing.assert_allclose(npy(layer(et(x))), expected, **tol(dtype))
    np.testing.assert_allclose(npy(layer(et(x[0]))), expected[0], **tol(dtype))


def test_fold_unfold_round_trip():
    x = rand(2, 3, 6, 8)
    # Non-overlapping blocks: Fold inverts Unfold exactly.
    unfold, fold = nn.Unfold(2, stride=2), nn.Fold((6, 8), 2, stride=2)
    np.testing.assert_array_equal(npy(fold(unfold(et(x)))), x)
    # Overlapping blocks: each pixel comes back times the number of blocks covering it.
    unfold, fold = nn.Unfold(3, padding=1), nn.Fold((6, 8), 3, padding=1)
    counts = npy(fold(unfold(ember.ones(1, 1, 6, 8))))
    assert counts.max() == 9 and counts[0, 0, 0, 0] == 4
    np.testing.assert_allclose(npy(fold(unfold(et(x)))), x * counts, rtol=1e-12)
    # Unbatched (C * k * k, L) input folds to (C, H, W).
    np.testing.assert_allclose(npy(fold(unfold(et(x[1])))), x[1] * counts[0], rtol=1e-12)


def test_fold_unfold_repr_keeps_arguments_as_given():
    fold = nn.Fold(output_size=(4, 5), kernel_size=2, stride=(1, 2))
    assert fold.output_size == (4, 5) and fold.kernel_size == 2 and fold.stride == (1, 2)
    assert repr(fold) == ("Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, "
                          "stride=(1, 2))")
    assert repr(nn.Unfold(kernel_size=(2, 3), padding=1)) == (
        "Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=1)")


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: nn.Unfold(2)(ember.zeros(1, 2, 3, 4, 4)), "Expected 3D or 4D"),
        (lambda: nn.Unfold((2, 2, 2))(ember.zeros(1, 2, 4, 4)), "kernel_size"),
        (lambda: nn.Fold((4, 6), 2)(ember.zeros(2, 12, 10)), "calculated number of sliding"),
        (lambda: nn.Fold((3, 6), 2)(ember.zeros(2, 11, 10)), "divisible by the product"),
        (lambda: nn.Fold((3, 6), 2)(ember.zeros(1, 2, 12, 10)), "Expected 2D or 3D"),
    ],
)
def test_fold_unfold_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


def test_fold_unfold_gradcheck():
    x = et(rand(1, 2, 4, 5), requires_grad=True)
    assert gradcheck(nn.Unfold((2, 3), padding=1, stride=(2, 1)), (x,))
    cols = et(rand(1, 2 * 4, 12), requires_grad=True)
    assert gradcheck(nn.Fold((4, 5), 2, stride=1), (cols,))


# ---- ChannelShuffle --------------------------------------------------------------------------


def np_channel_shuffle(x, g):
    n, c = x.shape[:2]
    return x.reshape(n, g, c // g, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 3, 4), (1, 6, 2, 3, 2)])
@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_channel_shuffle_matches_numpy(shape, groups):
    x = rand(*shape)
    layer = nn.ChannelShuffle(groups)
    np.testing.assert_array_equal(npy(layer(et(x))), np_channel_shuffle(x, groups))
    np.testing.assert_array_equal(npy(F.channel_shuffle(et(x), groups)),
                                  np_channel_shuffle(x, groups))


def test_channel_shuffle_interleaves_groups_and_keeps_dtype():
    x = ember.arange(6).reshape(1, 6, 1)
    y = nn.ChannelShuffle(2)(x)
    assert y.dtype == ember.int64
    assert npy(y).ravel().tolist() == [0, 3, 1, 4, 2, 5]
    # Non-contiguous input and empty inputs.
    x = rand(2, 4, 3, 5)
    xt = et(x).transpose(2, 3)
    np.testing.assert_array_equal(npy(F.channel_shuffle(xt, 2)),
                                  np_channel_shuffle(x.swapaxes(2, 3), 2))
    assert tuple(F.channel_shuffle(ember.zeros(0, 6, 3), 2).shape) == (0, 6, 3)
    assert tuple(F.channel_shuffle(ember.zeros(2, 6, 0), 3).shape) == (2, 6, 0)
    assert repr(nn.ChannelShuffle(3)) == "ChannelShuffle(groups=3)"


@pytest.mark.parametrize(
    "shape,groups,exc,match",
    [
        ((2, 6), 2, RuntimeError, "expects input with > 2 dims"),
        ((2, 6, 3), 4, RuntimeError, "Got 6 channels and 4 groups"),
        ((2, 6, 3), 0, RuntimeError, "must be positive"),
        ((2, 6, 3), -2, RuntimeError, "must be positive"),
        ((2, 6, 3), 2.0, TypeError, "must be int, not float"),
    ],
)
def test_channel_shuffle_errors(shape, groups, exc, match):
    with pytest.raises(exc, match=match):
        nn.ChannelShuffle(groups)(ember.zeros(*shape))


def test_channel_shuffle_gradcheck():
    x = et(rand(2, 6, 3), requires_grad=True)
    assert gradcheck(nn.ChannelShuffle(3), (x,))


# ---- LocalResponseNorm -----------------------------------------------------------------------


def np_lrn(x, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over channels [c - size // 2, c + (size - 1) // 2])
    ** beta, the window clipped at the ends."""
    c = x.shape[1]
    sq = x * x
    acc = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        acc[:, ch] = sq[:, lo:hi].sum(1)
    return x / (k + alpha / size * acc) ** beta


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 7, 5), (2, 7, 3, 4), (1, 5, 2, 3, 2), (2, 3, 2, 2, 2, 2)])
@pytest.mark.parametrize("size,alpha,beta,k", [(3, 1e-4, 0.75, 1.0), (2, 0.5, 0.6, 2.0),
                                               (4, 1.0, 1.0, 0.5), (9, 0.3, 0.75, 1.0)])
def test_local_response_norm_matches_numpy(shape, size, alpha, beta, k, dtype):
    x = rand(*shape, dtype=dtype) * 2
    layer = nn.LocalResponseNorm(size, alpha, beta, k)
    y = layer(et(x))
    assert y.dtype == et(x).dtype and tuple(y.shape) == shape
    np.testing.assert_allclose(npy(y), np_lrn(x.astype(np.float64), size, alpha, beta, k),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


def test_local_response_norm_repr_empty_and_errors():
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    assert repr(nn.LocalResponseNorm(3, 1e-3, 0.5, 2)) == (
        "LocalResponseNorm(3, alpha=0.001, beta=0.5, k=2)")
    empty = ember.zeros(0, 4, 3)
    assert F.local_response_norm(empty, 3) is empty
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2"):
        nn.LocalResponseNorm(3)(ember.zeros(2, 4))
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        nn.LocalResponseNorm(0)(ember.zeros(2, 4, 3))


def test_local_response_norm_gradcheck():
    x = et(rand(2, 5, 3, 2), requires_grad=True)
    assert gradcheck(nn.LocalResponseNorm(3, alpha=0.5, beta=0.75, k=1.0), (x,))


# ---- exports ---------------------------------------------------------------------------------

NEW_LAYERS = [
    *[f"{p}Pad{d}d" for p in ("Zero", "Constant", "Reflection", "Replication", "Circular")
      for d in (1, 2, 3)],
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "Fold", "Unfold", "ChannelShuffle", "LocalResponseNorm",
]


def test_exports():
    import ember.nn.modules as modules

    for name in NEW_LAYERS:
        assert name in nn.__all__ and name in modules.__all__
        assert getattr(nn, name) is getattr(modules, name)
        assert issubclass(getattr(nn, name), nn.Module)
    for name in ("channel_shuffle", "local_response_norm"):
        assert callable(getattr(F, name))


# ---- PyTorch parity --------------------------------------------------------------------------


class TestTorchParity:
    """The same constructor arguments and inputs through PyTorch's and Ember's layers:
    repr, state_dict keys, outputs, input gradients and (InstanceNorm) running statistics."""

    @pytest.fixture(autouse=True)
    def _torch(self):
        self.torch = pytest.importorskip("torch")

    def pair(self, name, *args, **kwargs):
        return getattr(nn, name)(*args, **kwargs), getattr(self.torch.nn, name)(*args, **kwargs)

    def run_both(self, e_layer, t_layer, x):
        ex = et(x, requires_grad=True)
        tx = self.torch.tensor(x, requires_grad=True)
        ey, ty = e_layer(ex), t_layer(tx)
        g = rand(*ty.shape, seed=123, dtype=x.dtype)
        ey.backward(et(g))
        ty.backward(self.torch.tensor(g))
        return (npy(ey), ty.detach().numpy()), (npy(ex.grad), tx.grad.numpy())

    def check(self, name, args, x, kwargs=None, rtol=1e-12, atol=1e-12):
        e_layer, t_layer = self.pair(name, *args, **(kwargs or {}))
        assert repr(e_layer) == repr(t_layer)
        assert list(e_layer.state_dict().keys()) == list(t_layer.state_dict().keys())
        (ey, ty), (eg, tg) = self.run_both(e_layer, t_layer, x)
        assert ey.shape == ty.shape
        np.testing.assert_allclose(ey, ty, rtol=rtol, atol=atol)
        np.testing.assert_allclose(eg, tg, rtol=rtol, atol=atol)

    @pytest.mark.parametrize("nd", [1, 2, 3])
    @pytest.mark.parametrize("prefix", ["Zero", "Constant", "Reflection", "Replication",
                                        "Circular"])
    @pytest.mark.parametrize("padding", ["int", "asym", "negative"])
    def test_padding(self, prefix, nd, padding):
        pad = {"int": 2, "asym": ASYM_PAD[nd],
               "negative": tuple(-1 if i % 3 == 0 else 2 for i in range(2 * nd))}[padding]
        args = (pad, -0.5) if prefix == "Constant" else (pad,)
        for batched in (True, False):
            x = rand(*((2, 3) if batched else (3,)), *SPATIAL[nd], seed=nd)
            self.check(f"{prefix}Pad{nd}d", args, x)

    @pytest.mark.parametrize("name,args,kwargs,shape", [
        ("ReflectionPad1d", (4,), {}, (2, 3, 4)),
        ("CircularPad1d", (5,), {}, (2, 3, 4)),
        ("CircularPad2d", (1,), {}, (4, 4)),
        ("ReplicationPad3d", (1,), {}, (3, 4, 4)),
        ("ReflectionPad1d", ((1, 2, 3),), {}, (2, 3, 4)),
        ("ZeroPad2d", (1,), {}, (4,)),
        ("InstanceNorm2d", (3,), {}, (3, 4)),
        ("InstanceNorm1d", (3,), {}, (2, 3, 1)),
        ("InstanceNorm1d", (4,), {"affine": True}, (2, 3, 5)),
        ("ChannelShuffle", (4,), {}, (2, 6, 3)),
        ("ChannelShuffle", (2,), {}, (2, 6)),
        ("LocalResponseNorm", (2,), {}, (2, 6)),
        ("LocalResponseNorm", (0,), {}, (2, 6, 3)),
        ("Unfold", (2,), {}, (1, 2, 3, 4, 4)),
        ("Fold", ((4, 6), 2), {}, (2, 12, 10)),
    ])
    def test_same_exception_type(self, name, args, kwargs, shape):
        e_layer, t_layer = self.pair(name, *args, **kwargs)
        with pytest.raises(Exception) as t_err:
            t_layer(self.torch.zeros(*shape))
        with pytest.raises(type(t_err.value)):
            e_layer(ember.zeros(*shape))

    @pytest.mark.parametrize("nd", [1, 2, 3])
    @pytest.mark.parametrize("kwargs", [
        {},
        {"affine": True},
        {"track_running_stats": True, "momentum": 0.3},
        {"affine": True, "track_running_stats": True, "eps": 1e-3},
        {"affine": True, "bias": False},
        {"track_running_stats": True, "momentum": None},
    ])
    def test_instance_norm(self, nd, kwargs):
        name = f"InstanceNorm{nd}d"
        e_layer = getattr(nn, name)(3, dtype=ember.float64, **kwargs)
        t_layer = getattr(self.torch.nn, name)(3, dtype=self.torch.float64, **kwargs)
        assert repr(e_layer) == repr(t_layer)
        assert list(e_layer.state_dict().keys()) == list(t_layer.state_dict().keys())
        if e_layer.affine:
            w = rand(3, seed=5) + 1.0
            with ember.no_grad():
                e_layer.weight.copy_(et(w))
            with self.torch.no_grad():
                t_layer.weight.copy_(self.torch.tensor(w))
        for step in range(3):
            batched = step != 1
            x = rand(*((2, 3) if batched else (3,)), *IN_SPATIAL[nd], seed=step) * 2 + step
            (ey, ty), (eg, tg) = self.run_both(e_layer, t_layer, x)
            np.testing.assert_allclose(ey, ty, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(eg, tg, rtol=1e-10, atol=1e-10)
        for ev in (False, True):
            e_layer.train(not ev)
            t_layer.train(not ev)
            x = rand(2, 3, *IN_SPATIAL[nd], seed=42)
            (ey, ty), _ = self.run_both(e_layer, t_layer, x)
            np.testing.assert_allclose(ey, ty, rtol=1e-10, atol=1e-10)
        e_sd, t_sd = e_layer.state_dict(), t_layer.state_dict()
        for key in t_sd:
            np.testing.assert_allclose(npy(e_sd[key]), t_sd[key].numpy(), rtol=1e-12)
        if e_layer.affine:
            np.testing.assert_allclose(npy(e_layer.weight.grad), t_layer.weight.grad.numpy(),
                                       rtol=1e-10, atol=1e-10)

    def test_instance_norm_mismatch_warning(self):
        x = rand(2, 3, 5)
        e_layer, t_layer = self.pair("InstanceNorm1d", 4)
        with pytest.warns(UserWarning) as t_rec:
            t_layer(self.torch.tensor(x))
        with pytest.warns(UserWarning) as e_rec:
            e_layer(et(x))
        assert str(e_rec[0].message) == str(t_rec[0].message)

    def test_instance_norm_state_dict_loads_across(self):
        e_layer, t_layer = self.pair("InstanceNorm2d", 3, affine=True, track_running_stats=True)
        t_layer(self.torch.randn(2, 3, 4, 4))
        e_layer.load_state_dict({k: et(v.detach().numpy()) for k, v in
                                 t_layer.state_dict().items()})
        np.testing.assert_array_equal(npy(e_layer.running_var), t_layer.running_var.numpy())

    def test_fold_unfold(self):
        x = rand(2, 3, 6, 7)
        self.check("Unfold", ((2, 3),), x, {"dilation": (2, 1), "padding": 1, "stride": (1, 2)})
        self.check("Unfold", (3,), x[0])
        cols = rand(2, 3 * 4, 12)
        self.check("Fold", ((4, 5), 2), cols)
        self.check("Fold", ((5, 6), (2, 3), 1, 1, 2), rand(1, 6, 9))
        self.check("Fold", (3, 2), rand(8, 4))

    @pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 3, 4), (1, 6, 2, 3, 2)])
    def test_channel_shuffle(self, shape):
        for groups in (1, 2, 3, 6):
            self.check("ChannelShuffle", (groups,), rand(*shape))

    @pytest.mark.parametrize("shape", [(2, 7, 5), (2, 7, 3, 4), (1, 5, 2, 3, 2)])
    @pytest.mark.parametrize("args", [(3,), (2, 0.5, 0.6, 2.0), (4, 1.0, 1.0, 0.5), (9, 0.3)])
    def test_local_response_norm(self, shape, args):
        self.check("LocalResponseNorm", args, rand(*shape) * 2, rtol=1e-11, atol=1e-12)
        # The functional forms too.
        x = rand(*shape, dtype=np.float32)
        np.testing.assert_allclose(
            npy(F.local_response_norm(et(x), *args)),
            self.torch.nn.functional.local_response_norm(self.torch.tensor(x), *args).numpy(),
            rtol=1e-5, atol=1e-6)


def test_circular_pad_that_crops_everything_it_would_wrap_raises():
    # The fuzzer's crash (a modulo by zero): (-2, 2) on width 2 keeps nothing to wrap around.
    # PyTorch returns uninitialised memory here; Ember refuses with a clear error.
    t = ember.tensor([[False, True], [False, False]])
    with pytest.raises(RuntimeError, match="nothing left to wrap"):
        ember.nn.CircularPad1d((-2, 2))(t)
    with pytest.raises(RuntimeError, match="nothing left to wrap"):
        ember.nn.functional.pad(ember.ones(1, 3, 3), (0, 0, -3, 1), mode="circular")
    # An empty batch has nothing to wrap either way: an empty result, no division by zero.
    assert tuple(ember.nn.CircularPad1d((-2, 2))(ember.ones(0, 3, 2)).shape) == (0, 3, 2)
    # A partial crop still wraps around what is left.
    got = ember.nn.CircularPad1d((-1, 1))(t).numpy().tolist()
    assert got == [[True, True], [False, False]]
