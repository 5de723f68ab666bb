"""Indexing: t[...] and t[...] = v against NumPy over many index combinations and dtypes, the
errors of each class, out= and in-place forms, and exactness of the parallel kernels. View
semantics of the view ops and the split family are in test_indexing_views.py."""

import numpy as np
import pytest

import ember
from opinfo import ALL, np_dtype, to_numpy

# ------------------------------------------------------------------------------------------
# Index expressions described once, then built for ember and for NumPy.
# ------------------------------------------------------------------------------------------


class Arr:
    """An integer-array index: as an int64 / int32 tensor or a Python list."""

    def __init__(self, values, kind="tensor"):
        self.values = np.asarray(values, dtype=np.int64)
        self.kind = kind

    def __repr__(self):
        return f"Arr({self.values.tolist()}, {self.kind!r})"


class Mask:
    """A boolean-mask index: as a bool tensor or a Python list of bools."""

    def __init__(self, values, kind="tensor"):
        self.values = np.asarray(values, dtype=bool)
        self.kind = kind


class Int0d:
    """A 0-d integer tensor, which indexes like a Python int."""

    def __init__(self, v):
        self.v = v


def to_ember_index(item):
    if isinstance(item, Arr):
        if item.kind == "list":
            return item.values.tolist()
        dt = ember.int32 if item.kind == "int32" else ember.int64
        return (
            ember.tensor(item.values.tolist(), dtype=dt)
            if item.values.size
            else ember.tensor(np.zeros(item.values.shape, np.int64))
        )
    if isinstance(item, Mask):
        if item.kind == "list":
            return item.values.tolist()
        return ember.tensor(item.values) if item.values.ndim else ember.tensor(bool(item.values))
    if isinstance(item, Int0d):
        return ember.tensor(item.v)
    return item


def to_numpy_index(item):
    if isinstance(item, Arr) and item.values.ndim == 0:
        return int(item.values)  # a 0-d integer tensor indexes like an int in PyTorch
    if isinstance(item, (Arr, Mask)):
        return item.values
    if isinstance(item, Int0d):
        return item.v
    return item


def ember_index(expr):
    return tuple(to_ember_index(i) for i in expr)


def reference_view(arr, expr):
    """NumPy's result for a PyTorch index expression, as a writable view where possible.

    PyTorch applies integer indices as select() before the advanced indexing step, so an
    integer never counts as an advanced index (t[0, :, [1, 2]] has shape (3, 2) in PyTorch but
    (2, 3) in NumPy). Apply the integers first, then the rest with NumPy's rules."""
    expr = [to_numpy_index(i) for i in expr]
    is_int = [isinstance(i, int) and not isinstance(i, bool) for i in expr]
    first = []
    for item, integer in zip(expr, is_int):
        if integer or item is Ellipsis:
            first.append(item)
        elif item is None or isinstance(item, bool):
            continue
        elif isinstance(item, np.ndarray) and item.dtype == bool:
            first.extend([slice(None)] * item.ndim)
        else:
            first.append(slice(None))
    if Ellipsis not in first:
        first.append(Ellipsis)  # keeps a 0-d result a (writable) view, not a scalar
    base = arr[tuple(first)]
    rest = [item for item, integer in zip(expr, is_int) if not integer]
    # An Ellipsis becomes the slices it stands for: NumPy counts even an empty Ellipsis as
    # separating two advanced indices (moving their result to the front), PyTorch does not.
    ellipsis_at = [k for k, item in enumerate(rest) if item is Ellipsis]
    if ellipsis_at:
        consumed = sum(
            item.ndim if isinstance(item, np.ndarray) and item.dtype == bool else 1
            for item in rest
            if item is not None and item is not Ellipsis and not isinstance(item, bool)
        )
        at = ellipsis_at[0]
        rest[at : at + 1] = [slice(None)] * (base.ndim - consumed)
    return base, tuple(rest)


def np_getitem(arr, expr):
    base, rest = reference_view(arr, expr)
    return base[rest]


def np_setitem(arr, expr, value):
    base, rest = reference_view(arr, expr)
    base[rest] = value


