"""Autograd of the indexing and view ops beyond what the op database checks: in-place forms on
non-leaf tensors, x[idx] = v, duplicate indices, multi-output views (split / unbind / chunk) and
PyTorch's rule against modifying them in place, double backward through advanced indexing,
grad_fn names, and error messages. Gradients are compared with PyTorch where it is installed."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(1234)


def arr(*shape):
    return RNG.uniform(-2.0, 2.0, shape)


def leaf(a, dtype=ember.float64):
    return ember.tensor(np.asarray(a), dtype=dtype).requires_grad_()


def check_parity(fn, *arrays, name=True):
    """fn(lib, *leaves) -> tensor, run with lib = ember and lib = torch on the same data: the
    outputs, the grad_fn names and the leaves' gradients (for a random output weighting) must
    agree."""
    torch = pytest.importorskip("torch")
    e_leaves = [leaf(a) for a in arrays]
    t_leaves = [
        torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=True) for a in arrays
    ]
    e_out, t_out = fn(ember, *e_leaves), fn(torch, *t_leaves)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    if name:
        assert e_out.grad_fn.name() == torch_name(t_out)
    w = RNG.uniform(-1.0, 1.0, tuple(t_out.shape))
    (e_out * ember.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for i, (e, t) in enumerate(zip(e_leaves, t_leaves)):
        if t.grad is None:
            assert e.grad is None or not e.grad.numpy().any(), f"leaf {i}"
            continue
        assert e.grad is not None, f"leaf {i} got no gradient"
        np.testing.assert_allclose(
            e.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"leaf {i}"
        )


def torch_name(t):
    return t.grad_fn.name().replace("torch::autograd::", "")


def idx(lib, values, dtype=None):
    return lib.tensor(values) if dtype is None else lib.tensor(values, dtype=dtype)


# ------------------------------------------------------------------------------------------
# in-place indexing ops on non-leaf tensors
# ------------------------------------------------------------------------------------------

INPLACE_CASES = {
    "index_add_": (
        lambda lib, x, s: (x * 1).index_add_(0, idx(lib, [0, 2, 0]), s, alpha=2),
        [(4, 3), (3, 3)],
    ),
    "index_add_dim1": (
        lambda lib, x, s: (x * 1).index_add_(1, idx(lib, [2, 2]), s),
        [(4, 3), (4, 2)],
    ),
    "index_copy_": (
        lambda lib, x, s: (x * 1).index_copy_(0, idx(lib, [3, 0]), s),
        [(4, 3), (2, 3)],
    ),
    "index_fill_scalar": (
        lambda lib, x: (x * 1).index_fill_(1, idx(lib, [0, 2]), 1.5),
        [(4, 3)],
    ),
    "index_fill_tensor": (
        lambda lib, x, v: (x * 1).index_fill_(0, idx(lib, [1, 3, 1]), v * 1),
        [(4, 3), ()],
    ),
    "scatter_src": (
        lambda lib, x, s: (x * 1).scatter_(1, idx(lib, [[0, 2], [1, 0], [2, 1]]), s),
        [(3, 4), (3, 2)],
    ),
    "scatter_value": (
        lambda lib, x: (x * 1).scatter_(0, idx(lib, [[0, 1, 0, 2]]), 0.25),
        [(3, 4)],
    ),
    "scatter_add_": (
        lambda lib, x, s: (x * 1).scatter_add_(0, idx(lib, [[0, 1, 0], [0, 0, 2]]), s),
        [(3, 3), (2, 3)],
    ),
    "masked_fill_scalar": (
        lambda lib, x: (x * 1).masked_fill_(lib.tensor([True, False, True]), -1.0),
        [(2, 3)],
    ),
    "masked_fill_tensor": (
        lambda lib, x, v: (x * 1).masked_fill_(lib.tensor([[True], [False]]), v * 2),
        [(2, 3), ()],
    ),
    "masked_scatter_": (
        lambda lib, x, s: (x * 1).masked_scatter_(lib.tensor([[True, False, True]] * 2), s),
        [(2, 3), (7,)],
    ),
    "index_put_": (
        lambda lib, x, v: (x * 1).index_put_((idx(lib, [0, 2]), idx(lib, [1, 1])), v),
        [(3, 4), (2,)],
    ),
    "index_put_accumulate": (
        lambda lib, x, v: (x * 1).index_put_((idx(lib, [0, 0, 2]),), v, accumulate=True),
        [(3, 4), (3, 4)],
    ),
    "index_add_through_view": (
        lambda lib, x, s: _through_view(lambda y: y[1:].index_add_(0, idx(lib, [0, 0]), s), x),
        [(4, 3), (2, 3)],
    ),
}


def _through_view(op, x):
    y = x * 1
    op(y)
    return y


@pytest.mark.parametrize("case", sorted(INPLACE_CASES))
def test_inplace_indexing_matches_torch(case):
    fn, shapes = INPLACE_CASES[case]
    check_parity(fn, *[arr(*s) for s in shapes])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_inplace_matches_torch(reduce, include_self):
    index = [[0, 1, 0], [2, 0, 0]]

    def fn(lib, x, s):
        return (x * 1).scatter_reduce_(0, idx(lib, index), s, reduce, include_self=include_self)

    check_parity(fn, arr(3, 3), arr(2, 3))


def test_scatter_reduce_prod_with_zeros_matches_torch():
    x = arr(3, 3)
    x[0, 1] = 0.0
    s = arr(2, 3)
    s[0, 0] = 0.0  # a single zero scattered to (0, 0)
    s[1, 2] = 0.0
    s[0, 2] = 0.0  # two zeros scattered to (0, 2)

    def fn(lib, a, b):
        return lib.scatter_reduce(a, 0, idx(lib, [[0, 1, 0], [2, 0, 0]]), b, "prod")

    check_parity(fn, x, s)


def test_scatter_reduce_amax_ties_share_the_gradient_like_torch():
    x = np.array([[1.0, 5.0], [2.0, 0.0]])
    s = np.array([[5.0, 5.0], [1.0, 0.0]])  # ties with self (5.0) and among src / self (0.0)

    def fn(lib, a, b):
        return lib.scatter_reduce(a, 0, idx(lib, [[0, 0], [1, 1]]), b, "amax")

    check_parity(fn, x, s)


# ------------------------------------------------------------------------------------------
# x[idx] = v and x[mask] = v on non-leaf tensors
# ------------------------------------------------------------------------------------------


def _assign(index_fn, x, v):
    y = x * 1
    y[index_fn(y)] = v
    return y


SETITEM_CASES = {
    "int-tensor": (lambda lib, x, v: _assign(lambda y: idx(lib, [2, 0]), x, v), [(4, 3), (2, 3)]),
    "broadcast-value": (
        lambda lib, x, v: _assign(lambda y: idx(lib, [1, 3]), x, v),
        [(4, 3), (3,)],
    ),
    "mask": (lambda lib, x, v: _assign(lambda y: y.detach() > 0, x, v), [(4, 3), ()]),
    "row-mask": (
        lambda lib, x, v: _assign(lambda y: lib.tensor([True, False, True, False]), x, v),
        [(4, 3), (2, 3)],
    ),
    "basic-then-advanced": (
        lambda lib, x, v: _assign(lambda y: (0, idx(lib, [2, 0])), x, v),
        [(4, 3), (2,)],
    ),
    "slice": (lambda lib, x, v: _assign(lambda y: (slice(1, 3), 1), x, v), [(4, 3), (2,)]),
    "two-tensors": (
        lambda lib, x, v: _assign(lambda y: (idx(lib, [0, 3]), idx(lib, [2, 2])), x, v),
        [(4, 3), (2,)],
    ),
}


@pytest.mark.parametrize("case", sorted(SETITEM_CASES))
def test_setitem_on_non_leaf_matches_torch(case):
    fn, shapes = SETITEM_CASES[case]
    check_parity(fn, *[arr(*s) for s in shapes])


def test_setitem_scalar_and_mask_scalar_match_torch():
    def fn(lib, x):
        y = x * 2
        y[y.detach() < 0] = 0.5
        y[idx(lib, [1])] = -3.0
        return y

    check_parity(fn, arr(3, 4))


# ------------------------------------------------------------------------------------------
# duplicate indices accumulate
# ------------------------------------------------------------------------------------------


def test_duplicate_indices_accumulate():
    x = leaf(np.arange(4.0))
    i = ember.tensor([0, 0, 3, 0])
    for fn in (
        lambda t: t[i],
        lambda t: t.index_select(0, i),
        lambda t: t.take(i),
        lambda t: t.gather(0, i),
        lambda t: t.take_along_dim(i, 0),
    ):
        x.grad = None
        fn(x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 0.0, 1.0])


def test_index_put_accumulate_with_duplicates_gives_every_value_the_gradient():
    x, v = leaf(np.zeros(3)), leaf([1.0, 2.0, 3.0])
    y = ember.index_put(x, (ember.tensor([1, 1, 1]),), v, accumulate=True)
    (y * ember.tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [10.0, 10.0, 10.0])
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 10.0, 100.0])


def test_advanced_indexing_matches_torch():
    check_parity(lambda lib, x: x[idx(lib, [[0, 2], [2, 2]]), :, idx(lib, [1, 0])], arr(3, 2, 4))
    check_parity(lambda lib, x: x[1:, idx(lib, [0, 0, 1])], arr(3, 2))
    check_parity(lambda lib, x: x[x.detach() > 0], arr(3, 4))
    check_parity(lambda lib, x: x[..., None, idx(lib, [1, 1])], arr(2, 3), name=False)


# ------------------------------------------------------------------------------------------
# double backward through advanced indexing
# ------------------------------------------------------------------------------------------


def test_advanced_indexing_is_twice_differentiable():
    x = leaf(arr(4, 3))
    i = ember.tensor([0, 3, 0])
    assert gradgradcheck(lambda t: t[i] * t[i], [x])
    assert gradgradcheck(lambda t: t[t.detach() > 0] * t[t.detach() > 0], [x])
    assert gradgradcheck(lambda t: t[1:, ember.tensor([2, 0])], [x])
    assert gradgradcheck(lambda t: t[ember.tensor([True, False, True, True])], [x])


def test_setitem_is_twice_differentiable():
    x, v = leaf(arr(4, 3)), leaf(arr(2, 3))

    def fn(a, b):
        y = a * a
        y[ember.tensor([3, 1])] = b * b
        return y

    assert gradcheck(fn, [x, v])
    assert gradgradcheck(fn, [x, v])


def test_index_backward_graph_records_index_put():
    x = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = x[ember.tensor([1, 1])]
    (g,) = ember.autograd.grad((y * y).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "IndexPutBackward0"
    np.testing.assert_array_equal(g.detach().numpy(), [[0, 0], [12, 16], [0, 0]])
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(gg.numpy(), [[0, 0], [4, 4], [0, 0]])


def test_index_fill_tensor_value_with_negative_and_repeated_indices():
    # The value lands once in each distinct slice (-1 and 3 are the same row here).
    x, v = leaf(arr(4, 3)), leaf(2.0)
    y = x.index_fill(0, ember.tensor([1, -1, 3, 1]), v)
    y.sum().backward()
    assert float(v.grad) == 6.0
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [1.0, 0.0, 1.0, 0.0])


# ------------------------------------------------------------------------------------------
# multi-output views: split / chunk / unbind
# ------------------------------------------------------------------------------------------


def test_split_outputs_used_separately_match_torch():
    def fn(lib, x):
        a, b, c = (x * 1).split([1, 2, 1], dim=1)
        return a * 2 + c * c  # b unused

    check_parity(fn, arr(3, 4), name=False)

    def fn2(lib, x):
        parts = x.unbind(1)
        return parts[0] * parts[2]

    check_parity(fn2, arr(3, 4), name=False)

    def fn3(lib, x):
        return x.chunk(3)[1] * 3

    check_parity(fn3, arr(7, 2), name=False)


def test_split_outputs_share_one_node():
    x = leaf(arr(6, 2))
    parts = x.split(2)
    assert [p.grad_fn.name() for p in parts] == ["SplitBackward0"] * 3
    assert parts[0].grad_fn is parts[2].grad_fn
    assert [p.output_nr for p in parts] == [0, 1, 2]
    assert x.split([1, 5])[1].grad_fn.name() == "SplitWithSizesBackward0"
    assert x.unbind()[3].grad_fn.name() == "UnbindBackward0"
    assert x.chunk(2)[0].grad_fn.name() == "SplitBackward0"
    assert x.tensor_split(2)[0].grad_fn.name() == "SliceBackward0"
    # Each output's gradient lands in its own rows.
    (parts[1] * 5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [0, 0, 5, 5, 0, 0])


MULTI_OUTPUT_MSG = (
    r"Output {} of {} is a view and is being modified inplace\. This view is the output of a "
    r"function that returns multiple views\. Such functions do not allow the output views to be "
    r"modified inplace\. You should replace the inplace operation by an out-of-place one\."
)


def test_inplace_on_multi_output_view_raises_like_torch():
    y = leaf(arr(4, 3)) * 1
    a, b = y.split(2)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Split")):
        a.mul_(2)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(1, "Split")):
        b.index_fill_(0, ember.tensor([0]), 1.0)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(2, "Unbind")):
        y.unbind(0)[2].add_(1)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Split")):
        y.chunk(2)[0].zero_()
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(1, "SplitWithSizes")):
        y.split([1, 3])[1].add_(1)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Select")):
        y.split([1, 3])[1][0] = 5.0  # a view of a piece: its own op is named
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Select")):
        y.split(2)[0][0].add_(1)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Split")):
        leaf(arr(4, 3)).split(2)[0].mul_(2)  # pieces of a leaf: the same error
    # Out of grad mode, or for pieces of single-output ops (tensor_split), it is allowed.
    with ember.no_grad():
        a.mul_(2)
    y.tensor_split(2)[0].mul_(2)
    assert y.grad_fn.name() == "CopySlices"


def test_inplace_on_multi_output_view_torch_agrees():
    torch = pytest.importorskip("torch")
    y = torch.zeros(4, 3, requires_grad=True) * 1
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Split")):
        y.split(2)[0].mul_(2)
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Select")):
        y.split(2)[0][0].add_(1)


# ------------------------------------------------------------------------------------------
# grad_fn names
# ------------------------------------------------------------------------------------------

NAME_CASES = [
    lambda lib, x: x[0],
    lambda lib, x: x[:, 1],
    lambda lib, x: x[1:3],
    lambda lib, x: x[None],
    lambda lib, x: x[...],
    lambda lib, x: x[:],
    lambda lib, x: x[:, :],
    lambda lib, x: x[0:, 1],
    lambda lib, x: x[:, idx(lib, [1])],
    lambda lib, x: x[idx(lib, [0, 1])],
    lambda lib, x: x.narrow(1, 0, 2),
    lambda lib, x: x.narrow_copy(1, 1, 2),
    lambda lib, x: x.diagonal(),
    lambda lib, x: x.unfold(0, 2, 1),
    lambda lib, x: x.t(),
    lambda lib, x: x.T,
    lambda lib, x: x.mT,
    lambda lib, x: x.movedim(0, 1),
    lambda lib, x: x.unflatten(1, (2, 2)),
    lambda lib, x: x.broadcast_to((2, 4, 4)),
    lambda lib, x: x.expand_as(lib.zeros(3, 4, 4)),
    lambda lib, x: x.swapaxes(0, 1),
    lambda lib, x: x.t().contiguous(),
    lambda lib, x: x.view_as(lib.zeros(16)),
    lambda lib, x: x.index_select(0, idx(lib, [1])),
    lambda lib, x: x.gather(1, idx(lib, [[0], [1], [2], [3]])),
    lambda lib, x: x.take(idx(lib, [5])),
    lambda lib, x: x.take_along_dim(idx(lib, [[0], [1], [2], [3]]), 1),
    lambda lib, x: x.scatter(1, idx(lib, [[0], [1], [2], [3]]), x),
    lambda lib, x: x.scatter(1, idx(lib, [[0], [1], [2], [3]]), 1.0),
    lambda lib, x: x.scatter_add(1, idx(lib, [[0], [1], [2], [3]]), x),
    lambda lib, x: x.scatter_reduce(1, idx(lib, [[0], [1], [2], [3]]), x, "amax"),
    lambda lib, x: x.index_add(0, idx(lib, [1]), x[:1]),
    lambda lib, x: x.index_copy(0, idx(lib, [1]), x[:1]),
    lambda lib, x: x.index_fill(0, idx(lib, [1]), 2.0),
    lambda lib, x: x.index_fill(0, idx(lib, [1]), x[0, 0]),
    lambda lib, x: x.index_put((idx(lib, [1]),), x[0]),
    lambda lib, x: x.masked_fill(x > 0, 1.0),
    lambda lib, x: x.masked_fill(x > 0, x[0, 0]),
    lambda lib, x: x.masked_select(x > 0),
    lambda lib, x: x.masked_scatter(x > 0, x),
]


@pytest.mark.parametrize("k", range(len(NAME_CASES)))
def test_grad_fn_names_match_torch(k):
    torch = pytest.importorskip("torch")
    a = arr(4, 4)
    e = NAME_CASES[k](ember, leaf(a))
    t = NAME_CASES[k](torch, torch.tensor(a, requires_grad=True))
    assert e.grad_fn.name() == torch_name(t)


def test_non_differentiable_indexing_records_nothing():
    x = leaf(arr(3, 4))
    assert x.nonzero().grad_fn is None
    assert x.argwhere().grad_fn is None
    assert all(t.grad_fn is None for t in ember.nonzero(x, as_tuple=True))


# ------------------------------------------------------------------------------------------
# complex: conjugate views and the Wirtinger convention
# ------------------------------------------------------------------------------------------


def test_conjugating_views_match_torch():
    torch = pytest.importorskip("torch")
    a = arr(2, 3) + 1j * arr(2, 3)
    w = arr(3, 2) + 1j * arr(3, 2)
    for fn in (lambda t: t.H, lambda t: t.mH, lambda t: t.adjoint()):
        e = ember.tensor(a).requires_grad_()
        t = torch.tensor(a, requires_grad=True)
        fe, ft = fn(e), fn(t)
        assert fe.grad_fn.name() == ft.grad_fn.name() == "ConjBackward0"
        (fe * ember.tensor(w)).abs().sum().backward()
        (ft * torch.tensor(w)).abs().sum().backward()
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-10)


# ------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------


def test_inplace_on_leaf_or_its_view_raises():
    x = leaf(arr(3, 2))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x.index_add_(0, ember.tensor([0]), ember.ones(1, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x[ember.tensor([0])] = 1.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[1:].masked_fill_(ember.tensor([True, False]), 0.0)


def test_out_argument_refused_when_recording():
    x = leaf(arr(3, 2))
    i = ember.tensor([[0, 1]])
    with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments don't support"):
        ember.gather(x, 0, i, out=ember.empty(1, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments don't support"):
        ember.index_select(x, 0, ember.tensor([0]), out=ember.empty(1, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments don't support"):
        ember.masked_select(x, x > 0, out=ember.empty(0, dtype=ember.float64))


def test_scatter_reduce_refuses_complex_autograd_like_torch():
    x = ember.zeros(3, dtype=ember.complex128).requires_grad_()
    with pytest.raises(NotImplementedError, match="does not support automatic differentiation"):
        ember.scatter_reduce(x, 0, ember.tensor([0, 1]), x[:2] * 1, "sum")


def test_index_modified_after_forward_is_caught():
    x = leaf(arr(4, 2))
    i = ember.tensor([0, 2])
    y = x.index_select(0, i)
    i.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_scatter_reduce_prod_double_backward_with_repeated_zeros_raises():
    x = leaf([1.0, 2.0])
    s = leaf([0.0, 0.0, 3.0])
    y = ember.scatter_reduce(x, 0, ember.tensor([0, 0, 1]), s, "prod")
    (gx, gs) = ember.autograd.grad(y.sum(), (x, s), create_graph=True)
    np.testing.assert_array_equal(gs.detach().numpy(), [0.0, 0.0, 2.0])
    with pytest.raises(RuntimeError, match="Double backward is unsupported for src when >1 zeros"):
        gs.sum().backward()


def test_view_gradients_with_create_graph_are_differentiable():
    x = leaf(arr(4, 5))
    for fn in (
        lambda t: t[1] * t[1],
        lambda t: t[:, 1:4:2] * t[:, 1:4:2],
        lambda t: t.diagonal(1) * t.diagonal(1),
        lambda t: t.unfold(1, 3, 2) * t.unfold(1, 3, 2),
        lambda t: t.split(2)[1] * t.split(2)[1],
        lambda t: t.unbind(1)[3] * t.unbind(1)[0],
    ):
        assert gradgradcheck(fn, [x])


def test_t_inplace_records_like_torch():
    x = leaf(np.arange(6.0).reshape(2, 3))
    w = ember.arange(6.0, dtype=ember.float64).reshape(3, 2)
    y = x * 1
    y.t_()
    assert y.shape == (3, 2) and y.grad_fn.name() == "TBackward1"
    (y * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.numpy().T)
    # On a view: its history is regenerated from the base with the new geometry.
    x.grad = None
    v = (x * 1)[0:2]
    v.t_()
    (v * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.numpy().T)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.t_()


def test_setitem_number_special_forms_match_torch():
    def rows_mask(lib, x):
        y = x * 1
        y[lib.tensor([True, False, True])] = 2.0
        return y

    def column_index(lib, x):
        y = x * 1
        y[:, idx(lib, [[0, 2]])] = -1.0
        return y

    def int32_index(lib, x):
        y = x * 1
        y[idx(lib, [1], lib.int32)] = 4.0
        return y

    for fn in (rows_mask, column_index, int32_index):
        check_parity(fn, arr(3, 4))


def test_setitem_into_buffer_that_does_not_require_grad():
    w = leaf([1.0, 2.0])
    buf = ember.zeros(4, dtype=ember.float64)
    buf[ember.tensor([3, 0])] = w * 3
    assert buf.requires_grad and buf.grad_fn.name() == "IndexPutBackward0"
    (buf * ember.tensor([1.0, 2.0, 3.0, 4.0], dtype=ember.float64)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [12.0, 3.0])
    w.grad = None
    buf = ember.zeros(2, 3, dtype=ember.float64)
    buf[ember.tensor([[True, False, True], [False, False, False]])] = w
    assert buf.grad_fn.name() == "IndexPutBackward0"
    buf.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


def test_iterating_gives_unbind_rows_like_torch():
    y = leaf(arr(3, 2)) * 1
    rows = list(y)
    assert [r.grad_fn.name() for r in rows] == ["UnbindBackward0"] * 3
    with pytest.raises(RuntimeError, match=MULTI_OUTPUT_MSG.format(0, "Unbind")):
        rows[0].add_(1)


def test_setitem_number_with_bool_scalar_and_tensor_index():
    def fn(lib, x):
        y = x * 1
        y[True, idx(lib, [2, 0])] = 7.0
        return y

    check_parity(fn, arr(3, 2), name=False)


def test_narrow_copy_is_a_contiguous_copy_with_narrows_checks():
    x = ember.arange(12.0).reshape(3, 4)
    c = ember.narrow_copy(x.t(), 0, 1, 2)
    assert c.is_contiguous() and c._base is None
    np.testing.assert_array_equal(c.numpy(), x.numpy().T[1:3])
    out = ember.empty(0)
    assert ember.narrow_copy(x, 1, -2, 2, out=out) is out
    np.testing.assert_array_equal(out.numpy(), x.numpy()[:, 2:])
    with pytest.raises(RuntimeError, match=r"start \(3\) \+ length \(2\) exceeds dimension size"):
        x.narrow_copy(1, 3, 2)
    with pytest.raises(RuntimeError, match=r"Expected self.dtype\(\) == output.dtype\(\)"):
        ember.narrow_copy(x, 1, 0, 2, out=ember.empty(0, dtype=ember.float64))
    with pytest.raises(RuntimeError, match=r"functions with out=\.\.\. arguments don't support"):
        ember.narrow_copy(leaf(arr(3, 4)), 1, 0, 2, out=ember.empty(0, dtype=ember.float64))


def test_select_and_slice_of_a_permuted_view_give_the_right_gradients():
    # q, k, v = qkv.view(B, T, 3, H, D).permute(2, 0, 3, 1, 4) picked by select (and a slice):
    # their gradients are built in the permuted view's layout (so the permutation's backward
    # needs no copy); the values must be those of a plain dense computation, also twice
    # differentiable.
    rng = np.random.default_rng(3)
    base = rng.standard_normal((2, 5, 3, 4, 6))
    weights = [rng.standard_normal((2, 4, 5, 6)) for _ in range(3)]
    x = ember.tensor(base, requires_grad=True)
    parts = x.permute(2, 0, 3, 1, 4)
    loss = sum((parts[i] * ember.tensor(w)).sum() for i, w in enumerate(weights))
    loss = loss + (parts[1:, :, :, 2:] ** 2).sum()
    loss.backward()
    want = np.zeros((3, 2, 4, 5, 6))
    for i, w in enumerate(weights):
        want[i] += w
    want[1:, :, :, 2:] += 2 * base.transpose(2, 0, 3, 1, 4)[1:, :, :, 2:]
    np.testing.assert_allclose(x.grad.numpy(), want.transpose(1, 3, 0, 2, 4), rtol=1e-12)
    assert x.grad.is_contiguous()
    y = ember.tensor(rng.standard_normal((3, 4, 5)), requires_grad=True)
    assert gradgradcheck(lambda t: t.permute(2, 0, 1)[1] ** 3, (y,))
    assert gradcheck(lambda t: t.permute(1, 2, 0)[:, 1:4:2] * 2, (y,))
