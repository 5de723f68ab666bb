"""ember.linalg's products, norms and matrix functions: vector_norm, cross, vecdot, vander,
diagonal, multi_dot, matrix_power (negative powers too), matrix_exp, tensorinv, tensorsolve.

NumPy (and SciPy's expm when installed) are the references; edge cases (0-d, empty, 0x0,
non-contiguous, broadcast, negative dims, NaN/inf, complex), errors with PyTorch's classes and
messages, gradcheck in float64 and complex128, gradgradcheck, and parity with PyTorch where it
is installed."""

import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

L = ember.linalg
INF = float("inf")
REAL_AND_COMPLEX = [ember.float32, ember.float64, ember.complex64, ember.complex128]
NP = {ember.float32: np.float32, ember.float64: np.float64, ember.complex64: np.complex64,
      ember.complex128: np.complex128}
RTOL = {ember.float32: 2e-5, ember.float64: 1e-10, ember.complex64: 2e-5, ember.complex128: 1e-10}


def rand(shape, dtype=ember.float64, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * scale
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape) * scale
    return a.astype(NP[dtype])


def well_conditioned(shape, dtype=ember.float64, seed=0, boost=4.0):
    """rand() plus boost times an identity over the trailing dims seen as a square matrix."""
    a = rand(shape, dtype, seed)
    n = int(round(math.sqrt(a.size)))
    return (a + boost * np.eye(n).reshape(shape)).astype(NP[dtype])


def T(a, requires_grad=False):
    t = ember.from_numpy(np.ascontiguousarray(a))
    return t.requires_grad_() if requires_grad else t


def close(got, want, dtype=ember.float64, rtol=None, atol=None):
    rtol = RTOL[dtype] if rtol is None else rtol
    atol = rtol if atol is None else atol
    g = got.numpy() if isinstance(got, ember.Tensor) else got
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


# ---- vector_norm ---------------------------------------------------------------------------

def np_vector_norm(x, ord, dim, keepdim):
    a = np.abs(x).astype(np.float64)
    axis = None if dim is None or dim == () else dim
    with np.errstate(divide="ignore"):
        if ord == INF:
            return a.max(axis=axis, keepdims=keepdim)
        if ord == -INF:
            return a.min(axis=axis, keepdims=keepdim)
        if ord == 0:
            return (a != 0).sum(axis=axis, keepdims=keepdim).astype(np.float64)
        return (a**ord).sum(axis=axis, keepdims=keepdim) ** (1.0 / ord)


ORDS = [2, 1, 0, 3.5, 0.5, -1, -0.5, INF, -INF]
DIMS = [None, 0, -1, (0, 2), (2, 0, 1), ()]


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm_matches_numpy(dtype, ord, dim, keepdim):
    x = rand((3, 4, 5), dtype)
    got = L.vector_norm(T(x), ord, dim, keepdim)
    assert got.dtype == (ember.float32 if dtype in (ember.float32, ember.complex64)
                         else ember.float64)
    close(got, np_vector_norm(x, ord, dim, keepdim), dtype)


def test_vector_norm_defaults_keywords_and_layouts():
    x = rand((4, 6))
    close(L.vector_norm(T(x)), np.linalg.norm(x))
    close(L.vector_norm(T(x), ord=3, dim=[1], keepdim=True), np_vector_norm(x, 3, 1, True))
    # non-contiguous: a transposed view and a strided slice
    close(L.vector_norm(T(x).t(), 1, 0), np_vector_norm(x.T, 1, 0, False))
    close(L.vector_norm(T(x)[:, ::2], INF, 1), np_vector_norm(x[:, ::2], INF, 1, False))
    # ord given as a 0-d tensor or a bool, as torch.Scalar
    close(L.vector_norm(T(x), ember.tensor(1.0)), np_vector_norm(x, 1, None, False))
    close(L.vector_norm(T(x), True), np_vector_norm(x, 1, None, False))


def test_vector_norm_0d_empty_nan_inf():
    close(L.vector_norm(ember.tensor(-3.0)), np.float32(3.0), ember.float32)
    close(L.vector_norm(ember.tensor(-3.0), 0, dim=0), np.float32(1.0), ember.float32)
    # empty: sums give 0, max/min need a non-empty reduced dim
    z = ember.zeros(0, 3)
    assert L.vector_norm(z).item() == 0.0
    assert L.vector_norm(z, 0).item() == 0.0
    assert L.vector_norm(z, INF, dim=1).shape == (0,)
    assert L.vector_norm(z, -1, dim=(1,)).shape == (0,)
    for ord in (INF, -INF, -1, -0.5):
        with pytest.raises(RuntimeError, match="norm on an empty tensor because the operation"):
            L.vector_norm(z, ord)
        with pytest.raises(RuntimeError, match="on an empty tensor"):
            L.vector_norm(z, ord, dim=())
        with pytest.raises(RuntimeError, match="on the dimension 0 because this dimension is"):
            L.vector_norm(z, ord, dim=0)
    # NaN propagates through every order; inf gives inf (or 0 for negative orders)
    x = ember.tensor([1.0, float("nan"), 2.0])
    for ord in ORDS:
        assert math.isnan(L.vector_norm(x, ord).item()) or ord == 0
    y = ember.tensor([1.0, INF, 2.0])
    assert L.vector_norm(y).item() == INF
    assert L.vector_norm(y, -1).item() == pytest.approx(1 / 1.5)
    # ord=nan gives NaN (and 0 for an empty input, as PyTorch)
    assert math.isnan(L.vector_norm(ember.ones(3), float("nan")).item())
    assert L.vector_norm(z, float("nan")).item() == 0.0


