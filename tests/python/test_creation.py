"""ember.tensor / as_tensor / asarray / from_numpy and the factory functions: dtype inference,
argument forms, sharing rules and every error class, with expectations taken from PyTorch."""

import array
import warnings

import numpy as np
import pytest

import ember

# --- ember.tensor: dtype inference ---------------------------------------------------------------

INFERENCE = [
    (True, ember.bool),
    (3, ember.int64),
    (2.5, ember.float32),
    (1j, ember.complex64),
    ([1, 2], ember.int64),
    ([True, False], ember.bool),
    ([True, 1], ember.int64),
    ([1, 2.0], ember.float32),
    ([1, 2.0, 1j], ember.complex64),
    ([[1], [2.5]], ember.float32),
    ([], ember.float32),
    ([[], []], ember.float32),
    (np.float64(1.5), ember.float64),
    (np.float32(1.5), ember.float32),
    ([np.float32(1), 2.0], ember.float32),
    ([np.float64(1)], ember.float64),
    ([np.int32(1)], ember.int32),
    ([1, np.int32(1)], ember.int64),
    ([np.float16(1), np.int8(2)], ember.float16),
    ([ember.tensor(1.0), ember.tensor(2)], ember.float32),
    ([ember.tensor(1, dtype=ember.int8), 2], ember.int64),
    ([np.array([1, 2]), np.array([3, 4])], ember.int64),
    ([np.array([1, 2], dtype=np.int16), [3, 4.5]], ember.float32),
    (range(3), ember.int64),
    ((1, 2), ember.int64),
    (memoryview(b"ab"), ember.int64),
    (bytearray(b"ab"), ember.int64),
]


@pytest.mark.parametrize("data,dtype", INFERENCE, ids=[
    # repr of a memoryview holds its address: an id that differs from run to run (and between
    # pytest-xdist workers, which then refuse to run)
    "memoryview" if isinstance(d, memoryview) else repr(d)[:30] for d, _ in INFERENCE])
def test_tensor_infers_dtype_like_torch(data, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.tensor(data)
    assert t.dtype is dtype


def test_tensor_inference_follows_default_dtype():
    old = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.tensor([1j]).dtype is ember.complex128
        assert ember.tensor([1]).dtype is ember.int64
        ember.set_default_dtype(ember.bfloat16)
        assert ember.tensor(2.5).dtype is ember.bfloat16
    finally:
        ember.set_default_dtype(old)


def test_tensor_values_shapes_and_layout():
    t = ember.tensor([[1, 2, 3], (4, 5, 6)])
    assert t.shape == (2, 3) and t.stride() == (3, 1) and t.is_contiguous()
    assert t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert ember.tensor([[]]).shape == (1, 0)
    assert ember.tensor([[], []]).shape == (2, 0)
    assert ember.tensor(3.5).shape == () and ember.tensor(3.5).item() == 3.5
    assert ember.tensor([[[1.5]]], dtype=ember.bfloat16).tolist() == [[[1.5]]]
    assert ember.tensor([[1, 2], np.array([3, 4])]).tolist() == [[1, 2], [3, 4]]
    assert ember.tensor([ember.tensor([1]), ember.tensor([2])]).tolist() == [1, 2]
    assert ember.tensor([[ember.tensor(1)]]).shape == (1, 1)
    # A nested array with negative strides is copied, not rejected.
    assert ember.tensor([np.arange(3)[::-1]]).tolist() == [[2, 1, 0]]


def test_tensor_explicit_dtype_conversions():
    assert ember.tensor([1.7, -1.7], dtype=ember.int64).tolist() == [1, -1]
    assert ember.tensor([-1, -129], dtype=ember.uint8).tolist() == [255, 127]  # two's complement
    assert ember.tensor([1.5, 0.0], dtype=ember.bool).tolist() == [True, False]
    assert ember.tensor([2], dtype=ember.bool).tolist() == [True]
    assert ember.tensor([1j], dtype=ember.bool).tolist() == [True]
    assert ember.tensor([1e40], dtype=ember.float32).tolist() == [float("inf")]
    assert ember.tensor([1e10], dtype=ember.float16).tolist() == [float("inf")]
    assert ember.tensor([1.5], dtype=ember.complex64).tolist() == [1.5 + 0j]
    assert ember.tensor([-(2**63)], dtype=ember.int64).tolist() == [-(2**63)]
    assert ember.tensor([True, 2], dtype=ember.float64).dtype is ember.float64
    assert ember.tensor(1.5, dtype=int).dtype is ember.int64  # Python types name dtypes


@pytest.mark.parametrize(
    "data,dtype",
    [([300], ember.uint8), ([-256], ember.uint8), ([128], ember.int8), ([1e10], ember.int32),
     ([float("nan")], ember.int32), ([-1.5], ember.uint8), ([np.float64(1e10)], ember.int32),
     ([np.int64(300)], ember.uint8), ([ember.tensor(300)], ember.uint8)],
)
def test_tensor_overflow_raises_runtime_error(data, dtype):
    with pytest.raises(RuntimeError, match=r"\[tensor\] value cannot be converted to type .* "
                       "without overflow"):
        ember.tensor(data, dtype=dtype)


def test_tensor_ragged_raises_value_error():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        ember.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"expected sequence of length 3 at dim 1 \(got 2\)"):
        ember.tensor([[1, 2, 3], [4, 5]])
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        ember.tensor([np.array([1, 2]), np.array([3])])
    with pytest.raises(ValueError, match="Python int too large"):
        ember.tensor(2**63)
    with pytest.raises(ValueError, match="Python int too large"):
        ember.tensor([1, 2**64])


