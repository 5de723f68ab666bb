"""Conversions and the Python protocol: to() and the dtype shorthands, Python numbers, iteration,
membership, formatting, NumPy sharing (from_numpy / numpy / __array__ / ufuncs), DLPack,
pickling and copying, and the dtype utilities (promotion tables, finfo, iinfo) checked against
tables taken from PyTorch."""

import copy
import gc
import pickle

import numpy as np
import pytest

import ember

# --- to() and shorthands ---------------------------------------------------------------------


def test_to_forms():
    t = ember.ones(3)
    assert t.to(ember.float32) is t
    assert t.to("cpu") is t and t.to(ember.device("cpu")) is t and t.cpu() is t
    assert t.to(ember.float32, copy=True) is not t
    assert t.to(ember.float64).dtype is ember.float64
    assert t.to("cpu", ember.int64).dtype is ember.int64
    assert t.to(ember.ones(1, dtype=ember.int32)).dtype is ember.int32
    assert t.to(device="cpu", dtype=ember.float64).dtype is ember.float64
    assert t.to(ember.float64, True, True).dtype is ember.float64  # non_blocking, copy
    assert t.to(dtype=ember.int8, non_blocking=True).dtype is ember.int8
    assert t.to(None).dtype is ember.float32


def test_to_preserves_dense_layout():
    t = ember.ones(3, 4).transpose(0, 1)
    assert t.to(ember.float64).stride() == (1, 4)
    assert t.double().stride() == (1, 4)
    assert t.to(ember.float64, memory_format=ember.contiguous_format).stride() == (3, 1)
    assert ember.ones(3, 4)[:, ::2].double().stride() == (2, 1)


# (storage shape, view) pairs whose view is not dense: torch.preserve_format gives dense strides
# in the view's dim order, and an expanded (stride-0) dim keeps its place.
SPARSE_VIEWS = {
    "transposed slice": ((4, 6), lambda t: t[:, :3].t(), (1, 3)),
    "head-split slice": ((2, 5, 36), lambda t: t[..., :12].view(2, 5, 3, 4).transpose(1, 2),
                         (60, 4, 12, 1)),
    "expanded batch": ((1, 3, 5, 4), lambda t: t.expand(2, 3, 5, 4), (60, 20, 4, 1)),
    "stepped with a size-1 dim": ((4, 1, 6), lambda t: t[:, :, ::2], (3, 3, 1)),
    "stepped and permuted": ((6, 4, 5), lambda t: t[::2].permute(2, 0, 1), (1, 20, 5)),
}


@pytest.mark.parametrize("name", list(SPARSE_VIEWS))
def test_copies_of_views_that_are_not_dense_keep_their_dim_order(name):
    shape, view, strides = SPARSE_VIEWS[name]
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    t = view(ember.tensor(data))
    for copy_ in (t.clone(), t.double(), t.to(ember.float16), ember.empty_like(t),
                  ember.zeros_like(t)):
        assert copy_.stride() == strides, name
    np.testing.assert_array_equal(t.clone().numpy(), t.numpy())
    np.testing.assert_array_equal(t.double().numpy(), t.numpy())
    assert t.clone(memory_format=ember.contiguous_format).is_contiguous()


@pytest.mark.parametrize("name", list(SPARSE_VIEWS))
def test_copies_of_views_match_pytorch_layouts(name):
    torch = pytest.importorskip("torch")
    shape, view, _ = SPARSE_VIEWS[name]
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    t, e = view(torch.from_numpy(data)), view(ember.tensor(data))
    assert e.clone().stride() == t.clone().stride()
    assert e.half().stride() == t.half().stride()
    assert ember.empty_like(e).stride() == torch.empty_like(t).stride()