def test_vector_norm_dtypes_and_out():
    x = rand((5,), ember.float32)
    r = L.vector_norm(T(x), dtype=ember.float64)
    assert r.dtype == ember.float64
    close(r, np.linalg.norm(x.astype(np.float64)), ember.float32)
    c = rand((5,), ember.complex64)
    r = L.vector_norm(T(c), dtype=ember.complex128)
    assert r.dtype == ember.float64
    for low in (ember.float16, ember.bfloat16):
        h = ember.tensor([3.0, 4.0]).to(low)
        r = L.vector_norm(h)
        assert r.dtype == low and r.float().item() == 5.0
    out = ember.empty(7)
    r = L.vector_norm(T(x), 2, out=out)
    assert r is out and out.shape == () and out.item() == pytest.approx(np.linalg.norm(x))


def test_vector_norm_errors():
    x = ember.randn(2, 3)
    with pytest.raises(NotImplementedError, match=r"Expected a floating point or complex tensor "
                       r"as input. Got Long"):
        L.vector_norm(ember.arange(3))
    with pytest.raises(RuntimeError, match="dtype should be floating point or complex, but got "
                       "Long"):
        L.vector_norm(x, dtype=ember.int64)
    with pytest.raises(RuntimeError, match="dtype should be real for real inputs, but got "
                       "ComplexFloat"):
        L.vector_norm(x, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="dtype should be complex for complex inputs"):
        L.vector_norm(x.to(ember.complex64), dtype=ember.float64)
    with pytest.raises(RuntimeError, match=r"the dtype of the input \(Double\) should be "
                       r"convertible without narrowing to the specified dtype \(Float\)"):
        L.vector_norm(x.double(), dtype=ember.float32)
    with pytest.raises(RuntimeError, match="Expected a non-complex scalar as the order of norm"):
        L.vector_norm(x, 1j)
    with pytest.raises(TypeError, match="'ord' must be Number"):
        L.vector_norm(x, "fro")
    with pytest.raises(TypeError, match="'ord' must be Number, not Tensor"):
        L.vector_norm(x, ember.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        L.vector_norm(x, 2, (0, 0))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                       r"\[-2, 1\], but got 5\)"):
        L.vector_norm(x, 2, 5)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                       "double instead"):
        L.vector_norm(x, out=ember.empty(2, dtype=ember.float64))


@pytest.mark.parametrize("ord", [2, 1, 3.5, 1.5, INF, -INF, -1, 0.5])
@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
def test_vector_norm_gradcheck(ord, dtype):
    # distinct magnitudes keep the inf norms' maximum unique (a kink otherwise)
    x = T(rand((3, 4), dtype, seed=1) + np.arange(12).reshape(3, 4) * 0.1, True)
    assert gradcheck(lambda t: L.vector_norm(t, ord, dim=1), (x,))
    assert gradcheck(lambda t: L.vector_norm(t, ord, keepdim=True), (x,))
    if ord in (2, 3.5, 1.5):
        assert gradgradcheck(lambda t: L.vector_norm(t, ord, dim=(0, 1)), (x,))


def test_vector_norm_grad_at_zero_and_name():
    x = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    r = L.vector_norm(x)
    assert r.grad_fn.name() == "LinalgVectorNormBackward0"
    r.backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]  # subgradient 0, as PyTorch


# ---- cross ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX + [ember.int64, ember.int32], ids=str)
def test_cross_broadcast_and_dims(dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, (4, 1, 3)).astype(np.float64)
    b = rng.integers(-5, 5, (1, 5, 3)).astype(np.float64)
    if dtype.is_complex:
        a, b = a + 1j * a[::-1], b - 2j * b
    npd = {ember.int64: np.int64, ember.int32: np.int32}.get(dtype) or NP[dtype]
    a, b = a.astype(npd), b.astype(npd)
    got = L.cross(T(a), T(b))
    assert got.dtype == dtype
    close(got, np.cross(a, b), ember.float64)
    # dim other than the last, given positively and negatively
    close(L.cross(T(np.moveaxis(a, -1, 0)), T(np.moveaxis(b, -1, 0)), dim=0),
          np.moveaxis(np.cross(a, b), -1, 0), ember.float64)
    close(L.cross(T(np.moveaxis(a, -1, 1)), T(np.moveaxis(b, -1, 1)), dim=-2),
          np.moveaxis(np.cross(a, b), -1, 1), ember.float64)


def test_cross_layouts_empty_out():
    a, b = rand((3, 6)), rand((3, 6), seed=1)
    close(L.cross(T(a).t(), T(b).t()), np.cross(a.T, b.T))  # non-contiguous
    assert L.cross(ember.zeros(0, 3), ember.zeros(0, 3)).shape == (0, 3)
    out = ember.empty(0, dtype=ember.float64)
    r = L.cross(T(a.T), T(b.T), out=out)
    assert r is out
    close(out, np.cross(a.T, b.T))