GETITEM_CASES = [
    (1,),
    (-1, 2),
    (1, 2, 3),
    (slice(None),),
    (slice(1, None, 2),),
    (slice(-3, -1), slice(None, None, 3)),
    (Ellipsis, 1),
    (None,),
    (None, Ellipsis, None),
    (1, None, slice(None, None, 2)),
    (slice(10, 20),),
    (slice(-10, 2),),
    (Ellipsis,),
    (0, Ellipsis, 0),
    (Arr([0, 2]),),
    (Arr([0, -1, 1]),),
    (Arr([[0, 1], [3, 2]]),),
    (Arr([], "tensor"),),
    (Arr([1, 0], "int32"),),
    (Arr([2, 0], "list"),),
    (Arr([], "list"),),
    (slice(None), Arr([0, 4]), Arr([1, 5])),
    (Arr([0, 1]), slice(None), Arr([1, 2])),
    (Arr([0, 1]), slice(1, None), Arr([1, 2])),
    (None, Arr([0, 1]), None, Arr([1, 2])),
    (Ellipsis, Arr([0, 1])),
    (0, Arr([0, 1]), Arr([1, 2])),
    (Arr([0]), 0, Arr([1, 2])),
    (0, slice(None), Arr([1, 2])),
    (slice(None), 0, Arr([1, 2])),
    (Arr([[0], [1]]), Arr([0, 1, 2])),
    (Arr([[0, 1]]), slice(None), Arr([1])),
    (Int0d(1), Int0d(2)),
    (Int0d(1), slice(None), Arr([0, 1])),
    (Int0d(-1),),
    (Arr([0, 1]), slice(0, 1), Arr([[0], [1]])),
    (Arr([3, 1]), None, Arr([0, 2]), slice(None, None, 2)),
    (Mask([True, False, True, True]),),
    (Mask([[True, False, True, False, True]] * 4),),
    (slice(None), Mask([True, False, True, False, True])),
    (slice(None), Mask([True, False, True, False, True]), Arr([0, 1, 5])),
    (Mask([True, False, True, True]), 1),
    (Mask([True, False, True, True]), slice(1, 3)),
    (Mask([False] * 4),),
    (Mask([True, False, True, True], "list"),),
    (True,),
    (False,),
    (True, 0),
    (Mask(True),),
    (Mask(False), 1),
    (0, True, Arr([1, 2])),
    (Mask(np.arange(120).reshape(4, 5, 6) % 7 == 0),),
]

SHAPE = (4, 5, 6)


def _case_id(expr):
    def one(i):
        if isinstance(i, Arr):
            return f"arr{i.values.tolist()}{i.kind[0]}"
        if isinstance(i, Mask):
            return f"mask{i.values.shape}{i.kind[0]}"
        if isinstance(i, Int0d):
            return f"t{i.v}"
        if isinstance(i, slice):
            return f"{i.start}:{i.stop}:{i.step}"
        return repr(i)

    return ",".join(one(i) for i in expr)


