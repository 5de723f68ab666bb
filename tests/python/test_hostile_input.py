"""Hostile input: every reproducer the random-call fuzzer found (tests/fuzz), minimised to one call.

Calls that once crashed the interpreter (SIGSEGV, SIGFPE) or hung run in a child process with a
time limit, so a regression fails its test instead of killing or stalling pytest. The others run
in process. Each expectation is PyTorch's behaviour for the same call.
"""

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.nn.functional as F

# The child imports the same ember as this process: its package directory goes first on the
# path, and when that is a built tree (it holds _C) an editable install's import hook steps
# aside, as in conftest.py.
EMBER_PARENT = str(Path(ember.__file__).parent.parent)
PRELUDE = f"""import sys
from pathlib import Path
sys.path.insert(0, {EMBER_PARENT!r})
if any(Path(sys.path[0], "ember").glob("_C*.so")):
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_editable_")]
import ember, math
import ember.nn.functional as F
"""


def run_isolated(body, timeout=60):
    """Runs `body` in a fresh interpreter (faulthandler on); returns its stdout lines."""
    code = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode}\n--- code\n{code}\n--- stderr\n{proc.stderr[-3000:]}"
    )
    return proc.stdout.split()


def expect_raises_isolated(call, exc_name, timeout=60):
    """`call` raises `exc_name` (checked in a child process, so a crash fails the test)."""
    out = run_isolated(
        f"""
        try:
            {call}
        except Exception as e:
            print(type(e).__name__)
        else:
            print("no-exception")
        """,
        timeout=timeout,
    )
    assert out == [exc_name], f"{call}: expected {exc_name}, got {out}"


# --- crashes: a non-integer tensor where an int is expected (NULL from __index__) -------------

INT_ARG_CRASHERS = [
    "ember.rand((ember.tensor(2.5),))",
    "ember.full((ember.tensor(2.5),), 1.0)",
    "ember.zeros(2, ember.tensor(1.5))",
    "ember.zeros(3).argmax(ember.tensor(0.5))",
    "ember.zeros(3).sum([ember.tensor(0.5)])",
    "ember.ones(2, 3).permute(ember.tensor(1.0), 0)",
    "ember.zeros(6).view(2, ember.tensor([1, 2]))",
    "ember.zeros(2, 3).transpose(0, ember.tensor(1.5))",
    "ember.zeros(3).narrow(0, ember.tensor(0.5), 1)",
    "ember.zeros(2, 3).flip(ember.tensor([0.5]))",
]


@pytest.mark.parametrize("call", INT_ARG_CRASHERS)
def test_float_tensor_as_int_raises_type_error(call):
    expect_raises_isolated(call, "TypeError")


def test_integer_one_element_tensor_still_works_as_int():
    assert ember.zeros(2, ember.tensor(3)).shape == (2, 3)
    assert ember.zeros(3).sum(ember.tensor(0)).item() == 0
    assert ember.ones(2, 3).permute(ember.tensor(1), 0).shape == (3, 2)
    assert ember.zeros(2, 3).transpose(0, np.int64(1)).shape == (3, 2)


@pytest.mark.parametrize(
    "call, exc",
    [
        ("ember.zeros(3).argmax(True)", TypeError),
        ("ember.zeros((True, 2))", TypeError),
        ("ember.zeros(2, 3).transpose(0, 1.0)", TypeError),
        ("ember.zeros(3).argmax(2**64)", ValueError),
        ("ember.zeros(2**64)", TypeError),
        ("ember.zeros(3).view(-1, 2**63)", TypeError),
        ("ember.zeros(2, 3).transpose(0, 2**63)", ValueError),
    ],
)
def test_bad_int_arguments(call, exc):
    with pytest.raises(exc):
        eval(call)


# --- crashes: a dim read past the sizes of a 0-d tensor ------------------------------------------


def test_roll_of_0d_tensor_raises_index_error():
    expect_raises_isolated("ember.roll(ember.zeros(()).sin().mul(1), 1, 0)", "IndexError")
    expect_raises_isolated("ember.roll(ember.zeros(()), 1, 0)", "IndexError")


def test_roll_of_0d_tensor_without_dims_is_the_value():
    assert ember.roll(ember.tensor(3.0), 5).item() == 3.0


# --- hangs ---


def test_interpolate_to_a_huge_size_fails_at_once():
    expect_raises_isolated(
        "F.interpolate(ember.zeros(1, 1, 7), scale_factor=1e10, mode='linear')",
        "OutOfMemoryError",
        timeout=30,
    )