def test_to_errors():
    t = ember.ones(3)
    gpus = ember.cuda.device_count() if ember.cuda.is_available() else 0
    if gpus == 0:
        with pytest.raises(RuntimeError, match=r"\[to\] device 'cuda' is not available"):
            t.to("cuda")
    if gpus == 0:
        with pytest.raises(RuntimeError, match=r"\[to\] device 'cuda:1' is not available"):
            t.to(1)
    elif gpus == 1:
        with pytest.raises(RuntimeError, match=r"\[to\] device 'cuda:1' does not exist: this "
                                               r"machine has 1 CUDA device\(s\)"):
            t.to(1)
    with pytest.raises(RuntimeError, match="expected one of cpu, cuda device type"):
        t.to("foo")
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        t.to(ember.float64, dtype=ember.float32)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        t.to(3.0)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        t.to(ember.float64, foo=1)


SHORTHANDS = [("float", ember.float32), ("double", ember.float64), ("half", ember.float16),
              ("bfloat16", ember.bfloat16), ("int", ember.int32), ("long", ember.int64),
              ("short", ember.int16), ("char", ember.int8), ("byte", ember.uint8),
              ("bool", ember.bool), ("cfloat", ember.complex64), ("cdouble", ember.complex128)]


@pytest.mark.parametrize("name,dtype", SHORTHANDS)
def test_dtype_shorthands(name, dtype):
    t = ember.tensor([1.0, 0.0, 2.5])
    r = getattr(t, name)()
    assert r.dtype is dtype
    assert getattr(r, name)() is r
    assert getattr(t, name)(memory_format=ember.contiguous_format).dtype is dtype


def test_conversion_values():
    assert ember.tensor([1.7, -1.7, 300.5]).byte().tolist() == [1, 255, 44]
    assert ember.tensor([1 + 2j]).float().tolist() == [1.0]
    assert ember.tensor([0.0, 0.5]).bool().tolist() == [False, True]
    assert ember.tensor([1.5]).bfloat16().tolist() == [1.5]


def test_type_and_type_as():
    names = {ember.float32: "ember.FloatTensor", ember.int64: "ember.LongTensor",
             ember.bool: "ember.BoolTensor", ember.complex64: "ember.ComplexFloatTensor",
             ember.bfloat16: "ember.BFloat16Tensor", ember.uint8: "ember.ByteTensor"}
    for dtype, name in names.items():
        assert ember.ones(1, dtype=dtype).type() == name
    assert ember.ones(3).type(ember.int64).dtype is ember.int64
    assert ember.ones(3).type("ember.DoubleTensor").dtype is ember.float64
    assert ember.ones(3).type("torch.DoubleTensor").dtype is ember.float64
    assert ember.ones(3).type(ember.int64, True).dtype is ember.int64
    assert ember.ones(3).type_as(ember.ones(1, dtype=ember.int8)).dtype is ember.int8
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        ember.ones(3).type("torch.Foo")
    with pytest.raises(TypeError):
        ember.ones(3).type(3)


def test_detach_shares_storage_and_version():
    t = ember.ones(3)
    d = t.detach()
    assert d is not t and d.data_ptr() == t.data_ptr()
    d.fill_(2)
    assert t.tolist() == [2.0, 2.0, 2.0] and t._version == d._version
    assert t.detach_() is t


# --- Python numbers ---------------------------------------------------------------------------


def test_item():
    assert ember.tensor(1.5).item() == 1.5
    assert type(ember.tensor([True]).item()) is bool
    assert type(ember.tensor([7], dtype=ember.uint8).item()) is int
    assert ember.tensor(1, dtype=ember.bfloat16).item() == 1.0
    assert ember.tensor([2.5], dtype=ember.float16).item() == 2.5
    assert ember.tensor(1 + 2j).item() == 1 + 2j
    assert ember.tensor([[3]]).item() == 3
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to "
                       "Scalar"):
        ember.tensor([1, 2]).item()
    with pytest.raises(RuntimeError, match="a Tensor with 0 elements cannot be converted"):
        ember.tensor([]).item()