def test_cross_errors():
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        L.cross(ember.randn(3), ember.randn(2, 3))
    with pytest.raises(RuntimeError, match="inputs dimension -1 must have length 3. Got 2 and 2"):
        L.cross(ember.randn(3, 2), ember.randn(3, 2))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        L.cross(ember.randn(2, 3), ember.randn(2, 3).double())
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        L.cross(ember.randn(2, 3), ember.randn(3, 3))
    with pytest.raises(IndexError, match="Dimension specified as -1 but tensor has no dimensions"):
        L.cross(ember.tensor(1.0), ember.tensor(1.0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        L.cross(ember.randn(2, 3), ember.randn(2, 3), dim=2)
    # ember.cross too: a 0-d pair has no dim (it used to read a size past the end)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        ember.cross(ember.tensor(1.0), ember.tensor(1.0), 0)
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
        ember.cross(ember.tensor(1.0), ember.tensor(1.0))
    with pytest.raises(NotImplementedError, match="\"cross\" not implemented for 'Bool'"):
        L.cross(ember.ones(3, dtype=ember.bool), ember.ones(3, dtype=ember.bool))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
def test_cross_gradcheck(dtype):
    a, b = T(rand((2, 3), dtype), True), T(rand((1, 3), dtype, seed=1), True)
    assert gradcheck(L.cross, (a, b))
    assert gradgradcheck(L.cross, (a, b))


# ---- vecdot --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
def test_vecdot_matches_numpy(dtype):
    x, y = rand((4, 1, 5), dtype), rand((3, 5), dtype, seed=1)
    close(L.vecdot(T(x), T(y)), (x.conj() * y).sum(-1), dtype)
    close(L.vecdot(T(x), T(y), dim=0), (x.conj() * y).sum(0), dtype)
    close(L.vecdot(T(x[0, 0]), T(y[0])), np.vdot(x[0, 0], y[0]), dtype)  # the 1-D path
    close(L.vecdot(T(x).transpose(0, 2), T(y).t().unsqueeze(-1), dim=-3),
          (x.conj() * y).sum(-1).T, dtype)  # non-contiguous, broadcast, negative dim


def test_vecdot_edge_cases_and_out():
    close(L.vecdot(ember.tensor(2.0), ember.tensor(3.0)), np.float32(6.0), ember.float32)
    assert L.vecdot(ember.zeros(2, 0), ember.zeros(2, 0)).tolist() == [0.0, 0.0]
    assert L.vecdot(ember.zeros(0, 3), ember.zeros(0, 3)).shape == (0,)
    x = ember.tensor([1.0, float("nan")])
    assert math.isnan(L.vecdot(x, x).item())
    h = ember.ones(4, dtype=ember.float16)
    assert L.vecdot(h, h).dtype == ember.float16 and L.vecdot(h, h).item() == 4.0
    out = ember.empty(5)
    r = L.vecdot(ember.ones(2, 3), ember.ones(2, 3), out=out)
    assert r is out and out.tolist() == [3.0, 3.0]


def test_vecdot_errors():
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex tensor "
                       "as input. Got Long"):
        L.vecdot(ember.arange(3), ember.arange(3))
    with pytest.raises(RuntimeError, match="Expected x and y to have the same dtype, but found x "
                       "of type Float and y of type Double instead"):
        L.vecdot(ember.randn(3), ember.randn(3).double())
    with pytest.raises(IndexError, match="Dimension out of range"):
        L.vecdot(ember.randn(2, 3), ember.randn(2, 3), dim=5)
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        L.vecdot(ember.randn(2, 3), ember.randn(3, 3))
    with pytest.raises(RuntimeError, match="Expected out of dtype Float but found Double"):
        L.vecdot(ember.randn(2, 3), ember.randn(2, 3), out=ember.empty(2, dtype=ember.float64))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
def test_vecdot_gradcheck(dtype):
    x, y = T(rand((2, 4), dtype), True), T(rand((3, 1, 4), dtype, seed=1), True)
    assert gradcheck(L.vecdot, (x, y))
    assert gradgradcheck(L.vecdot, (x, y))
    v, w = T(rand((4,), dtype), True), T(rand((4,), dtype, seed=2), True)
    assert gradcheck(L.vecdot, (v, w))


# ---- vander --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
def test_vander_matches_numpy(dtype):
    x = rand((5,), dtype)
    close(L.vander(T(x)), np.vander(x, increasing=True), dtype)
    close(L.vander(T(x), N=7), np.vander(x, 7, increasing=True), dtype)
    b = rand((2, 3, 4), dtype)
    want = np.stack([np.vander(v, 6, increasing=True) for v in b.reshape(-1, 4)])
    close(L.vander(T(b), N=6), want.reshape(2, 3, 4, 6), dtype)
    close(L.vander(T(b).transpose(0, 2), N=2),
          np.stack([np.ones_like(b.transpose(2, 1, 0)), b.transpose(2, 1, 0)], -1), dtype)


def test_vander_integers_and_edges():
    for dt in (ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64):
        r = L.vander(ember.tensor([1, 2, 3], dtype=dt), N=4)
        assert r.dtype == ember.int64  # the powers are a cumprod, which accumulates in int64
        assert r.tolist() == np.vander([1, 2, 3], 4, increasing=True).tolist()
    assert L.vander(ember.zeros(0), N=2).shape == (0, 2)
    assert L.vander(ember.zeros(3, 0, 2)).shape == (3, 0, 2, 2)
    r = L.vander(ember.tensor([0.0, INF, float("nan")]), N=3)
    np.testing.assert_array_equal(r.numpy(), [[1, 0, 0], [1, INF, INF], [1, np.nan, np.nan]])


def test_vander_errors():
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        L.vander(ember.tensor([1.0, 2.0]), N=1)
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        L.vander(ember.tensor(2.0))  # 0-d is one point: N defaults to 1
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        L.vander(ember.zeros(0))
    with pytest.raises(NotImplementedError, match="linalg.vander supports floating point, "
                       "complex, and integer tensors, but got Bool"):
        L.vander(ember.tensor([True, False]))
    with pytest.raises(NotImplementedError, match="but got Half"):
        L.vander(ember.ones(3, dtype=ember.float16))
    with pytest.raises(TypeError):
        L.vander(ember.ones(3), 3)  # N is keyword-only


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
def test_vander_gradcheck(dtype):
    x = rand((2, 3), dtype)
    x[0, 1] = 0.0  # cumprod's backward through a zero
    assert gradcheck(lambda t: L.vander(t, N=4), (T(x, True),))
    assert gradgradcheck(lambda t: L.vander(t, N=3), (T(x, True),))


# ---- diagonal ------------------------------------------------------------------------------

def test_diagonal_view_and_values():
    a = rand((2, 3, 4))
    t = T(a)
    close(L.diagonal(t), np.diagonal(a, 0, -2, -1))
    close(L.diagonal(t, offset=1), np.diagonal(a, 1, -2, -1))
    close(L.diagonal(t, offset=-2), np.diagonal(a, -2, -2, -1))
    close(L.diagonal(t, offset=1, dim1=0, dim2=2), np.diagonal(a, 1, 0, 2))
    assert L.diagonal(t, offset=9).shape == (2, 0)
    d = L.diagonal(t)
    d[0, 0] = 100.0  # a view, as PyTorch
    assert t[0, 0, 0].item() == 100.0
    with pytest.raises(TypeError):
        L.diagonal(t, 1)  # offset is keyword-only
    with pytest.raises(IndexError, match="Dimension out of range"):
        L.diagonal(ember.randn(3))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 0, 0"):
        L.diagonal(ember.randn(2, 3), dim1=0, dim2=0)


def test_diagonal_gradcheck():
    x = T(rand((2, 3, 3), ember.complex128), True)
    assert gradcheck(lambda t: L.diagonal(t, offset=1), (x,))


# ---- multi_dot -----------------------------------------------------------------------------

CHAINS = [
    [(3, 4), (4, 5)],
    [(4,), (4, 5)],
    [(3, 4), (4,)],
    [(4,), (4,)],
    [(2, 3), (3, 4), (4, 5)],
    [(6,), (6, 30), (30, 2), (2, 50), (50, 4), (4,)],
    [(10, 30), (30, 5), (5, 60), (60, 2), (2, 7)],
    [(0, 3), (3, 4), (4, 2)],
    [(2, 0), (0, 4)],
]


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
@pytest.mark.parametrize("shapes", CHAINS, ids=lambda s: "-".join("x".join(map(str, t)) for t in s))
def test_multi_dot_matches_numpy(shapes, dtype):
    arrays = [rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    got = L.multi_dot([T(a) for a in arrays])
    want = np.linalg.multi_dot(arrays) if len(arrays) > 2 else np.dot(arrays[0], arrays[1])
    close(got, want, dtype, atol=1e-4 if dtype in (ember.float32, ember.complex64) else 1e-10)
    assert got.dtype == dtype


def _parenthesization(node, names):
    """The product order autograd recorded, as a string: leaves by name, mm nodes in parens."""
    if node.name() == "AccumulateGrad":
        return names[id(node.variable)]
    parts = [_parenthesization(f, names) for f, _ in node.next_functions if f is not None]
    if node.name() == "MmBackward0":
        return "(" + "".join(parts) + ")"
    return "".join(parts)


def test_multi_dot_picks_the_cheapest_order():
    # CLRS 15.2's example: (A1 (A2 A3)) ((A4 A5) A6) costs 15125 scalar multiplications.
    dims = [30, 35, 15, 5, 10, 20, 25]
    ts = [ember.randn(dims[i], dims[i + 1], dtype=ember.float64, requires_grad=True)
          for i in range(6)]
    names = {id(t): "ABCDEF"[i] for i, t in enumerate(ts)}
    r = L.multi_dot(ts)
    assert _parenthesization(r.grad_fn, names) == "((A(BC))((DE)F))"
    # three matrices: the direct comparison; (2x100)(100x2)(2x100) multiplies the left pair first
    ts = [ember.randn(*s, requires_grad=True) for s in [(2, 100), (100, 2), (2, 100)]]
    names = {id(t): "ABC"[i] for i, t in enumerate(ts)}
    assert _parenthesization(L.multi_dot(ts).grad_fn, names) == "((AB)C)"
    ts = [ember.randn(*s, requires_grad=True) for s in [(100, 2), (2, 100), (100, 2)]]
    names = {id(t): "ABC"[i] for i, t in enumerate(ts)}
    assert _parenthesization(L.multi_dot(ts).grad_fn, names) == "(A(BC))"


def test_multi_dot_integers_tuple_out():
    a, b = ember.arange(6).view(2, 3), ember.arange(3)
    assert L.multi_dot((a, b)).tolist() == [5, 14]
    out = ember.empty(0)
    x, y, z = ember.randn(2, 3), ember.randn(3, 4), ember.randn(4)
    r = L.multi_dot([x, y, z], out=out)
    assert r is out and out.shape == (2,)
    close(out, (x.numpy() @ y.numpy() @ z.numpy()), ember.float32)
    with pytest.raises(RuntimeError, match="expected out tensor to have dtype float but got "
                       "double"):
        L.multi_dot([x, y], out=ember.empty(0, dtype=ember.float64))


def test_multi_dot_errors():
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 1"):
        L.multi_dot([ember.randn(3)])
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 0"):
        L.multi_dot([])
    with pytest.raises(RuntimeError, match="the first tensor must be 1D or 2D but got 3D"):
        L.multi_dot([ember.randn(2, 3, 3), ember.randn(3, 4)])
    with pytest.raises(RuntimeError, match="the last tensor must be 1D or 2D but got 0D"):
        L.multi_dot([ember.randn(3, 4), ember.tensor(1.0)])
    with pytest.raises(RuntimeError, match="tensor 1 must be 2D but got 3D"):
        L.multi_dot([ember.randn(2, 3), ember.randn(3, 4, 1), ember.randn(4)])
    with pytest.raises(RuntimeError, match=r"tensors 1 and 2 with shapes \[3, 4\] and \[5, 4\] "
                       "cannot be multiplied"):
        L.multi_dot([ember.randn(2, 3), ember.randn(3, 4), ember.randn(5, 4)])
    with pytest.raises(RuntimeError, match="all tensors must have be the same dtype but tensor 0 "
                       "is float and tensor 1 double"):
        L.multi_dot([ember.randn(2, 3), ember.randn(3, 4).double()])
    with pytest.raises(TypeError):
        L.multi_dot(ember.randn(2, 2))
    x = ember.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        L.multi_dot([x, ember.randn(3, 2)], out=ember.empty(0))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
def test_multi_dot_gradcheck(dtype):
    shapes = [(3,), (3, 4), (4, 2), (2, 5), (5,)]
    ts = [T(rand(s, dtype, seed=i), True) for i, s in enumerate(shapes)]
    assert gradcheck(lambda *a: L.multi_dot(list(a)), ts)
    assert gradgradcheck(lambda *a: L.multi_dot(list(a)), ts[1:4])


# ---- matrix_power --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 8, 13, -1, -2, -3, -6])
def test_matrix_power_matches_numpy(n, dtype):
    a = (rand((2, 3, 4, 4), dtype, scale=0.5) + 2 * np.eye(4)).astype(NP[dtype])
    got = L.matrix_power(T(a), n).numpy()
    want = np.linalg.matrix_power(a, n)
    # Tolerance from the arithmetic, not from one machine's rounding order: A^|n| by squaring
    # takes `products` matrix products of inner dimension 4, each element of each product off by
    # at most 4 eps times the same product of absolute values; a negative power starts from the
    # inverse, off by cond(A) eps. Both results carry such an error, hence the factor 2. Elements
    # that cancel (terms of 7e4 summing to 1e3) are held to the size of their terms.
    k = abs(n)
    products = max(k.bit_length() + bin(k).count("1") - 2, 0)
    eps = np.finfo(got.real.dtype).eps
    base = np.abs(np.linalg.inv(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64))
                  if n < 0 else a.astype(np.complex128 if np.iscomplexobj(a) else np.float64))
    cond = np.linalg.cond(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)).max()
    scale = np.linalg.matrix_power(base, k) if k else np.eye(4)
    bound = 2 * (4 * products + (cond if n < 0 else 0) + 1) * eps * scale
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) / bound)


