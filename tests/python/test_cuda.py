"""The CUDA backend (docs/design/cuda.md): tensors on a GPU, copies both ways (contiguous,
strided, converting, broadcast), fills, the refusal of ops without a CUDA kernel, memory counters
and ember.cuda's queries. Marked ``cuda``: these run on a machine with a GPU and skip without
one. What holds without a GPU (the module imports, the errors say why) is tested at the end."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import ember

HAS_GPU = ember.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU")
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
          "int64", "bool", "complex64", "complex128"]


def host(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    values = (np.arange(n).reshape(shape) % 7) - 2
    if dtype == "bool":
        return ember.from_numpy(values > 0)
    return ember.from_numpy(values.astype("float64")).to(getattr(ember, dtype))


@pytest.mark.cuda
@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype):
    x = host(dtype)
    for moved in (x.cuda(), x.to("cuda"), x.to(device="cuda:0"), ember.as_tensor(x, device="cuda")):
        assert moved.is_cuda and moved.device == ember.device("cuda", 0)
        assert moved.dtype == x.dtype
        back = moved.cpu()
        assert not back.is_cuda
        assert ember.equal(back, x)


# Copies that are strided, converting or broadcast, in every direction: run on the GPU below and
# on the stand-in device without one.
COPY_CHECKS = """
x = ember.arange(24.0, dtype=ember.float64).reshape(4, 6)
# A transposed and sliced source, converted on the way.
d = x.t()[1:5:2].to("cuda", dtype=ember.float32)
np.testing.assert_array_equal(d.cpu().numpy(), x.t()[1:5:2].numpy().astype("float32"))
# A strided device destination keeps its other elements.
dev = x.cuda()
dev[:, 2].copy_(ember.tensor([-1.0, -2.0, -3.0, -4.0]))
want = x.numpy().copy()
want[:, 2] = [-1, -2, -3, -4]
np.testing.assert_array_equal(dev.cpu().numpy(), want)
# From a strided device view back to the host, and device to device.
np.testing.assert_array_equal(dev.t().cpu().numpy(), want.T)
other = ember.empty(6, 4, device="cuda", dtype=ember.int32)
other.copy_(dev.t())
np.testing.assert_array_equal(other.cpu().numpy(), want.T.astype("int32"))
# A broadcast source.
row = ember.empty(3, 5, device="cuda")
row.copy_(ember.arange(5.0))
np.testing.assert_array_equal(row.cpu().numpy(), np.tile(np.arange(5.0), (3, 1)))
"""


@pytest.mark.cuda
@gpu
def test_strided_converting_and_broadcast_copies():
    exec(COPY_CHECKS, {"ember": ember, "np": np})


@pytest.mark.cuda
@gpu
def test_zero_dim_and_empty():
    s = ember.tensor(3.5, device="cuda")
    assert s.shape == () and s.cpu().item() == 3.5
    e = ember.zeros(0, 3, device="cuda")
    assert e.shape == (0, 3) and e.cpu().numel() == 0


@pytest.mark.cuda
@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_fills(dtype):
    dt = getattr(ember, dtype)
    # through float32: NumPy has no bfloat16
    np.testing.assert_array_equal(ember.zeros(5, dtype=dt, device="cuda").cpu().float().numpy(),
                                  np.zeros(5))
    np.testing.assert_array_equal(ember.ones(2, 3, dtype=dt, device="cuda").cpu().float().numpy(),
                                  np.ones((2, 3)))
    value = True if dtype == "bool" else 3
    full = ember.full((4,), value, dtype=dt, device="cuda")
    assert ember.equal(full.cpu(), ember.full((4,), value, dtype=dt))


@pytest.mark.cuda
@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_of_contiguous_views_at_every_offset(dtype):
    # The kernel stores 16 bytes at a time between the view's first and last 16-byte boundaries
    # and single elements outside them: every start and length around those boundaries.
    dt = getattr(ember, dtype)
    value = True if dtype == "bool" else 5
    for start in range(0, 17):
        for length in (0, 1, 2, 3, 7, 8, 15, 16, 17, 33, 100):
            d = ember.zeros(160, dtype=dt, device="cuda")
            d[start:start + length].fill_(value)
            want = ember.zeros(160, dtype=dt)
            want[start:start + length] = value
            assert ember.equal(d.cpu(), want), (start, length)


@pytest.mark.cuda
@gpu
def test_load_onto_the_gpu_keeps_shared_storages(tmp_path):
    x = ember.arange(6.0)
    ember.save({"a": x, "b": x[2:]}, tmp_path / "shared.pt")
    loaded = ember.load(tmp_path / "shared.pt", map_location="cuda")
    assert loaded["a"].device == ember.device("cuda", 0) == loaded["b"].device
    loaded["a"].fill_(7.0)  # one storage on the device: the view sees the fill
    assert loaded["b"].cpu().tolist() == [7.0] * 4


@pytest.mark.cuda
@gpu
def test_fill_of_a_strided_view():
    d = ember.zeros(4, 5, device="cuda")
    d[:, 1:4:2].fill_(7.0)
    want = np.zeros((4, 5), dtype="float32")
    want[:, 1:4:2] = 7
    np.testing.assert_array_equal(d.cpu().numpy(), want)
    d.zero_()
    assert not d.cpu().numpy().any()


@pytest.mark.cuda
@gpu
def test_repr_numpy_and_ops_without_a_kernel():
    d = ember.arange(3.0).cuda()
    assert "device='cuda:0'" in repr(d)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        d.numpy()
    np.testing.assert_array_equal(d.numpy(force=True), [0.0, 1.0, 2.0])
    with pytest.raises(NotImplementedError,
                       match="not implemented for device cuda|no kernel for device cuda:0"):
        d + d
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        d + ember.ones(3)
    assert d.data_ptr() != 0


@pytest.mark.cuda
@gpu
def test_memory_counters_and_queries():
    ember.cuda.synchronize()
    before = ember.cuda.memory_allocated()
    t = ember.empty(1024, 1024, device="cuda")
    assert ember.cuda.memory_allocated() - before == 4 * 1024 * 1024
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    del t
    assert ember.cuda.memory_allocated() == before
    assert ember.cuda.device_count() >= 1
    assert isinstance(ember.cuda.get_device_name(0), str)
    assert len(ember.cuda.get_device_capability()) == 2
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="does not exist"):
        ember.zeros(2, device=f"cuda:{ember.cuda.device_count()}")


# -- the Python side on a stand-in device ---------------------------------------------------------
# ember._C._install_host_memory_cuda_for_tests registers a "cuda" device in host memory: the
# bindings, conversions, views, copies and errors of device tensors then run without a GPU. It
# cannot be undone, so it runs in a subprocess.
STAND_IN = f"DTYPES = {DTYPES!r}\n" + """
import re
import numpy as np
import ember
ember._C._install_host_memory_cuda_for_tests()
NO_KERNEL = "not implemented for device cuda|no kernel for device cuda:0"