def test_tolist():
    assert ember.tensor(3).tolist() == 3
    assert ember.tensor([[True]]).tolist() == [[True]]
    assert ember.tensor([1.5], dtype=ember.bfloat16).tolist() == [1.5]
    assert ember.tensor([1 + 1j]).tolist() == [1 + 1j]
    assert ember.arange(12).reshape(3, 4)[:, 1::2].tolist() == [[1, 3], [5, 7], [9, 11]]
    assert ember.zeros(0, 3).tolist() == []
    assert ember.zeros(2, 0).tolist() == [[], []]
    assert type(ember.tensor([1], dtype=ember.int8).tolist()[0]) is int


def test_bool_float_int_complex():
    assert bool(ember.tensor([0.0])) is False and bool(ember.tensor([[3]])) is True
    assert float(ember.tensor(3)) == 3.0
    assert int(ember.tensor(2.7)) == 2 and int(ember.tensor(-2.7)) == -2
    assert complex(ember.tensor(2.5)) == 2.5 + 0j
    assert float(ember.tensor(1 + 0j)) == 1.0
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is "
                       "ambiguous"):
        bool(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(ember.tensor([]))
    for fn in (float, int, complex):
        with pytest.raises(ValueError, match="only one element tensors can be converted to "
                           "Python scalars"):
            fn(ember.tensor([1, 2]))
    with pytest.raises(ValueError, match="only one element tensors"):
        float(ember.tensor([]))
    with pytest.raises(RuntimeError, match="cannot be converted to type int64"):
        int(ember.tensor(1 + 2j))
    with pytest.raises(RuntimeError, match="cannot be converted to type float64"):
        float(ember.tensor(1 + 2j))
    with pytest.raises(ValueError, match="NaN"):
        int(ember.tensor(float("nan")))
    with pytest.raises(OverflowError):
        int(ember.tensor(float("inf")))


def test_index():
    items = [1, 2, 3]
    assert items[ember.tensor(1)] == 2
    assert items[ember.tensor([1])] == 2
    assert items[ember.tensor(True)] == 2
    assert items[ember.tensor(2, dtype=ember.uint8)] == 3
    assert list(range(10))[ember.tensor(1): ember.tensor(3)] == [1, 2]
    for bad in (ember.tensor(1.0), ember.tensor([1, 2])):
        with pytest.raises(TypeError, match="only integer tensors of a single element can be "
                           "converted to an index"):
            items[bad]


def test_len_and_iteration():
    assert len(ember.tensor([[1, 2, 3]])) == 1
    rows = list(ember.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    rows[0].fill_(9)
    assert [x.item() for x in ember.tensor([5, 6])] == [5, 6]
    assert list(ember.zeros(0, 2)) == []
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ember.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(ember.tensor(1))


def test_iteration_yields_views():
    t = ember.zeros(2, 3)
    for row in t:
        row.fill_(1)
    assert t.tolist() == [[1.0] * 3] * 2


def test_contains():
    t = ember.tensor([1, 2])
    assert 2 in t and 3 not in t
    assert 2.0 in t and 2.5 not in t
    assert ember.tensor(2) in t
    assert ember.tensor([1, 5]) in t and ember.tensor([7, 5]) not in t
    assert True in ember.tensor([0, 1])
    assert np.int64(2) in t
    assert float("nan") not in ember.tensor([float("nan")])
    assert 1 not in ember.zeros(0)
    with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar, "
                       "but you passed in a <class 'str'>"):
        "a" in t  # noqa: B015


def test_format():
    assert format(ember.tensor(2.5), ".3f") == "2.500"
    assert format(ember.tensor(7), "03d") == "007"
    assert f"{ember.tensor(3.14159):.2f}" == "3.14"
    assert f"{ember.tensor(True)}" == "True"
    assert format(ember.tensor([2.5]), "") == "tensor([2.5000])"
    with pytest.raises(TypeError, match="unsupported format string"):
        format(ember.tensor([2.5]), ".3f")


def test_properties():
    t = ember.ones(2, 3, dtype=ember.float64)
    assert t.element_size() == 8 and t.itemsize == 8 and t.nbytes == 48
    assert t.dim() == 2 and t.ndim == 2 and t.numel() == 6 and ember.numel(t) == 6
    assert t.shape == (2, 3) and t.size() == (2, 3) and t.size(1) == 3 and t.size(-1) == 3
    assert isinstance(t.shape, ember.Size)
    assert t.dtype is ember.float64 and t.device == ember.device("cpu")
    assert t.is_floating_point() and not t.is_complex() and t.is_signed()
    assert ember.is_floating_point(t) and not ember.is_complex(t)
    assert not ember.tensor([True]).is_signed() and not ember.ones(1, dtype=ember.uint8).is_signed()
    assert ember.ones(5)[2:].storage_offset() == 2
    assert ember.is_tensor(t) and not ember.is_tensor([1])
    base = ember.arange(5)
    assert base[1:].data_ptr() == base.data_ptr() + 8
    s = base.untyped_storage()
    assert s.nbytes() == 40 and len(s) == 40 and s.data_ptr() == base.data_ptr()
    assert s.device == ember.device("cpu") and s.element_size() == 1
    assert base[2:].untyped_storage() is s  # one Python object per storage while it lives


# --- NumPy --------------------------------------------------------------------------------------


def test_numpy_shares_both_ways():
    t = ember.arange(6.0).reshape(2, 3)
    a = t.numpy()
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 1] = -1
    assert a[1, 1] == -1
    assert t.transpose(0, 1).numpy().strides == (4, 12)
    assert t.numpy(force=True).dtype == np.float32