def _make(dtype, shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is ember.bool:
        arr = rng.random(shape) > 0.5
    else:
        arr = (
            rng.integers(-50, 50, shape)
            if np_dtype(dtype).kind in "iu" and dtype is not ember.uint8
            else rng.integers(0, 100, shape)
        ).astype(np_dtype(dtype))
        if np_dtype(dtype).kind == "c":
            arr = arr + 1j * arr[::-1]
    return ember.tensor(arr, dtype=dtype), to_numpy(ember.tensor(arr, dtype=dtype))


@pytest.mark.parametrize("expr", GETITEM_CASES, ids=[_case_id(e) for e in GETITEM_CASES])
def test_getitem_matches_numpy(expr):
    t, arr = _make(ember.float32)
    got = t[ember_index(expr)]
    want = np_getitem(arr, expr)
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(to_numpy(got), want)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_getitem_all_dtypes(dtype):
    t, arr = _make(dtype)
    for expr in [
        (1, slice(None, None, 2)),
        (Arr([3, 0]), slice(None), Arr([1, 4])),
        (Mask(np.arange(120).reshape(4, 5, 6) % 3 == 0),),
        (slice(None), Arr([[0], [2]])),
    ]:
        got = t[ember_index(expr)]
        assert got.dtype is dtype
        np.testing.assert_array_equal(to_numpy(got), np_getitem(arr, expr))


def test_getitem_noncontiguous_and_0d():
    t, arr = _make(ember.float64)
    tt = t.transpose(0, 2)[:, ::2]
    a2 = arr.transpose(2, 1, 0)[:, ::2]
    for expr in [(Arr([0, 5]),), (slice(None), Arr([1, 0]), Arr([3, 2])), (Ellipsis, Arr([1]))]:
        np.testing.assert_array_equal(to_numpy(tt[ember_index(expr)]), np_getitem(a2, expr))
    s = ember.tensor(5.0)
    assert s[None].shape == (1,) and s[...].shape == () and s[True].shape == (1,)
    assert s[False].shape == (0,) and s[ember.tensor(True)].shape == (1,)


def test_getitem_basic_is_view_advanced_is_copy():
    t, _ = _make(ember.float32)
    for v in [t[1], t[1:3], t[..., 2], t[None], t[:, ::2], t[...], t[ember.tensor(1)]]:
        assert v._is_view_of(t)
    assert t[...] is not t
    for c in [t[[0, 1]], t[ember.tensor([1])], t[ember.tensor([True, False, True, True])]]:
        assert not c._is_view_of(t)


def test_nested_list_index_is_a_tuple():
    # A short list holding sequences / slices / None / Ellipsis is a tuple of indices (PyTorch
    # and old NumPy); a flat list of ints is one array index.
    t, arr = _make(ember.float32)
    np.testing.assert_array_equal(to_numpy(t[[[0, 1], [1, 2]]]), arr[[0, 1], [1, 2]])
    np.testing.assert_array_equal(to_numpy(t[[0, 1]]), arr[np.array([0, 1])])
    np.testing.assert_array_equal(to_numpy(t[[None, 0]]), arr[None, 0])
    np.testing.assert_array_equal(to_numpy(t[[Ellipsis, 0]]), arr[..., 0])
    np.testing.assert_array_equal(to_numpy(t[range(2)]), arr[np.arange(2)])
    np.testing.assert_array_equal(
        to_numpy(t[np.array([[0, 1], [1, 0]])]), arr[np.array([[0, 1], [1, 0]])]
    )
    np.testing.assert_array_equal(to_numpy(t[np.int64(2)]), arr[2])
    np.testing.assert_array_equal(to_numpy(t[np.array(2)]), arr[2])
    np.testing.assert_array_equal(to_numpy(t[[0, True]]), arr[[0, 1]])


# ------------------------------------------------------------------------------------------
# setitem
# ------------------------------------------------------------------------------------------

SETITEM_CASES = [
    e
    for e in GETITEM_CASES
    if not any(
        isinstance(i, Arr) and len(set(i.values.ravel().tolist())) != i.values.size for i in e
    )
]


@pytest.mark.parametrize("expr", SETITEM_CASES, ids=[_case_id(e) for e in SETITEM_CASES])
def test_setitem_scalar_matches_numpy(expr):
    t, arr = _make(ember.float32)
    v0 = t._version
    t[ember_index(expr)] = -7.5
    np_setitem(arr, expr, -7.5)
    np.testing.assert_array_equal(to_numpy(t), arr)
    assert t._version > v0


@pytest.mark.parametrize("expr", SETITEM_CASES, ids=[_case_id(e) for e in SETITEM_CASES])
def test_setitem_tensor_matches_numpy(expr):
    t, arr = _make(ember.float32)
    shape = np_getitem(arr, expr).shape
    rng = np.random.default_rng(1)
    # Values of the full result shape, and broadcast from the last dim.
    for vshape in [shape, shape[-1:] if shape else ()]:
        value = rng.integers(-9, 9, vshape).astype(np.float32)
        tv = ember.tensor(value) if value.ndim else ember.tensor(float(value))
        t[ember_index(expr)] = tv
        np_setitem(arr, expr, value)
        np.testing.assert_array_equal(to_numpy(t), arr)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_setitem_dtypes_and_conversion(dtype):
    t, arr = _make(dtype)
    value = np.ones((2, 6)).astype(np_dtype(dtype))
    expr = (slice(None, 2), Arr([1, 3]))
    t[ember_index(expr)] = ember.tensor(value, dtype=dtype)
    np_setitem(arr, expr, value)
    np.testing.assert_array_equal(to_numpy(t), arr)
    # A value of another dtype is converted, as copy_ does.
    t[0, 0] = ember.tensor([1, 0, 1, 0, 1, 0], dtype=ember.int64)
    arr[0, 0] = np.array([1, 0, 1, 0, 1, 0]).astype(arr.dtype)
    mask = np.arange(120).reshape(4, 5, 6) % 5 == 0
    t[ember.tensor(mask)] = True
    arr[mask] = True
    np.testing.assert_array_equal(to_numpy(t), arr)


def test_setitem_int_truncates_float_and_duplicates():
    t = ember.zeros(4, dtype=ember.int64)
    t[[0, 1]] = 2.7
    t[2] = 3.9
    np.testing.assert_array_equal(t.numpy(), [2, 2, 3, 0])
    t = ember.zeros(3)
    t[[0, 0, 2]] = 5.0
    np.testing.assert_array_equal(t.numpy(), [5, 0, 5])


def test_setitem_overlapping_value_reads_before_writing():
    t = ember.tensor(np.arange(6.0))
    t[1:] = t[:-1]
    np.testing.assert_array_equal(t.numpy(), [0, 0, 1, 2, 3, 4])
    t = ember.tensor(np.arange(6.0))
    t[[5, 4, 3]] = t[:3]
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 2, 1, 0])