def test_matrix_power_forms_edges_and_integers():
    a = rand((3, 3))
    close(ember.matrix_power(T(a), 3), np.linalg.matrix_power(a, 3))
    close(T(a).matrix_power(2), a @ a)
    close(L.matrix_power(T(a).t(), 3), np.linalg.matrix_power(a.T, 3))  # non-contiguous
    i = ember.arange(9).view(3, 3)
    assert L.matrix_power(i, 3).tolist() == np.linalg.matrix_power(np.arange(9).reshape(3, 3),
                                                                   3).tolist()
    assert L.matrix_power(i, 0).tolist() == np.eye(3, dtype=np.int64).tolist()
    assert L.matrix_power(ember.zeros(0, 2, 2), 5).shape == (0, 2, 2)
    assert L.matrix_power(ember.zeros(0, 0), 3).shape == (0, 0)
    r = L.matrix_power(T(a), 1)
    assert r.data_ptr() != T(a).data_ptr()  # a copy, not the input
    out = ember.empty(0, dtype=ember.float64)
    assert L.matrix_power(T(a), 4, out=out) is out
    close(out, np.linalg.matrix_power(a, 4))


def test_matrix_power_negative_edges():
    a = rand((3, 3)) + 3 * np.eye(3)
    close(L.matrix_power(T(a), -1) @ T(a), np.eye(3))
    out = ember.empty(0, dtype=ember.float64)
    assert L.matrix_power(T(a), -3, out=out) is out
    close(out, np.linalg.matrix_power(a, -3))
    assert L.matrix_power(ember.zeros(0, 3, 3), -2).shape == (0, 3, 3)
    with pytest.raises(L.LinAlgError, match=r"\(Batch element 1\): The diagonal element 1 is "
                       "zero, the inversion could not be completed because the input matrix is "
                       "singular"):
        L.matrix_power(T(np.stack([a, np.zeros((3, 3))])), -2)
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex tensor"):
        L.matrix_power(ember.arange(9).view(3, 3), -1)