def test_numpy_keeps_tensor_alive():
    t = ember.arange(4.0)
    a = t.numpy()
    del t
    gc.collect()
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_numpy_errors():
    with pytest.raises(TypeError, match="Got unsupported ScalarType bfloat16"):
        ember.ones(2, dtype=ember.bfloat16).numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType bfloat16"):
        np.asarray(ember.ones(2, dtype=ember.bfloat16))


def test_array_protocol():
    t = ember.ones(3)
    shared = np.asarray(t)
    shared[0] = 5
    assert t[0].item() == 5 and shared.flags.writeable
    assert np.array(t, copy=False).ctypes.data == t.data_ptr()
    assert np.array(t).ctypes.data != t.data_ptr()
    assert t.__array__(np.float64).dtype == np.float64
    assert t.__array__(copy=True).ctypes.data != t.data_ptr()
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        t.__array__(np.float64, copy=False)
    assert t.__array_priority__ == 1000


def test_ufuncs_return_tensors_like_torch():
    # PyTorch wraps ufunc results back into tensors through __array_wrap__.
    r = np.add(ember.ones(2), 1)
    assert isinstance(r, ember.Tensor) and r.tolist() == [2.0, 2.0]
    assert isinstance(np.sin(ember.zeros(2)), ember.Tensor)
    g = np.greater(ember.ones(2), 0)
    assert isinstance(g, ember.Tensor) and g.dtype is ember.bool


# --- DLPack ------------------------------------------------------------------------------------


def test_dlpack_numpy_both_ways_zero_copy():
    t = ember.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    arr = np.arange(4.0)
    u = ember.from_dlpack(arr)
    u[1] = -3
    assert arr[1] == -3 and u.dtype is ember.float64
    n = np.arange(6).reshape(2, 3).T
    v = ember.from_dlpack(n)
    assert v.stride() == (1, 3) and v.tolist() == n.tolist()
    assert ember.from_dlpack(np.ones(3, dtype=bool)).dtype is ember.bool
    assert np.from_dlpack(ember.tensor([True, False])).tolist() == [True, False]
    assert np.from_dlpack(ember.ones(2, dtype=ember.complex64)).dtype == np.complex64
    assert ember.utils.dlpack.from_dlpack(np.arange(3)).tolist() == [0, 1, 2]
    assert ember.asarray(np.arange(3)).tolist() == [0, 1, 2]