def test_setitem_value_with_leading_ones_and_mask_fill():
    t, arr = _make(ember.float32)
    t[0] = ember.ones(1, 1, 6)
    arr[0] = 1
    m = np.arange(120).reshape(4, 5, 6) % 4 == 1
    t[ember.tensor(m)] = ember.tensor(2.0)
    arr[m] = 2.0
    t[ember.tensor(m)] = ember.tensor(np.arange(m.sum(), dtype=np.float32))
    arr[m] = np.arange(m.sum())
    np.testing.assert_array_equal(to_numpy(t), arr)


# ------------------------------------------------------------------------------------------
# errors, by class
# ------------------------------------------------------------------------------------------


def test_index_errors():
    t = ember.zeros(2, 3, 4)
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 0 with size 2"):
        t[5]
    with pytest.raises(IndexError, match=r"index -3 is out of bounds for dimension 0 with size 2"):
        t[-3]
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 1 with size 3"):
        t[0, 5]
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 0 with size 2"):
        t[[0, 5]]
    with pytest.raises(IndexError, match=r"index -3 is out of bounds for dimension 0 with size 2"):
        t[ember.tensor([-3])]
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for dimension 1 with size 4"):
        t[0, :, [1, 4]]
    with pytest.raises(IndexError, match=r"too many indices for tensor of dimension 3"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match=r"too many indices for tensor of dimension 3"):
        t[ember.ones(2, 3, 4, 1, dtype=ember.bool)]
    with pytest.raises(
        IndexError, match=r"tensors used as indices must be long, int, byte or bool"
    ):
        t[ember.tensor([1.0])]
    with pytest.raises(
        IndexError, match=r"tensors used as indices must be long, int, byte or bool"
    ):
        t[ember.tensor([1], dtype=ember.int16)]
    with pytest.raises(IndexError, match=r"only integers, slices .* valid indices \(got float\)"):
        t[1.5]
    with pytest.raises(
        IndexError,
        match=r"The shape of the mask \[3\] at index 0 does not match "
        r"the shape of the indexed tensor \[2, 3, 4\] at index 0",
    ):
        t[ember.tensor([True, False, True])]
    with pytest.raises(
        IndexError,
        match=r"shape mismatch: indexing tensors could not be broadcast "
        r"together with shapes \[2\], \[3\]",
    ):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=r"invalid index of a 0-dim tensor"):
        ember.tensor(1.0)[0]
    with pytest.raises(IndexError, match=r"an index can only have a single ellipsis"):
        t[..., 0, ...]
    with pytest.raises(ValueError, match=r"step must be greater than zero"):
        t[::-1]
    with pytest.raises(ValueError, match=r"step must be greater than zero"):
        t[:, ::-2] = 1
    with pytest.raises(ValueError, match=r"slice step cannot be zero"):
        t[::0]