def test_tensor_type_errors():
    for bad in ["abc", b"ab", ["a"], [[1, 2], [3, "a"]]]:
        with pytest.raises(TypeError, match="invalid data type"):
            ember.tensor(bad)
    with pytest.raises(TypeError, match="not a sequence"):
        ember.tensor([[1, 2], 3])
    with pytest.raises(TypeError, match="expected a number"):
        ember.tensor([1, [2, 3]])
    with pytest.raises(TypeError, match="must be real number, not complex"):
        ember.tensor(1j, dtype=ember.float32)
    with pytest.raises(TypeError, match="'complex' object cannot be interpreted as an integer"):
        ember.tensor([1j], dtype=ember.int64)
    with pytest.raises(TypeError, match="must be real number, not NoneType"):
        ember.tensor([None], dtype=ember.float32)
    with pytest.raises(TypeError, match="only one element tensors"):
        ember.tensor([ember.tensor([1, 2]), ember.tensor([3, 4])])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        ember.tensor(np.array(["a"]))


@pytest.mark.parametrize("bad", [None, [None], [1, None], {1: 2}, {1, 2}, object()])
def test_tensor_uninferable_raises_runtime_error(bad):
    with pytest.raises(RuntimeError, match=r"\[tensor\] Could not infer dtype of"):
        ember.tensor(bad)


def test_tensor_from_tensor_and_numpy_copies():
    src = ember.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        t = ember.tensor(src)
    assert t.data_ptr() != src.data_ptr() and t.tolist() == [1.0, 2.0]
    with pytest.warns(UserWarning):
        assert ember.tensor(src, dtype=ember.int64).dtype is ember.int64
    a = np.arange(6.0).reshape(2, 3)
    t = ember.tensor(a)
    a[0, 0] = 99
    assert t[0, 0].item() == 0.0 and t.dtype is ember.float64
    assert ember.tensor(np.asfortranarray(np.ones((2, 3)))).stride() == (1, 2)  # layout kept
    with pytest.raises(ValueError, match="byte order"):
        ember.tensor(np.array([1, 2], dtype=">i4"))
    with pytest.raises(ValueError, match="negative"):
        ember.tensor(np.arange(6)[::-1])


class _ArrayLike:
    def __array__(self, dtype=None, copy=None):
        return np.array([[1, 2], [3, 4]], dtype=np.int16)


def test_tensor_from_array_like():
    t = ember.tensor(_ArrayLike())
    assert t.dtype is ember.int16 and t.tolist() == [[1, 2], [3, 4]]


def test_new_tensor_uses_self_dtype():
    base = ember.zeros(2, dtype=ember.int32)
    t = base.new_tensor([1.5, 2])
    assert t.dtype is ember.int32 and t.tolist() == [1, 2]
    assert base.new_tensor([1.5], dtype=ember.float64).dtype is ember.float64


