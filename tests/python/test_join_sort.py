"""Focused tests of the joining and ordering family: sort stability and NaN order, topk and
kthvalue, the unique variants, einsum over many equations (against np.einsum), cat's type
promotion and legacy empty rule, views returned by meshgrid, in-place forms, out=, named tuple
results, and the error class and message of every op."""

import numpy as np
import pytest

import ember
from opinfo import make_array, make_tensor

nan = float("nan")
inf = float("inf")


# ---- sort / argsort / msort ---------------------------------------------------------------

def test_sort_nan_order_and_stability():
    x = ember.tensor([3.0, nan, 1.0, -0.0, 0.0, nan, 2.0, 1.0, -inf, inf])
    v, i = ember.sort(x)
    assert i.tolist() == [8, 3, 4, 2, 7, 6, 0, 9, 1, 5]
    assert np.array_equal(v.numpy(), x.numpy()[i.numpy()], equal_nan=True)
    assert np.signbit(v.numpy()[1])  # -0.0 keeps its sign and its place before 0.0
    v, i = ember.sort(x, descending=True, stable=True)
    assert i.tolist() == [1, 5, 9, 0, 6, 2, 7, 3, 4, 8]
    v, i = ember.sort(x, stable=True)
    assert i.tolist() == [8, 3, 4, 2, 7, 6, 0, 9, 1, 5]


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int8, ember.int32,
                                   ember.float16, ember.bfloat16, ember.float64])
def test_sort_is_stable_with_many_ties(dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, size=(5, 200)).astype(np.float64)
    if dtype is ember.bool:
        a = (a > 1).astype(np.float64)
    t = make_tensor(a.astype(bool) if dtype is ember.bool else a, dtype)
    for desc in (False, True):
        _, idx = ember.sort(t, dim=1, descending=desc, stable=True)
        key = -a if desc else a
        want = np.argsort(key, axis=1, kind="stable")
        np.testing.assert_array_equal(idx.numpy(), want)


def test_sort_large_rows_parallel():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 5000)).astype(np.float32)
    v, i = ember.sort(ember.tensor(a), dim=1)
    np.testing.assert_array_equal(v.numpy(), np.sort(a, axis=1))
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, axis=1, kind="stable"))


def test_sort_named_tuple_and_forms():
    x = ember.tensor([[2, 1, 3], [0, 5, 4]])
    r = ember.sort(x)
    assert type(r).__name__ == "sort"
    assert r.values.tolist() == [[1, 2, 3], [0, 4, 5]]
    assert r.indices.tolist() == [[1, 0, 2], [0, 2, 1]]
    values, indices = r
    assert values is r[0] and indices is r[1]
    assert repr(r).startswith("ember.return_types.sort(\nvalues=tensor(")
    assert "\nindices=tensor(" in repr(r)
    assert x.sort(dim=0, descending=True).values.tolist() == [[2, 5, 4], [0, 1, 3]]
    assert x.argsort(dim=1).tolist() == [[1, 0, 2], [0, 2, 1]]
    assert ember.argsort(x, dim=1, descending=True).tolist() == [[2, 0, 1], [1, 2, 0]]
    assert ember.msort(x).tolist() == [[0, 1, 3], [2, 5, 4]]
    assert x.msort().tolist() == [[0, 1, 3], [2, 5, 4]]
    z = ember.sort(ember.tensor(3.5).reshape(()))
    assert z.values.shape == () and z.indices.item() == 0


def test_sort_out():
    x = ember.tensor([3.0, 1.0, 2.0])
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.sort(x, out=(v, i))
    assert r.values is v and r.indices is i
    assert v.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 0]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got "
                                           "int instead"):
        ember.sort(x, out=(ember.empty(0), ember.empty(0, dtype=ember.int32)))
    # sorting into the input's own storage
    y = ember.tensor([3.0, 1.0, 2.0])
    ember.sort(y, out=(y, ember.empty(0, dtype=ember.int64)))
    assert y.tolist() == [1.0, 2.0, 3.0]


def test_sort_errors():
    with pytest.raises(IndexError, match=r"\[sort\] Dimension out of range"):
        ember.sort(ember.ones(2, 3), dim=2)
    with pytest.raises(TypeError, match=r"\[sort\] Sort does not support complex"):
        ember.sort(ember.ones(2, dtype=ember.complex64))
    with pytest.raises(IndexError, match=r"\[argsort\]|\[sort\]"):
        ember.argsort(ember.ones(2), dim=-2)


# ---- topk / kthvalue ------------------------------------------------------------------------