def test_setitem_errors_leave_tensor_unchanged():
    t = ember.tensor(np.arange(24.0).reshape(2, 3, 4))
    before = t.numpy().copy()
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 1 with size 3"):
        t[[0, 1], [1, 5]] = 1.0
    with pytest.raises(
        RuntimeError,
        match=r"shape mismatch: value tensor of shape \[3\] cannot be "
        r"broadcast to indexing result of shape \[2, 4\]",
    ):
        t[[0, 1], [0]] = ember.ones(3)
    with pytest.raises(RuntimeError, match=r"expanded size"):
        t[0] = ember.ones(2)
    with pytest.raises(TypeError, match=r"can't assign a NoneType"):
        t[0] = None
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type float32"):
        t.float()[0, 0] = 1 + 2j
    np.testing.assert_array_equal(t.numpy(), before)
    ro = np.arange(4.0)
    ro.flags.writeable = False
    with pytest.warns(UserWarning):
        r = ember.from_numpy(ro)
    with pytest.raises(RuntimeError, match=r"read-only"):
        r[[0]] = 1.0


def test_op_errors():
    b = ember.tensor(np.arange(12.0).reshape(3, 4))
    i = lambda *v: ember.tensor(list(v))  # noqa: E731
    with pytest.raises(IndexError, match=r"index out of range in self"):
        ember.index_select(b, 0, i(3))
    with pytest.raises(IndexError, match=r"index out of range in self"):
        ember.index_select(b, 0, i(-1))
    with pytest.raises(IndexError, match=r"Index is supposed to be a vector"):
        ember.index_select(b, 0, ember.tensor([[0]]))
    with pytest.raises(RuntimeError, match=r"Expected dtype int32 or int64 for index"):
        ember.index_select(b, 0, ember.tensor([0.0]))
    with pytest.raises(RuntimeError, match=r"index 5 is out of bounds for dimension 0 with size 3"):
        ember.gather(b, 0, ember.tensor([[5]]))
    with pytest.raises(
        RuntimeError, match=r"index -1 is out of bounds for dimension 0 with size 3"
    ):
        ember.gather(b, 0, ember.tensor([[-1]]))
    with pytest.raises(RuntimeError, match=r"Index tensor must have the same number of dimensions"):
        ember.gather(b, 1, i(0))
    with pytest.raises(
        RuntimeError,
        match=r"Size does not match at dimension 1 expected index "
        r"\[1, 5\] to be no larger than self \[3, 4\]",
    ):
        ember.gather(b, 0, ember.tensor([[0] * 5]))
    with pytest.raises(
        IndexError,
        match=r"out of range: tried to access index 12 on a tensor of "
        r"12 elements",
    ):
        ember.take(b, i(12))
    with pytest.raises(RuntimeError, match=r"take\(\): Expected a long tensor for index"):
        ember.take(b, ember.tensor([1], dtype=ember.int32))
    with pytest.raises(RuntimeError, match=r"dtype of indices should be Long"):
        ember.take_along_dim(b, ember.tensor([[0]], dtype=ember.int32), 0)
    with pytest.raises(
        RuntimeError, match=r"index 12 is out of bounds for dimension 0 with size 12"
    ):
        ember.take_along_dim(b, i(12))
    # Along a dim, negative indices wrap; past the end is an error (PyTorch 2.15 wraps those too,
    # silently returning another element; see docs/design/indexing.md).
    np.testing.assert_array_equal(
        ember.take_along_dim(b, ember.tensor([[-1]]), 0).numpy(), b.numpy()[[-1]]
    )
    with pytest.raises(RuntimeError, match=r"index 3 is out of bounds for dimension 0 with size 3"):
        ember.take_along_dim(b, ember.tensor([[3]]), 0)
    with pytest.raises(RuntimeError, match=r"Expected self.dtype to be equal to src.dtype"):
        b.scatter(0, ember.tensor([[0]]), ember.ones(1, 1, dtype=ember.float32))
    with pytest.raises(RuntimeError, match=r"reduce argument must be either add or multiply"):
        b.scatter(0, ember.tensor([[0]]), 1.0, reduce="mean")
    with pytest.raises(
        RuntimeError,
        match=r"reduce argument must be either sum, prod, mean, amax "
        r"or amin, got foo",
    ):
        b.scatter_reduce(0, ember.tensor([[0]]), b, "foo")
    with pytest.raises(NotImplementedError, match=r"mean"):
        ember.tensor([True]).scatter_reduce(0, i(0), ember.tensor([True]), "mean")
    with pytest.raises(
        RuntimeError,
        match=r"index_add_\(\): self \(float64\) and source "
        r"\(float32\) must have the same scalar type",
    ):
        b.index_add(0, i(0), ember.ones(1, 4))
    with pytest.raises(
        RuntimeError,
        match=r"Number of indices \(2\) should be equal to "
        r"source.size\(dim\): \(1\)",
    ):
        b.index_add(0, i(0, 1), b[:1])
    with pytest.raises(
        IndexError,
        match=r"index_copy_\(\): index 3 is out of bounds for "
        r"dimension 0 with size 3",
    ):
        b.index_copy(0, i(3), b[:1])
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 0 with size 3"):
        b.index_fill(0, i(3), 1.0)
    with pytest.raises(RuntimeError, match=r"only supports a 0-dimensional value tensor"):
        b.index_fill(0, i(0), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"masked_fill_ only supports boolean masks"):
        b.masked_fill(ember.zeros(3, 4, dtype=ember.int64), 1.0)
    with pytest.raises(RuntimeError, match=r"masked_select: expected BoolTensor for mask"):
        b.masked_select(ember.zeros(3, 4, dtype=ember.uint8))
    with pytest.raises(
        RuntimeError, match=r"Number of elements of source < number of ones in mask"
    ):
        b.masked_scatter(ember.ones(3, 4, dtype=ember.bool), b[0])
    with pytest.raises(RuntimeError, match=r"Index put requires the source and destination dtypes"):
        b.index_put((i(0),), ember.tensor(1.0, dtype=ember.float32))
    with pytest.raises(
        RuntimeError,
        match=r"output with shape \[4\] doesn't match the broadcast "
        r"shape \[3, 4\]",
    ):
        b[0].masked_fill_(ember.ones(3, 4, dtype=ember.bool), 1.0)


