"""The op database harness: one OpInfo per op, checked against a NumPy reference over dtypes and
the standard edge cases (0-d, empty, non-contiguous, transposed, broadcast, NaN/inf).

Family files (opdb_<family>.py) define OP_DB lists of OpInfo; test_op_db.py runs them all.

    OpInfo("exp", ref=np.exp, dtypes=FLOATING, sample=unary_samples)

`ember_fn(*tensors, **kwargs)` defaults to getattr(ember, name); `ref(*arrays, **kwargs)` gets
NumPy arrays (bfloat16 inputs arrive as float32). Outputs may be a tensor or a tuple of tensors.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

import ember

BOOL = [ember.bool]
INTEGRAL = [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64]
FLOATING = [ember.float16, ember.bfloat16, ember.float32, ember.float64]
COMPLEX = [ember.complex64, ember.complex128]
REAL = INTEGRAL + FLOATING
ALL = BOOL + INTEGRAL + FLOATING + COMPLEX
NUMERIC = INTEGRAL + FLOATING + COMPLEX

# Tolerances per dtype (rtol, atol) for comparing against a float64 NumPy reference.
TOL = {
    ember.float16: (1e-3, 1e-3),
    ember.bfloat16: (1.6e-2, 1e-2),
    ember.float32: (1.3e-6, 1e-5),
    ember.float64: (1e-7, 1e-7),
    ember.complex64: (1.3e-6, 1e-5),
    ember.complex128: (1e-7, 1e-7),
}


def np_dtype(dtype):
    """The NumPy dtype holding values of an ember dtype (bfloat16 -> float32)."""
    name = str(dtype).replace("ember.", "")
    return np.dtype("float32" if name == "bfloat16" else name)


def to_numpy(t):
    if t.dtype is ember.bfloat16:
        return t.float().numpy().copy()
    return t.numpy().copy()


@dataclasses.dataclass
class Sample:
    """One call: positional inputs (tensors or Python values) and keyword arguments."""

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    name: str = ""


def make_array(shape, dtype, rng, *, low=-3.0, high=3.0, special=False):
    """Random NumPy data of shape for an ember dtype; `special` sprinkles nan/inf/-0.0 in."""
    nd = np_dtype(dtype)
    if dtype is ember.bool:
        return rng.random(shape) > 0.5
    if nd.kind in "iu":
        lo = 0 if nd.kind == "u" else int(max(low, -9))
        return rng.integers(lo, int(min(high, 9)) + 1, size=shape).astype(nd)
    a = rng.uniform(low, high, size=shape)
    if nd.kind == "c":
        a = a + 1j * rng.uniform(low, high, size=shape)
    a = a.astype(nd)
    if special and a.size >= 4:
        flat = a.reshape(-1)
        flat[0] = np.nan
        flat[1] = np.inf
        flat[2] = -np.inf
        flat[3] = -0.0
    if dtype is ember.bfloat16:  # round to representable bfloat16 values
        a = ember.tensor(a).to(ember.bfloat16).float().numpy()
    return a


def make_tensor(arr, dtype, *, layout="contiguous"):
    """An ember tensor of dtype with arr's values in the requested memory layout."""
    if layout == "transposed" and arr.ndim >= 2:
        t = ember.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dtype)
        return t.transpose(-1, -2)
    if layout == "strided" and arr.ndim >= 1:
        wide = np.repeat(arr, 2, axis=-1)
        t = ember.tensor(wide, dtype=dtype)
        return t[..., ::2]
    return ember.tensor(arr, dtype=dtype)


STANDARD_SHAPES = [
    ("0d", ()),
    ("1d", (7,)),
    ("2d", (3, 5)),
    ("3d", (2, 3, 4)),
    ("empty", (0, 3)),
]


def unary_samples(dtype, rng, *, low=-3.0, high=3.0, special=True):
    """Standard unary samples: each shape x layout, plus nan/inf where the dtype has them."""
    out = []
    for name, shape in STANDARD_SHAPES:
        for layout in ("contiguous", "transposed", "strided"):
            if layout != "contiguous" and len(shape) < 2:
                continue
            arr = make_array(shape, dtype, rng, low=low, high=high)
            out.append(Sample((make_tensor(arr, dtype, layout=layout),), name=f"{name}-{layout}"))
    if special and (dtype.is_floating_point or dtype.is_complex):
        arr = make_array((8,), dtype, rng, low=low, high=high, special=True)
        out.append(Sample((make_tensor(arr, dtype),), name="nan-inf"))
    return out


