"""Differential tests of every reduction and scan against PyTorch (skipped without torch).

Each case runs the same call through torch and ember on identical data and compares the
exception class, or the result's structure, shapes, dtypes and values (indices exactly).
"""

import itertools

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]
SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0,), (0, 3), (3, 0), (2, 1, 3)]


def make_data(shape, dtype, rng, special=False):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        lo = 0 if dtype == "uint8" else -4
        return rng.integers(lo, 5, size=shape).astype(dtype)
    a = rng.uniform(-3, 3, size=shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-3, 3, size=shape)
    if special and a.size >= 3:
        flat = a.reshape(-1)
        flat[rng.integers(0, a.size)] = np.nan
        flat[rng.integers(0, a.size)] = np.inf
        flat[rng.integers(0, a.size)] = -np.inf
    if dtype in ("float16", "bfloat16"):
        # values exactly representable in both libraries' 16-bit types
        t = torch.tensor(a, dtype=getattr(torch, dtype)).to(torch.float64)
        return t.numpy()
    return a.astype(dtype if dtype != "bfloat16" else "float32")


def ember_tensor(arr):
    # from_numpy keeps 0-d arrays 0-d (ember.tensor goes through np.ascontiguousarray).
    return ember.from_numpy(np.array(arr, copy=True)).clone()


def both(arr, dtype, layout="contiguous"):
    """The same data as a torch and an ember tensor, with the same memory layout."""
    t = torch.tensor(arr).to(getattr(torch, dtype))
    e = ember_tensor(arr).to(getattr(ember, dtype))
    if layout == "transposed" and t.dim() >= 2:
        t = t.transpose(0, -1).contiguous().transpose(0, -1)
        e = e.transpose(0, -1).contiguous().transpose(0, -1)
    elif layout == "strided" and t.dim() >= 1:
        t = torch.repeat_interleave(t, 2, dim=-1)[..., ::2]
        e = ember_tensor(np.repeat(np.asarray(arr), 2, axis=-1)).to(getattr(ember, dtype))[..., ::2]
    return t, e


def to_np(x):
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.numpy()
    if x.dtype is ember.bfloat16:
        x = x.float()
    return x.numpy()


def compare(tr, er, what):
    if isinstance(tr, tuple):
        assert isinstance(er, tuple), f"{what}: expected a tuple, got {type(er)}"
        assert len(tr) == len(er), what
        if hasattr(tr, "_fields") or type(tr).__module__ == "torch.return_types":
            assert type(er).__name__ == type(tr).__name__, what
        for a, b in zip(tr, er):
            compare(a, b, what)
        return
    assert str(er.dtype).split(".")[-1] == str(tr.dtype).split(".")[-1], (
        f"{what}: dtype {er.dtype} vs torch {tr.dtype}"
    )
    assert tuple(er.shape) == tuple(tr.shape), (
        f"{what}: shape {tuple(er.shape)} vs {tuple(tr.shape)}"
    )
    a, b = to_np(tr), to_np(er)
    if a.dtype.kind == "c":  # compare parts: inf + 1j vs inf + 1.0000001j must pass
        a, b = np.stack([a.real, a.imag]), np.stack([b.real, b.imag])
    if a.dtype.kind in "fc":
        tol = {np.float16: 2e-3, np.float32: 1e-5, np.complex64: 1e-5}.get(a.dtype.type, 1e-10)
        if tr.dtype == torch.bfloat16:
            tol = 1e-2
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(b, a, err_msg=what)


def run_case(fn_t, fn_e, what):
    """fn_t / fn_e: (callable, args, kwargs) for torch and ember."""
    fn_t = _bind(*fn_t)
    fn_e = _bind(*fn_e)
    try:
        tr = fn_t()
    except Exception as ex:  # noqa: BLE001
        if isinstance(ex, TypeError) and "invalid combination of arguments" in str(ex):
            # An overload PyTorch lacks (keepdim without dim): ember may accept it.
            return
        with pytest.raises(type(ex)):
            fn_e()
        return
    er = fn_e()
    compare(tr, er, what)


def _bind(f, args, kwargs):
    return lambda: f(*args, **kwargs)


def dims_for(ndim):
    out = [None]
    if ndim >= 1:
        out += [0, -1]
    if ndim >= 2:
        out += [(0, 1), (-1, 0), 1]
    if ndim >= 3:
        out += [(0, 2), (0, 1, 2)]
    return out


def single_dims(ndim):
    return [0, -1] + ([1] if ndim >= 2 else [])


# (name, how to call: "dims" | "dim" | "all", extra kwargs variants, special values?)
DIM_OPS = [
    ("sum", [{}, {"keepdim": True}]),
    ("nansum", [{}, {"keepdim": True}]),
    ("mean", [{}, {"keepdim": True}]),
    ("nanmean", [{}]),
    ("amax", [{}, {"keepdim": True}]),
    ("amin", [{}]),
    ("var", [{}, {"correction": 0}, {"keepdim": True}]),
    ("std", [{}, {"correction": 2}]),
    ("var_mean", [{}]),
    ("std_mean", [{"keepdim": True}]),
    ("norm", [{}, {"p": 1}, {"p": float("inf")}, {"p": 0}, {"p": 3.0}, {"p": -float("inf")}]),
    ("logsumexp", [{}]),
    ("all", [{}]),
    ("any", [{"keepdim": True}]),
    ("count_nonzero", [{}]),
]

