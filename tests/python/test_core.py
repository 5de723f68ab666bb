"""Core behaviour: size checks, allocation failure, the view error, version counters,
fast-path fallbacks, and results that do not depend on the thread count."""

import numpy as np
import pytest

import ember


def test_size_overflow_raises():
    with pytest.raises(RuntimeError, match=r"\[empty\].*overflows"):
        ember.empty(2**62, 2**62)
    with pytest.raises(RuntimeError, match="overflow"):
        ember.zeros(2**62, dtype=ember.float64)  # 2^62 elements * 8 bytes
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.zeros(2, -1)


def test_failed_allocation_raises_memory_error():
    # 2^50 float32 elements = 4 PiB: more than the machine's memory and swap, so the allocator
    # refuses before asking the system (which may overcommit).
    with pytest.raises(MemoryError, match=r"\[empty\] cannot allocate .* more than this "
                                          r"machine's memory and swap"):
        ember.empty(2**50)


def test_view_error_names_dimension_and_suggests_reshape():
    t = ember.zeros(2, 3).transpose(0, 1)
    pattern = r"dimension 0 \(stride 1\) is not contiguous with dimension 1.*\.reshape\(\.\.\.\)"
    with pytest.raises(RuntimeError, match=pattern):
        t.view(6)
    assert t.reshape(6).shape == (6,)


def test_writes_through_views_bump_shared_version():
    base = ember.zeros(4, 4)
    v = base[1:3, ::2]
    before = base._version
    v.fill_(5.0)
    assert base._version == before + 1 == v._version
    expected = np.zeros((4, 4), np.float32)
    expected[1:3, ::2] = 5
    np.testing.assert_array_equal(base.numpy(), expected)


def test_operator_fallbacks_match_full_binding():
    a = ember.tensor([1.0, 2.0, 3.0])
    # An ndarray operand becomes a tensor of its own dtype (not a wrapped number), as in torch.
    r = a + np.array([1.0, 1.0, 1.0])
    assert isinstance(r, ember.Tensor) and r.dtype is ember.float64
    np.testing.assert_array_equal(r.numpy(), [2, 3, 4])
    with pytest.raises(TypeError):
        a * [2.0, 2.0, 2.0]
    with pytest.raises(TypeError):
        a + (1, 2, 3)
    with pytest.raises(TypeError):
        a + "x"
    # Reflected and in-place forms.
    np.testing.assert_array_equal((1 - a).numpy(), [0, -1, -2])
    np.testing.assert_array_equal((6 / a).numpy(), [6, 3, 2])
    b = a
    b += 1
    assert b is a
    np.testing.assert_array_equal(a.numpy(), [2, 3, 4])
    i = ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        i += 0.5


def test_fast_methods_fall_back_for_other_signatures():
    t = ember.arange(6) if hasattr(ember, "arange") else ember.tensor([0, 1, 2, 3, 4, 5])
    assert t.view((2, 3)).shape == (2, 3)
    assert t.view(-1, 2).shape == (3, 2)
    assert t.sum(0).item() == 15
    assert t.sum(dim=0, keepdim=True).shape == (1,)
    assert ember.zeros((2, 3), dtype=ember.int32).dtype is ember.int32
    assert ember.ones([4]).shape == (4,)
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 6"):
        t[6]
    assert t[-1].item() == 5


def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(0)
    a = ember.from_numpy(rng.standard_normal((300, 1000)).astype(np.float32))
    b = ember.from_numpy(rng.standard_normal((1000,)).astype(np.float32))
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = [(a * b + a).numpy().copy(), a.sum(1).numpy().copy()]
        ember.set_num_threads(2)
        two = [(a * b + a).numpy().copy(), a.sum(1).numpy().copy()]
    finally:
        ember.set_num_threads(old)
    for x, y in zip(one, two):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(RuntimeError, match="positive number of threads"):
        ember.set_num_threads(0)


def test_large_full_sum_is_accurate():
    rng = np.random.default_rng(1)
    x = rng.random(1_000_003).astype(np.float32)
    got = ember.from_numpy(x).sum().item()
    assert abs(got - x.astype(np.float64).sum()) / x.sum() < 1e-6


def test_fresh_results_start_at_version_zero():
    fresh = [
        ember.zeros(3), ember.ones(3), ember.full((2,), 1.0), ember.tensor([1, 2]), ember.eye(2),
        ember.zeros(3).clone(), ember.zeros(3).sum(), ember.zeros(3, 2).t().contiguous(),
        ember.zeros(3).double(),
    ]
    assert [t._version for t in fresh] == [0] * len(fresh)
    a = ember.zeros(3)
    a.fill_(1)
    a.zero_()
    a += 1
    assert a._version == 3