def binary_samples(dtype, rng, *, low=-3.0, high=3.0, rhs_low=None, rhs_high=None):
    """Standard binary samples: same shape, broadcast, 0-d, empty, transposed, Python scalar."""
    rl = low if rhs_low is None else rhs_low
    rh = high if rhs_high is None else rhs_high
    cases = [
        ("same", (3, 4), (3, 4)),
        ("broadcast", (3, 1), (1, 4)),
        ("broadcast-rank", (2, 3, 4), (4,)),
        ("0d-rhs", (3, 4), ()),
        ("0d-both", (), ()),
        ("empty", (0, 4), (1, 4)),
    ]
    out = []
    for name, sa, sb in cases:
        a = make_tensor(make_array(sa, dtype, rng, low=low, high=high), dtype)
        b = make_tensor(make_array(sb, dtype, rng, low=rl, high=rh), dtype)
        out.append(Sample((a, b), name=name))
    a = make_tensor(make_array((4, 3), dtype, rng, low=low, high=high), dtype, layout="transposed")
    b = make_tensor(make_array((4, 3), dtype, rng, low=rl, high=rh), dtype, layout="strided")
    out.append(Sample((a, b), name="noncontiguous"))
    return out


@dataclasses.dataclass
class OpInfo:
    name: str
    ref: Callable
    dtypes: list
    sample: Callable  # (dtype, rng) -> list[Sample]
    ember_fn: Callable | None = None
    # Autograd (Note [Gradcheck Entries] below): True: gradcheck runs over grad_samples (float64,
    # and complex128 when grad_complex); False: the op must record no grad_fn; None: not yet
    # declared, which test_op_db_grad.py reports as a failure for ops with floating dtypes.
    differentiable: bool | None = None
    # (dtype, rng) -> samples for gradcheck; defaults to the small, finite float64 samples of
    # `sample` (no NaN/inf, at most 40 elements per tensor).
    grad_sample: Callable | None = None
    grad_complex: bool = False  # also gradcheck complex128 (PyTorch differentiates it)
    gradgrad: bool = False  # also gradgradcheck (common ops)
    # Which positional args get gradients (indices); default: every floating/complex tensor.
    grad_args: tuple | None = None
    grad_tol: tuple = (1e-3, 1e-5)  # gradcheck (rtol, atol)
    # Compare dtype of the result with this ember dtype (callable of the input dtype) if given.
    result_dtype: Callable | None = None
    tol: dict = dataclasses.field(default_factory=dict)
    equal_nan: bool = True
    skip_dtype_check: bool = False
    notes: str = ""

    def fn(self):
        return self.ember_fn or getattr(ember, self.name)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def to_ref_arg(a):
    if isinstance(a, ember.Tensor):
        return to_numpy(a)
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], ember.Tensor):
        return type(a)(to_numpy(x) for x in a)
    return a


def check_sample(op: OpInfo, dtype, sample: Sample):
    """Runs one sample through ember and the reference and compares shape, dtype and values."""
    got = _as_tuple(op.fn()(*sample.args, **sample.kwargs))
    ref_args = [to_ref_arg(a) for a in sample.args]
    want = _as_tuple(op.ref(*ref_args, **sample.kwargs))
    assert len(got) == len(want), f"{op.name}: {len(got)} outputs, reference has {len(want)}"
    for g, w in zip(got, want):
        w = np.asarray(w)
        if not isinstance(g, ember.Tensor):
            np.testing.assert_allclose(np.asarray(g), w, err_msg=f"{op.name} {sample.name}")
            continue
        assert tuple(g.shape) == w.shape, (
            f"{op.name}[{dtype}] {sample.name}: shape {tuple(g.shape)} != reference {w.shape}"
        )
        if op.result_dtype is not None and not op.skip_dtype_check:
            assert g.dtype is op.result_dtype(dtype), (
                f"{op.name}[{dtype}] {sample.name}: dtype {g.dtype}, expected "
                f"{op.result_dtype(dtype)}"
            )
        gv = to_numpy(g)
        if gv.dtype.kind in "fc" or w.dtype.kind in "fc":
            rtol, atol = op.tol.get(g.dtype, TOL.get(g.dtype, (1e-6, 1e-6)))
            np.testing.assert_allclose(
                gv.astype(np.complex128 if gv.dtype.kind == "c" else np.float64),
                w,
                rtol=rtol,
                atol=atol,
                equal_nan=op.equal_nan,
                err_msg=f"{op.name}[{dtype}] {sample.name}",
            )
        else:
            np.testing.assert_array_equal(gv, w, err_msg=f"{op.name}[{dtype}] {sample.name}")