def raises(cls, pattern, fn):
    try:
        fn()
    except cls as e:
        assert re.search(pattern, str(e)), (pattern, str(e))
    else:
        raise AssertionError(f"expected {cls.__name__}: {pattern}")

for name in DTYPES:
    dt = getattr(ember, name)
    x = ember.from_numpy((np.arange(12).reshape(3, 4) % 7 - 2).astype("float64")).to(dt)
    for moved in (x.cuda(), x.to("cuda"), x.to(device="cuda:0"), ember.as_tensor(x, device="cuda")):
        assert moved.is_cuda and moved.device == ember.device("cuda", 0), moved.device
        assert moved.dtype == dt
        assert ember.equal(moved.cpu(), x), name
""" + COPY_CHECKS + """
s = ember.tensor(3.5, device="cuda")
assert s.shape == () and s.cpu().item() == 3.5
assert ember.tensor([[1, 2], [3, 4]], device="cuda").cpu().tolist() == [[1, 2], [3, 4]]
assert ember.empty(0, 3, device="cuda").cpu().shape == (0, 3)
assert "device='cuda:0'" in repr(dev)
assert dev.data_ptr() != 0 and dev.is_contiguous()
# The stand-in has no fill kernel (only libember_cuda registers one; exporting to DLPack below
# loads that library, whose kernel would then meet the stand-in's memory).
raises(NotImplementedError, NO_KERNEL, lambda: ember.zeros(2, device="cuda"))
# DLPack names the device, and a device tensor imports as a view of the same memory.
assert int(dev.__dlpack_device__()[0]) == 2 and dev.__dlpack_device__()[1] == 0
shared = ember.from_dlpack(dev)
assert shared.device == dev.device and shared.data_ptr() == dev.data_ptr()
shared[0].copy_(ember.full((6,), 9.0))
assert dev.cpu()[0].tolist() == [9.0] * 6
dev[0].copy_(ember.from_numpy(want[0]))