def test_large_outputs_use_streaming_stores_correctly():
    # Outputs of 16 MiB and more take the non-temporal store path (Note [Streaming Stores]):
    # check it with an unaligned out= view, odd lengths, in-place, and several element sizes.
    rng = np.random.default_rng(2)
    n = 4_194_304 + 3  # 16 MiB of float32 plus a tail
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    ea, eb = ember.from_numpy(a.copy()), ember.from_numpy(b.copy())
    np.testing.assert_array_equal((ea[1:] + eb[:-1]).numpy(), a[1:] + b[:-1])
    big = ember.zeros(n + 7)
    out = big[3 : 3 + n - 1]  # starts 12 bytes past a cache line
    ember.add(ea[1:], eb[:-1], out=out)
    np.testing.assert_array_equal(out.numpy(), a[1:] + b[:-1])
    assert big[:3].abs().sum().item() == 0 and big[3 + n - 1 :].abs().sum().item() == 0
    ea.mul_(2)
    np.testing.assert_array_equal(ea.numpy(), a * 2)
    d = rng.standard_normal(n)  # float64: 32 MiB
    np.testing.assert_allclose(ember.from_numpy(d).exp().numpy(), np.exp(d), rtol=1e-14)
    i8 = rng.integers(-100, 100, 4 * n).astype(np.int8)  # 16 MiB of int8
    np.testing.assert_array_equal((ember.from_numpy(i8) + 1).numpy(), (i8 + 1).astype(np.int8))


def test_large_broadcast_products_stream_every_row_correctly():
    # A broadcast product of 16 MiB and more streams each output row, partial cache lines at the
    # row ends included (loops.h, stream_results): rows whose length is not a multiple of a cache
    # line, rows that start mid-line, a scalar on either side, and 4-, 8- and 16-byte elements.
    rng = np.random.default_rng(3)
    for dtype, rows, cols in (
        (np.float32, 4099, 1031),
        (np.float64, 2051, 1027),
        (np.complex128, 1031, 1021),
        (np.int32, 4099, 1031),
    ):
        g = rng.standard_normal(rows).astype(dtype)
        x = rng.standard_normal(cols).astype(dtype)
        if np.iscomplexobj(g):
            g = g + 1j * rng.standard_normal(rows)
        if dtype == np.int32:
            g, x = rng.integers(-9, 9, rows).astype(dtype), rng.integers(-9, 9, cols).astype(dtype)
        eg, ex = ember.from_numpy(g), ember.from_numpy(x)
        np.testing.assert_array_equal((eg[:, None] * ex[None, :]).numpy(), g[:, None] * x)
        np.testing.assert_array_equal((ex[None, :] * eg[:, None]).numpy(), x * g[:, None])
        np.testing.assert_array_equal((eg[:, None] + ex[None, 1:]).numpy(), g[:, None] + x[1:])
    # Rows that start 4 bytes past a cache line, written through out=, leave their neighbours alone.
    g = rng.standard_normal(4100).astype(np.float32)
    x = rng.standard_normal(1029).astype(np.float32)
    big = ember.zeros(4100 * 1030 + 2)
    out = big[1 : 1 + 4100 * 1030].view(4100, 1030)[:, :1029]
    ember.mul(ember.from_numpy(g)[:, None], ember.from_numpy(x), out=out)
    np.testing.assert_array_equal(out.numpy(), g[:, None] * x)
    padding = big[1:].view(4100 * 1030 + 1)[: 4100 * 1030].view(4100, 1030)[:, 1029]
    assert padding.abs().sum().item() == 0 and big[0].item() == 0


def test_tensor_class_constructor_follows_torch_tensor():
    assert ember.Tensor([1, 2]).dtype is ember.float32  # data converts to the default dtype
    np.testing.assert_array_equal(ember.Tensor([1, 2]).numpy(), [1.0, 2.0])
    assert ember.Tensor(2, 3).shape == (2, 3) and ember.Tensor(2, 3).dtype is ember.float32
    assert ember.Tensor().shape == (0,)
    t = ember.ones(2)
    assert ember.Tensor(t)._is_view_of(t)
    with pytest.raises(TypeError):
        ember.Tensor("x")


def test_outer_reductions_split_rows_across_threads():
    # Few, narrow outputs and many reduced rows: the reduction splits the rows between threads
    # (plan_strips in reduce_loops.cpp). Results must match one thread and NumPy.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20000, 300))
    t = ember.from_numpy(a)
    old = ember.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            ember.set_num_threads(n)
            results.append((t.sum(0).numpy().copy(), t.amax(0).numpy().copy()))
    finally:
        ember.set_num_threads(old)
    for s, m in results:
        np.testing.assert_allclose(s, a.sum(0), rtol=1e-10, atol=1e-9)
        np.testing.assert_array_equal(m, a.max(0))