def test_inplace_ops_validate_before_writing():
    t = ember.tensor(np.arange(10.0))
    before = t.numpy().copy()
    bad = ember.tensor([0, 1, 2, 99])  # valid indices first: nothing may be written
    with pytest.raises(RuntimeError):
        t.scatter_(0, bad, ember.ones(4, dtype=ember.float64))
    with pytest.raises(RuntimeError):
        t.scatter_add_(0, bad, ember.ones(4, dtype=ember.float64))
    with pytest.raises(IndexError):
        t.index_put_((bad,), ember.tensor(1.0, dtype=ember.float64), accumulate=True)
    with pytest.raises(IndexError):
        t.index_add_(0, bad, ember.ones(4, dtype=ember.float64))
    with pytest.raises(IndexError):
        t.index_copy_(0, bad, ember.ones(4, dtype=ember.float64))
    with pytest.raises(IndexError):
        t.index_fill_(0, bad, 3.0)
    with pytest.raises(IndexError):
        t[bad] = 5.0
    with pytest.raises(RuntimeError, match=r"no larger size than src"):
        # include_self=False writes twice; a too-small src must fail before the first write.
        t.scatter_reduce_(
            0, ember.tensor([0, 1]), ember.ones(1, dtype=ember.float64), "amax", include_self=False
        )
    out = ember.zeros(4, dtype=ember.float64)
    with pytest.raises(RuntimeError):
        ember.gather(t, 0, bad, out=out)
    out2 = ember.zeros(10, dtype=ember.float64)
    with pytest.raises(RuntimeError):
        ember.scatter(t, 0, bad, 1.0, out=out2)
    with pytest.raises(IndexError):
        ember.index_add(t, 0, bad, ember.ones(4, dtype=ember.float64), out=out2)
    np.testing.assert_array_equal(t.numpy(), before)
    np.testing.assert_array_equal(out.numpy(), np.zeros(4))
    np.testing.assert_array_equal(out2.numpy(), np.zeros(10))


