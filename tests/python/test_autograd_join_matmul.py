"""Gradients of the joining, ordering and matmul families beyond the op database: values against
PyTorch (those tests skip without torch), broadcasting cases, einsum equations, ties, zero
distances, triangular offsets, in-place forms, double backward, node names and out= errors."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _data(shape, rng, complex_=False):
    a = rng.uniform(-2, 2, size=shape)
    if complex_:
        a = a + 1j * rng.uniform(-2, 2, size=shape)
    return a


def _grad_output(shape, rng, complex_):
    g = rng.standard_normal(shape)
    return g + 1j * rng.standard_normal(shape) if complex_ else g


def check_vs_torch(torch, fn, arrays, *, seed=0, rtol=1e-10, atol=1e-10, torch_fn=None,
                   output=0):
    """Runs fn(module, *leaves) in ember and torch on the same data, backpropagates the same
    random grad_output through output `output`, and compares results and input gradients."""
    e_in = [ember.tensor(a).requires_grad_() for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_out = fn(ember, *e_in)
    t_out = (torch_fn or fn)(torch, *t_in)
    if isinstance(e_out, tuple):
        e_out, t_out = e_out[output], t_out[output]
    t_np = t_out.detach().numpy()
    np.testing.assert_allclose(e_out.detach().numpy(), t_np, rtol=rtol, atol=atol)
    g = _grad_output(t_np.shape, np.random.default_rng(seed + 100), np.iscomplexobj(t_np))
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        assert (e.grad is None) == (t.grad is None), f"input {i}"
        if t.grad is not None:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i}")
    return e_out


def leaf(shape, seed=0, dtype=ember.float64):
    rng = np.random.default_rng(seed)
    return ember.tensor(_data(shape, rng, dtype.is_complex), dtype=dtype).requires_grad_()


# ---- matmul family -------------------------------------------------------------------------

MATMUL_CASES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (3, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (4, 3, 2)),
    ((4, 1, 2, 3), (1, 5, 3, 2)),
    ((2, 4, 1, 3), (3,)),
    ((0, 2, 3), (3, 4)),
    ((2, 0), (0, 4)),
]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("sa,sb", MATMUL_CASES, ids=[f"{a}@{b}" for a, b in MATMUL_CASES])
def test_matmul_broadcasting_grads_match_torch(torch, sa, sb, complex_):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    check_vs_torch(torch, lambda m, a, b: m.matmul(a, b),
                   [_data(sa, rng, complex_), _data(sb, rng, complex_)])


def test_matmul_records_the_products_pytorch_records():
    a, b, v = leaf((2, 3)), leaf((3, 4), 1), leaf((3,), 2)
    assert ember.matmul(v, v).grad_fn.name() == "DotBackward0"
    assert ember.matmul(a, v).grad_fn.name() == "MvBackward0"
    assert ember.matmul(a, b).grad_fn.name() == "MmBackward0"
    fn = ember.matmul(v, b).grad_fn
    assert fn.next_functions[0][0].name() == "MmBackward0"
    batched = ember.matmul(leaf((5, 2, 3)), leaf((5, 3, 4), 1))
    names, todo = set(), [batched.grad_fn]
    while todo:
        node = todo.pop()
        names.add(node.name())
        todo.extend(n for n, _ in node.next_functions if n is not None)
    assert "BmmBackward0" in names
    assert (a @ b).grad_fn.name() == "MmBackward0"


@pytest.mark.parametrize("name,shapes", [
    ("mm", [(2, 3), (3, 4)]),
    ("bmm", [(2, 2, 3), (2, 3, 4)]),
    ("mv", [(2, 3), (3,)]),
    ("dot", [(4,), (4,)]),
    ("vdot", [(4,), (4,)]),
    ("inner", [(2, 3), (4, 3)]),
    ("outer", [(3,), (4,)]),
    ("ger", [(3,), (4,)]),
    ("kron", [(2, 3), (3, 2)]),
])
@pytest.mark.parametrize("complex_", [False, True])
def test_products_grads_match_torch(torch, name, shapes, complex_):
    rng = np.random.default_rng(3)
    check_vs_torch(torch, lambda m, a, b: getattr(m, name)(a, b),
                   [_data(s, rng, complex_) for s in shapes])


def test_product_node_names():
    a, b = leaf((2, 3)), leaf((3, 4), 1)
    v, w = leaf((3,), 2), leaf((3,), 3)
    assert ember.mm(a, b).grad_fn.name() == "MmBackward0"
    assert ember.bmm(leaf((2, 2, 3)), leaf((2, 3, 4))).grad_fn.name() == "BmmBackward0"
    assert ember.mv(a, v).grad_fn.name() == "MvBackward0"
    assert ember.dot(v, w).grad_fn.name() == "DotBackward0"
    assert ember.vdot(v, w).grad_fn.name() == "VdotBackward0"
    assert ember.outer(v, w).grad_fn.name() == "MulBackward0"


ADD_CASES = [
    ("addmm", (2, 4), (2, 3), (3, 4)),
    ("addmm", (4,), (2, 3), (3, 4)),
    ("addmm", (), (2, 3), (3, 4)),
    ("addmv", (2,), (2, 3), (3,)),
    ("addmv", (1,), (2, 3), (3,)),
    ("addbmm", (2, 4), (3, 2, 3), (3, 3, 4)),
    ("addbmm", (1, 4), (3, 2, 3), (3, 3, 4)),
    ("baddbmm", (3, 2, 4), (3, 2, 3), (3, 3, 4)),
    ("baddbmm", (2, 4), (3, 2, 3), (3, 3, 4)),
]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("name,si,sa,sb", ADD_CASES)
def test_add_products_with_beta_alpha_match_torch(torch, name, si, sa, sb, complex_):
    rng = np.random.default_rng(5)
    beta, alpha = (0.5 - 1j, 2 + 0.5j) if complex_ else (0.5, -1.5)
    check_vs_torch(torch, lambda m, i, a, b: getattr(m, name)(i, a, b, beta=beta, alpha=alpha),
                   [_data(s, rng, complex_) for s in (si, sa, sb)])


@pytest.mark.parametrize("name,si,sa,sb", [c for c in ADD_CASES if c[1] == (2, 4)][:1] + [
    ("addmv", (2,), (2, 3), (3,)), ("addbmm", (2, 4), (3, 2, 3), (3, 3, 4)),
    ("baddbmm", (3, 2, 4), (3, 2, 3), (3, 3, 4))])
def test_beta_zero_ignores_input_but_gives_it_a_zero_gradient(torch, name, si, sa, sb):
    rng = np.random.default_rng(6)
    inp = np.full(si, np.nan)
    e = check_vs_torch(torch, lambda m, i, a, b: getattr(m, name)(i, a, b, beta=0),
                       [inp, _data(sa, rng), _data(sb, rng)])
    assert bool(ember.isfinite(e).all())


@pytest.mark.parametrize("name,si,sa,sb", [
    ("addmm", (2, 4), (2, 3), (3, 4)), ("addmv", (2,), (2, 3), (3,)),
    ("addbmm", (2, 4), (3, 2, 3), (3, 3, 4)), ("baddbmm", (3, 2, 4), (3, 2, 3), (3, 3, 4))])
def test_inplace_add_products_match_torch(torch, name, si, sa, sb):
    rng = np.random.default_rng(7)

    def fn(m, i, a, b):
        y = i * 2  # a non-leaf, so it may be modified in place
        r = getattr(y, name + "_")(a, b, beta=0.5, alpha=2.0)
        assert r is y
        return y

    e = check_vs_torch(torch, fn, [_data(s, rng) for s in (si, sa, sb)])
    assert e.grad_fn.name() == {"addmm": "AddmmBackward0", "addmv": "AddmvBackward0",
                                "addbmm": "AddbmmBackward0", "baddbmm": "BaddbmmBackward0"}[name]


def test_inplace_add_product_whose_operand_is_the_output(torch):
    # y.addmm_(m, w) with m a separate tensor matches PyTorch; y.addmm_(y, w) reads y's old
    # values (PyTorch's result is unspecified there), which the formula must keep.
    rng = np.random.default_rng(8)
    check_vs_torch(torch, lambda m, x, w: (x * 1).addmm_(x * 1, w, beta=2.0),
                   [_data((3, 3), rng), _data((3, 3), rng)])


def test_inplace_add_product_reading_its_own_output():
    def same_tensor(x, w):
        y = x * 1
        return y.addmm_(y, w, alpha=0.5)

    x, w = leaf((3, 3)), leaf((3, 3), 1)
    r = same_tensor(x, w)
    xn, wn = x.detach().numpy(), w.detach().numpy()
    np.testing.assert_allclose(r.detach().numpy(), xn + 0.5 * xn @ wn, rtol=1e-12)
    assert gradcheck(same_tensor, [x, w]) and gradgradcheck(same_tensor, [x, w])


def test_inplace_add_product_on_a_leaf_raises():
    x = leaf((2, 4))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.addmm_(leaf((2, 3), 1), leaf((3, 4), 2))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf((3, 2, 4)).baddbmm_(leaf((3, 2, 3), 1), leaf((3, 3, 4), 2))


def test_matmul_double_backward_matches_torch(torch):
    rng = np.random.default_rng(9)
    arrays = [_data((2, 3, 4), rng), _data((4, 5), rng)]
    results = []
    for m in (ember, torch):
        a, b = (m.tensor(x).requires_grad_() for x in arrays)
        (ga,) = m.autograd.grad(m.matmul(a, b).sin().sum(), a, create_graph=True)
        (ga * ga).sum().backward()
        results.append((ga.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b: ember.mm(a, b), [(2, 3), (3, 2)]),
    (lambda a, b: ember.bmm(a, b), [(2, 2, 3), (2, 3, 2)]),
    (lambda a, b: ember.matmul(a, b), [(2, 1, 2, 3), (2, 3, 2)]),
    (lambda a, b: ember.matmul(a, b), [(3,), (2, 3, 2)]),
    (lambda i, a, b: ember.addmm(i, a, b, beta=0.5, alpha=2), [(2, 2), (2, 3), (3, 2)]),
    (lambda i, a, b: ember.baddbmm(i, a, b, alpha=-1), [(2, 2), (2, 2, 3), (2, 3, 2)]),
])
def test_gradgradcheck_products(fn, shapes):
    args = [leaf(s, i) for i, s in enumerate(shapes)]
    assert gradgradcheck(fn, args)


# ---- einsum ---------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("bii->b", [(2, 3, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (1, 3, 4)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    ("i...,i...->...", [(3, 2), (3, 2)]),
    ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,kj->ikj", [(2, 3), (4, 3)]),
    ("iji->j", [(3, 2, 3)]),
]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("eq,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_grads_match_torch(torch, eq, shapes, complex_):
    rng = np.random.default_rng(11)
    check_vs_torch(torch, lambda m, *ops: m.einsum(eq, *ops),
                   [_data(s, rng, complex_) for s in shapes])


@pytest.mark.parametrize("eq,shapes", [c for c in EINSUM_CASES if c[0] in (
    "ii", "ii->i", "iij->j", "bij,bjk->bik", "ijk,ikl,ilm->jm", "i,j->ij")])
def test_einsum_every_step_records_double_backward(eq, shapes):
    args = [leaf(s, i) for i, s in enumerate(shapes)]
    assert gradgradcheck(lambda *ops: ember.einsum(eq, *ops), args)


def test_einsum_trace_and_diagonal_grads():
    x = leaf((3, 3))
    ember.einsum("ii", x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))
    y = leaf((2, 3, 3), 1)
    ember.einsum("bii->bi", y).backward(ember.ones(2, 3, dtype=ember.float64))
    np.testing.assert_array_equal(y.grad.numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))


# ---- sort / topk / kthvalue -------------------------------------------------------------------

TIES = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 1.0])


@pytest.mark.parametrize("descending", [False, True])
def test_sort_ties_grads_match_torch(torch, descending):
    # A stable sort puts equal values in input order, so each gradient has one place to go.
    for stable in (True, False):
        check_vs_torch(torch, lambda m, x: m.sort(x, descending=descending, stable=stable),
                       [TIES])
        check_vs_torch(torch, lambda m, x: m.sort(x, dim=0, descending=descending, stable=stable),
                       [np.stack([TIES, TIES[::-1]], axis=1)])


def _group_sums(grad, values):
    return {v: grad[values == v].sum() for v in np.unique(values)}


@pytest.mark.parametrize("op", ["topk-largest", "topk-smallest", "kthvalue"])
def test_tied_selection_sends_the_gradient_to_the_returned_index(torch, op):
    # Which of several equal elements topk / kthvalue return is implementation-defined (PyTorch
    # documents no order); the gradient goes to the index returned, so per group of equal values
    # it matches PyTorch's.
    for k in (1, 2, 3, 4):
        results = []
        for m in (ember, torch):
            x = m.tensor(TIES).requires_grad_()
            if op == "kthvalue":
                values, indices = m.kthvalue(x, k)
            else:
                values, indices = m.topk(x, k, largest=op == "topk-largest")
            g = m.arange(1.0, 1.0 + values.numel(), dtype=m.float64).reshape(values.shape)
            values.backward(g)
            expected = np.zeros(6)
            np.put(expected, np.asarray(indices.tolist()).reshape(-1),
                   np.asarray(g.tolist()).reshape(-1))
            np.testing.assert_array_equal(x.grad.numpy(), expected)
            results.append((values.detach().numpy(), x.grad.numpy()))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        assert _group_sums(results[0][1], TIES) == _group_sums(results[1][1], TIES)


@pytest.mark.parametrize("case", [
    lambda m, x: m.topk(x, 2, dim=0),
    lambda m, x: m.topk(x, 3, dim=1, largest=False),
    lambda m, x: m.topk(x, 2, dim=-1, sorted=True),
    lambda m, x: m.kthvalue(x, 2, dim=0),
    lambda m, x: m.kthvalue(x, 3, dim=1, keepdim=True),
    lambda m, x: m.sort(x, dim=0, descending=True),
    lambda m, x: m.msort(x),
])
def test_selection_grads_without_ties_match_torch(torch, case):
    rng = np.random.default_rng(12)
    x = rng.permutation(20).reshape(4, 5).astype(np.float64) - 7.5
    check_vs_torch(torch, case, [x])


def test_selection_node_names_and_indices_have_no_history():
    x = leaf((3, 4))
    v, i = ember.sort(x)
    assert v.grad_fn.name() == "SortBackward0" and i.grad_fn is None and not i.requires_grad
    assert ember.topk(x, 2).values.grad_fn.name() == "TopkBackward0"
    assert ember.kthvalue(x, 2).values.grad_fn.name() == "KthvalueBackward0"
    assert ember.msort(x).grad_fn.name() == "SortBackward0"
    assert ember.argsort(x).grad_fn is None
    for r in (ember.unique(x), ember.unique_consecutive(x), ember.histc(x, bins=4),
              ember.histogram(x, 3)[0], ember.searchsorted(ember.sort(x)[0], x)):
        assert r.grad_fn is None and not r.requires_grad


def test_sort_gradgradcheck_and_zero_dim():
    assert gradgradcheck(lambda x: ember.sort(x, dim=0).values, [leaf((3, 2))])
    assert gradgradcheck(lambda x: ember.topk(x, 2).values, [leaf((2, 4))])
    s = leaf(())
    ember.sort(s).values.backward()
    assert float(s.grad) == 1.0


# ---- cdist ----------------------------------------------------------------------------------

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]
MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
         "donot_use_mm_for_euclid_dist"]


@pytest.mark.parametrize("p", PS)
def test_cdist_grads_match_torch(torch, p):
    rng = np.random.default_rng(13)
    for mode in MODES:
        check_vs_torch(torch, lambda m, a, b: m.cdist(a, b, p=p, compute_mode=mode),
                       [_data((2, 5, 3), rng), _data((1, 4, 3), rng)], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("p", PS)
def test_cdist_zero_distance_gives_zero_gradient(torch, p):
    # Rows 0 of x1 and x2 coincide, row 1 of x1 equals row 2 of x2 except one coordinate (zero
    # differences in the others), and the last rows share a largest coordinate gap twice (p=inf
    # ties).
    x1 = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])
    x2 = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, -1.0], [0.5, -1.0, 1.0], [1.0, -1.0, 0.0]])
    for mode in MODES:
        check_vs_torch(torch, lambda m, a, b: m.cdist(a, b, p=p, compute_mode=mode), [x1, x2],
                       rtol=1e-8, atol=1e-8)
    # A point set against a copy of its first point: every distance to it is zero for row 0.
    a = leaf((1, 1, 3))
    b = a.detach().clone().requires_grad_()
    ember.cdist(a, b, p=p).sum().backward()
    assert float(a.grad.abs().sum()) == 0.0 and float(b.grad.abs().sum()) == 0.0


@pytest.mark.parametrize("p", PS)
def test_cdist_fused_and_graph_building_backward_agree(p):
    # A plain backward runs one fused pass; with create_graph the formula is built from ops
    # (blockwise for p other than 2). Both give the same gradient, zero distances included.
    rng = np.random.default_rng(21)
    x1 = rng.integers(-2, 3, size=(2, 6, 3)).astype(np.float64)  # repeated points and coords
    x2 = np.concatenate([x1[:1, :3], rng.uniform(-2, 2, size=(1, 2, 3))], axis=1)
    g = rng.standard_normal((2, 6, 5))
    grads = []
    for create_graph in (False, True):
        a, b = ember.tensor(x1).requires_grad_(), ember.tensor(x2).requires_grad_()
        d = ember.cdist(a, b, p=p)
        ga, gb = ember.autograd.grad(d, (a, b), ember.tensor(g), create_graph=create_graph)
        # Only create_graph builds a graph for the gradient itself.
        if not create_graph:
            assert not ga.requires_grad
        grads.append((ga.detach().numpy(), gb.detach().numpy()))
    for fused, built in zip(*grads):
        np.testing.assert_allclose(fused, built, rtol=1e-12, atol=1e-12)


def test_cdist_large_blocks_match_torch(torch):
    # More pairwise differences than one block holds: the graph-building gradient is
    # accumulated blockwise; the fused one is checked against PyTorch too.
    rng = np.random.default_rng(14)
    x1, x2 = _data((300, 50), rng), _data((400, 50), rng)
    g = rng.standard_normal((300, 400))
    for p in (1.0, 3.0):
        ta, tb = (torch.tensor(x, requires_grad=True) for x in (x1, x2))
        want = torch.autograd.grad(torch.cdist(ta, tb, p=p), (ta, tb), torch.tensor(g))
        for create_graph in (False, True):
            a, b = (ember.tensor(x).requires_grad_() for x in (x1, x2))
            got = ember.autograd.grad(ember.cdist(a, b, p=p), (a, b), ember.tensor(g),
                                      create_graph=create_graph)
            for e, t in zip(got, want):
                np.testing.assert_allclose(e.detach().numpy(), t.numpy(), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_gradgradcheck(p):
    a, b = leaf((2, 3, 2)), leaf((1, 4, 2), 1)
    assert gradgradcheck(lambda x, y: ember.cdist(x, y, p=p), [a, b])


# ---- triangular, diagonal ---------------------------------------------------------------------

@pytest.mark.parametrize("diagonal", [-5, -2, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 3, 3)])
def test_tril_triu_offsets_match_torch(torch, shape, diagonal):
    rng = np.random.default_rng(15)
    x = _data(shape, rng)
    for name in ("tril", "triu"):
        check_vs_torch(torch, lambda m, t: getattr(m, name)(t, diagonal), [x])
        check_vs_torch(torch, lambda m, t: getattr(t * 1, name + "_")(diagonal), [x])


def test_inplace_tril_on_a_non_leaf():
    x = leaf((3, 3))
    y = x * 2
    r = y.tril_(-1)
    assert r is y and y.grad_fn.name() == "TrilBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.tril(np.ones((3, 3)), -1))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf((3, 3)).triu_()
    # Through a view: the base gets the gradient of the triangle only.
    z = leaf((2, 3, 3), 1)
    w = z * 1
    w[1].triu_(1)
    w.sum().backward()
    expected = np.ones((2, 3, 3))
    expected[1] = np.triu(expected[1], 1)
    np.testing.assert_array_equal(z.grad.numpy(), expected)


@pytest.mark.parametrize("case,shape", [
    (lambda m, x: m.diag(x), (3,)),
    (lambda m, x: m.diag(x, 2), (3,)),
    (lambda m, x: m.diag(x, -1), (3,)),
    (lambda m, x: m.diag(x), (3, 4)),
    (lambda m, x: m.diag(x, 2), (3, 4)),
    (lambda m, x: m.diag(x, -2), (3, 4)),
    (lambda m, x: m.diag(x, 7), (3, 4)),
    (lambda m, x: m.diag_embed(x), (2, 3)),
    (lambda m, x: m.diag_embed(x, 1, 0, 2), (2, 3)),
    (lambda m, x: m.diag_embed(x, -1, 2, 0), (2, 3)),
    (lambda m, x: m.diagflat(x, 1), (2, 2)),
    (lambda m, x: m.trace(x), (3, 3)),
    (lambda m, x: m.trace(x), (2, 4)),
    (lambda m, x: m.trace(x), (4, 2)),
])
@pytest.mark.parametrize("complex_", [False, True])
def test_diagonal_ops_match_torch(torch, case, shape, complex_):
    rng = np.random.default_rng(16)
    check_vs_torch(torch, case, [_data(shape, rng, complex_)])


def test_diagonal_op_names():
    assert ember.diag(leaf((3,))).grad_fn.name() == "DiagEmbedBackward0"
    assert ember.diag_embed(leaf((2, 3))).grad_fn.name() == "DiagEmbedBackward0"
    assert ember.trace(leaf((3, 3))).grad_fn.name() == "TraceBackward0"
    assert ember.tril(leaf((3, 3))).grad_fn.name() == "TrilBackward0"
    assert ember.triu(leaf((3, 3))).grad_fn.name() == "TriuBackward0"


# ---- joining and reordering -------------------------------------------------------------------

def test_cat_promotes_and_returns_each_input_its_own_dtype():
    a = leaf((2, 3), dtype=ember.float32)
    b = leaf((1, 3), 1)
    skipped = ember.zeros(0, dtype=ember.float64).requires_grad_()
    r = ember.cat([a, skipped, b])
    assert r.dtype is ember.float64 and r.grad_fn.name() == "CatBackward0"
    r.backward(ember.arange(9.0, dtype=ember.float64).reshape(3, 3))
    assert a.grad.dtype is ember.float32 and b.grad.dtype is ember.float64
    np.testing.assert_array_equal(a.grad.numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(b.grad.numpy(), [[6.0, 7.0, 8.0]])
    assert skipped.grad.shape == (0,)


@pytest.mark.parametrize("name", ["cat", "stack", "hstack", "vstack", "row_stack", "dstack",
                                  "column_stack"])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_joining_grads_and_names_match_torch(torch, name, shape):
    rng = np.random.default_rng(17)
    e = check_vs_torch(torch, lambda m, a, b, c: getattr(m, name)([a, b, c]),
                       [_data(shape, rng, True) for _ in range(3)])
    assert e.grad_fn.name() == ("StackBackward0" if name == "stack" else "CatBackward0")


@pytest.mark.parametrize("case", [
    lambda m, x: m.flip(x, (0, 2)),
    lambda m, x: m.fliplr(x),
    lambda m, x: m.flipud(x),
    lambda m, x: m.roll(x, 5),
    lambda m, x: m.roll(x, (1, -2), (0, 2)),
    lambda m, x: m.rot90(x, 1, (2, 0)),
    lambda m, x: m.rot90(x, -1, (0, 1)),
    lambda m, x: m.rot90(x, 2, (1, 2)),
    lambda m, x: m.rot90(x, 4, (1, 2)),
    lambda m, x: x.repeat(2, 1, 1, 3),
    lambda m, x: m.tile(x, (2,)),
    lambda m, x: m.repeat_interleave(x, 2),
    lambda m, x: m.repeat_interleave(x, 3, dim=1),
    lambda m, x: m.repeat_interleave(x, m.tensor([2, 0, 1]), dim=1),
    lambda m, x: m.repeat_interleave(x, m.tensor([3]), dim=0),
])
def test_reordering_grads_match_torch(torch, case):
    rng = np.random.default_rng(18)
    check_vs_torch(torch, case, [_data((2, 3, 4), rng, True)])


def test_reordering_node_names():
    x = leaf((2, 3))
    assert ember.flip(x, (0,)).grad_fn.name() == "FlipBackward0"
    assert ember.roll(x, 1).grad_fn.name() == "RollBackward0"
    assert ember.rot90(x).grad_fn.name() == "Rot90Backward0"
    assert x.repeat(2, 2).grad_fn.name() == "RepeatBackward0"
    assert ember.tile(x, (2,)).grad_fn.name() == "RepeatBackward0"
    idx = ember.repeat_interleave(x, ember.tensor([1, 2]), dim=0)
    assert idx.grad_fn.name() == "IndexSelectBackward0"


@pytest.mark.parametrize("case,shapes", [
    (lambda m, a, b: m.cross(a, b, dim=1), [(4, 3), (4, 3)]),
    (lambda m, a, b: m.cross(a, b, dim=1), [(2, 3, 4), (1, 3, 1)]),
    (lambda m, a, b: m.tensordot(a, b, dims=([1, 2], [1, 0])), [(2, 3, 4), (4, 3, 5)]),
    (lambda m, a, b: m.tensordot(a, b, dims=0), [(2, 3), (4,)]),
    (lambda m, a, b: m.kron(a, b), [(2,), (2, 3)]),
    (lambda m, a, b: m.cartesian_prod(a, b), [(3,), (2,)]),
    (lambda m, a, b: m.meshgrid(a, b, indexing="xy")[0], [(3,), (2,)]),
    (lambda m, a, b: m.meshgrid(a, b, indexing="ij")[1], [(3,), (2,)]),
])
@pytest.mark.parametrize("complex_", [False, True])
def test_other_products_match_torch(torch, case, shapes, complex_):
    rng = np.random.default_rng(19)
    check_vs_torch(torch, case, [_data(s, rng, complex_) for s in shapes])


@pytest.mark.parametrize("kw", [{}, {"r": 3}, {"with_replacement": True}])
def test_combinations_grads_match_torch(torch, kw):
    rng = np.random.default_rng(20)
    e = check_vs_torch(torch, lambda m, x: m.combinations(x, **kw), [_data((4,), rng)])
    assert e.grad_fn.name() == "IndexBackward0"


def test_cross_node_name():
    assert ember.cross(leaf((2, 3)), leaf((2, 3), 1), dim=1).grad_fn.name() == (
        "LinalgCrossBackward0")
    assert ember.cdist(leaf((2, 3)), leaf((4, 3), 1)).grad_fn.name() == "CdistBackward0"


# ---- out= -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x, o: ember.mm(x, x, out=o),
    lambda x, o: ember.matmul(x, x, out=o),
    lambda x, o: ember.bmm(x.unsqueeze(0), x.unsqueeze(0), out=o),
    lambda x, o: ember.mv(x, x[0], out=o),
    lambda x, o: ember.dot(x[0], x[1], out=o),
    lambda x, o: ember.addmm(x, x, x, out=o),
    lambda x, o: ember.cat([x, x], out=o),
    lambda x, o: ember.stack([x, x], out=o),
    lambda x, o: ember.hstack([x, x], out=o),
    lambda x, o: ember.tril(x, out=o),
    lambda x, o: ember.diag(x, out=o),
    lambda x, o: ember.msort(x, out=o),
    lambda x, o: ember.kron(x, x, out=o),
    lambda x, o: ember.tensordot(x, x, dims=1, out=o),
    lambda x, o: ember.cross(x, x, dim=1, out=o),
    lambda x, o: ember.sort(x, out=(o, ember.empty(0, dtype=ember.int64))),
    lambda x, o: ember.topk(x, 1, out=(o, ember.empty(0, dtype=ember.int64))),
])
def test_out_with_inputs_that_require_grad_raises(call):
    x = leaf((3, 3))
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        call(x, ember.empty(0, dtype=ember.float64))


def test_out_without_grad_still_works():
    x = ember.ones(2, 2, dtype=ember.float64)
    o = ember.empty(0, dtype=ember.float64)
    assert ember.mm(x, x, out=o) is o and float(o.sum()) == 8.0


def test_first_order_gradchecks_of_composites():
    assert gradcheck(lambda a, b: ember.inner(a, b), [leaf((2, 3)), leaf((3,), 1)])
    assert gradcheck(lambda a: ember.einsum("ij,jk,kl->il", a, a, a), [leaf((2, 2))])
    assert gradcheck(lambda a, b: ember.cdist(a, b, p=1.5), [leaf((3, 2)), leaf((2, 2), 1)])