def test_dlpack_lifetimes():
    arr = np.arange(5.0)
    t = ember.from_dlpack(arr)
    del arr
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    x = ember.arange(5.0)
    a = np.from_dlpack(x)
    del x
    gc.collect()
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    # An unconsumed capsule frees its reference when collected.
    before = ember._C._allocator_stats()["current_bytes"]
    cap = ember.ones(1000).__dlpack__()
    del cap
    gc.collect()
    assert ember._C._allocator_stats()["current_bytes"] == before


def test_dlpack_capsules_and_errors():
    assert ember.ones(2).__dlpack_device__() == (ember.utils.dlpack.DLDeviceType.kDLCPU, 0)
    cap = ember.ones(2).__dlpack__()
    assert "dltensor" in repr(cap)
    assert ember.from_dlpack(cap).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="capsules can be consumed only once"):
        ember.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="expected an object implementing __dlpack__"):
        ember.from_dlpack([1])
    vcap = ember.ones(2).__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(vcap)
    assert ember.from_dlpack(vcap).tolist() == [1.0, 1.0]
    copied = ember.ones(2)
    c = ember.from_dlpack(copied.__dlpack__(max_version=(1, 0), copy=True))
    assert c.data_ptr() != copied.data_ptr()
    # NumPy's refusal: RuntimeError before NumPy 2.5, BufferError from it.
    with pytest.raises((RuntimeError, BufferError), match="Unsupported dtype"):
        np.from_dlpack(ember.ones(2, dtype=ember.bfloat16))
    with pytest.raises(BufferError):
        ember.ones(2).__dlpack__(dl_device=(2, 0))
    with pytest.raises(RuntimeError, match="stream must be None"):
        ember.ones(2).__dlpack__(stream=1)
    with pytest.raises(RuntimeError, match="negative strides"):
        ember.from_dlpack(np.arange(6)[::-1])
    to = ember.utils.dlpack.to_dlpack(ember.ones(3))
    assert ember.utils.dlpack.from_dlpack(to).shape == (3,)


def test_dlpack_read_only_memory():
    a = np.zeros(3)
    a.flags.writeable = False
    with pytest.warns(UserWarning):
        t = ember.from_numpy(a)
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()
    r = ember.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    with pytest.raises(RuntimeError, match="read-only"):
        r.fill_(1)


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(6.0).reshape(2, 3)
    e = ember.from_dlpack(t)
    e[0, 0] = 99
    assert t[0, 0].item() == 99
    x = ember.arange(4.0).reshape(2, 2).transpose(0, 1)
    tt = torch.from_dlpack(x)
    assert tt.stride() == (1, 2)
    tt[0, 0] = -1
    assert x[0, 0].item() == -1
    assert ember.from_dlpack(torch.tensor([1.5], dtype=torch.bfloat16)).dtype is ember.bfloat16
    assert torch.from_dlpack(ember.tensor([1.5], dtype=ember.bfloat16)).dtype == torch.bfloat16
    assert ember.asarray(torch.ones(2)).tolist() == [1.0, 1.0]


# --- pickling and copying ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int64, ember.float16,
                                   ember.bfloat16, ember.float64, ember.complex64])
def test_pickle_round_trip(dtype):
    t = ember.arange(12).reshape(3, 4).to(dtype)
    for view in (t, t.transpose(0, 1), t[1:, ::2], t[2, 3]):
        r = pickle.loads(pickle.dumps(view))
        assert r.dtype is dtype and r.shape == view.shape and r.stride() == view.stride()
        assert r.storage_offset() == view.storage_offset()
        assert r.to(ember.float64).tolist() == view.to(ember.float64).tolist()


def test_pickle_keeps_storage_sharing_within_one_pickle():
    a = ember.arange(6.0)
    b, w = pickle.loads(pickle.dumps((a, a[2:4])))
    w[0] = 100
    assert b[2].item() == 100
    x = ember.ones(2)
    x.foo = 3
    assert pickle.loads(pickle.dumps(x)).foo == 3