# --- as_tensor / asarray / from_numpy -------------------------------------------------------------


def test_as_tensor_sharing():
    t0 = ember.ones(3)
    assert ember.as_tensor(t0) is t0
    assert ember.as_tensor(t0, dtype=ember.float32) is t0
    assert ember.as_tensor(t0, dtype=ember.float64) is not t0
    a = np.arange(3.0)
    t = ember.as_tensor(a)
    a[0] = 7
    assert t[0].item() == 7.0  # zero-copy for a matching dtype
    t = ember.as_tensor(a, dtype=ember.float32)
    a[1] = 9
    assert t[1].item() == 1.0  # converted copy
    assert ember.as_tensor([1, 2], dtype=ember.float64).dtype is ember.float64
    assert ember.as_tensor(np.arange(6)[::2]).stride() == (2,)
    with pytest.raises(ValueError, match="negative"):
        ember.as_tensor(np.arange(6)[::-1])


def test_asarray_copy_rules():
    t0 = ember.ones(3)
    assert ember.asarray(t0) is t0
    assert ember.asarray(t0, copy=False) is t0
    copied = ember.asarray(t0, copy=True)
    assert copied is not t0 and copied.data_ptr() != t0.data_ptr()
    assert ember.asarray(t0, dtype=ember.float64).dtype is ember.float64
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'float32' into dtype "
                       "'float64'"):
        ember.asarray(t0, dtype=ember.float64, copy=False)
    a = np.arange(3)
    shared = ember.asarray(a, copy=False)
    a[0] = 5
    assert shared[0].item() == 5
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'int64' into dtype"):
        ember.asarray(np.arange(3), dtype=ember.float32, copy=False)
    assert ember.asarray(np.arange(3.0), dtype=ember.float32).dtype is ember.float32
    assert ember.asarray(np.arange(6)[::2]).stride() == (2,)
    with pytest.raises(ValueError, match="negative"):
        ember.asarray(np.arange(6)[::-1])
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor"):
        ember.asarray([1, 2], copy=False)
    with pytest.raises(RuntimeError, match="can't alias NumPy scalars"):
        ember.asarray(np.float32(1.5), copy=False)
    assert ember.asarray(np.float64(2)).dtype is ember.float64
    assert ember.asarray([1, 2.5], dtype=ember.int64).tolist() == [1, 2]
    assert ember.asarray(1.5).dtype is ember.float32


def test_asarray_buffer_protocol():
    buf = bytearray(b"ab")
    t = ember.asarray(buf)
    assert t.dtype is ember.uint8 and t.tolist() == [97, 98]
    buf[0] = ord("z")
    assert t[0].item() == ord("z")  # shares the buffer
    assert ember.asarray(array.array("d", [1, 2])).dtype is ember.float64
    assert ember.asarray(array.array("i", [1, 2])).dtype is ember.int32
    t = ember.asarray(bytearray(b"abcd"), dtype=ember.int16)
    assert t.tolist() == [25185, 25699]  # raw bytes reinterpreted, as torch.frombuffer
    assert ember.asarray(bytearray(b"abcd"), dtype=ember.bfloat16).shape == (2,)
    with pytest.raises(ValueError, match="must be a multiple of element size"):
        ember.asarray(bytearray(b"abc"), dtype=ember.int16)
    with pytest.warns(UserWarning, match="not writable"):
        ro = ember.asarray(b"ab")
    with pytest.raises(RuntimeError, match="read-only"):
        ro.fill_(0)


def test_from_numpy_shares_both_ways_and_keeps_array_alive():
    a = np.arange(6.0).reshape(2, 3)
    t = ember.from_numpy(a)
    a[0, 1] = 10
    assert t[0, 1].item() == 10
    t[1, 2] = -1
    assert a[1, 2] == -1
    del a
    import gc

    gc.collect()
    assert t.tolist() == [[0, 10, 2], [3, 4, -1]]  # the array lives as long as the tensor