def test_out_of_memory_is_a_runtime_error_and_a_memory_error():
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert issubclass(ember.OutOfMemoryError, MemoryError)


def test_matrix_power_with_a_huge_exponent_finishes():
    out = run_isolated(
        """
        r = ember.linalg.matrix_power(ember.eye(2), -2**63)
        print(bool((r == ember.eye(2)).all()))
        r = ember.linalg.matrix_power(ember.eye(3) * 1.0, 2**63 - 1)
        print(bool((r == ember.eye(3)).all()))
        """,
        timeout=30,
    )
    assert out == ["True", "True"]


def test_matrix_power_large_exponents_match_numpy():
    a = np.array([[0.5, 0.25], [0.125, 0.5]])
    for n in (5, 17, 64, -7):
        expect = np.linalg.matrix_power(a, n)
        got = ember.linalg.matrix_power(ember.tensor(a), n).numpy()
        np.testing.assert_allclose(got, expect, rtol=1e-12)


# --- silently wrong results ---


@pytest.mark.parametrize("k", [0, 1])
def test_topk_of_0d_tensor(k):
    values, indices = ember.topk(ember.tensor(5), k)
    assert values.shape == () and values.item() == 5
    assert indices.shape == () and indices.item() == 0


def test_kthvalue_of_0d_tensor():
    values, indices = ember.kthvalue(ember.tensor(2.5), 1)
    assert values.item() == 2.5 and indices.item() == 0


@pytest.mark.parametrize("n", [2, 3])
def test_copy_from_a_partially_overlapping_view_raises(n):
    x = ember.arange(float(n * n)).reshape(n, n)
    with pytest.raises(RuntimeError, match="single memory location"):
        x.copy_(x.t())
    z = ember.arange(6.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        z[:4].copy_(z[2:])


def test_copy_between_disjoint_or_identical_views_works():
    z = ember.arange(6.0)
    z[::2].copy_(z[1::2])
    assert z.tolist() == [1.0, 1.0, 3.0, 3.0, 5.0, 5.0]
    x = ember.arange(4.0)
    x.copy_(x.view(2, 2).view(4))
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def _expanded():
    return ember.zeros(3).expand(2, 3)


WRITES_TO_EXPANDED = {
    "cumsum_": lambda t: t.cumsum_(0),
    "cumprod_": lambda t: t.cumprod_(1),
    "scatter_add_": lambda t: t.scatter_add_(
        0, ember.zeros(2, 3, dtype=ember.int64), ember.ones(2, 3)
    ),
    "scatter_": lambda t: t.scatter_(0, ember.zeros(2, 3, dtype=ember.int64), ember.ones(2, 3)),
    "index_add_": lambda t: t.index_add_(0, ember.tensor([0, 1]), ember.ones(2, 3)),
    "index_copy_": lambda t: t.index_copy_(0, ember.tensor([0, 1]), ember.ones(2, 3)),
    "masked_scatter_": lambda t: t.masked_scatter_(
        ember.ones(2, 3, dtype=ember.bool), ember.ones(2, 3)
    ),
    "add_": lambda t: t.add_(1),
    "exp_": lambda t: t.exp_(),
    "clamp_": lambda t: t.clamp_(0, 1),
    "copy_": lambda t: t.copy_(ember.ones(2, 3)),
    "uniform_": lambda t: t.uniform_(),
    "normal_": lambda t: t.normal_(),
    "exp out=": lambda t: ember.exp(ember.ones(2, 3), out=t),
    "mm out=": lambda t: ember.mm(ember.ones(2, 2), ember.ones(2, 3), out=t),
    "cat out=": lambda t: ember.cat([ember.ones(1, 3), ember.ones(1, 3)], out=t),
}


@pytest.mark.parametrize("name", list(WRITES_TO_EXPANDED))
def test_writes_to_an_expanded_tensor_raise(name):
    base = ember.ones(1)
    with pytest.raises(RuntimeError, match="more than one element"):
        WRITES_TO_EXPANDED[name](_expanded())
    with pytest.raises(RuntimeError, match="more than one element"):
        base.expand(4).cumsum_(0)
    assert base.item() == 1.0


def test_fills_of_an_expanded_tensor_are_allowed():
    # One value everywhere is well defined, and PyTorch allows it.
    base = ember.zeros(3)
    base.expand(2, 3).fill_(2.0)
    assert base.tolist() == [2.0, 2.0, 2.0]
    base.expand(2, 3).zero_()
    assert base.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "call",
    [
        "ember.zeros(1).expand(2**62, 4)",
        "ember.zeros(4, 3).repeat(2**62, 1)",
        "ember.zeros(4, 3).tile(2**62, 1)",
        "ember.empty(0, 2**62, 2**62)",
        "ember.zeros(2).as_strided((2**62, 2**62), (0, 0))",
    ],
)
def test_sizes_that_overflow_int64_raise(call):
    with pytest.raises(RuntimeError):
        eval(call)


