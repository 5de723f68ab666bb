"""View ops: every one shares storage and the version counter with its base, and writes through
it are visible in the base; their errors; broadcast_shapes; and the split family's results."""

import numpy as np
import pytest

import ember

# ------------------------------------------------------------------------------------------
# view semantics: every view op shares storage and the version counter, and writes through it
# are visible in the base
# ------------------------------------------------------------------------------------------

# (name, view function, whether writing through it is allowed: expanded views overlap)
VIEW_OPS = [
    ("view", lambda t: t.view(4, 30), True),
    ("view_as", lambda t: t.view_as(ember.zeros(6, 20)), True),
    ("reshape", lambda t: t.reshape(20, 6), True),
    ("flatten", lambda t: t.flatten(1), True),
    ("transpose", lambda t: t.transpose(0, 2), True),
    ("swapaxes", lambda t: ember.swapaxes(t, 0, 1), True),
    ("swapdims", lambda t: t.swapdims(1, 2), True),
    ("permute", lambda t: t.permute(2, 0, 1), True),
    ("movedim", lambda t: t.movedim((0, 1), (2, 0)), True),
    ("moveaxis", lambda t: ember.moveaxis(t, -1, 0), True),
    ("T", lambda t: t.T, True),
    ("mT", lambda t: t.mT, True),
    ("mH", lambda t: t.mH, True),
    ("H", lambda t: t[0].H, True),
    ("adjoint", lambda t: t.adjoint(), True),
    ("t", lambda t: t[1].t(), True),
    ("squeeze", lambda t: t[:, :1].squeeze((1,)), True),
    ("unsqueeze", lambda t: t.unsqueeze(1), True),
    ("select", lambda t: t.select(1, 2), True),
    ("narrow", lambda t: t.narrow(2, 1, 3), True),
    ("getitem", lambda t: t[1:, None, ::2, 3], True),
    ("as_strided", lambda t: t.as_strided((3, 3), (7, 1), 2), True),
    ("unflatten", lambda t: t.unflatten(2, (2, 3)), True),
    ("diagonal", lambda t: t.diagonal(1, 1, 2), True),
    ("unfold", lambda t: t.unfold(2, 2, 2), True),
    ("unbind", lambda t: t.unbind(1)[3], True),
    ("split", lambda t: t.split(2, 1)[1], True),
    ("split_sizes", lambda t: t.split([1, 4], 1)[1], True),
    ("chunk", lambda t: t.chunk(3, 2)[2], True),
    ("tensor_split", lambda t: t.tensor_split([1, 3], 2)[1], True),
    ("hsplit", lambda t: t.hsplit(5)[4], True),
    ("vsplit", lambda t: t.vsplit([1])[1], True),
    ("dsplit", lambda t: t.dsplit(3)[1], True),
    ("expand", lambda t: t[:, :1].expand(4, 3, 6), False),
    ("expand_as", lambda t: t[:1].expand_as(t), False),
    ("broadcast_to", lambda t: ember.broadcast_to(t[0], (2, 5, 6)), False),
    ("broadcast_tensors", lambda t: ember.broadcast_tensors(t[0], ember.zeros(3, 1, 1))[0], False),
]


@pytest.mark.parametrize("name,fn,writable", VIEW_OPS, ids=[v[0] for v in VIEW_OPS])
def test_view_shares_storage_and_version(name, fn, writable):
    base = ember.tensor(np.arange(120.0).reshape(4, 5, 6))
    v = fn(base)
    assert v._is_view_of(base), f"{name} copied"
    ref = base.numpy().copy()
    v0 = base._version
    if writable:
        # Write through the view: exactly the elements it covers change in the base.
        marker = np.arange(v.numel(), dtype=np.float64).reshape(tuple(v.shape)) + 1000
        v[...] = ember.tensor(marker)
        got = base.numpy()
        changed = got != ref
        assert changed.sum() == v.numel()
        assert sorted(got[changed].tolist()) == sorted(marker.ravel().tolist())
        np.testing.assert_array_equal(v.numpy(), marker)
    else:
        base.add_(1.0)  # writes to the base show through the view
        np.testing.assert_array_equal(v.numpy(), fn(ember.tensor(ref + 1)).numpy())
    assert base._version > v0 and v._version == base._version