def test_from_numpy_strided_views_and_errors():
    a = np.arange(12).reshape(3, 4)
    assert ember.from_numpy(a[:, ::2]).stride() == (4, 2)
    assert ember.from_numpy(a.T).stride() == (1, 4)
    assert ember.from_numpy(np.zeros(3)[None]).shape == (1, 3)
    assert ember.from_numpy(np.zeros(3, dtype=np.float16)).dtype is ember.float16
    with pytest.raises(ValueError, match="negative"):
        ember.from_numpy(np.arange(6)[::-1])
    with pytest.raises(ValueError, match="byte order"):
        ember.from_numpy(np.array([1, 2], dtype=">i4"))
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        ember.from_numpy([1, 2])
    with pytest.raises(TypeError, match="expected np.ndarray"):
        ember.from_numpy(np.float64(1.0))
    with pytest.raises(TypeError, match="can't convert np.ndarray of type object"):
        ember.from_numpy(np.zeros(3, dtype=object))
    with pytest.raises(TypeError, match="uint16"):
        ember.from_numpy(np.zeros(3, dtype=np.uint16))


def test_from_numpy_read_only_array_warns_and_refuses_writes():
    a = np.zeros(3)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = ember.from_numpy(a)
    assert t.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="read-only"):
        t.fill_(1)
    with pytest.raises(RuntimeError, match="read-only"):
        t.uniform_()
    assert not t.numpy().flags.writeable


# --- zeros / ones / full / empty and friends ---------------------------------------------


@pytest.mark.parametrize("fn", [ember.zeros, ember.ones, ember.empty])
def test_sized_factories_argument_forms(fn):
    assert fn(2, 3).shape == (2, 3)
    assert fn((2, 3)).shape == (2, 3)
    assert fn([2, 3]).shape == (2, 3)
    assert fn(size=(2, 3)).shape == (2, 3)
    assert fn(ember.Size([4])).shape == (4,)
    assert fn(np.int64(2), 3).shape == (2, 3)
    assert fn(np.int64(2)).shape == (2,)
    assert fn(ember.tensor(2), 3).shape == (2, 3)
    assert fn(()).shape == () and fn([]).shape == ()
    assert fn(2, dtype=ember.int8).dtype is ember.int8
    assert fn(2, device="cpu").device == ember.device("cpu")
    assert fn(2, requires_grad=False).shape == (2,)
    with pytest.raises(TypeError, match="got multiple values for argument 'size'"):
        fn((2, 3), size=(2, 3))
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        fn(2, 3.0)
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        fn([2, [3]])
    with pytest.raises(TypeError, match="missing 1 required positional"):
        fn()
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        fn(2, foo=1)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        fn(-1)


