"""Autograd through dtype and device conversions: Tensor.to(dtype / device / other), the dtype
shorthands (.double(), .half(), .bfloat16(), .float(), .cfloat(), ...), .type(dtype),
.type_as(), .cpu(). A conversion that copies records ToCopyBackward0 (PyTorch's _to_copy), whose
gradient goes back in the input's dtype (a real input converted to complex gets the real part);
a conversion that changes nothing returns the tensor itself and records nothing; integer and
bool results are not differentiable. Checked with float64 finite differences where the
conversion keeps double precision, and against PyTorch when it is installed."""

import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def node_name(t):
    # PyTorch spells the engine's own nodes with their C++ namespace.
    return None if t.grad_fn is None else t.grad_fn.name().replace("torch::autograd::", "")


def leaf(lib=ember, dtype="float32", shape=(3, 4), seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(a, dtype=getattr(lib, dtype)).requires_grad_()


# Conversion forms that copy: (label, fn(lib, x) -> converted x), x a float32 leaf.
CONVERTING = [
    ("to(float64)", lambda m, x: x.to(m.float64)),
    ("to(dtype=float64)", lambda m, x: x.to(dtype=m.float64)),
    ("to(float16)", lambda m, x: x.to(m.float16)),
    ("to(bfloat16)", lambda m, x: x.to(m.bfloat16)),
    ("to(complex64)", lambda m, x: x.to(m.complex64)),
    ("to('cpu', float64)", lambda m, x: x.to("cpu", m.float64)),
    ("to(device=cpu, dtype=float64)", lambda m, x: x.to(device=m.device("cpu"), dtype=m.float64)),
    ("to(other)", lambda m, x: x.to(m.zeros(1, dtype=m.float64))),
    ("to(float64, non_blocking, copy)", lambda m, x: x.to(m.float64, True, True)),
    ("to(float64, non_blocking=True)", lambda m, x: x.to(m.float64, non_blocking=True)),
    ("to(float64, memory_format)", lambda m, x: x.to(m.float64,
                                                     memory_format=m.contiguous_format)),
    ("to(float32, copy=True)", lambda m, x: x.to(m.float32, copy=True)),
    ("to('cpu', copy=True)", lambda m, x: x.to("cpu", copy=True)),
    ("double", lambda m, x: x.double()),
    ("half", lambda m, x: x.half()),
    ("bfloat16", lambda m, x: x.bfloat16()),
    ("cfloat", lambda m, x: x.cfloat()),
    ("cdouble", lambda m, x: x.cdouble()),
    ("double(memory_format)", lambda m, x: x.double(memory_format=m.preserve_format)),
    ("double().float()", lambda m, x: x.double().float()),
    ("type(float64)", lambda m, x: x.type(m.float64)),
    ("type('DoubleTensor')", lambda m, x: x.type(f"{m.__name__}.DoubleTensor")),
    ("type('torch.DoubleTensor')", lambda m, x: x.type("torch.DoubleTensor")),
    ("type(float64, non_blocking=True)", lambda m, x: x.type(m.float64, non_blocking=True)),
    ("type_as", lambda m, x: x.type_as(m.zeros(1, dtype=m.float16))),
    ("transposed double", lambda m, x: x.t().double()),
]

# Forms that change nothing: they return x itself.
NO_OPS = [
    ("to(float32)", lambda m, x: x.to(m.float32)),
    ("to(dtype=float32)", lambda m, x: x.to(dtype=m.float32)),
    ("to('cpu')", lambda m, x: x.to("cpu")),
    ("to(device('cpu'))", lambda m, x: x.to(m.device("cpu"))),
    ("to('cpu', float32)", lambda m, x: x.to("cpu", m.float32)),
    ("to(self)", lambda m, x: x.to(x)),
    ("to(float32 other)", lambda m, x: x.to(m.zeros(2))),
    ("to(None)", lambda m, x: x.to(None)),
    ("to(float32, non_blocking=True)", lambda m, x: x.to(m.float32, non_blocking=True)),
    ("to(float32, copy=False)", lambda m, x: x.to(m.float32, copy=False)),
    ("to(memory_format=contiguous)", lambda m, x: x.to(memory_format=m.contiguous_format)),
    ("float", lambda m, x: x.float()),
    ("float(memory_format)", lambda m, x: x.float(memory_format=m.contiguous_format)),
    ("cpu", lambda m, x: x.cpu()),
    ("type(float32)", lambda m, x: x.type(m.float32)),
    ("type('FloatTensor')", lambda m, x: x.type(f"{m.__name__}.FloatTensor")),
    ("type_as(float32)", lambda m, x: x.type_as(m.zeros(1))),
]

# Conversions to dtypes without gradients.
NOT_DIFFERENTIABLE = [
    ("long", lambda m, x: x.long()),
    ("int", lambda m, x: x.int()),
    ("short", lambda m, x: x.short()),
    ("char", lambda m, x: x.char()),
    ("byte", lambda m, x: x.byte()),
    ("bool", lambda m, x: x.bool()),
    ("to(int64)", lambda m, x: x.to(m.int64)),
    ("to(int32, copy=True)", lambda m, x: x.to(m.int32, copy=True)),
    ("type(int64)", lambda m, x: x.type(m.int64)),
    ("type_as(int)", lambda m, x: x.type_as(m.zeros(1, dtype=m.int32))),
]


def labels(cases):
    return [label for label, _ in cases]


# ---- what is recorded -----------------------------------------------------------------------


@pytest.mark.parametrize("label,fn", CONVERTING, ids=labels(CONVERTING))
def test_converting_forms_record_to_copy_backward(label, fn):
    x = leaf()
    y = fn(ember, x)
    assert y is not x
    assert y.requires_grad and not y.is_leaf
    assert node_name(y) == "ToCopyBackward0"
    # One node per conversion; the chained double().float() records two.
    first = y.grad_fn.next_functions[0][0].name().replace("torch::autograd::", "")
    before = {"double().float()": "ToCopyBackward0", "transposed double": "TBackward0"}
    assert first == before.get(label, "AccumulateGrad")


@pytest.mark.parametrize("label,fn", CONVERTING, ids=labels(CONVERTING))
def test_gradients_come_back_in_the_input_dtype(label, fn):
    x = leaf()
    y = fn(ember, x)
    weights = np.arange(1, y.numel() + 1, dtype=np.float64).reshape(tuple(y.shape))
    loss = (y * ember.tensor(weights).to(y.dtype)).sum()
    (loss.real if loss.is_complex() else loss).backward()
    assert x.grad is not None and x.grad.dtype == ember.float32
    assert tuple(x.grad.shape) == (3, 4)
    want = weights.T if label == "transposed double" else weights
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("label,fn", NO_OPS, ids=labels(NO_OPS))
def test_forms_that_change_nothing_return_the_tensor_itself(label, fn):
    x = leaf()
    assert fn(ember, x) is x
    y = x * 2
    assert fn(ember, y) is y and node_name(y) == "MulBackward0"


def test_a_non_contiguous_tensor_is_returned_as_it_is():
    x = leaf()
    xt = x.t()
    assert xt.to(ember.float32) is xt
    assert xt.to(memory_format=ember.contiguous_format) is xt  # as PyTorch's to()
    assert xt.float() is xt


@pytest.mark.parametrize("label,fn", NOT_DIFFERENTIABLE, ids=labels(NOT_DIFFERENTIABLE))
def test_integer_and_bool_results_are_not_differentiable(label, fn):
    x = leaf()
    y = fn(ember, x)
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_nothing_is_recorded_without_grad():
    x = leaf()
    with ember.no_grad():
        y = x.double()
    assert not y.requires_grad and y.grad_fn is None
    with ember.inference_mode():
        assert not x.half().requires_grad
    z = x.detach().double()
    assert not z.requires_grad and z.grad_fn is None
    plain = ember.ones(3)
    assert plain.double().grad_fn is None and not plain.double().requires_grad
    # A leaf whose grad is turned on later still converts as a leaf of its own.
    converted = plain.double().requires_grad_()
    assert converted.is_leaf and converted.grad_fn is None


def test_a_bfloat16_and_float16_leaf_get_their_gradients_in_their_dtype():
    for dtype in (ember.bfloat16, ember.float16):
        x = ember.tensor([1.0, -2.0, 0.5], dtype=dtype).requires_grad_()
        y = x.float()
        assert node_name(y) == "ToCopyBackward0"
        (y * ember.tensor([3.0, 4.0, 5.0])).sum().backward()
        assert x.grad.dtype == dtype
        np.testing.assert_array_equal(x.grad.float().numpy(), [3.0, 4.0, 5.0])


# ---- layout, copies, arguments ----------------------------------------------------------------


def test_layout_and_arguments_are_unaffected_by_recording():
    x = leaf()
    xt = x.t()
    assert xt.double().stride() == (1, 4)  # preserve_format keeps the permuted layout
    assert xt.to(ember.float64, memory_format=ember.contiguous_format).stride() == (3, 1)
    assert xt.double(memory_format=ember.contiguous_format).stride() == (3, 1)
    y = x.to(ember.float32, copy=True)
    assert y.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        x.to(ember.float64, dtype=ember.float32)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        x.to(ember.float64, foo=1)
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match="not available"):
            x.to("cuda")
        with pytest.raises(RuntimeError, match="not available"):
            x.cuda()
    with pytest.raises(ValueError, match="invalid type"):
        x.type("ember.NoSuchTensor")
    assert x.type() == "ember.FloatTensor"