def test_rebuild_checks_bounds():
    s = ember.ones(2).untyped_storage()
    with pytest.raises(RuntimeError, match="do not fit a storage of 8 bytes"):
        ember._C._rebuild_tensor(s, ember.float32, (3,), (1,), 0)
    with pytest.raises(RuntimeError, match="negative"):
        ember._C._rebuild_tensor(s, ember.float32, (1,), (1,), -1)


def test_copy_and_deepcopy():
    a = ember.arange(6.0)
    c = copy.copy(a)
    c[0] = -1
    assert a[0].item() == -1  # copy.copy shares the storage, as in PyTorch
    d = copy.deepcopy(a)
    d[1] = -5
    assert a[1].item() == 1.0 and d.dtype is a.dtype and d.shape == a.shape
    a2, v2 = copy.deepcopy((a, a[2:4]))
    v2[0] = 77
    assert a2[2].item() == 77 and a[2].item() == 2.0  # memo keeps sharing inside one deepcopy
    x = ember.ones(2, dtype=ember.int8)
    x.foo = [1, 2]
    y = copy.deepcopy(x)
    assert y.dtype is ember.int8 and y.foo == [1, 2] and y.foo is not x.foo
    memo = {}
    assert copy.deepcopy(x, memo) is copy.deepcopy(x, memo)


def test_hash_is_identity():
    a, b = ember.ones(1), ember.ones(1)
    assert hash(a) == hash(a) and len({a, b}) == 2


# --- dtype utilities ---------------------------------------------------------------------------

ABBREV = {"b1": ember.bool, "u1": ember.uint8, "i1": ember.int8, "i2": ember.int16,
          "i4": ember.int32, "i8": ember.int64, "f2": ember.float16, "bf": ember.bfloat16,
          "f4": ember.float32, "f8": ember.float64, "c8": ember.complex64, "c16": ember.complex128}
ORDER = list(ABBREV)

# Taken from torch 2.x (torch.promote_types / can_cast / result_type over all pairs). PyTorch's
# complex32 results (float16 with complex) are complex64 here: Ember has no complex32.
PROMOTE = {
    "b1": "b1 u1 i1 i2 i4 i8 f2 bf f4 f8 c8 c16",
    "u1": "u1 u1 i2 i2 i4 i8 f2 bf f4 f8 c8 c16",
    "i1": "i1 i2 i1 i2 i4 i8 f2 bf f4 f8 c8 c16",
    "i2": "i2 i2 i2 i2 i4 i8 f2 bf f4 f8 c8 c16",
    "i4": "i4 i4 i4 i4 i4 i8 f2 bf f4 f8 c8 c16",
    "i8": "i8 i8 i8 i8 i8 i8 f2 bf f4 f8 c8 c16",
    "f2": "f2 f2 f2 f2 f2 f2 f2 f4 f4 f8 c8 c16",
    "bf": "bf bf bf bf bf bf f4 bf f4 f8 c8 c16",
    "f4": "f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 c8 c16",
    "f8": "f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16",
    "c8": "c8 c8 c8 c8 c8 c8 c8 c8 c8 c16 c8 c16",
    "c16": "c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16",
}
CAN_CAST = {
    "b1": "111111111111", "u1": "011111111111", "i1": "011111111111", "i2": "011111111111",
    "i4": "011111111111", "i8": "011111111111", "f2": "000000111111", "bf": "000000111111",
    "f4": "000000111111", "f8": "000000111111", "c8": "000000000011", "c16": "000000000011",
}
# result_type(tensor of dtype row with dims, 0-d tensor of dtype column)
RESULT_DIM_ZERO = {
    "b1": "b1 u1 i1 i2 i4 i8 f2 bf f4 f8 c8 c16",
    "u1": "u1 u1 u1 u1 u1 u1 f2 bf f4 f8 c8 c16",
    "i1": "i1 i1 i1 i1 i1 i1 f2 bf f4 f8 c8 c16",
    "i2": "i2 i2 i2 i2 i2 i2 f2 bf f4 f8 c8 c16",
    "i4": "i4 i4 i4 i4 i4 i4 f2 bf f4 f8 c8 c16",
    "i8": "i8 i8 i8 i8 i8 i8 f2 bf f4 f8 c8 c16",
    "f2": "f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 c8 c8",
    "bf": "bf bf bf bf bf bf bf bf bf bf c8 c8",
    "f4": "f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 c8 c8",
    "f8": "f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 c16 c16",
    "c8": "c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8 c8",
    "c16": "c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16",
}
# result_type(tensor of dtype row, Python True / 2 / 2.5 / 1j): (with dims, 0-d)
RESULT_SCALAR = {
    "b1": ("b1 i8 f4 c8", "b1 i8 f4 c8"), "u1": ("u1 u1 f4 c8", "u1 u1 f4 c8"),
    "i1": ("i1 i1 f4 c8", "i1 i1 f4 c8"), "i2": ("i2 i2 f4 c8", "i2 i2 f4 c8"),
    "i4": ("i4 i4 f4 c8", "i4 i4 f4 c8"), "i8": ("i8 i8 f4 c8", "i8 i8 f4 c8"),
    "f2": ("f2 f2 f2 c8", "f2 f2 f2 c8"), "bf": ("bf bf bf c8", "bf bf bf c8"),
    "f4": ("f4 f4 f4 c8", "f4 f4 f4 c8"), "f8": ("f8 f8 f8 c16", "f8 f8 f8 c16"),
    "c8": ("c8 c8 c8 c8", "c8 c8 c8 c8"), "c16": ("c16 c16 c16 c16", "c16 c16 c16 c16"),
}