def test_topk():
    x = ember.tensor([3.0, nan, 1.0, 7.0, -2.0])
    r = ember.topk(x, 2)
    assert type(r).__name__ == "topk"
    assert np.isnan(r.values[0].item()) and r.values[1].item() == 7.0
    assert r.indices.tolist() == [1, 3]
    r = ember.topk(x, 3, largest=False)
    assert r.values.tolist() == [-2.0, 1.0, 3.0] and r.indices.tolist() == [4, 2, 0]
    m = ember.tensor([[1, 9, 3], [8, 2, 7]])
    assert m.topk(1, dim=0).indices.tolist() == [[1, 0, 1]]
    assert ember.topk(m, 0).values.shape == (2, 0)
    assert ember.topk(ember.ones(0, 3), 1, 1).values.shape == (0, 1)
    assert ember.topk(ember.tensor(4.0).reshape(()), 1).values.shape == ()
    ties = ember.tensor([1, 1, 1, 1])
    assert ember.topk(ties, 2).indices.tolist() == [0, 1]  # ties resolve in index order
    rng = np.random.default_rng(2)
    big = rng.permutation(100000).astype(np.float32)
    r = ember.topk(ember.tensor(big), 5)
    assert r.values.tolist() == [99999.0, 99998.0, 99997.0, 99996.0, 99995.0]
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    ember.topk(x, 2, out=(v, i))
    assert i.tolist() == [1, 3]


def test_kthvalue():
    x = ember.tensor([3.0, 1.0, 3.0, 3.0])
    r = ember.kthvalue(x, 3)
    assert type(r).__name__ == "kthvalue"
    assert r.values.item() == 3.0 and r.indices.item() == 2
    assert np.isnan(ember.kthvalue(ember.tensor([3.0, nan, 1.0]), 3).values.item())
    m = ember.tensor([[4, 1], [2, 3], [0, 5]])
    r = m.kthvalue(2, dim=0, keepdim=True)
    assert r.values.tolist() == [[2, 3]] and r.indices.tolist() == [[1, 1]]
    assert ember.kthvalue(ember.ones(0, 3), 1, 1).values.shape == (0,)


def test_topk_kthvalue_errors():
    with pytest.raises(RuntimeError, match=r"\[topk\] selected index k out of range"):
        ember.topk(ember.ones(3), 4)
    with pytest.raises(RuntimeError, match=r"\[topk\] selected index k out of range"):
        ember.topk(ember.ones(3), -1)
    with pytest.raises(RuntimeError, match=r"\[kthvalue\] kthvalue\(\): selected number k out of "
                                           r"range for dimension 0"):
        ember.kthvalue(ember.ones(3), 0)
    with pytest.raises(IndexError, match=r"\[topk\] Dimension out of range"):
        ember.topk(ember.ones(3), 1, dim=1)
    with pytest.raises(RuntimeError, match=r"\[topk\] not implemented for dtype bool"):
        ember.topk(ember.ones(3, dtype=ember.bool), 1)


# ---- unique ---------------------------------------------------------------------------------