def test_values_of_the_recorded_conversion():
    x = ember.tensor([1.7, -1.7, 300.5], requires_grad=True)
    assert x.byte().tolist() == [1, 255, 44]
    np.testing.assert_array_equal(x.double().detach().numpy(), np.float32([1.7, -1.7, 300.5]))
    assert x.bfloat16().detach().float().tolist() == [1.703125, -1.703125, 300.0]
    z = ember.tensor([1 + 2j, -3 - 4j], requires_grad=True)
    assert z.float().detach().tolist() == [1.0, -3.0]


def test_the_conversion_saves_nothing():
    # ToCopyBackward0 keeps no tensor: modifying the input afterwards does not break backward.
    x = leaf()
    y = x.double()
    with ember.no_grad():
        x.add_(1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))


def test_gradient_accumulates_over_several_conversions():
    x = leaf()
    (x.double().sum() + x.half().float().sum() * 2 + x.to(ember.complex64).real.sum()).backward()
    assert x.grad.dtype == ember.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 4), 4.0))


# ---- complex <-> real -------------------------------------------------------------------------


def test_real_to_complex_gives_the_real_part_of_the_gradient():
    w = ember.tensor([0.5, -2.0, 3.0], requires_grad=True)
    y = w.to(ember.complex64)
    assert node_name(y) == "ToCopyBackward0"
    (y * (1 + 2j)).abs().sum().backward()
    assert w.grad.dtype == ember.float32
    np.testing.assert_allclose(w.grad.numpy(), np.sqrt(5.0) * np.sign([0.5, -2.0, 3.0]),
                               rtol=1e-6)