raises(TypeError, "can't convert cuda:0 device type tensor to numpy", dev.numpy)
np.testing.assert_array_equal(dev.numpy(force=True), want)
raises(NotImplementedError, NO_KERNEL, lambda: dev + dev)
raises(NotImplementedError, NO_KERNEL, lambda: dev.sum())
raises(NotImplementedError, NO_KERNEL, lambda: dev @ dev.t())
raises(NotImplementedError, NO_KERNEL, lambda: dev[0, 0].item())
raises(RuntimeError, "Expected all tensors to be on the same device", lambda: dev + ember.ones(6))
raises(RuntimeError, "'cuda:1' does not exist", lambda: ember.empty(2, device="cuda:1"))

# A parameter moved to the device and back keeps its values and its gradient flows to the CPU.
w = ember.randn(3, requires_grad=True)
wd = w.to("cuda")
back = wd.cpu()
(back * 2).sum().backward()
np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
m = ember.nn.Linear(2, 2)
before = [p.detach().clone() for p in m.parameters()]
m.cuda()
assert all(p.is_cuda for p in m.parameters())
m.cpu()
assert all(ember.equal(p, q) for p, q in zip(m.parameters(), before))

# A group without NCCL refuses CUDA tensors with a message that says what to use.
import ember.distributed as dist
if dist.is_available():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    raises(ValueError, "has no CUDA support.*use the nccl backend",
           lambda: dist.all_reduce(ember.tensor([1.0], device="cuda")))
    cpu = ember.ones(2)
    dist.all_reduce(cpu)
    assert cpu.tolist() == [1.0, 1.0]
    dist.destroy_process_group()
print("ok")
"""


def test_python_side_on_a_host_memory_stand_in(tmp_path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


# -- without a GPU ------------------------------------------------------------------------------
BUILT = importlib.util.find_spec("ember._C_cuda") is not None


@pytest.mark.skipif(HAS_GPU, reason="checks the answers without a GPU")
def test_without_a_gpu_the_module_says_why():
    assert ember.backends.cuda.is_built() is BUILT
    assert ember.cuda.is_available() is False and ember.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="not available"):
        ember.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA backend is not loaded"):
        ember.ones(2).cuda()
    with pytest.raises(RuntimeError, match="needs a CUDA device, which is not available"):
        ember.cuda.memory_allocated()
    assert ember.accelerator.current_accelerator() is None


@pytest.mark.skipif(not BUILT, reason="this build has no CUDA backend module")
def test_the_cuda_module_imports_without_a_gpu():
    import ember._C_cuda as C

    assert C.device_count() == (ember.cuda.device_count())
    assert C.runtime_version() >= 12000
    nccl_module = importlib.util.find_spec("ember._C_nccl") is not None
    assert nccl_module is bool(ember._C._build_info()["nccl"])


SHARED_LIBRARIES_LOADED = """
import ember, ember._C_cuda, ember.cuda, ember.distributed as dist
ember.cuda.is_available(); dist.is_nccl_available()
maps = open("/proc/self/maps").read()
print(sorted({name for name in ("libcudart.so", "libnccl.so") if name in maps}))
"""


@pytest.mark.skipif(not BUILT, reason="this build has no CUDA backend module")
def test_no_cuda_runtime_or_nccl_library_is_loaded_by_soname():
    # A later `import torch` would take shared copies of these in place of its own newer ones
    # (docs/design/cuda.md): the runtime is linked statically, and libnccl loads only with
    # ember._C_nccl, which only an NCCL process group imports.
    result = subprocess.run([sys.executable, "-c", SHARED_LIBRARIES_LOADED], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
