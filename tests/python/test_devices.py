"""Devices: device= is accepted everywhere as a str, an ember.device or an int; without a GPU (or
without the CUDA backend) CUDA requests fail with a RuntimeError naming the op, and ember.cuda
reports that. tests/python/test_cuda.py covers CUDA tensors on a GPU."""

import numpy as np
import pytest

import ember

no_gpu = pytest.mark.skipif(ember.cuda.is_available(), reason="checks the errors without a GPU")
CPU_SPECS = ["cpu", "cpu:0", ember.device("cpu"), ember.device("cpu", 0), None]


def test_device_objects():
    d = ember.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert repr(ember.device("cpu")) == "device(type='cpu')"
    assert ember.device("cuda", 0) == ember.device("cuda:0")
    assert ember.device(1) == ember.device("cuda:1")
    assert ember.device("cpu") == "cpu"
    assert ember.device(ember.device("cpu")) == ember.device("cpu")
    with pytest.raises(RuntimeError, match="expected one of cpu, cuda device type"):
        ember.device("tpu")
    with pytest.raises(RuntimeError, match="invalid device string"):
        ember.device("cuda:x")
    # No meta device: the error says what to use instead (the ensembling tutorial's template).
    for make in (lambda: ember.device("meta"), lambda: ember.empty(2, device="meta"),
                 lambda: ember.nn.Linear(2, 2).to("meta")):
        with pytest.raises(RuntimeError, match="no 'meta' device.*on 'cpu' instead"):
            make()


FACTORIES = {
    "empty": lambda d: ember.empty(2, device=d),
    "zeros": lambda d: ember.zeros(2, device=d),
    "ones": lambda d: ember.ones(2, device=d),
    "full": lambda d: ember.full((2,), 1.0, device=d),
    "empty_strided": lambda d: ember.empty_strided((2,), (1,), device=d),
    "scalar_tensor": lambda d: ember.scalar_tensor(1, device=d),
    "arange": lambda d: ember.arange(3, device=d),
    "linspace": lambda d: ember.linspace(0, 1, 3, device=d),
    "logspace": lambda d: ember.logspace(0, 1, 3, device=d),
    "eye": lambda d: ember.eye(2, device=d),
    "tensor": lambda d: ember.tensor([1, 2], device=d),
    "as_tensor": lambda d: ember.as_tensor([1, 2], device=d),
    "asarray": lambda d: ember.asarray([1, 2], device=d),
    "rand": lambda d: ember.rand(2, device=d),
    "randn": lambda d: ember.randn(2, device=d),
    "randint": lambda d: ember.randint(0, 3, (2,), device=d),
    "randperm": lambda d: ember.randperm(3, device=d),
    "normal": lambda d: ember.normal(0.0, 1.0, (2,), device=d),
    "zeros_like": lambda d: ember.zeros_like(ember.ones(2), device=d),
    "ones_like": lambda d: ember.ones_like(ember.ones(2), device=d),
    "empty_like": lambda d: ember.empty_like(ember.ones(2), device=d),
    "full_like": lambda d: ember.full_like(ember.ones(2), 3, device=d),
    "rand_like": lambda d: ember.rand_like(ember.ones(2), device=d),
    "randn_like": lambda d: ember.randn_like(ember.ones(2), device=d),
    "randint_like": lambda d: ember.randint_like(ember.ones(2), 3, device=d),
    "new_zeros": lambda d: ember.ones(2).new_zeros(2, device=d),
    "new_ones": lambda d: ember.ones(2).new_ones(2, device=d),
    "new_empty": lambda d: ember.ones(2).new_empty(2, device=d),
    "new_full": lambda d: ember.ones(2).new_full((2,), 1, device=d),
    "new_tensor": lambda d: ember.ones(2).new_tensor([1], device=d),
    "to": lambda d: ember.ones(2).to(d),
    "to_kw": lambda d: ember.ones(2).to(device=d),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("spec", CPU_SPECS, ids=repr)
def test_cpu_device_accepted(name, spec):
    t = FACTORIES[name](spec)
    assert t.device == ember.device("cpu") and t.is_cpu and not t.is_cuda


# The op named in the error: the entry point the user called.
ERROR_OP = {"to_kw": "to", "zeros_like": "empty_like|zeros_like", "ones_like":
            "empty_like|ones_like", "empty_like": "empty_like", "full_like": "full_like|empty_like",
            "rand_like": "rand_like", "randn_like": "randn_like", "randint_like": "randint_like"}


@no_gpu
@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", ember.device("cuda"), 0], ids=repr)
def test_cuda_device_raises_naming_the_op(name, spec):
    op = ERROR_OP.get(name, name)
    with pytest.raises(RuntimeError, match=rf"\[({op})\] device 'cuda(:0)?' is not available: .*"
                       "ember.cuda.is_available\\(\\) is False"):
        FACTORIES[name](spec)


@no_gpu
def test_cuda_methods_and_interop_raise():
    with pytest.raises(RuntimeError, match=r"\[to\] device 'cuda' is not available"):
        ember.ones(2).cuda()
    with pytest.raises(RuntimeError, match=r"\[Generator\] device 'cuda' is not available"):
        ember.Generator(device="cuda")
    with pytest.raises(RuntimeError, match="device 'cuda:0' is not available"):
        ember.tensor(np.ones(2), device="cuda:0")
    with pytest.raises(TypeError, match="device must be a str, an int or an ember.device"):
        ember.zeros(2, device=1.5)


@no_gpu
def test_cuda_module():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    assert ember.cuda.is_initialized() is False
    ember.cuda.manual_seed(0)
    ember.cuda.manual_seed_all(0)
    for fn in (ember.cuda.current_device, ember.cuda.synchronize, ember.cuda.init):
        with pytest.raises(RuntimeError, match="not available"):
            fn()
    with pytest.raises(RuntimeError, match="not available"):
        ember.cuda.set_device(0)