# ------------------------------------------------------------------------------------------
# out=, in-place forms, argument forms
# ------------------------------------------------------------------------------------------


def test_out_and_inplace_forms():
    rng = np.random.default_rng(0)
    arr = rng.standard_normal((4, 5))
    t = ember.tensor(arr)
    idx = ember.tensor([[0, 2, 1, 0, 3]])
    out = ember.empty(0, dtype=ember.float64)
    r = ember.gather(t, 0, idx, out=out)
    assert r is out and out.shape == (1, 5)
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(arr, idx.numpy(), 0))
    ember.index_select(t, 1, ember.tensor([4, 0]), out=out)
    np.testing.assert_array_equal(out.numpy(), arr[:, [4, 0]])
    ember.take(t, ember.tensor([[19, -20]]), out=out)
    np.testing.assert_array_equal(out.numpy(), arr.ravel()[[[19, -20]]])
    ember.take_along_dim(t, ember.tensor([3, 0]), out=out)
    np.testing.assert_array_equal(out.numpy(), arr.ravel()[[3, 0]])
    mask = ember.tensor(arr > 0)
    ember.masked_select(t, mask, out=out)
    np.testing.assert_array_equal(out.numpy(), arr[arr > 0])
    nz = ember.empty(0, dtype=ember.int64)
    ember.nonzero(mask, out=nz)
    np.testing.assert_array_equal(nz.numpy(), np.argwhere(arr > 0))
    ember.index_add(t, 0, ember.tensor([1]), t[:1], alpha=2, out=out)
    want = arr.copy()
    want[1] += 2 * arr[0]
    np.testing.assert_allclose(out.numpy(), want)
    ember.scatter(t, 1, ember.tensor([[0]]), 9.0, out=out)
    assert out[0, 0].item() == 9.0
    # out= aliasing an input still gives the right answer.
    a2 = ember.tensor(arr)
    ember.index_copy(a2, 0, ember.tensor([0]), a2[3:], out=a2)
    np.testing.assert_array_equal(a2.numpy()[0], arr[3])
    with pytest.raises(RuntimeError, match=r"to have dtype double, but got float"):
        ember.gather(t, 0, idx, out=ember.empty(0))
    with pytest.raises(RuntimeError, match=r"Expected out tensor to have scalar type Long"):
        ember.nonzero(mask, out=ember.empty(0))
    # In-place methods return self and bump the version.
    x = ember.zeros(5)
    v0 = x._version
    for r in [
        x.scatter_(0, ember.tensor([1]), 2.0),
        x.scatter_add_(0, ember.tensor([1]), ember.ones(1)),
        x.scatter_reduce_(0, ember.tensor([1]), ember.ones(1), "prod"),
        x.index_add_(0, ember.tensor([2]), ember.ones(1)),
        x.index_copy_(0, ember.tensor([3]), ember.ones(1)),
        x.index_fill_(0, ember.tensor([4]), 7),
        x.index_put_((ember.tensor([0]),), ember.tensor(1.0), accumulate=True),
        x.masked_fill_(ember.tensor([True, False, False, False, False]), 4.0),
        x.masked_scatter_(ember.tensor([False, False, False, False, True]), ember.ones(1) * 8),
    ]:
        assert r is x
    assert x._version >= v0 + 9
    np.testing.assert_array_equal(x.numpy(), [4, 3, 1, 1, 8])
    # Keyword forms of the scatter overloads; where(cond) is nonzero(as_tuple=True).
    y = ember.zeros(2, 2)
    y.scatter_(dim=1, index=ember.tensor([[1], [0]]), value=3.0)
    y.scatter_(1, ember.tensor([[0], [1]]), src=ember.ones(2, 1), reduce="add")
    np.testing.assert_array_equal(y.numpy(), [[1, 3], [3, 1]])
    rows, cols = ember.nonzero(ember.tensor([[0, 1], [1, 1]]), as_tuple=True)
    np.testing.assert_array_equal(rows.numpy(), [0, 1, 1])
    np.testing.assert_array_equal(cols.numpy(), [1, 0, 1])
    assert [p.numpy().tolist() for p in ember.nonzero(ember.tensor(3), as_tuple=True)] == [[0]]
    assert ember.argwhere(ember.tensor(0.0)).shape == (0, 0)