@pytest.mark.parametrize("row", ORDER)
def test_promote_types_table(row):
    for col, want in zip(ORDER, PROMOTE[row].split()):
        assert ember.promote_types(ABBREV[row], ABBREV[col]) is ABBREV[want], (row, col)


@pytest.mark.parametrize("row", ORDER)
def test_can_cast_table(row):
    for col, want in zip(ORDER, CAN_CAST[row]):
        assert ember.can_cast(ABBREV[row], ABBREV[col]) == (want == "1"), (row, col)


@pytest.mark.parametrize("row", ORDER)
def test_result_type_tables(row):
    dims = ember.ones(2, dtype=ABBREV[row])
    zero = ember.ones((), dtype=ABBREV[row])
    for col, want in zip(ORDER, RESULT_DIM_ZERO[row].split()):
        got = ember.result_type(dims, ember.ones((), dtype=ABBREV[col]))
        assert got is ABBREV[want], (row, col)
    with_dims, zero_d = RESULT_SCALAR[row]
    for scalar, want_dims, want_zero in zip([True, 2, 2.5, 1j], with_dims.split(),
                                            zero_d.split()):
        assert ember.result_type(dims, scalar) is ABBREV[want_dims], (row, scalar)
        assert ember.result_type(zero, scalar) is ABBREV[want_zero], (row, scalar)


def test_result_type_misc():
    assert ember.result_type(1, 2.0) is ember.float32
    assert ember.result_type(1, 2) is ember.int64
    assert ember.result_type(True, 2) is ember.int64
    assert ember.result_type(1j, 1) is ember.complex64
    assert ember.result_type(2, ember.tensor([1], dtype=ember.uint8)) is ember.uint8
    assert ember.result_type(ember.tensor([1], dtype=ember.uint8),
                             ember.tensor([1], dtype=ember.int8)) is ember.int16
    old = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.result_type(1, 2.0) is ember.float64
        assert ember.result_type(1j, 1) is ember.complex128
    finally:
        ember.set_default_dtype(old)
    with pytest.raises(TypeError):
        ember.result_type(ember.tensor([1]), "a")
    assert ember.promote_types(float, int) is ember.float64
    with pytest.raises(TypeError):
        ember.promote_types(ember.float32, "a")