def test_matrix_power_errors():
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are "
                       "3 by 4 matrices"):
        L.matrix_power(ember.randn(3, 4), 2)
    with pytest.raises(RuntimeError, match="The input tensor A must have at least 2 dimensions."):
        L.matrix_power(ember.randn(3), 2)
    with pytest.raises(TypeError):
        L.matrix_power(ember.randn(3, 3), 2.0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        L.matrix_power(ember.ones(3, 3, dtype=ember.bool), 2)
    with pytest.raises(RuntimeError, match="Expected result to be safely castable from Double"):
        L.matrix_power(ember.randn(3, 3, dtype=ember.float64), 2, out=ember.empty(0,
                                                                                 dtype=ember.int64))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, -1, -3])
def test_matrix_power_gradcheck(n, dtype):
    a = T((rand((2, 3, 3), dtype, scale=0.5) + 2 * np.eye(3)).astype(NP[dtype]), True)
    assert gradcheck(lambda t: L.matrix_power(t, n), (a,))
    if n in (2, 3, -1):
        assert gradgradcheck(lambda t: L.matrix_power(t, n), (a,))


# ---- tensorinv and tensorsolve -------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
def test_tensorinv_matches_numpy(dtype):
    a = well_conditioned((4, 6, 8, 3), dtype, boost=5)
    got = L.tensorinv(T(a), ind=2)
    close(got, np.linalg.tensorinv(a, ind=2), dtype, atol=1e-4)
    # the defining identity: tensordot(inv, a, ind) is the identity on a's trailing dims
    close(np.tensordot(got.numpy(), a, 2), np.eye(24).reshape(8, 3, 8, 3), dtype, atol=1e-4)
    b = well_conditioned((6, 2, 3), dtype)
    close(L.tensorinv(T(b), 1), np.linalg.tensorinv(b, 1), dtype, atol=1e-4)
    close(L.tensorinv(T(a).permute(1, 0, 2, 3), ind=2),
          np.linalg.tensorinv(a.transpose(1, 0, 2, 3), ind=2), dtype, atol=1e-4)