def test_zeros_ones_values_and_out():
    assert ember.zeros(2, 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert ember.ones(3, dtype=ember.bool).tolist() == [True] * 3
    assert ember.ones(2, dtype=ember.complex64).tolist() == [1 + 0j, 1 + 0j]
    out = ember.empty(5)
    r = ember.zeros(2, out=out)
    assert r is out and out.shape == (2,) and out.tolist() == [0.0, 0.0]
    out = ember.empty(0, dtype=ember.int32)
    assert ember.ones(3, out=out).dtype is ember.int32 and out.tolist() == [1, 1, 1]
    with pytest.raises(RuntimeError, match="dtype int32 does not match dtype of out parameter "
                       r"\(float32\)"):
        ember.zeros(2, dtype=ember.int32, out=ember.empty(2))


def test_full_dtype_inference_and_errors():
    assert ember.full((2,), True).dtype is ember.bool
    assert ember.full((2,), 1).dtype is ember.int64
    assert ember.full((2,), 1.5).dtype is ember.float32
    assert ember.full((2,), 1 + 1j).dtype is ember.complex64
    assert ember.full((2,), np.float32(1.5)).tolist() == [1.5, 1.5]
    assert ember.full((2,), ember.tensor(1.5)).tolist() == [1.5, 1.5]
    assert ember.full([2, 3], 1.0).shape == (2, 3)
    assert ember.full((2,), 1.5, dtype=ember.int64).tolist() == [1, 1]
    out = ember.empty(0)
    assert ember.full((3,), 2.0, out=out) is out and out.tolist() == [2.0] * 3
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8 without overflow"):
        ember.full((2,), 300, dtype=ember.uint8)
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        ember.full(2, 1.0)


def test_like_and_new_factories():
    t = ember.zeros(3, 4, dtype=ember.float64).transpose(0, 1)
    for fn in (ember.empty_like, ember.zeros_like, ember.ones_like):
        r = fn(t)
        assert r.shape == (4, 3) and r.dtype is ember.float64
        assert r.stride() == (1, 4)  # preserve_format keeps a dense layout
        assert fn(t, memory_format=ember.contiguous_format).stride() == (3, 1)
        assert fn(t, dtype=ember.int8).dtype is ember.int8
    assert ember.zeros_like(ember.zeros(3, 4)[:, ::2]).stride() == (2, 1)
    assert ember.ones_like(t).tolist() == [[1.0] * 3] * 4
    assert ember.full_like(ember.zeros(2), 1, dtype=ember.int64).tolist() == [1, 1]
    assert ember.full_like(ember.zeros(2, dtype=ember.int64), 1.7).tolist() == [1, 1]
    base = ember.zeros(2, dtype=ember.int32)
    assert base.new_zeros(3).dtype is ember.int32
    assert base.new_zeros((3, 2)).shape == (3, 2)
    assert base.new_zeros(size=(3, 2)).shape == (3, 2)
    assert base.new_ones(2, dtype=ember.int64).tolist() == [1, 1]
    assert base.new_full((2,), 1.5).tolist() == [1, 1]
    assert base.new_empty(4).dtype is ember.int32
    assert base.new_empty_strided((2,), (2,)).stride() == (2,)
    # channels_last needs a 4-D tensor (RuntimeError, as PyTorch); 4-D ones get NHWC strides.
    with pytest.raises(RuntimeError, match="rank 4"):
        ember.zeros_like(t, memory_format=ember.channels_last)
    nhwc = ember.zeros_like(ember.ones(2, 3, 4, 5), memory_format=ember.channels_last)
    assert nhwc.stride() == (60, 1, 15, 3) and float(nhwc.abs().sum()) == 0


def test_empty_strided():
    t = ember.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and t.shape == (2, 3)
    assert ember.empty_strided((2, 3), (1, 2), dtype=ember.int16).dtype is ember.int16
    with pytest.raises(RuntimeError, match="mismatch in length of strides"):
        ember.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="negative strides"):
        ember.empty_strided((2, 3), (-1, 2))


def test_scalar_tensor():
    assert ember.scalar_tensor(1).dtype is ember.float32
    assert ember.scalar_tensor(True).tolist() == 1.0
    assert ember.scalar_tensor(1, dtype=ember.int64).dtype is ember.int64
    with pytest.raises(RuntimeError, match="cannot be converted"):
        ember.scalar_tensor(1 + 2j)


# --- arange / range / linspace / logspace / eye --------------------------------------------------