def test_default_dtype():
    old = ember.get_default_dtype()
    try:
        for dt in (ember.float64, ember.float16, ember.bfloat16, ember.float32):
            ember.set_default_dtype(dt)
            assert ember.get_default_dtype() is dt
            assert ember.zeros(1).dtype is dt and ember.arange(0.5).dtype is dt
        with pytest.raises(TypeError, match="only floating-point types are supported as the "
                           "default type"):
            ember.set_default_dtype(ember.int32)
    finally:
        ember.set_default_dtype(old)


def test_dtype_objects():
    assert ember.float32.is_floating_point and not ember.int8.is_floating_point
    assert ember.complex64.is_complex and ember.float32.is_signed and not ember.bool.is_signed
    assert ember.bool.itemsize == 1 and ember.complex128.itemsize == 16
    assert ember.float32.to_complex() is ember.complex64
    assert ember.float64.to_complex() is ember.complex128
    assert ember.complex64.to_real() is ember.float32
    with pytest.raises(RuntimeError, match="Unknown complex dtype for int32"):
        ember.int32.to_complex()
    assert pickle.loads(pickle.dumps(ember.bfloat16)) is ember.bfloat16
    assert ember.float is ember.float32 and ember.long is ember.int64
    assert ember.half is ember.float16


FINFO = {
    # dtype: (bits, eps, max, tiny, resolution, repr) from torch.finfo
    ember.float32: (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38,
                    1e-06, "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, "
                    "eps=1.19209e-07, smallest_normal=1.17549e-38, tiny=1.17549e-38, "
                    "dtype=float32)"),
    ember.float64: (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308,
                    1e-15, "finfo(resolution=1e-15, min=-1.79769e+308, max=1.79769e+308, "
                    "eps=2.22045e-16, smallest_normal=2.22507e-308, tiny=2.22507e-308, "
                    "dtype=float64)"),
    ember.float16: (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001,
                    "finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, "
                    "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)"),
    ember.bfloat16: (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01,
                     "finfo(resolution=0.01, min=-3.38953e+38, max=3.38953e+38, eps=0.0078125, "
                     "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=bfloat16)"),
}


@pytest.mark.parametrize("dtype", list(FINFO), ids=str)
def test_finfo(dtype):
    bits, eps, mx, tiny, res, text = FINFO[dtype]
    f = ember.finfo(dtype)
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution) == (
        bits, eps, mx, -mx, tiny, tiny, res)
    assert f.dtype == str(dtype)[6:] and repr(f) == text


def test_finfo_complex_default_and_errors():
    assert ember.finfo(ember.complex64) == ember.finfo(ember.float32)
    assert ember.finfo(ember.complex64).bits == 32
    assert ember.finfo(ember.complex64).dtype == "float32"
    assert ember.finfo(ember.complex128) == ember.finfo(ember.float64)
    assert ember.finfo() == ember.finfo(ember.get_default_dtype())
    assert ember.finfo(float) == ember.finfo(ember.float64)
    with pytest.raises(TypeError, match="requires a floating point input type"):
        ember.finfo(ember.int32)


def test_iinfo():
    expect = {ember.uint8: (8, 0, 255), ember.int8: (8, -128, 127),
              ember.int16: (16, -(2**15), 2**15 - 1), ember.int32: (32, -(2**31), 2**31 - 1),
              ember.int64: (64, -(2**63), 2**63 - 1)}
    for dtype, (bits, lo, hi) in expect.items():
        info = ember.iinfo(dtype)
        assert (info.bits, info.min, info.max, info.dtype) == (bits, lo, hi, str(dtype)[6:])
    assert repr(ember.iinfo(ember.int32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    assert ember.iinfo(int).bits == 64
    with pytest.raises(TypeError, match="ember.bool is not supported by ember.iinfo"):
        ember.iinfo(ember.bool)
    with pytest.raises(TypeError, match="requires an integer input type"):
        ember.iinfo(ember.float32)