def run_op(op: OpInfo, dtype, seed=0):
    rng = np.random.default_rng(seed)
    samples = op.sample(dtype, rng)
    assert samples, f"{op.name} has no samples for {dtype}"
    for s in samples:
        check_sample(op, dtype, s)


# Note [Gradcheck Entries]
# Every OpInfo with floating dtypes declares `differentiable`. For True, test_op_db_grad.py runs
# gradcheck (float64 central differences against the engine) on its grad samples, and
# gradgradcheck when `gradgrad`; for False it checks the op records no grad_fn, as in PyTorch
# (argmax, comparisons, ...). An undeclared op fails the suite, so a new op cannot skip this.


def _small_finite(sample: Sample) -> bool:
    for a in sample.args:
        if isinstance(a, ember.Tensor):
            if a.numel() > 40:
                return False
            if (a.is_floating_point() or a.is_complex()) and a.numel():
                if not bool(ember.isfinite(a).all()):
                    return False
    return True


def grad_samples(op: OpInfo, dtype, rng):
    """Samples for gradcheck in `dtype` (float64 or complex128)."""
    if op.grad_sample is not None:
        samples = op.grad_sample(dtype, rng)
    else:
        samples = [s for s in op.sample(dtype, rng) if _small_finite(s)]
    return samples


def _grad_positions(op: OpInfo, sample: Sample):
    if op.grad_args is not None:
        return list(op.grad_args)
    return [
        i
        for i, a in enumerate(sample.args)
        if isinstance(a, ember.Tensor) and (a.is_floating_point() or a.is_complex())
    ]


def _grad_inputs(op: OpInfo, sample: Sample):
    """Copies of the sample's args with fresh leaves that require grad at the grad positions."""
    pos = _grad_positions(op, sample)
    args = list(sample.args)
    for i in pos:
        args[i] = args[i].detach().clone().requires_grad_()
    return args, pos


def run_gradcheck(op: OpInfo, dtype, seed=0, gradgrad=False, forward=False):
    from ember.autograd import gradcheck, gradgradcheck

    rng = np.random.default_rng(seed)
    samples = grad_samples(op, dtype, rng)
    assert samples, f"{op.name} has no gradcheck samples for {dtype}"
    rtol, atol = op.grad_tol
    checked = 0
    for s in samples:
        args, pos = _grad_inputs(op, s)
        if not pos:
            continue

        def fn(*leaves, _args=args, _pos=pos, _kw=s.kwargs):
            call = list(_args)
            for i, leaf in zip(_pos, leaves):
                call[i] = leaf
            out = op.fn()(*call, **_kw)
            outs = _as_tuple(out)
            return tuple(
                o for o in outs
                if isinstance(o, ember.Tensor) and (o.is_floating_point() or o.is_complex())
            )

        leaves = [args[i] for i in pos]
        if forward:
            ok = gradcheck(fn, leaves, rtol=rtol, atol=atol, check_forward_ad=True,
                           check_backward_ad=False)
        else:
            check = gradgradcheck if gradgrad else gradcheck
            ok = check(fn, leaves, rtol=rtol, atol=atol)
        assert ok, f"{op.name} {s.name}"
        checked += 1
    assert checked, f"{op.name}: no sample had a differentiable input"


def run_no_grad_check(op: OpInfo, dtype, seed=0):
    """A non-differentiable op must not record a grad_fn for inputs that require grad."""
    rng = np.random.default_rng(seed)
    for s in op.sample(dtype, rng)[:3]:
        args, pos = _grad_inputs(op, s)
        if not pos:
            continue
        for o in _as_tuple(op.fn()(*args, **s.kwargs)):
            if isinstance(o, ember.Tensor):
                assert o.grad_fn is None, f"{op.name} recorded {o.grad_fn.name()}"