def test_unfold_without_any_sliding_block_raises():
    with pytest.raises(RuntimeError, match="at least one"):
        F.unfold(ember.arange(3.0).reshape(1, 1, 1, 3), (1, 4), stride=2)


def test_unfold_block_count_matches_torch_formula():
    x = ember.arange(35.0).reshape(1, 1, 5, 7)
    assert F.unfold(x, (2, 3), stride=2).shape == (1, 6, 2 * 3)


@pytest.mark.parametrize("value", [-1.0, 0.0, 5.0])
def test_histogram_of_one_value_matches_numpy(value):
    counts, edges = np.histogram([value], bins=3)
    got = ember.histogram(ember.tensor([value]), bins=3)
    np.testing.assert_allclose(got.bin_edges.numpy(), edges, rtol=1e-6)
    np.testing.assert_allclose(got.hist.numpy(), counts)


def test_histc_of_one_value_keeps_its_wider_range():
    # histc widens a zero-width range by 1 each way (PyTorch's rule, unlike histogram's 0.5).
    assert ember.histc(ember.tensor([-1.0]), bins=3).tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "kwargs", [{"max": math.nan}, {"min": math.nan}, {"min": 0.0, "max": math.nan}]
)
def test_clamp_with_a_nan_bound_gives_nan(kwargs):
    out = ember.clamp(ember.tensor([1.0, 2.0]), **kwargs)
    assert all(math.isnan(v) for v in out.tolist())


def test_clamp_with_nan_input_keeps_nan():
    out = ember.clamp(ember.tensor([math.nan, 5.0]), 0.0, 1.0).tolist()
    assert math.isnan(out[0]) and out[1] == 1.0


def test_arange_with_an_infinite_step_raises():
    with pytest.raises(RuntimeError, match="finite"):
        ember.arange(0, 1, math.inf)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float16, ember.bfloat16])
def test_full_with_a_value_beyond_the_dtype_raises(dtype):
    with pytest.raises(RuntimeError, match="overflow"):
        ember.full((2,), 1e300, dtype=dtype)
    assert math.isinf(ember.full((2,), math.inf, dtype=dtype)[0].item())