def test_complex_to_real_gives_a_complex_gradient():
    z = ember.tensor([1 + 2j, -3 + 0.5j], dtype=ember.complex64, requires_grad=True)
    y = z.to(ember.float32)
    assert node_name(y) == "ToCopyBackward0"
    (y * ember.tensor([2.0, 3.0])).sum().backward()
    assert z.grad.dtype == ember.complex64
    np.testing.assert_array_equal(z.grad.numpy(), np.complex64([2, 3]))


# ---- finite differences (float64) ---------------------------------------------------------------


def test_gradcheck_float64_conversions():
    x = leaf(dtype="float64")
    assert gradcheck(lambda t: t.to(ember.float64, copy=True) * 3, (x,), check_grad_dtypes=True)
    assert gradcheck(lambda t: t.to(ember.complex128) * (1 + 2j), (x,), check_grad_dtypes=True)
    assert gradcheck(lambda t: t.cdouble().exp(), (x,), check_grad_dtypes=True)
    assert gradcheck(lambda t: t.t().to(ember.float64, copy=True).sin(), (x,),
                     check_grad_dtypes=True)
    z = leaf(dtype="complex128", shape=(2, 3))
    assert gradcheck(lambda t: t.to(ember.float64) ** 2, (z,), check_grad_dtypes=True)
    assert gradcheck(lambda t: t.double() * t.real, (z,), check_grad_dtypes=True)


def test_gradcheck_through_float32():
    # Rounding to float32 limits the finite differences: a larger step and tolerance.
    x = leaf(dtype="float64", shape=(5,))
    assert gradcheck(lambda t: t.float().double() * 2, (x,), eps=1e-2, atol=1e-4,
                     check_grad_dtypes=True)