def test_arange_dtype_inference_and_sizes():
    assert ember.arange(5).tolist() == [0, 1, 2, 3, 4] and ember.arange(5).dtype is ember.int64
    assert ember.arange(1, 2.5).tolist() == [1.0, 2.0]
    assert ember.arange(1, 2.5).dtype is ember.float32
    assert ember.arange(0.0, 1.0, 0.1).shape == (10,)
    assert ember.arange(-1.0, 1.0, 0.3).shape == (7,)
    assert ember.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert ember.arange(True).tolist() == [0]
    assert ember.arange(np.int64(3)).tolist() == [0, 1, 2]
    assert ember.arange(ember.tensor(3)).tolist() == [0, 1, 2]
    assert ember.arange(ember.tensor(3.5)).dtype is ember.float32
    assert ember.arange(start=1, end=4).tolist() == [1, 2, 3]
    assert ember.arange(end=4).tolist() == [0, 1, 2, 3]
    assert ember.arange(2**53, 2**53 + 10, 3).tolist() == [2**53 + 3 * i for i in range(4)]
    # Integer dtypes truncate the bounds and step after the size is computed (as torch).
    assert ember.arange(0, 2.5, 0.5, dtype=ember.int64).tolist() == [0] * 5
    assert ember.arange(0, 5, 1.5, dtype=ember.int32).tolist() == [0, 1, 2, 3]
    assert ember.arange(-3, 3, 2.5, dtype=ember.int64).tolist() == [-3, -1, 1]
    assert ember.arange(300, dtype=ember.uint8)[-3:].tolist() == [41, 42, 43]
    out = ember.empty(0, dtype=ember.int32)
    assert ember.arange(3.0, out=out) is out and out.tolist() == [0, 1, 2]


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        ember.arange(0, 10, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
        ember.arange(0, 10, -1)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
        ember.arange(10, 0)
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> inf"):
        ember.arange(0, float("inf"))
    with pytest.raises(RuntimeError, match="unsupported range"):
        ember.arange(0, float("nan"))
    with pytest.raises(RuntimeError, match="invalid size, possible overflow"):
        ember.arange(0, 1e20, 1e-10)
    with pytest.raises(RuntimeError, match="complex"):
        ember.arange(1 + 2j)
    with pytest.raises(NotImplementedError, match=r"\[arange\] not implemented for dtype bool"):
        ember.arange(5, dtype=ember.bool)
    with pytest.raises(NotImplementedError, match="complex64"):
        ember.arange(5, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="dtype float32 does not match dtype of out"):
        ember.arange(5, dtype=ember.float32, out=ember.empty(0, dtype=ember.int32))
    with pytest.raises(TypeError, match="must be a number"):
        ember.arange("5")
    with pytest.raises(TypeError, match="missing required argument 'end'"):
        ember.arange()


def test_range_is_inclusive_and_deprecated():
    with pytest.warns(UserWarning, match="deprecated"):
        assert ember.range(0, 3).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.warns(UserWarning):
        assert ember.range(0, 3).dtype is ember.float32
        assert ember.range(0, 1, 0.3).shape == (4,)
        assert ember.range(0, 5, 2, dtype=ember.int64).tolist() == [0, 2, 4]
        assert ember.range(0, 5.5, 2, dtype=ember.int64).tolist() == [0, 2, 4]
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            ember.range(0, 3, 0)
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            ember.range(3, 0)


def test_linspace_and_logspace():
    assert ember.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ember.linspace(0, 10, 4, dtype=ember.int64).tolist() == [0, 3, 6, 10]
    assert ember.linspace(-5, 5, 5, dtype=ember.uint8).tolist() == [251, 189, 128, 66, 5]
    assert ember.linspace(0, 1, 1).tolist() == [0.0]
    assert ember.linspace(0, 1, 0).shape == (0,)
    assert ember.linspace(0, 1 + 1j, 3).dtype is ember.complex64
    assert ember.linspace(ember.tensor(0), ember.tensor(1), 3).tolist() == [0.0, 0.5, 1.0]
    assert ember.linspace(0, 1, 3, out=ember.empty(0, dtype=ember.int32)).tolist() == [0, 0, 1]
    assert ember.linspace(1, 1000, 7, dtype=ember.float16).tolist() == [
        1.0, 167.5, 334.0, 500.5, 667.0, 833.5, 1000.0]
    assert ember.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert ember.logspace(0, 2, 3, base=2).tolist() == [1.0, 2.0, 4.0]
    assert ember.logspace(0, 3, 4, 2, dtype=ember.int32).tolist() == [1, 2, 4, 8]
    assert ember.logspace(0, 10, 4, dtype=ember.uint8).tolist() == [1, 106, 52, 0]
    assert ember.logspace(0, 2, 3, base=-2).tolist() == [1.0, -2.0, 4.0]
    assert ember.logspace(0, 2, 1).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ember.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ember.logspace(0, 1, -1)
    with pytest.raises(TypeError, match="must be int, not float"):
        ember.linspace(0, 1, 2.5)
    with pytest.raises(TypeError):
        ember.linspace(0, 1)
    with pytest.raises(RuntimeError, match="only supports 0-dimensional start and end tensors"):
        ember.linspace(ember.tensor([0]), ember.tensor(1), 3)
    with pytest.raises(NotImplementedError, match="bool"):
        ember.linspace(0, 1, 3, dtype=ember.bool)
    with pytest.raises(TypeError, match="complex start or end needs a complex dtype"):
        ember.linspace(0, 1j, 3, dtype=ember.float32)


def test_eye():
    assert ember.eye(3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert ember.eye(2, 3, dtype=ember.int64).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert ember.eye(3, 1).tolist() == [[1.0], [0.0], [0.0]]
    assert ember.eye(0).shape == (0, 0)
    assert ember.eye(2, dtype=ember.bool).tolist() == [[True, False], [False, True]]
    out = ember.empty(5)
    assert ember.eye(2, out=out) is out and out.shape == (2, 2)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        ember.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -1"):
        ember.eye(2, -1)
    with pytest.raises(RuntimeError, match="dtype int32 does not match dtype of out"):
        ember.eye(2, dtype=ember.int32, out=ember.empty(0))


def test_complex_and_polar():
    c = ember.complex(ember.tensor([1.0]), ember.tensor([2.0]))
    assert c.dtype is ember.complex64 and c.tolist() == [1 + 2j]
    c = ember.complex(ember.tensor([1.0, 2], dtype=ember.float64),
                      ember.tensor([[2.0], [3]], dtype=ember.float64))
    assert c.dtype is ember.complex128 and c.tolist() == [[1 + 2j, 2 + 2j], [1 + 3j, 2 + 3j]]
    p = ember.polar(ember.tensor([2.0], dtype=ember.float64),
                    ember.tensor([np.pi / 2], dtype=ember.float64))
    np.testing.assert_allclose(p.numpy(), [2j], atol=1e-15)
    out = ember.empty(0, dtype=ember.complex64)
    assert ember.complex(ember.tensor([1.0]), ember.tensor([0.5]), out=out) is out
    assert out.tolist() == [1 + 0.5j]
    with pytest.raises(RuntimeError, match="Expected object of scalar type float32 but got "
                       "scalar type float64 for second argument"):
        ember.complex(ember.tensor([1.0]), ember.tensor([2.0], dtype=ember.float64))
    with pytest.raises(NotImplementedError, match="Expected both inputs to be Float or Double"):
        ember.complex(ember.tensor([1]), ember.tensor([2]))
    with pytest.raises(NotImplementedError, match="complex32"):
        ember.complex(ember.ones(1, dtype=ember.float16), ember.ones(1, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="for argument 'out'"):
        ember.complex(ember.tensor([1.0]), ember.tensor([2.0]), out=ember.empty(1))
    with pytest.raises(TypeError):
        ember.complex(1.0, 2.0)
    with pytest.raises(RuntimeError, match=r"\[polar\] Expected object of scalar type float64"):
        ember.polar(ember.tensor([2], dtype=ember.float64), ember.tensor([1.0]))


def test_requires_grad_argument():
    # Every factory takes requires_grad=; True makes a leaf that requires grad.
    assert not ember.zeros(2, requires_grad=False).requires_grad
    made = [
        ember.zeros(2, requires_grad=True),
        ember.ones(2, 3, requires_grad=True),
        ember.empty(2, requires_grad=True),
        ember.full((2,), 1.5, requires_grad=True),
        ember.tensor([1.0], requires_grad=True),
        ember.rand(2, requires_grad=True),
        ember.randn(2, requires_grad=True),
        ember.arange(3.0, requires_grad=True),
        ember.linspace(0, 1, 3, requires_grad=True),
        ember.eye(2, requires_grad=True),
        ember.zeros_like(ember.ones(2), requires_grad=True),
        ember.ones(1).new_zeros(2, requires_grad=True),
    ]
    for t in made:
        assert t.requires_grad and t.is_leaf and t.grad_fn is None
    with pytest.raises(RuntimeError, match=r"\[zeros\] only Tensors of floating point"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)
    # A failed request leaves nothing behind for the next factory.
    assert not ember.zeros(2).requires_grad


def test_a_bool_argument_whose_truth_raises_is_reported_not_a_system_error():
    # numpy's ValueError from __bool__ surfaces as itself (it used to leak out as SystemError).
    ambiguous = np.array([1.0, 2.0])
    for make in (lambda: ember.zeros(2, requires_grad=ambiguous),
                 lambda: ember.eye(2, requires_grad=ambiguous),
                 lambda: ember.empty_like(ember.ones(2), requires_grad=ambiguous),
                 lambda: ember.ones(2).new_empty_strided((2,), (1,), requires_grad=ambiguous),
                 lambda: ember.ones(2).to(ember.float64, copy=ambiguous)):
        with pytest.raises(ValueError, match="ambiguous"):
            make()
    assert ember.zeros(2, requires_grad=np.True_).requires_grad