SINGLE_DIM_OPS = [
    ("prod", [{}, {"keepdim": True}]),
    ("argmax", [{}, {"keepdim": True}]),
    ("argmin", [{}]),
    ("max", [{}, {"keepdim": True}]),
    ("min", [{}]),
    ("cumsum", [{}]),
    ("cumprod", [{}]),
    ("cummax", [{}]),
    ("cummin", [{}]),
    ("logcumsumexp", [{}]),
    ("median", [{}, {"keepdim": True}]),
    ("nanmedian", [{}]),
    ("mode", [{}]),
]

ALL_OPS = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "median", "nanmedian",
           "aminmax", "norm", "all", "any", "var", "std", "count_nonzero", "nansum", "nanmean"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,variants", DIM_OPS, ids=[o[0] for o in DIM_OPS])
def test_dim_list_ops(name, variants, dtype):
    rng = np.random.default_rng(0)
    for shape, layout, special in itertools.product(SHAPES, ["contiguous", "transposed"],
                                                    [False, True]):
        if special and dtype not in ("float32", "float64", "float16", "complex64"):
            continue
        if special and name in ("var_mean", "std_mean"):
            # With infinities PyTorch's per-element Welford mean turns nan or stays inf by
            # position; ember's blocked algorithm returns the mathematical mean (inf).
            continue
        t, e = both(make_data(shape, dtype, rng, special), dtype, layout)
        for dim, kw in itertools.product(dims_for(len(shape)), variants):
            if name == "logsumexp" and dim is None:
                continue
            kwargs = dict(kw)
            if dim is not None:
                kwargs["dim"] = dim
            what = f"{name}({shape}, {dtype}, {layout}, {kwargs})"
            run_case((getattr(torch, name), (t,), kwargs), (getattr(ember, name), (e,), kwargs),
                     what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,variants", SINGLE_DIM_OPS, ids=[o[0] for o in SINGLE_DIM_OPS])
def test_single_dim_ops(name, variants, dtype):
    rng = np.random.default_rng(1)
    for shape, layout, special in itertools.product(SHAPES, ["contiguous", "transposed",
                                                             "strided"], [False, True]):
        if special and dtype not in ("float32", "float64", "float16"):
            continue
        t, e = both(make_data(shape, dtype, rng, special), dtype, layout)
        for dim, kw in itertools.product(single_dims(len(shape)), variants):
            what = f"{name}({shape}, {dtype}, {layout}, dim={dim}, {kw})"
            run_case((getattr(torch, name), (t, dim), kw), (getattr(ember, name), (e, dim), kw),
                     what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ALL_OPS)
def test_all_element_ops(name, dtype):
    rng = np.random.default_rng(2)
    for shape, special in itertools.product(SHAPES, [False, True]):
        if special and dtype not in ("float32", "float64"):
            continue
        t, e = both(make_data(shape, dtype, rng, special), dtype)
        run_case((getattr(torch, name), (t,), {}), (getattr(ember, name), (e,), {}),
                 f"{name}({shape}, {dtype}, special={special})")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile(name, dtype):
    rng = np.random.default_rng(3)
    for shape, special in itertools.product([(), (7,), (4, 6), (2, 3, 5)], [False, True]):
        t, e = both(make_data(shape, dtype, rng, special), dtype)
        qs = [0.0, 0.25, 0.5, 1.0, [0.1, 0.5, 0.9]]
        for q, dim, keepdim, interp in itertools.product(
            qs, [None] + single_dims(len(shape)), [False, True],
            ["linear", "lower", "higher", "midpoint", "nearest"],
        ):
            qt = torch.tensor(q, dtype=t.dtype) if isinstance(q, list) else q
            qe = ember.tensor(q, dtype=e.dtype) if isinstance(q, list) else q
            what = f"{name}({shape}, q={q}, dim={dim}, keepdim={keepdim}, {interp})"
            kw = {"dim": dim, "keepdim": keepdim, "interpolation": interp}
            run_case((getattr(torch, name), (t, qt), kw), (getattr(ember, name), (e, qe), kw),
                     what)


def test_dtype_argument():
    rng = np.random.default_rng(4)
    for src, dst in itertools.product(DTYPES, DTYPES):
        t, e = both(make_data((3, 4), src, rng), src)
        td, ed = getattr(torch, dst), getattr(ember, dst)
        for name in ["sum", "nansum", "mean", "prod", "cumsum", "cumprod"]:
            for dim in ([None, 1] if name not in ("cumsum", "cumprod") else [1]):
                kw = {"dtype": td} if dim is None else {"dim": dim, "dtype": td}
                kwe = {"dtype": ed} if dim is None else {"dim": dim, "dtype": ed}
                run_case((getattr(torch, name), (t,), kw), (getattr(ember, name), (e,), kwe),
                         f"{name}({src}, {kw})")
        if src in ("float32", "float64", "complex64"):
            run_case((torch.norm, (t,), {"dtype": td}), (ember.norm, (e,), {"dtype": ed}),
                     f"norm({src}, dtype={dst})")