def test_gradgradcheck_float64_conversions():
    x = leaf(dtype="float64", shape=(4,))
    assert gradgradcheck(lambda t: (t.to(ember.complex128) * (1 + 2j)).abs() ** 3, (x,))
    assert gradgradcheck(lambda t: t.to(ember.float64, copy=True) ** 3, (x,))
    z = leaf(dtype="complex128", shape=(3,))
    assert gradgradcheck(lambda t: t.to(ember.float64) ** 3, (z,))


def test_double_backward_records_the_backward_cast():
    x = leaf(shape=(3,))
    y = (x.double() ** 2).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    assert g.dtype == ember.float32 and g.requires_grad
    assert node_name(g) == "ToCopyBackward0"
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


# ---- Python callers that relied on the old, unrecorded conversion -------------------------------


def test_module_conversions_keep_parameters_leaves():
    lin = ember.nn.Linear(2, 3)
    lin(ember.randn(4, 2)).sum().backward()
    for convert, dtype in ((lambda m: m.double(), ember.float64),
                           (lambda m: m.to(ember.float16), ember.float16),
                           (lambda m: m.type(ember.bfloat16), ember.bfloat16),
                           (lambda m: m.float(), ember.float32)):
        convert(lin)
        for p in lin.parameters():
            assert p.dtype == dtype and p.is_leaf and p.grad_fn is None and p.requires_grad
            assert p.grad.dtype == dtype and p.grad.grad_fn is None
    out = lin.double()(ember.randn(4, 2, dtype=ember.float64))
    out.sum().backward()
    assert lin.weight.grad.dtype == ember.float64


def test_packed_sequence_conversion_records():
    from ember.nn.utils.rnn import pack_padded_sequence

    x = leaf(shape=(3, 2, 2))
    packed = pack_padded_sequence(x, [3, 2])
    converted = packed.double()
    assert converted.data.dtype == ember.float64 and node_name(converted.data) == "ToCopyBackward0"
    converted.data.sum().backward()
    assert x.grad.dtype == ember.float32
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], np.ones((3, 2)))
    np.testing.assert_array_equal(x.grad.numpy()[:2, 1], np.ones((2, 2)))
    np.testing.assert_array_equal(x.grad.numpy()[2, 1], np.zeros(2))


# ---- parity with PyTorch (skipped without torch) ------------------------------------------------


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def describe(lib, fn, dtype="float32"):
    """Node name, requires_grad, identity, dtype and strides of fn(lib, x), and the dtype and
    values of x's gradient."""
    x = leaf(lib, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "Casting complex values to real discards ..."
        y = fn(lib, x)
    info = (node_name(y), y.requires_grad, y is x, str(y.dtype).split(".")[-1], tuple(y.stride()))
    if not y.requires_grad:
        return info, None
    weights = lib.arange(1.0, y.numel() + 1).reshape(tuple(y.shape)).to(y.dtype)
    loss = (y * weights).sum()
    (loss.real if loss.is_complex() else loss).backward()
    g = x.grad.detach()
    g = g.to(lib.complex128 if g.is_complex() else lib.float64)
    return info, (str(x.grad.dtype).split(".")[-1], g.numpy())


ALL_FORMS = CONVERTING + NO_OPS + NOT_DIFFERENTIABLE


@pytest.mark.parametrize("label,fn", ALL_FORMS, ids=labels(ALL_FORMS))
def test_matches_torch(torch, label, fn):
    want, want_grad = describe(torch, fn)
    got, got_grad = describe(ember, fn)
    assert got == want
    if want_grad is None:
        assert got_grad is None
    else:
        assert got_grad[0] == want_grad[0]
        np.testing.assert_allclose(got_grad[1], want_grad[1], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64", "complex64"])
@pytest.mark.parametrize("target", ["float32", "float64", "complex128", "bfloat16"])
def test_dtype_pairs_match_torch(torch, dtype, target):
    def fn(lib, x):
        return x.to(getattr(lib, target))

    want, want_grad = describe(torch, fn, dtype)
    got, got_grad = describe(ember, fn, dtype)
    assert got == want
    assert got_grad[0] == want_grad[0]
    np.testing.assert_allclose(got_grad[1], want_grad[1], rtol=1e-6)