def test_scatter_reduce_semantics():
    base = ember.tensor(np.arange(6))
    idx = ember.tensor([0, 0, 1])
    src = ember.tensor([3, 4, 5])
    np.testing.assert_array_equal(
        base.scatter_reduce(0, idx, src, "mean").numpy(), [2, 3, 2, 3, 4, 5]
    )
    np.testing.assert_array_equal(
        base.scatter_reduce(0, idx, src, "mean", include_self=False).numpy(), [3, 5, 2, 3, 4, 5]
    )
    f = ember.tensor([1.0, 2.0, 3.0])
    r = f.scatter_reduce(
        0, ember.tensor([1, 1]), ember.tensor([4.0, -2.0]), "amin", include_self=False
    )
    np.testing.assert_array_equal(r.numpy(), [1, -2, 3])
    r = f.scatter_reduce(0, ember.tensor([0]), ember.tensor([float("nan")]), "amax")
    assert np.isnan(r.numpy()[0])


# ------------------------------------------------------------------------------------------
# large inputs: the parallel kernels must give exact results
# ------------------------------------------------------------------------------------------


@pytest.fixture
def two_threads():
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    yield
    ember.set_num_threads(old)


def test_parallel_accumulation_is_exact(two_threads):
    rng = np.random.default_rng(0)
    n = 400_000
    bins = rng.integers(0, 7, n)
    vals = rng.integers(-5, 6, n)
    want = np.bincount(bins, weights=vals, minlength=7).astype(np.int64)
    t_bins, t_vals = ember.tensor(bins), ember.tensor(vals)
    got = ember.zeros(7, dtype=ember.int64).scatter_add_(0, t_bins, t_vals)
    np.testing.assert_array_equal(got.numpy(), want)
    got = ember.zeros(7, dtype=ember.int64).index_put_((t_bins,), t_vals, accumulate=True)
    np.testing.assert_array_equal(got.numpy(), want)
    got = ember.zeros(7, dtype=ember.int64).index_add_(0, t_bins, t_vals)
    np.testing.assert_array_equal(got.numpy(), want)
    # 2-d: scatter along dim 1 splits rows across threads.
    idx2 = rng.integers(0, 5, (2000, 300))
    src2 = rng.integers(0, 3, (2000, 300))
    want2 = np.zeros((2000, 5), np.int64)
    np.add.at(want2, (np.arange(2000)[:, None], idx2), src2)
    got2 = ember.zeros(2000, 5, dtype=ember.int64).scatter_add_(
        1, ember.tensor(idx2), ember.tensor(src2)
    )
    np.testing.assert_array_equal(got2.numpy(), want2)


def test_parallel_gather_and_masks(two_threads):
    rng = np.random.default_rng(1)
    arr = rng.standard_normal((600, 500)).astype(np.float32)
    t = ember.tensor(arr)
    idx = rng.integers(-500, 500, (600, 700))
    np.testing.assert_array_equal(
        ember.take_along_dim(t, ember.tensor(idx), 1).numpy(), np.take_along_axis(arr, idx, 1)
    )
    mask = arr > 0.3
    np.testing.assert_array_equal(t[ember.tensor(mask)].numpy(), arr[mask])
    np.testing.assert_array_equal(ember.nonzero(ember.tensor(mask)).numpy(), np.argwhere(mask))
    flat = rng.integers(-arr.size, arr.size, 100_000)
    np.testing.assert_array_equal(ember.take(t, ember.tensor(flat)).numpy(), arr.ravel()[flat])
    bad = flat.copy()
    bad[77_777] = arr.size
    with pytest.raises(IndexError, match=rf"tried to access index {arr.size} "):
        ember.take(t, ember.tensor(bad))
    t2 = t.clone()
    t2[ember.tensor(mask)] = 0.0
    np.testing.assert_array_equal(t2.numpy(), np.where(mask, 0, arr))