def test_tensorinv_edges_and_errors():
    assert L.tensorinv(ember.zeros(0, 0), ind=1).shape == (0, 0)
    out = ember.empty(0, dtype=ember.float64)
    a = T(well_conditioned((2, 2, 4)))
    assert L.tensorinv(a, out=out) is out and out.shape == (4, 2, 2)
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind', but "
                       "got 0"):
        L.tensorinv(ember.randn(4, 4), ind=0)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[ind:\]\) == "
                       r"prod\(self.shape\[:ind\]\), but got 144 != 4"):
        L.tensorinv(ember.randn(4, 6, 8, 3), ind=1)
    with pytest.raises(RuntimeError, match="must not exceed the number of dimensions"):
        L.tensorinv(ember.randn(4, 4), ind=3)
    with pytest.raises(L.LinAlgError, match="the input matrix is singular"):
        L.tensorinv(ember.zeros(2, 2, 2, 2))
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex tensor"):
        L.tensorinv(ember.arange(16).view(4, 4), ind=1)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
def test_tensorsolve_matches_numpy(dtype):
    a = well_conditioned((2, 3, 6), dtype)
    b = rand((2, 3), dtype, seed=1)
    x = L.tensorsolve(T(a), T(b))
    close(x, np.linalg.tensorsolve(a, b), dtype, atol=1e-4)
    close(np.tensordot(a, x.numpy(), 1), b, dtype, atol=1e-4)
    a2 = well_conditioned((6, 2, 3), dtype, seed=3)
    close(L.tensorsolve(T(a2), T(b), dims=(0,)),
          np.linalg.tensorsolve(a2, b, axes=(0,)), dtype, atol=1e-4)
    # B needs A's leading element count only, not its shape (PyTorch flattens it)
    close(L.tensorsolve(T(a), T(b.reshape(3, 2))), np.linalg.tensorsolve(a, b), dtype, atol=1e-4)