def test_view_of_view_keeps_the_counter():
    base = ember.zeros(3, 4)
    v = base.T.unsqueeze(0)[0].diagonal()
    v[0] = 5.0
    assert base[0, 0].item() == 5.0
    assert v._version == base._version == base.T._version


def test_complex_H_is_conjugate_transpose():
    c = ember.tensor((np.arange(6) + 1j * np.arange(6, 12)).reshape(2, 3).astype(np.complex64))
    np.testing.assert_array_equal(c.H.numpy(), c.numpy().conj().T)
    np.testing.assert_array_equal(c.unsqueeze(0).mH.numpy()[0], c.numpy().conj().T)
    np.testing.assert_array_equal(ember.adjoint(c).numpy(), c.numpy().conj().T)


def test_view_errors():
    a = ember.zeros(2, 3, 4)
    with pytest.raises(
        RuntimeError,
        match=r"t\(\) expects a tensor with <= 2 dimensions, but self "
        r"is 3D",
    ):
        a.t()
    with pytest.raises(RuntimeError, match=r"tensor.mT is only supported on matrices"):
        _ = ember.zeros(3).mT
    with pytest.raises(
        RuntimeError,
        match=r"tensor.H is only supported on matrices \(2-D "
        r"tensors\). Got 3-D tensor. For batches",
    ):
        _ = a.H
    with pytest.raises(
        RuntimeError,
        match=r"Provided sizes \[2, 2\] don't multiply up to the size "
        r"of dim 1 \(3\)",
    ):
        a.unflatten(1, (2, 2))
    with pytest.raises(RuntimeError, match=r"sizes must be non-empty"):
        a.unflatten(1, ())
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-3, 2\], but got 5\)",
    ):
        a.unflatten(5, (1, 4))
    with pytest.raises(
        RuntimeError, match=r"movedim: Invalid source|Invalid source or destination"
    ):
        a.movedim((0, 1), (2,))
    with pytest.raises(RuntimeError, match=r"repeated dim in `source` \(\[0, 0\]\)"):
        a.movedim((0, 0), (2, 1))
    with pytest.raises(
        RuntimeError,
        match=r"The expanded size of the tensor \(2\) must match the "
        r"existing size \(3\) at non-singleton dimension 0",
    ):
        ember.broadcast_to(ember.zeros(3, 4), (2, 4))
    with pytest.raises(RuntimeError, match=r"must match the size of tensor b"):
        ember.broadcast_tensors(ember.zeros(3, 4), ember.zeros(2))
    with pytest.raises(RuntimeError, match=r"diagonal dimensions cannot be identical 1, 1"):
        a.diagonal(0, 1, 1)
    with pytest.raises(
        RuntimeError,
        match=r"maximum size for tensor at dimension 2 is 4 but size "
        r"is 5",
    ):
        a.unfold(2, 5, 1)
    with pytest.raises(RuntimeError, match=r"step is 0 but must be > 0"):
        a.unfold(2, 2, 0)
    with pytest.raises(RuntimeError, match=r"dim 0 appears multiple times in the list of dims"):
        ember.zeros(1, 2, 1).squeeze((0, 0))
    with pytest.raises(
        RuntimeError,
        match=r"view size is not compatible.*dimension 1.*"
        r"Use \.reshape\(\.\.\.\) instead",
    ):
        ember.zeros(3, 4).t().view(12)


def test_broadcast_shapes():
    assert ember.broadcast_shapes((3, 1), (2,)) == (3, 2)
    assert ember.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert ember.broadcast_shapes() == ()
    assert isinstance(ember.broadcast_shapes((1,), [4, 1]), ember.Size)
    with pytest.raises(
        RuntimeError,
        match=r"Attempting to broadcast a dimension of length 2 at -2! "
        r"Mismatching argument at index 1 had \(2, 3\)",
    ):
        ember.broadcast_shapes((3, 1), (2, 3))
    with pytest.raises(ValueError, match=r"negative length"):
        ember.broadcast_shapes((-1,), (2, 1))


# ------------------------------------------------------------------------------------------
# the split family
# ------------------------------------------------------------------------------------------


def _np_pieces(ts):
    return [t.numpy() for t in ts]