def test_unique_variants():
    x = ember.tensor([3.0, nan, 1.0, nan, 1.0])
    u = ember.unique(x)
    assert u.shape == (4,) and u[:2].tolist() == [1.0, 3.0]  # each NaN stays its own value
    u, inv, cnt = ember.unique(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [1, 2, 0, 3, 0] and cnt.tolist() == [2, 1, 1, 1]
    u, inv = ember.unique(ember.tensor([[3, 1], [2, 1]]), return_inverse=True)
    assert u.tolist() == [1, 2, 3] and inv.tolist() == [[2, 0], [1, 0]]
    u, cnt = ember.tensor([2, 2, 0]).unique(return_counts=True)
    assert u.tolist() == [0, 2] and cnt.tolist() == [1, 2]
    z = ember.tensor([3.0, -0.0, 1.0, 0.0])
    assert ember.unique(z).tolist() == [0.0, 1.0, 3.0]
    t = ember.tensor([[3, 1], [2, 1], [3, 1]])
    u, inv, cnt = ember.unique(t, dim=0, return_inverse=True, return_counts=True)
    assert u.tolist() == [[2, 1], [3, 1]] and inv.tolist() == [1, 0, 1] and cnt.tolist() == [1, 2]
    u, inv, cnt = ember.unique(t, dim=1, return_inverse=True, return_counts=True)
    assert u.tolist() == [[1, 3], [1, 2], [1, 3]] and inv.tolist() == [1, 0]
    u, inv, cnt = ember.unique(ember.ones(0, 3), dim=0, return_inverse=True, return_counts=True)
    assert u.shape == (0, 3) and inv.shape == (0,) and cnt.shape == (0,)
    u, inv, cnt = ember.unique(ember.tensor(3).reshape(()), return_inverse=True,
                               return_counts=True)
    assert u.tolist() == [3] and inv.shape == () and cnt.tolist() == [1]
    assert ember.unique(ember.tensor([True, False, True])).tolist() == [False, True]


def test_unique_consecutive():
    x = ember.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    u, inv, cnt = ember.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert u.tolist() == [1, 2, 3, 1, 2]
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and cnt.tolist() == [2, 2, 1, 2, 1]
    assert x.unique_consecutive().tolist() == [1, 2, 3, 1, 2]
    u, cnt = ember.unique_consecutive(ember.tensor([nan, nan, 2.0]), return_counts=True)
    assert cnt.tolist() == [1, 1, 1]
    rows = ember.tensor([[3, 1], [3, 1], [2, 1]])
    u, inv, cnt = ember.unique_consecutive(rows, return_inverse=True, return_counts=True, dim=0)
    assert u.tolist() == [[3, 1], [2, 1]] and inv.tolist() == [0, 0, 1] and cnt.tolist() == [2, 1]


def test_unique_errors():
    with pytest.raises(IndexError, match=r"\[unique\] Dimension out of range"):
        ember.unique(ember.ones(2, 3), dim=2)
    with pytest.raises(RuntimeError, match=r"There are 0 sized dimensions, and they aren't "
                                           r"selected"):
        ember.unique(ember.ones(0, 3), dim=1)
    with pytest.raises(IndexError, match=r"Dimension specified as 0 but tensor has no "
                                         r"dimensions"):
        ember.unique_consecutive(ember.tensor(5).reshape(()), dim=0)
    with pytest.raises(NotImplementedError, match=r"not implemented for 'ComplexFloat'"):
        ember.unique(ember.ones(2, dtype=ember.complex64))


# ---- einsum ---------------------------------------------------------------------------------

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->j", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]), ("i,i", [(4,), (4,)]), ("i,i->i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]), ("i,j", [(2,), (3,)]), ("ij,j->i", [(3, 4), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (1, 4, 5)]),
    ("bij,bjk->b", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(3, 1, 2, 3), (4, 3, 2)]), ("i...,i...->...", [(3, 2, 4), (3, 2, 4)]),
    ("...,...", [(2, 3), (3,)]), ("...ii->...i", [(2, 3, 3)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]), ("ij,kj->ikj", [(2, 3), (4, 3)]),
    ("ab,ab,ab->a", [(2, 3), (2, 3), (2, 3)]), ("Ab,bA->A", [(2, 3), (3, 2)]),
    ("ab,bc,cd,de->ae", [(2, 9), (9, 8), (8, 7), (7, 3)]), ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("ij,ij->", [(3, 4), (3, 4)]), ("ijk->kji", [(2, 3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]), ("ij,j", [(2, 3), (1,)]),
    ("ij,kl->", [(2, 3), (4, 5)]), ("ik,k...->i...", [(2, 3), (3, 4, 5)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
@pytest.mark.parametrize("dtype", [ember.float64, ember.float32, ember.complex128, ember.int64])
def test_einsum_vs_numpy(eq, shapes, dtype):
    rng = np.random.default_rng(3)
    arrays = [make_array(s, dtype, rng) for s in shapes]
    tensors = [make_tensor(a, dtype, layout="transposed" if a.ndim >= 2 else "contiguous")
               for a in arrays]
    got = ember.einsum(eq, *tensors)
    want = np.einsum(eq.replace(" ", ""), *arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    # the list form gives the same
    np.testing.assert_allclose(ember.einsum(eq, tensors).numpy(), want, rtol=1e-5, atol=1e-5)


def test_einsum_errors():
    f = ember.ones
    with pytest.raises(RuntimeError, match=r"subscript j has size 4 for operand 1 which does not "
                                           r"broadcast with previously seen size 3"):
        ember.einsum("ij,jk", f(2, 3), f(4, 5))
    with pytest.raises(RuntimeError, match="fewer operands were provided"):
        ember.einsum("ij,jk->ik", f(2, 3))
    with pytest.raises(RuntimeError, match="more operands were provided"):
        ember.einsum("ij->ij", f(2, 3), f(2, 3))
    with pytest.raises(RuntimeError, match="output subscript k does not appear"):
        ember.einsum("ij->ik", f(2, 3))
    with pytest.raises(RuntimeError, match=r"number of subscripts in the equation \(3\) does not "
                                           r"match the number of dimensions \(2\)"):
        ember.einsum("ijk->ij", f(2, 3))
    with pytest.raises(RuntimeError, match="subscript i is repeated for operand 0 but the sizes "
                                           "don't match, 3 != 2"):
        ember.einsum("ii->i", f(2, 3))
    with pytest.raises(RuntimeError, match="output subscript i appears more than once"):
        ember.einsum("ij->ii", f(2, 3))
    with pytest.raises(RuntimeError, match="invalid subscript given at index 1"):
        ember.einsum("i1->i", f(2, 3))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Long"):
        ember.einsum("ij,j", f(2, 3), f(3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="covered by ellipsis"):
        ember.einsum("...ij,...jk", f(2, 2, 3), f(3, 3, 4))
    # Fewer than two arguments is PyTorch's ValueError; a first argument that is not a string is
    # a TypeError (Ember has no sublist form of einsum).
    with pytest.raises(ValueError, match="equation string"):
        ember.einsum(f(2, 3))
    with pytest.raises(TypeError, match="equation string"):
        ember.einsum(f(2, 3), f(2, 3))


# ---- cat / stack family -----------------------------------------------------------------------

def test_cat_promotion_and_legacy_empty():
    a = ember.ones(2, 3, dtype=ember.int32)
    b = ember.ones(2, 3, dtype=ember.float16)
    r = ember.cat([a, b])
    assert r.dtype is ember.float16 and r.shape == (4, 3)
    r = ember.cat([a, ember.ones(0, dtype=ember.float64)])  # skipped, but promotes
    assert r.dtype is ember.float64 and r.shape == (2, 3)
    assert ember.cat([ember.ones(0), ember.ones(0)], dim=5).shape == (0,)
    assert ember.cat([ember.ones(2, 3), ember.ones(0)], dim=1).shape == (2, 3)
    assert ember.cat((ember.ones(1, 0), ember.ones(2, 0))).shape == (3, 0)
    c = ember.cat([ember.ones(2, 3, dtype=ember.bool), ember.ones(2, 3, dtype=ember.complex64)], -1)
    assert c.dtype is ember.complex64 and c.shape == (2, 6)
    assert ember.concat([a, a], axis=1).shape == (2, 6)
    assert ember.concatenate([a, a], axis=1).shape == (2, 6)
    assert ember.stack([a, a], axis=2).shape == (2, 3, 2)


def test_cat_out_and_large():
    rng = np.random.default_rng(4)
    parts = [rng.standard_normal((300, k)).astype(np.float32) for k in (100, 1, 257)]
    got = ember.cat([ember.tensor(p) for p in parts], dim=1)
    np.testing.assert_array_equal(got.numpy(), np.concatenate(parts, axis=1))
    out = ember.empty(0, dtype=ember.float64)
    r = ember.cat([ember.tensor(p) for p in parts], dim=1, out=out)
    assert r is out and out.dtype is ember.float64 and out.shape == (300, 358)
    with pytest.raises(TypeError, match=r"\[cat\] input types can't be cast to the desired output "
                                        r"type Int"):
        ember.cat([ember.ones(2), ember.ones(2)], out=ember.empty(4, dtype=ember.int32))
    x = ember.ones(2, 3)
    with pytest.raises(RuntimeError, match="cannot refer to any of the output memory"):
        ember.cat([x, x], out=x)


def test_stack_family():
    a, b = ember.tensor([1, 2]), ember.tensor([3, 4])
    assert ember.stack([a, b]).tolist() == [[1, 2], [3, 4]]
    assert ember.stack([a, b], dim=1).tolist() == [[1, 3], [2, 4]]
    assert ember.hstack([a, b]).tolist() == [1, 2, 3, 4]
    assert ember.vstack([a, b]).tolist() == [[1, 2], [3, 4]]
    assert ember.row_stack((a, b)).tolist() == [[1, 2], [3, 4]]
    assert ember.dstack([a, b]).shape == (1, 2, 2)
    cs = ember.column_stack([a, ember.tensor([[5, 6], [7, 8]])])
    assert cs.tolist() == [[1, 5, 6], [2, 7, 8]]
    out = ember.empty(0, dtype=ember.int64)
    assert ember.vstack([a, b], out=out) is out and out.shape == (2, 2)


def test_joining_errors():
    f = ember.ones
    with pytest.raises(ValueError, match=r"\[cat\] expected a non-empty list of Tensors"):
        ember.cat([])
    with pytest.raises(RuntimeError, match=r"\[cat\] Sizes of tensors must match except in "
                                           r"dimension 0. Expected size 3 but got size 4 for "
                                           r"tensor number 1 in the list."):
        ember.cat([f(2, 3), f(2, 4)])
    with pytest.raises(RuntimeError, match=r"\[cat\] Tensors must have same number of "
                                           r"dimensions: got 2 and 1"):
        ember.cat([f(2, 3), f(3)], dim=1)
    with pytest.raises(IndexError, match=r"\[cat\] Dimension out of range \(expected to be in "
                                         r"range of \[-2, 1\], but got 2\)"):
        ember.cat([f(2, 3), f(2, 3)], dim=2)
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 0\) cannot be "
                                           r"concatenated"):
        ember.cat([f(()), f(())])
    with pytest.raises(TypeError, match=r"expected Tensor as element 1"):
        ember.cat([f(2), 3])
    with pytest.raises(RuntimeError, match=r"\[stack\] stack expects each tensor to be equal "
                                           r"size, but got \[2, 3\] at entry 0 and \[2, 4\] at "
                                           r"entry 1"):
        ember.stack([f(2, 3), f(2, 4)])
    with pytest.raises(RuntimeError, match=r"\[stack\] stack expects a non-empty TensorList"):
        ember.stack([])
    with pytest.raises(IndexError, match=r"\[stack\] Dimension out of range"):
        ember.stack([f(2, 3)], dim=3)
    with pytest.raises(RuntimeError, match=r"\[hstack\] hstack expects a non-empty TensorList"):
        ember.hstack([])
    with pytest.raises(RuntimeError, match=r"\[vstack\] Sizes of tensors must match"):
        ember.vstack([f(2), f(3)])


# ---- reordering ---------------------------------------------------------------------------------

def test_reorder_ops_and_errors():
    x = ember.tensor([[1, 2, 3], [4, 5, 6]])
    assert x.flip(0).tolist() == [[4, 5, 6], [1, 2, 3]]
    assert x.flip(0, 1).tolist() == [[6, 5, 4], [3, 2, 1]]
    assert ember.flip(x, [-1]).tolist() == [[3, 2, 1], [6, 5, 4]]
    assert x.fliplr().tolist() == [[3, 2, 1], [6, 5, 4]]
    assert ember.flipud(x).tolist() == [[4, 5, 6], [1, 2, 3]]
    assert ember.roll(x, 1).tolist() == [[6, 1, 2], [3, 4, 5]]
    assert x.roll((1, -1), (0, 1)).tolist() == [[5, 6, 4], [2, 3, 1]]
    r = ember.rot90(x)
    assert r.tolist() == [[3, 6], [2, 5], [1, 4]]
    assert x.rot90(-1, [1, 0]).tolist() == np.rot90(np.array([[1, 2, 3], [4, 5, 6]]), -1,
                                                     axes=(1, 0)).tolist()
    assert x.repeat(2, 1).tolist() == [[1, 2, 3], [4, 5, 6], [1, 2, 3], [4, 5, 6]]
    assert x.tile(2).tolist() == [[1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6]]
    assert ember.repeat_interleave(ember.tensor([1, 2]), 2).tolist() == [1, 1, 2, 2]
    assert x.repeat_interleave(ember.tensor([1, 2]), dim=0).tolist() == [[1, 2, 3], [4, 5, 6],
                                                                          [4, 5, 6]]
    assert ember.repeat_interleave(ember.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    r32 = ember.repeat_interleave(ember.tensor([1, 2], dtype=ember.int32))
    assert r32.dtype is ember.int32 and r32.tolist() == [0, 1, 1]
    assert ember.repeat_interleave(x, 2, dim=0, output_size=4).shape == (4, 3)
    with pytest.raises(RuntimeError, match=r"\[flip\] dim 0 appears multiple times"):
        ember.flip(x, [0, 0])
    with pytest.raises(IndexError, match=r"\[flip\] Dimension out of range"):
        ember.flip(x, [2])
    with pytest.raises(RuntimeError, match=r"\[fliplr\] Input must be >= 2-d."):
        ember.fliplr(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"\[roll\] shifts and dimensions must align. shifts: "
                                           r"2, dims:1"):
        ember.roll(x, (1, 2), (0,))
    with pytest.raises(RuntimeError, match=r"\[roll\] `shifts` required"):
        ember.roll(x, [], [])
    with pytest.raises(RuntimeError, match=r"\[rot90\] expected total rotation dims == 2"):
        ember.rot90(x, 1, [0])
    with pytest.raises(RuntimeError, match=r"\[rot90\] expected rotation dims to be different"):
        ember.rot90(x, 1, [0, 0])
    with pytest.raises(RuntimeError, match=r"\[rot90\] expected total dims >= 2"):
        ember.rot90(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"\[repeat\] Number of dimensions of repeat dims can "
                                           r"not be smaller"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match=r"\[repeat\] Trying to create tensor with negative "
                                           r"dimension"):
        x.repeat(-1, 2)
    with pytest.raises(RuntimeError, match=r"\[repeat_interleave\] Repeats must be non-negative"):
        ember.repeat_interleave(x, -1)
    with pytest.raises(RuntimeError, match=r"repeats must have the same size as input along dim"):
        ember.repeat_interleave(x, ember.tensor([1, 2, 3]), dim=0)
    with pytest.raises(RuntimeError, match=r"repeats can not be negative"):
        ember.repeat_interleave(x, ember.tensor([1, -2]), dim=0)
    with pytest.raises(NotImplementedError, match=r"not implemented for 'Float'"):
        ember.repeat_interleave(x, ember.tensor([1.0, 2.0]), dim=0)
    with pytest.raises(RuntimeError, match=r"Invalid output_size, expected 4 but got 3"):
        ember.repeat_interleave(x, 2, dim=0, output_size=3)


# ---- triangular / diagonal ----------------------------------------------------------------------

def test_tri_diag_trace():
    x = ember.tensor(np.arange(12).reshape(3, 4))
    assert x.tril().tolist() == np.tril(np.arange(12).reshape(3, 4)).tolist()
    assert ember.triu(x, 1).tolist() == np.triu(np.arange(12).reshape(3, 4), 1).tolist()
    y = ember.tensor(np.arange(12).reshape(4, 3)).transpose(0, 1)  # non-contiguous, in place
    r = y.tril_(-1)
    assert r is y
    assert y.tolist() == np.tril(np.arange(12).reshape(4, 3).T, -1).tolist()
    z = ember.tensor(np.arange(9).reshape(3, 3))
    z.triu_()
    assert z.tolist() == np.triu(np.arange(9).reshape(3, 3)).tolist()
    out = ember.empty(0, dtype=ember.int64)
    assert ember.tril(x, out=out) is out and out.shape == (3, 4)
    assert ember.diag(ember.tensor([1, 2]), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert x.diag(-1).tolist() == [4, 9]
    assert ember.diag(x, 7).shape == (0,)
    assert ember.diag_embed(ember.tensor([[1, 2], [3, 4]]), -1, 0, 2).tolist() == [
        [[0, 0, 0], [0, 0, 0]], [[1, 0, 0], [3, 0, 0]], [[0, 2, 0], [0, 4, 0]]]
    assert ember.diagflat(ember.tensor([[1, 2], [3, 4]])).shape == (4, 4)
    t = ember.trace(ember.tensor([[1, 2], [3, 4]], dtype=ember.int32))
    assert t.dtype is ember.int64 and t.item() == 5
    assert ember.trace(ember.ones(0, 3)).item() == 0.0
    with pytest.raises(RuntimeError, match=r"\[tril\] tril: input tensor must have at least 2 "
                                           r"dimensions"):
        ember.tril(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"\[diag\] diag\(\): Supports 1D or 2D tensors. Got 3D"):
        ember.diag(ember.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match=r"\[diag_embed\] diagonal dimensions cannot be "
                                           r"identical 0, 0"):
        ember.diag_embed(ember.ones(2), 0, 0, 0)
    with pytest.raises(IndexError, match=r"\[diag_embed\] Dimension out of range"):
        ember.diag_embed(ember.ones(2), 0, 0, 3)
    with pytest.raises(RuntimeError, match=r"\[trace\] trace: expected a matrix, but got tensor "
                                           r"with dim 3"):
        ember.trace(ember.ones(2, 3, 4))
    with pytest.raises(NotImplementedError, match=r"\"trace\" not implemented for 'Bool'"):
        ember.trace(ember.ones(2, 2, dtype=ember.bool))


# ---- counting / searching -----------------------------------------------------------------------

def test_bincount_of_huge_values_raises():
    # max + 1 bins overflowed at INT64_MAX and the kernel wrote past an empty result (a fuzz
    # finding); near it the allocation itself refuses.
    with pytest.raises(RuntimeError, match=r"bincount.*9223372036854775807 \+ 1 bins"):
        ember.bincount(ember.tensor([2**63 - 1]))
    with pytest.raises(RuntimeError, match="overflows"):
        ember.bincount(ember.tensor([2**63 - 2]))


def test_bincount_histc_histogram():
    x = ember.tensor([1, 3, 1])
    assert ember.bincount(x).tolist() == [0, 2, 0, 1]
    assert x.bincount(minlength=6).tolist() == [0, 2, 0, 1, 0, 0]
    w32 = ember.bincount(x, weights=ember.tensor([1.0, 2.0, 3.0], dtype=ember.float32))
    assert w32.dtype is ember.float32 and w32.tolist() == [0.0, 4.0, 0.0, 2.0]
    w64 = ember.bincount(x, weights=ember.tensor([1, 2, 3]))
    assert w64.dtype is ember.float64
    h = ember.histc(ember.tensor([1.0, 2.0, 1.0, nan, 5.0]), bins=4, min=0, max=3)
    assert h.tolist() == [0.0, 2.0, 1.0, 0.0]
    assert ember.histc(ember.tensor([1.0, 1.0, 1.0]), bins=4).tolist() == [0.0, 0.0, 3.0, 0.0]
    assert ember.tensor([1.0, 2.0, 1.0]).histc(4).tolist() == [2.0, 0.0, 0.0, 1.0]
    r = ember.histogram(ember.tensor([1.0, 2.0, 1.0]), bins=4, range=(0.0, 3.0))
    assert type(r).__name__ == "histogram"
    assert r.hist.tolist() == [0.0, 2.0, 1.0, 0.0]
    np.testing.assert_allclose(r.bin_edges.numpy(), [0, 0.75, 1.5, 2.25, 3])
    r = ember.histogram(ember.tensor([1.0, 2, 1]), ember.tensor([0.0, 1, 2, 3]),
                        weight=ember.tensor([1.0, 2, 3]), density=True)
    np.testing.assert_allclose(r.hist.numpy(), [0.0, 2 / 3, 1 / 3], rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"\[bincount\] bincount only supports 1-d "
                                           r"non-negative integral inputs."):
        ember.bincount(ember.tensor([1, -3, 1]))
    with pytest.raises(NotImplementedError, match=r"\"bincount_cpu\" not implemented for 'Float'"):
        ember.bincount(ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"weights should be 1-d and have the same length"):
        ember.bincount(ember.tensor([1, 2]), weights=ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"minlength should be >= 0"):
        ember.bincount(ember.tensor([1]), minlength=-1)
    with pytest.raises(RuntimeError, match=r"\[histc\] torch.histc: max must be larger than min"):
        ember.histc(ember.tensor([1.0]), bins=4, min=3, max=1)
    with pytest.raises(RuntimeError, match=r"range of \[1, inf\] is not finite"):
        ember.histc(ember.tensor([1.0, 2.0, inf]), bins=4)
    with pytest.raises(RuntimeError, match=r"bins must be > 0"):
        ember.histc(ember.tensor([1.0]), bins=0)
    with pytest.raises(NotImplementedError, match=r"not implemented for 'Long'"):
        ember.histc(ember.tensor([1, 2]), bins=4)


def test_searchsorted_bucketize():
    seq = ember.tensor([1, 3, 5, 7])
    v = ember.tensor([3, 6, 9])
    assert ember.searchsorted(seq, v).tolist() == [1, 3, 4]
    assert ember.searchsorted(seq, v, right=True).tolist() == [2, 3, 4]
    assert ember.searchsorted(seq, v, side="right").tolist() == [2, 3, 4]
    r = ember.searchsorted(seq, v, out_int32=True)
    assert r.dtype is ember.int32
    s0 = ember.searchsorted(seq, 4)
    assert s0.shape == () and s0.item() == 2
    assert ember.searchsorted(ember.tensor([7, 1, 5, 3]), v,
                              sorter=ember.tensor([1, 3, 2, 0])).tolist() == [1, 3, 4]
    assert ember.searchsorted(ember.tensor([[1, 3], [5, 7]]),
                              ember.tensor([[3], [6]])).tolist() == [[1], [1]]
    assert ember.searchsorted(ember.tensor([1.0, 3.0, nan]),
                              ember.tensor([3.0, 6.0, nan])).tolist() == [1, 3, 3]
    assert ember.searchsorted(seq, ember.tensor([3.0, 6.5])).tolist() == [1, 3]
    assert ember.bucketize(v, seq).tolist() == [1, 3, 4]
    assert ember.bucketize(4, seq).item() == 2
    out = ember.empty(0, dtype=ember.int64)
    assert ember.bucketize(v, seq, out=out) is out
    with pytest.raises(RuntimeError, match=r"side can only be 'left' or 'right' but got middle"):
        ember.searchsorted(seq, v, side="middle")
    with pytest.raises(RuntimeError, match=r"side and right can't be set to opposites"):
        ember.searchsorted(seq, v, side="left", right=True)
    with pytest.raises(RuntimeError, match=r"boundaries tensor should be 1 dimension or the first"):
        ember.searchsorted(ember.tensor([[1, 3], [5, 7]]), v)
    with pytest.raises(RuntimeError, match=r"sorter must be a tensor of long dtype"):
        ember.searchsorted(seq, v, sorter=ember.tensor([1.0, 3, 2, 0]))
    with pytest.raises(RuntimeError, match=r"sorter index out of range"):
        ember.searchsorted(seq, v, sorter=ember.tensor([1, 3, 2, 5]))
    with pytest.raises(RuntimeError, match=r"boundary and sorter must have the same size"):
        ember.searchsorted(seq, v, sorter=ember.tensor([1, 3, 2]))
    with pytest.raises(RuntimeError, match=r"\[bucketize\] boundaries tensor must be 1 dimension"):
        ember.bucketize(v, ember.tensor([[1, 3]]))


# ---- grids ------------------------------------------------------------------------------------

def test_meshgrid_cartesian_combinations():
    a, b = ember.tensor([1, 2]), ember.tensor([3, 4, 5])
    gi = ember.meshgrid(a, b, indexing="ij")
    assert isinstance(gi, tuple) and gi[0].shape == (2, 3)
    assert gi[0].stride() == (1, 0) and gi[1].stride() == (0, 1)  # expanded views, no copies
    assert gi[0]._is_view_of(a)
    gx = ember.meshgrid([a, b], indexing="xy")
    assert gx[0].shape == (3, 2) and gx[0].stride() == (0, 1) and gx[1].stride() == (1, 0)
    assert ember.meshgrid(a, b)[0].shape == (2, 3)  # default "ij"
    assert ember.cartesian_prod(a, b).tolist() == [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]
    assert ember.combinations(ember.tensor([1, 2, 3])).tolist() == [[1, 2], [1, 3], [2, 3]]
    assert ember.combinations(ember.tensor([1, 2, 3]), r=3, with_replacement=True).shape == (10, 3)
    assert ember.combinations(ember.tensor([1, 2, 3]), r=0).shape == (0,)
    assert ember.combinations(ember.tensor([1, 2, 3]), r=4).shape == (0, 4)
    with pytest.raises(RuntimeError, match=r"meshgrid expects all tensors to have the same dtype"):
        ember.meshgrid(a, ember.tensor([1.0]), indexing="ij")
    with pytest.raises(RuntimeError, match=r"indexing must be one of \"xy\" or \"ij\", but "
                                           r"received: ab"):
        ember.meshgrid(a, b, indexing="ab")
    with pytest.raises(RuntimeError, match=r"meshgrid expects a non-empty TensorList"):
        ember.meshgrid()
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[1, 2\]"):
        ember.cartesian_prod(ember.tensor([[1, 2]]))
    with pytest.raises(RuntimeError, match=r"Expect a non-negative number, but got -1"):
        ember.combinations(a, r=-1)


# ---- products -----------------------------------------------------------------------------------

def test_products_and_errors():
    f = ember.ones
    assert ember.outer(ember.tensor([1, 2]), ember.tensor([1, 2, 3])).tolist() == [
        [1, 2, 3], [2, 4, 6]]
    assert ember.ger(f(2), f(4, dtype=ember.float64)).dtype is ember.float64
    assert ember.kron(ember.tensor([1, 2]), ember.tensor([[1, 2, 3]])).tolist() == [
        [1, 2, 3, 2, 4, 6]]
    assert ember.tensordot(f(2, 3, 4), f(3, 4, 5), dims=2).shape == (2, 5)
    assert ember.tensordot(f(2, 3, 4), f(4, 3, 5), dims=[[1, 2], [1, 0]]).shape == (2, 5)
    assert ember.tensordot(f(2, 3, 4), f(3, 4, 5),
                           dims=ember.tensor([[1, 2], [0, 1]])).shape == (2, 5)
    assert ember.tensordot(f(2, 3), f(4), dims=0).shape == (2, 3, 4)
    c = ember.cross(ember.tensor([[1.0, 0, 0]]), ember.tensor([[0.0, 1, 0]]), dim=1)
    assert c.tolist() == [[0.0, 0.0, 1.0]]
    assert ember.tensor([1, 0, 0]).cross(ember.tensor([0, 1, 0])).tolist() == [0, 0, 1]
    with pytest.raises(RuntimeError, match=r"\[outer\] outer: Expected 1-D argument self, but got "
                                           r"2-D"):
        ember.outer(f(2, 3), f(4))
    with pytest.raises(RuntimeError, match=r"\[tensordot\] contracted dimensions need to match, "
                                           r"but first has size 3 in dim -1 and second has size 4 "
                                           r"in dim 0"):
        ember.tensordot(f(2, 3), f(4, 5), 1)
    with pytest.raises(RuntimeError, match=r"both dimension lists should have same length"):
        ember.tensordot(f(2, 3), f(3, 5), ([1], [0, 1]))
    with pytest.raises(RuntimeError, match=r"tensordot expects dims >= 0, but got dims=-1"):
        ember.tensordot(f(2, 3), f(3, 5), -1)
    with pytest.raises(RuntimeError, match=r"both inputs should have same dtype"):
        ember.tensordot(f(2, 3), f(3, 5, dtype=ember.float64), 1)
    with pytest.raises(RuntimeError, match=r"\[cross\] linalg.cross: inputs dimension 1 must have "
                                           r"length 3. Got 3 and 4"):
        ember.cross(f(2, 3), f(2, 4), dim=1)
    with pytest.raises(RuntimeError, match=r"\[cross\] no dimension of size 3 in input"):
        ember.cross(f(2, 2), f(2, 2))
    with pytest.raises(RuntimeError, match=r"\[cross\] expected scalar type Float but found "
                                           r"Double"):
        ember.cross(f(2, 3), f(2, 3, dtype=ember.float64), dim=1)


def test_cdist():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 40, 5))
    b = rng.standard_normal((1, 30, 5))
    d = ((a[:, :, None, :] - b[:, None, :, :]) ** 2).sum(-1) ** 0.5
    for mode in (None, "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        kw = {} if mode is None else {"compute_mode": mode}
        np.testing.assert_allclose(ember.cdist(ember.tensor(a), ember.tensor(b), **kw).numpy(), d,
                                   rtol=1e-10, atol=1e-10)
    same = ember.tensor(a[0])
    np.testing.assert_allclose(np.diag(ember.cdist(same, same).numpy()), 0, atol=1e-7)
    f = ember.ones
    with pytest.raises(RuntimeError, match=r"X1 and X2 must have the same number of columns. X1: 3 "
                                           r"X2: 4"):
        ember.cdist(f(2, 3), f(4, 4))
    with pytest.raises(RuntimeError, match=r"cdist only supports at least 2D tensors, X1 got: 1D"):
        ember.cdist(f(3), f(4, 3))
    with pytest.raises(RuntimeError, match=r"cdist only supports non-negative p values"):
        ember.cdist(f(2, 3), f(4, 3), p=-1)
    with pytest.raises(RuntimeError, match=r"cdist only supports floating-point dtypes, X1 got: "
                                           r"Long"):
        ember.cdist(f(2, 3, dtype=ember.int64), f(4, 3, dtype=ember.int64))
    with pytest.raises(ValueError, match=r"foo is not a valid value for compute_mode"):
        ember.cdist(f(2, 3), f(2, 3), compute_mode="foo")