def test_tensorsolve_edges_and_errors():
    assert L.tensorsolve(ember.zeros(0, 0), ember.zeros(0)).shape == (0,)
    out = ember.empty(3)
    r = L.tensorsolve(ember.eye(6) * 2, ember.ones(6), out=out)
    assert r is out and out.tolist() == [0.5] * 6
    with pytest.raises(RuntimeError, match="but got 18 != 6"):
        L.tensorsolve(ember.randn(2, 3, 6), ember.randn(6))
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        L.tensorsolve(ember.randn(6, 6), ember.randn(6).double())
    with pytest.raises(L.LinAlgError, match="singular"):
        L.tensorsolve(ember.zeros(2, 3, 6), ember.randn(2, 3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        L.tensorsolve(ember.randn(6, 6), ember.randn(6), dims=(5,))
    with pytest.raises(RuntimeError, match="must not have more dimensions"):
        L.tensorsolve(ember.randn(2, 3), ember.randn(2, 3, 4))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
def test_tensorinv_tensorsolve_gradcheck(dtype):
    a = T(well_conditioned((2, 3, 6), dtype), True)
    b = T(rand((2, 3), dtype, seed=1), True)
    assert gradcheck(L.tensorsolve, (a, b))
    assert gradgradcheck(L.tensorsolve, (a, b))
    c = T(well_conditioned((2, 3, 6), dtype, seed=2), True)
    assert gradcheck(lambda t: L.tensorinv(t, ind=2), (c,))


# ---- matrix_exp ----------------------------------------------------------------------------

def np_expm(a):
    """exp(A) in float64 / complex128: Taylor to 30 terms after scaling |A| below 1/2, then
    squaring (accurate far beyond the tolerances used here)."""
    a = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    norm = np.abs(a).sum(-2).max() if a.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0 else 0
    x = a / 2.0**s
    term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).astype(a.dtype)
    result = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


# 1-norms straddling every degree's threshold (float32 and float64 thetas)
NORMS = [1e-17, 1e-10, 1e-7, 1e-5, 3e-4, 0.01, 0.04, 0.05, 0.2, 0.4, 0.55, 1.0, 1.2, 2.0, 3.5,
         10, 60]


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=str)
@pytest.mark.parametrize("n", [2, 3, 7, 20])
def test_matrix_exp_every_degree(n, dtype):
    base = rand((len(NORMS), n, n), dtype, seed=n)
    base = base / np.abs(base).sum(-2).max(-1)[:, None, None]
    a = (base * np.array(NORMS)[:, None, None]).astype(NP[dtype])
    got = L.matrix_exp(T(a)).numpy()  # one batch: each matrix gets its own degree
    want = np.stack([np_expm(m) for m in a])
    scale = np.abs(want).max(axis=(-2, -1), keepdims=True)
    tol = 5e-6 if dtype in (ember.float32, ember.complex64) else 1e-13
    assert np.all(np.abs(got - want) <= tol * np.maximum(scale, 1) * max(1, n / 4))


def test_matrix_exp_scipy_parity():
    sl = pytest.importorskip("scipy.linalg")
    for seed in range(5):
        a = rand((6, 6), ember.complex128, seed=seed, scale=seed + 0.1)
        close(L.matrix_exp(T(a)), sl.expm(a), ember.complex128, rtol=1e-12, atol=1e-12)


def test_matrix_exp_identities_and_layouts():
    a = rand((3, 5, 5), scale=0.7)
    e, em = L.matrix_exp(T(a)).numpy(), L.matrix_exp(T(-a)).numpy()
    close(e @ em, np.broadcast_to(np.eye(5), (3, 5, 5)), atol=1e-12)
    close(np.linalg.det(e), np.exp(np.trace(a, axis1=-2, axis2=-1)))
    d = np.diag([1.0, -2.0, 0.5])
    close(L.matrix_exp(T(d)), np.diag(np.exp([1.0, -2.0, 0.5])))
    close(L.matrix_exp(T(a).transpose(-2, -1)), np.swapaxes(e, -2, -1))  # non-contiguous
    close(L.matrix_exp(T(a)[:, ::2, ::2]), np.stack([np_expm(m) for m in a[:, ::2, ::2]]))
    close(ember.matrix_exp(T(a[0])), e[0])
    close(T(a[0]).matrix_exp(), e[0])
    z = ember.zeros(4, 4, dtype=ember.float64)
    assert L.matrix_exp(z).tolist() == np.eye(4).tolist()
    b = rand((2, 1, 4, 4))
    close(L.matrix_exp(T(b)), np.stack([np_expm(m) for m in b.reshape(2, 4, 4)]).reshape(b.shape))