def test_split_family_results():
    arr = np.arange(42.0).reshape(7, 6)
    t = ember.tensor(arr)
    for got, want in [
        (t.unbind(1), [arr[:, i] for i in range(6)]),
        (ember.unbind(t), list(arr)),
        (t.split(3), np.split(arr, [3, 6])),
        (t.split([1, 0, 5], dim=1), np.split(arr, [1, 1], axis=1)),
        (ember.split(t, 4, 1), np.split(arr, [4], axis=1)),
        (t.chunk(3), np.split(arr, [3, 6])),
        (t.chunk(4, 1), np.split(arr, [2, 4], axis=1)),
        (t.tensor_split(3), np.array_split(arr, 3)),
        (t.tensor_split([1, 5, 20]), np.split(arr, [1, 5, 20])),
        (t.tensor_split(ember.tensor(4)), np.array_split(arr, 4)),
        (t.tensor_split(ember.tensor([2, -1]), dim=1), np.split(arr, [2, 5], axis=1)),
        (ember.tensor_split(t, indices=[3], dim=0), np.split(arr, [3])),
        (ember.tensor_split(t, sections=2, dim=1), np.array_split(arr, 2, axis=1)),
        (t.hsplit(3), np.hsplit(arr, 3)),
        (t.vsplit([2, 3]), np.vsplit(arr, [2, 3])),
        (ember.zeros(2, 3, 4).dsplit(2), np.dsplit(np.zeros((2, 3, 4)), 2)),
    ]:
        assert isinstance(got, tuple)
        assert len(got) == len(want)
        for g, w in zip(_np_pieces(got), want):
            np.testing.assert_array_equal(g, w)
    assert [p.shape for p in ember.zeros(0).chunk(3)] == [(0,)] * 3
    assert [p.shape for p in ember.zeros(0).split(0)] == [(0,)]


def test_split_family_errors():
    t = ember.zeros(3, 4)
    with pytest.raises(IndexError, match=r"Dimension specified as 0 but tensor has no dimensions"):
        ember.tensor(1.0).unbind()
    with pytest.raises(
        RuntimeError,
        match=r"split_with_sizes expects split_sizes to sum exactly to "
        r"3 \(input tensor's size at dimension 0\), but got "
        r"split_sizes=\[1, 1\]",
    ):
        t.split([1, 1])
    with pytest.raises(RuntimeError, match=r"split_size can only be 0 if dimension size is 0"):
        t.split(0)
    with pytest.raises(RuntimeError, match=r"split expects split_size be non-negative"):
        t.split(-1)
    with pytest.raises(RuntimeError, match=r"chunk expects `chunks` to be greater than 0, got: 0"):
        t.chunk(0)
    with pytest.raises(RuntimeError, match=r"number of sections must be larger than 0, got 0"):
        t.tensor_split(0)
    with pytest.raises(
        RuntimeError,
        match=r"expected tensor_indices_or_sections to have dtype of "
        r"long",
    ):
        t.tensor_split(ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"zero-dimensional or one-dimensional tensor"):
        t.tensor_split(ember.tensor([[1]]))
    with pytest.raises(
        RuntimeError,
        match=r"torch.hsplit attempted to split along dimension 1, but "
        r"the size of the dimension 4 is not divisible by the "
        r"split_size 3!",
    ):
        t.hsplit(3)
    with pytest.raises(
        RuntimeError,
        match=r"torch.dsplit requires a tensor with at least 3 "
        r"dimension, but got a tensor with 2 dimensions!",
    ):
        t.dsplit(2)


def test_is_view_and_base():
    """Tensor._is_view() is true exactly when _base is set: views, not copies or detach()."""
    assert ember.arange(6.0).reshape(2, 3)._is_view()  # as PyTorch's: reshape made a view
    x = ember.arange(6.0).reshape(2, 3).clone()
    assert not x._is_view() and x._base is None
    for v in (x[1], x.t(), x.view(6), x[:, 1:], x.unsqueeze(0)):
        assert v._is_view() and v._base is x
    assert x.t()[0]._base is x  # the root, as PyTorch's
    for c in (x.clone(), x.detach(), x + 0, x.contiguous().reshape(3, 2).clone()):
        assert not c._is_view()