def test_backward_from_a_complex_scalar_needs_a_grad():
    z = ember.tensor(1 + 2j, requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar"):
        (z * 2).backward()
    (z * 2).real.backward()
    assert z.grad.item() == 2


def test_size_converts_its_elements():
    s = ember.Size([ember.tensor(2), np.int64(3), 4])
    assert s == (2, 3, 4) and all(type(v) is int for v in s)
    with pytest.raises(TypeError):
        ember.Size([2.5])
    with pytest.raises(TypeError):
        ember.Size([ember.tensor(2.0)])


# --- found by the project's fuzzer (tests/fuzz) ---


@pytest.mark.parametrize("name", ["sum", "nansum", "logsumexp", "std", "amax"])
def test_reduction_whose_out_is_its_input(name):
    expect = getattr(ember, name)(ember.arange(6.0).reshape(3, 2), dim=0)
    out = run_isolated(
        f"""
        t = ember.arange(6.0).reshape(3, 2)
        r = ember.{name}(t, dim=0, out=t)
        print(r is t, tuple(t.shape), *t.tolist())
        e = ember.zeros(3, 0)
        print(tuple(ember.{name}(e, dim=0, out=e).shape) if "{name}" != "amax" else (0,))
        """
    )
    assert out[:2] == ["True", "(2,)"]
    assert [float(v) for v in out[2:4]] == pytest.approx(expect.tolist(), nan_ok=True)


def test_matrix_vector_product_whose_out_is_its_input():
    out = run_isolated(
        """
        a = ember.arange(6.0).reshape(2, 3)
        v = ember.ones(3)
        r = ember.mv(a, v, out=a)
        print(r is a, tuple(a.shape), *a.tolist())
        m = ember.arange(4.0).reshape(2, 2)
        print(*ember.mm(m, m, out=m).flatten().tolist())
        """
    )
    assert out == ["True", "(2,)", "3.0", "12.0", "2.0", "3.0", "6.0", "11.0"]


@pytest.mark.parametrize("factor", [2**32, 2**40])
def test_pixel_shuffle_factor_whose_square_overflows(factor):
    expect_raises_isolated(
        f"ember.pixel_shuffle(ember.zeros(1, 1, 1), {factor})", "ValueError", timeout=30
    )


def test_svd_of_a_matrix_holding_inf_raises_instead_of_hanging():
    a = [0.148, 1e308, -1e30, 0.625, -3.47, 2.728, -2.245, -3.903, 2.596, -0.45, 0.886, 1.612]
    expect_raises_isolated(f"ember.tensor({a}).reshape(3, 4).pinverse()", "LinAlgError", 30)
    expect_raises_isolated(
        "ember.linalg.svdvals(ember.tensor([[1.0, math.inf], [0.0, 1.0]]))", "LinAlgError", 30
    )


def test_calling_a_node_by_hand_checks_its_gradients():
    t = ember.tensor([-2.3, 99.0], dtype=ember.float64).requires_grad_()[..., ::2]
    node = t.grad_fn
    with pytest.raises(TypeError, match="expected 1 arguments, got 0"):
        node()
    with pytest.raises(TypeError, match="expected 1 arguments, got 2"):
        node(ember.ones(1), ember.ones(1))
    with pytest.raises(RuntimeError, match=r"shape \(3,\)"):
        node(ember.ones(3))
    with pytest.raises(TypeError, match="Tensor or None"):
        node("x")
    assert node(None) is None
    (grad,) = node(ember.ones(1))
    assert grad.tolist() == [1.0, 0.0] and grad.dtype is ember.float64


def test_memory_format_must_be_a_memory_format():
    with pytest.raises(TypeError, match="memory_format"):
        ember.empty_like(ember.zeros(2), memory_format="tanh")
    with pytest.raises(TypeError, match="memory_format"):
        ember.zeros(2).double(memory_format="abc")
    assert ember.zeros(2).double(memory_format=ember.contiguous_format).dtype is ember.float64


@pytest.mark.parametrize(
    "dtype, kwargs, expect",
    [
        (ember.int8, {"max": 2**31 - 1}, [2, -3]),
        (ember.int8, {"min": -(2**63)}, [2, -3]),
        (ember.int16, {"min": -(2**63), "max": -1}, [-1, -3]),
        (ember.uint8, {"min": -5, "max": 300}, [2, 253]),

    ],
)
def test_clamp_bounds_beyond_the_dtype_saturate(dtype, kwargs, expect):
    t = ember.tensor([2, -3]).to(dtype)
    assert ember.clamp(t, **kwargs).tolist() == expect


def test_clamp_bound_that_no_element_could_take_raises():
    with pytest.raises(RuntimeError, match="outside the representable range"):
        ember.clamp(ember.tensor([2, -3]).to(ember.int8), min=200)
    with pytest.raises(RuntimeError, match="outside the representable range"):
        ember.clamp(ember.tensor([2, 3]).to(ember.uint8), max=-1)


@pytest.mark.parametrize(
    "call",
    [
        "ember.sum(ember.ones(2, 3), 0, keepdim=2)",
        "ember.ones(2, 3).sum(0, keepdim=1.0)",
        "ember.ones(2, 3).max(0, keepdim=1)",
        "ember.argsort(ember.ones(3), descending=1)",
        "ember.topk(ember.ones(3), 1, largest=0)",
        "ember.ones(2, 3).all(0, 1)",
    ],
)
def test_bool_arguments_refuse_other_types(call):
    with pytest.raises(TypeError):
        eval(call)


def test_bool_arguments_take_numpy_bools():
    assert ember.ones(2, 3).sum(0, keepdim=np.bool_(True)).shape == (1, 3)
    assert ember.sum(ember.ones(2, 3), 0, keepdim=np.True_).shape == (1, 3)


def test_copy_broadcasts_its_source():
    x = ember.zeros(2, 3)
    x.copy_(ember.tensor([1.0, 2.0, 3.0]))
    assert x.tolist() == [[1.0, 2.0, 3.0]] * 2
    assert ember.zeros(0, 3).copy_(ember.ones(3)).shape == (0, 3)
    with pytest.raises(RuntimeError):
        ember.zeros(3).copy_(ember.ones(2, 3))
    w = ember.ones(3, requires_grad=True)
    ember.zeros(2, 3).copy_(w).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_matrix_transposes_of_a_0d_tensor_are_the_tensor():
    assert ember.tensor(6).mT.item() == 6
    assert ember.tensor(1 + 2j).mH.item() == 1 - 2j
    assert ember.adjoint(ember.tensor(4)).item() == 4
    with pytest.raises(RuntimeError, match="1-D"):
        _ = ember.tensor([1, 2]).mT