def test_matrix_exp_edges():
    assert L.matrix_exp(ember.zeros(0, 0)).shape == (0, 0)
    assert L.matrix_exp(ember.zeros(0, 3, 3)).shape == (0, 3, 3)
    assert L.matrix_exp(ember.zeros(2, 0, 0)).shape == (2, 0, 0)
    close(L.matrix_exp(ember.tensor([[[2.0]], [[-1.0]]], dtype=ember.float64)),
          np.exp([[[2.0]], [[-1.0]]]))
    for bad in (float("nan"), INF):
        r = L.matrix_exp(ember.tensor([[bad, 0.0], [0.0, 1.0]]))
        assert np.isnan(r.numpy()).all()
    r = L.matrix_exp(ember.tensor([[-1e3, 0.0], [0.0, 0.0]]))
    close(r, np.array([[0.0, 0.0], [0.0, 1.0]], np.float32), ember.float32)
    for low in (ember.float16, ember.bfloat16):
        r = L.matrix_exp(ember.ones(3, 3).to(low))
        assert r.dtype == low
        close(r.float(), np_expm(np.ones((3, 3))).astype(np.float32), rtol=1e-2, atol=1e-2)


def test_matrix_exp_errors():
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are "
                       "3 by 4 matrices"):
        L.matrix_exp(ember.randn(3, 4))
    with pytest.raises(RuntimeError, match="The input tensor A must have at least 2 dimensions."):
        L.matrix_exp(ember.randn(3))
    with pytest.raises(NotImplementedError, match="Expected a floating point or complex tensor "
                       "as input. Got Long"):
        L.matrix_exp(ember.ones(3, 3, dtype=ember.int64))


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
@pytest.mark.parametrize("scale", [0.01, 0.3, 2.0])
def test_matrix_exp_gradcheck(dtype, scale):
    a = T(rand((2, 3, 3), dtype, scale=scale), True)
    assert gradcheck(L.matrix_exp, (a,))
    r = L.matrix_exp(a)
    assert r.grad_fn.name() == "LinalgMatrixExpBackward0"
    if scale != 2.0:
        assert gradgradcheck(L.matrix_exp, (a,))
    one = T(rand((1, 1), dtype), True)
    assert gradcheck(L.matrix_exp, (one,))


# ---- PyTorch parity ------------------------------------------------------------------------

def _torch_grads(torch, fn, arrays):
    ts = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    r = fn(*ts)
    r.abs().sum().backward()
    return r.detach().resolve_conj().numpy(), [t.grad.resolve_conj().numpy() for t in ts]


def _ember_grads(fn, arrays):
    ts = [T(a, True) for a in arrays]
    r = fn(*ts)
    r.abs().sum().backward()
    return r.detach().resolve_conj().numpy(), [t.grad.resolve_conj().numpy() for t in ts]


PARITY = [
    ("vector_norm", lambda m, x: m.linalg.vector_norm(x, 3.5, dim=(0, 2)), [(3, 4, 5)]),
    ("vector_norm_inf", lambda m, x: m.linalg.vector_norm(x, float("inf"), dim=1), [(3, 4)]),
    ("vector_norm_neg", lambda m, x: m.linalg.vector_norm(x, -0.5), [(3, 4)]),
    ("cross", lambda m, x, y: m.linalg.cross(x, y), [(4, 1, 3), (1, 5, 3)]),
    ("vecdot", lambda m, x, y: m.linalg.vecdot(x, y, dim=0), [(4, 3), (4, 1)]),
    ("vander", lambda m, x: m.linalg.vander(x, N=5), [(2, 4)]),
    ("diagonal", lambda m, x: m.linalg.diagonal(x, offset=-1), [(2, 4, 4)]),
    ("multi_dot", lambda m, *a: m.linalg.multi_dot(list(a)), [(5,), (5, 8), (8, 2), (2, 9)]),
    ("matrix_power", lambda m, x: m.linalg.matrix_power(x, 5), [(2, 4, 4)]),
    ("matrix_power0", lambda m, x: m.linalg.matrix_power(x, 0), [(2, 4, 4)]),
    ("matrix_power_neg", lambda m, x: m.linalg.matrix_power(x + 3 * m.eye(4, dtype=x.dtype),
                                                            -3), [(2, 4, 4)]),
    ("matrix_exp", lambda m, x: m.linalg.matrix_exp(x), [(3, 5, 5)]),
    ("tensorinv", lambda m, x: m.linalg.tensorinv(x + 4 * m.eye(6, dtype=x.dtype).view(2, 3, 6),
                                                  ind=2), [(2, 3, 6)]),
    ("tensorsolve", lambda m, x, y: m.linalg.tensorsolve(
        x + 4 * m.eye(6, dtype=x.dtype).view(6, 2, 3), y, dims=(0,)), [(6, 2, 3), (2, 3)]),
]


@pytest.mark.parametrize("dtype", [ember.float64, ember.complex128], ids=str)
@pytest.mark.parametrize("name,fn,shapes", PARITY, ids=[p[0] for p in PARITY])
def test_torch_parity(name, fn, shapes, dtype):
    torch = pytest.importorskip("torch")
    arrays = [rand(s, dtype, seed=i, scale=0.6) for i, s in enumerate(shapes)]
    want, want_grads = _torch_grads(torch, lambda *t: fn(torch, *t), arrays)
    got, got_grads = _ember_grads(lambda *t: fn(ember, *t), arrays)
    close(got, want, dtype, rtol=1e-9, atol=1e-9)
    for g, w in zip(got_grads, want_grads):
        close(g, w, dtype, rtol=1e-8, atol=1e-8)
