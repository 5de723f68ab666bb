"""ember.save / ember.load: safetensors round trips, interop with the safetensors package,
PyTorch .pt files (a committed fixture, and files torch writes at test time where installed),
and corrupt, truncated and malicious files."""

import collections
import dataclasses
import io
import json
import math
import os
import pickle
import random
import struct
import sys
import types
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import ember

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "torch_checkpoint.pt"

ALL_DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
              ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64,
              ember.complex128]

LOAD_ERRORS = (RuntimeError, pickle.UnpicklingError)


def values(t):
    """A tensor's dtype, shape and values, comparable with ==, NaN-safe."""
    if t.dtype == ember.bfloat16:
        t = t.float()
    return str(t.dtype), tuple(t.shape), repr(t.tolist())


def make(dtype, shape=(2, 3)):
    n = math.prod(shape)
    if dtype == ember.bool:
        return (ember.arange(n) % 3 == 0).reshape(shape)
    if dtype in (ember.complex64, ember.complex128):
        real = ember.arange(n, dtype=ember.float64).reshape(shape)
        return ember.complex(real, -real / 2).to(dtype)
    if dtype in (ember.float16, ember.bfloat16, ember.float32, ember.float64):
        return (ember.arange(n, dtype=ember.float64).reshape(shape) / 4 - 1).to(dtype)
    return (ember.arange(n).reshape(shape) - (0 if dtype == ember.uint8 else n // 2)).to(dtype)


FORMATS = ("torch", "safetensors")


def roundtrip(obj, fmt="torch", **load_kwargs):
    buffer = io.BytesIO()
    ember.save(obj, buffer, format=fmt)
    buffer.seek(0)
    return ember.load(buffer, **load_kwargs)


def saved_bytes(obj, fmt="safetensors"):
    buffer = io.BytesIO()
    ember.save(obj, buffer, format=fmt)
    return buffer.getvalue()


def header_of(data):
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), 8 + n


def with_header(header, payload):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + payload


def load_bytes(data):
    return ember.load(io.BytesIO(data))


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: str(d).split(".")[-1])
def test_roundtrip_every_dtype(dtype):
    cases = {"matrix": make(dtype), "scalar": make(dtype, ()), "empty": make(dtype, (0, 4)),
             "vector": make(dtype, (5,))}
    back = roundtrip(cases)
    assert list(back) == list(cases)
    for k in cases:
        assert values(back[k]) == values(cases[k])


@pytest.mark.parametrize("fmt", FORMATS)
def test_roundtrip_nested_structures_and_plain_values(fmt):
    t = ember.arange(4).float()
    obj = {
        "state": OrderedDict([("w", t), ("b", ember.zeros(2))]),
        "list": [1, 2.5, True, None, "s", (t, [t * 2])],
        "tuple": (1, (2, 3)),
        "int_keys": {0: "zero", 1: {"deep": ember.ones(1)}},
        "tuple_key": {(1, "a"): 3, None: 4, 2.5: 5, False: 6},
        "floats": [float("nan"), float("inf"), -float("inf"), 1e300, -0.0],
        "big": 2**80,
        "complex": 1 + 2j,
        "bytes": b"\x00\xffraw",
        "size": ember.Size([2, 3]),
        "dtype": ember.bfloat16,
        "device": ember.device("cpu"),
        "np": np.float32(1.5),
        "empty": {},
        "unicode": "żółw ✓",
    }
    back = roundtrip(obj, fmt)
    assert type(back["state"]) is OrderedDict and list(back["state"]) == ["w", "b"]
    assert back["state"]["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert back["list"][:5] == [1, 2.5, True, None, "s"]
    assert type(back["list"][0]) is int and type(back["list"][2]) is bool
    assert isinstance(back["list"][5], tuple) and back["list"][5][1][0].tolist() == [0, 2, 4, 6]
    assert back["tuple"] == (1, (2, 3))
    assert back["int_keys"][0] == "zero" and back["int_keys"][1]["deep"].tolist() == [1.0]
    assert back["tuple_key"] == {(1, "a"): 3, None: 4, 2.5: 5, False: 6}
    f = back["floats"]
    assert math.isnan(f[0]) and f[1:4] == [math.inf, -math.inf, 1e300]
    assert math.copysign(1, f[4]) == -1
    assert back["big"] == 2**80 and back["complex"] == 1 + 2j and back["bytes"] == b"\x00\xffraw"
    assert isinstance(back["size"], ember.Size) and back["size"] == (2, 3)
    assert back["dtype"] == ember.bfloat16 and back["device"] == ember.device("cpu")
    assert back["np"] == 1.5 and back["empty"] == {} and back["unicode"] == "żółw ✓"


def test_roundtrip_top_level_values():
    t = make(ember.float32)
    assert values(roundtrip(t)) == values(t)
    back = roundtrip([t, t + 1])
    assert isinstance(back, list) and values(back[1]) == values(t + 1)
    assert roundtrip(5) == 5 and roundtrip("x") == "x" and roundtrip(None) is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_non_contiguous_tensors(fmt):
    def base():  # a fresh storage per case: views of one storage would stay views
        return ember.arange(24, dtype=ember.float64).reshape(4, 6)

    cases = {
        "transposed": base().t(),
        "stepped": base()[::2, 1::3],
        "expanded": ember.arange(3).reshape(3, 1).expand(3, 4),
        "offset": base()[2],
    }
    back = roundtrip(cases, fmt)
    for k, v in cases.items():
        assert values(back[k]) == values(v), k
        if fmt == "safetensors":  # C order, the tensor's own bytes only
            assert back[k].is_contiguous()
        else:  # torch's format: the whole storage, the same strides and offset
            assert back[k].stride() == v.stride() and back[k].storage_offset() == \
                v.storage_offset(), k


@pytest.mark.parametrize("fmt", FORMATS)
def test_shared_storage_and_identity(fmt):
    base = ember.arange(12, dtype=ember.float32)
    view = base[2:8].view(2, 3)
    tied = ember.ones(3)
    obj = {"base": base, "view": view, "tied_a": tied, "tied_b": tied, "t": base.view(3, 4).t()}
    back = roundtrip(obj, fmt)
    assert back["tied_a"] is back["tied_b"]
    assert values(back["view"]) == values(view) and values(back["t"]) == values(obj["t"])
    back["base"][3] = 100.0  # the views share memory again
    assert back["view"][0, 1].item() == 100.0 and back["t"][0, 0].item() == 0.0
    assert back["t"][3, 0].item() == 100.0
    # The base is a normal safetensors entry; the views live only in ember's metadata.
    header, _ = header_of(saved_bytes(obj))
    assert set(header) == {"__metadata__", "base", "tied_a"}
    # Views with no base among them: one byte span, views over it.
    views = {"a": base[0:4], "b": base[3:9]}
    back = roundtrip(views, fmt)
    back["a"][3] = -1.0
    assert back["b"][0].item() == -1.0 and back["b"].tolist()[1:] == [4.0, 5.0, 6.0, 7.0, 8.0]


def test_shared_storage_across_dtypes_and_complex():
    z = make(ember.complex128, (3,))
    for fmt in FORMATS:
        back = roundtrip({"z": z, "z_again": z}, fmt)
        assert back["z"] is back["z_again"] and values(back["z"]) == values(z)
    real = ember._C._rebuild_tensor(z.untyped_storage(), ember.float64, (3, 2), (2, 1), 0)
    back = roundtrip({"z": z, "real": real}, "safetensors")
    assert values(back["real"]) == values(real) and values(back["z"]) == values(z)
    # torch's format types each storage once, and torch.save refuses this too.
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        roundtrip({"z": z, "real": real}, "torch")


def test_requires_grad_and_detached_values():
    w = ember.ones(2, requires_grad=True)
    y = w * 3
    back = roundtrip({"w": w, "y": y, "plain": ember.ones(1)})
    assert back["w"].requires_grad and back["y"].requires_grad
    assert not back["plain"].requires_grad
    assert back["y"].tolist() == [3.0, 3.0] and back["y"].grad_fn is None


def test_paths_and_file_objects(tmp_path):
    sd = {"w": make(ember.float32)}
    for target in [tmp_path / "a.safetensors", str(tmp_path / "b.pt")]:
        ember.save(sd, target)
        assert values(ember.load(target)["w"]) == values(sd["w"])
    with open(tmp_path / "c.bin", "wb") as f:
        f.write(b"prefix")
        ember.save(sd, f)
    with open(tmp_path / "c.bin", "rb") as f:
        f.read(6)
        assert values(ember.load(f)["w"]) == values(sd["w"])  # from the current position


def test_loaded_tensors_own_their_memory(tmp_path):
    path = tmp_path / "own.safetensors"
    ember.save({"w": ember.arange(1000).float()}, path)
    w = ember.load(path)["w"]
    os.remove(path)
    w += 1  # writable, and not backed by the (deleted) file
    assert w[999].item() == 1000.0


def test_safetensors_rejects_arbitrary_objects():
    class Thing:
        pass

    def save(obj):
        ember.save(obj, io.BytesIO(), format="safetensors")

    with pytest.raises(TypeError, match=r"\[save\] cannot save an object of type .*Thing "
                                        r"\(at model.layer\)"):
        save({"model": {"layer": Thing()}})
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        save(loop)
    with pytest.raises(TypeError, match="unsupported dict key type"):
        save({ember.ones(1): 1})


def test_torch_format_saves_what_pickle_can(tmp_path, clean_safe_globals):
    class Local:
        pass

    with pytest.raises((pickle.PicklingError, AttributeError)):  # as torch.save, via pickle
        ember.save({"x": Local()}, io.BytesIO())
    loop = []
    loop.append(loop)
    back = roundtrip(loop)
    assert back[0] is back
    obj = {"p": _Point(1, [ember.ones(2)]), "arr": np.arange(6.0).reshape(2, 3).T,
           "i8": np.array([-1, 2], dtype=np.int8), "s": np.array(["ab", "c"]),
           "b": np.bool_(True), "model": ember.nn.Linear(2, 3)}
    path = tmp_path / "any.pt"
    ember.save(obj, path)
    with pytest.raises(pickle.UnpicklingError, match="unsupported global"):
        ember.load(path)  # weights_only=True: the dataclass and the module are not allowed
    back = ember.load(path, weights_only=False)
    assert back["p"].x == 1 and back["p"].y[0].tolist() == [1.0, 1.0]
    np.testing.assert_array_equal(back["arr"], obj["arr"])
    assert back["i8"].dtype == np.int8 and back["s"].tolist() == ["ab", "c"]
    assert back["b"] is np.True_ or back["b"] == True  # noqa: E712
    assert isinstance(back["model"], ember.nn.Linear)
    np.testing.assert_array_equal(back["model"].weight.detach().numpy(),
                                  obj["model"].weight.detach().numpy())
    # NumPy arrays of plain dtypes load with weights_only=True; object arrays are pickled by
    # NumPy itself and need weights_only=False.
    ember.save({"arr": np.arange(3, dtype=np.float16)}, path)
    assert ember.load(path)["arr"].dtype == np.float16
    ember.save({"objs": np.array([1, "x"], dtype=object)}, path)
    with pytest.raises(pickle.UnpicklingError, match="unsupported global"):
        ember.load(path)
    assert ember.load(path, weights_only=False)["objs"].tolist() == [1, "x"]


def test_torch_format_layout_and_format_choice(tmp_path):
    t = ember.arange(10, dtype=ember.float32)
    ember.save({"t": t, "v": t[2:5]}, tmp_path / "model.pth")
    with zipfile.ZipFile(tmp_path / "model.pth") as z:
        names = z.namelist()
        assert names == ["model/data.pkl", "model/byteorder", "model/data/0", "model/version"]
        info = z.getinfo("model/data/0")
        assert info.compress_type == zipfile.ZIP_STORED and info.file_size == 40
    raw = (tmp_path / "model.pth").read_bytes()
    assert raw.find(struct.pack("<10f", *range(10))) % 64 == 0  # aligned, as torch.save's
    ember.save({"t": t}, tmp_path / "w.safetensors")
    assert (tmp_path / "w.safetensors").read_bytes()[8:9] == b"{"
    for f in ("model.pth", "w.safetensors"):
        assert ember.load(tmp_path / f)["t"].tolist() == t.tolist()
    with pytest.raises(ValueError, match="format must be"):
        ember.save(t, io.BytesIO(), format="npz")
    with pytest.raises(ValueError, match="legacy"):
        ember.save(t, io.BytesIO(), _use_new_zipfile_serialization=False)


def test_torch_reads_ember_files(tmp_path):
    torch = pytest.importorskip("torch")
    q = ember.quantize_per_channel(make(ember.float32, (2, 3)), ember.tensor(
        [0.1, 0.2], dtype=ember.float64), ember.tensor([0, 1]), 0, ember.qint8)
    w = make(ember.float32, (3, 4))
    obj = {"w": w, "t": w.t(), "p": ember.nn.Parameter(ember.ones(2)), "h": make(ember.bfloat16),
           "q": q, "qt": ember.quantize_per_tensor(make(ember.float32), 0.5, 3, ember.quint8),
           "size": ember.Size([1, 2]), "dtype": ember.float16, "n": [1, {"a": 2.5}]}
    path = tmp_path / "ember.pt"
    ember.save(obj, path)
    for mmap in (False, True):
        back = torch.load(path, mmap=mmap)  # torch's own weights_only default
        assert back["t"].untyped_storage().data_ptr() == back["w"].untyped_storage().data_ptr()
        np.testing.assert_array_equal(back["t"].numpy(), w.t().numpy())
        assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad
        assert back["h"].dtype == torch.bfloat16
        np.testing.assert_array_equal(back["q"].int_repr().numpy(), q.int_repr().numpy())
        assert back["q"].qscheme() == torch.per_channel_affine
        assert back["q"].q_per_channel_axis() == 0
        assert back["qt"].q_scale() == 0.5 and back["qt"].q_zero_point() == 3
        assert back["size"] == torch.Size([1, 2]) and back["dtype"] == torch.float16
        assert back["n"] == [1, {"a": 2.5}]
    # And Ember reads torch's rewrite of it.
    torch.save(back, tmp_path / "again.pt")
    again = ember.load(tmp_path / "again.pt")
    np.testing.assert_array_equal(again["q"].int_repr().numpy(), q.int_repr().numpy())


def test_map_location():
    sd = {"w": ember.ones(2)}
    for location in [None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s,
                     lambda s, loc: None]:
        assert roundtrip(sd, map_location=location)["w"].tolist() == [1.0, 1.0]
    seen = []
    roundtrip(sd, map_location=lambda s, loc: seen.append(loc))
    assert seen == ["cpu"]
    cuda_locations = ["cuda", "cuda:0", ember.device("cuda"), {"cpu": "cuda:0"}]
    if ember.cuda.is_available():  # restored on the GPU, as torch.load does
        for location in cuda_locations:
            w = roundtrip(sd, map_location=location)["w"]
            assert w.device == ember.device("cuda", 0) and w.cpu().tolist() == [1.0, 1.0]
        count = ember.cuda.device_count()
        with pytest.raises(RuntimeError, match=f"on CUDA device {count} but"):
            roundtrip(sd, map_location=f"cuda:{count}")
    else:
        for location in cuda_locations:
            with pytest.raises(RuntimeError,
                               match="Attempting to deserialize object on a CUDA device"):
                roundtrip(sd, map_location=location)
    with pytest.raises(TypeError, match="map_location must be"):
        roundtrip(sd, map_location=3)


def test_weights_only_and_mmap(tmp_path):
    sd = {"w": ember.ones(2)}
    assert roundtrip(sd, weights_only=True)["w"].tolist() == [1.0, 1.0]
    assert roundtrip(sd, weights_only=False)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="pickle_module is not supported"):
        roundtrip(sd, pickle_module=pickle)
    with pytest.raises(ValueError, match="mmap=True needs a path"):
        roundtrip(sd, mmap=True)
    # mmap=True maps the stored records copy-on-write: the file is mapped while the tensors
    # live, views share their mapping, and writes stay in memory.
    w = ember.arange(4096, dtype=ember.float32).reshape(64, 64)
    path = tmp_path / "mapped.pt"
    ember.save({"w": w, "t": w.t(), "b": ember.arange(3, dtype=ember.bfloat16)}, path)
    before = path.read_bytes()
    back = ember.load(path, mmap=True)
    with open("/proc/self/maps") as maps:
        assert str(path) in maps.read()
    assert values(back["w"]) == values(w) and values(back["t"]) == values(w.t())
    assert back["b"].tolist() == [0.0, 1.0, 2.0]
    back["w"][0, 1] = -5.0
    assert back["t"][1, 0].item() == -5.0
    assert path.read_bytes() == before
    # safetensors files are read as usual.
    ember.save({"w": w}, tmp_path / "w.safetensors")
    assert values(ember.load(tmp_path / "w.safetensors", mmap=True)["w"]) == values(w)


def test_file_layout_follows_safetensors():
    data = saved_bytes({"b": ember.ones(3, dtype=ember.int8), "a": ember.ones(2)})
    header, start = header_of(data)
    assert start % 8 == 0
    assert header["__metadata__"]["format"] == "pt"
    assert header["a"] == {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    assert header["b"] == {"dtype": "I8", "shape": [3], "data_offsets": [8, 11]}
    assert len(data) == start + 11
    assert np.frombuffer(data[start:start + 8], "<f4").tolist() == [1.0, 1.0]


# --- interop with the safetensors package ---------------------------------------------------


def test_safetensors_reads_ember_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    sd = {f"t.{str(d).split('.')[-1]}": make(d) for d in ALL_DTYPES if d != ember.bfloat16}
    sd["view"] = sd["t.float32"][1]
    path = tmp_path / "ember.safetensors"
    ember.save(sd, path)
    loaded = st.load_file(str(path))
    for name, t in sd.items():
        if name == "view":
            continue  # a view of t.float32: only in ember's metadata
        if t.dtype == ember.complex128:
            expected = np.stack([t.real.numpy(), t.imag.numpy()], axis=-1)
        else:
            expected = t.numpy()
        np.testing.assert_array_equal(loaded[name], expected)
        assert loaded[name].dtype == expected.dtype
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as handle:
        assert handle.metadata()["format"] == "pt"
    bf16 = tmp_path / "bf16.safetensors"
    ember.save({"x": make(ember.bfloat16)}, bf16)
    with safe_open(str(bf16), framework="numpy") as handle:
        assert handle.keys() == ["x"]


def test_ember_reads_safetensors_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f16": np.arange(4, dtype=np.float16),
        "f64": np.linspace(0, 1, 5),
        "i64": np.array([-(2**40), 2**62]),
        "i32": np.arange(3, dtype=np.int32),
        "i16": np.arange(-2, 2, dtype=np.int16),
        "i8": np.arange(-3, 3, dtype=np.int8),
        "u8": np.arange(250, 256, dtype=np.uint8),
        "bool": np.array([True, False]),
        "c64": np.array([1 + 2j, -3j], dtype=np.complex64),
        "scalar": np.array(3.5, dtype=np.float32),
        "empty": np.zeros((0, 2), dtype=np.float32),
    }
    path = tmp_path / "st.safetensors"
    st.save_file(arrays, str(path), metadata={"who": "safetensors"})
    loaded = ember.load(path)
    assert set(loaded) == set(arrays)
    for name, a in arrays.items():
        np.testing.assert_array_equal(loaded[name].numpy(), a)
        assert loaded[name].numpy().dtype == a.dtype
    raw = st.save({"x": np.ones(2, dtype=np.uint16)})
    with pytest.raises(RuntimeError, match="dtype U16, which ember does not support"):
        load_bytes(raw)


def test_safetensors_torch_interop_bfloat16(tmp_path):
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    path = tmp_path / "bf16.safetensors"
    ember.save({"w": make(ember.bfloat16), "z": make(ember.complex64)}, path)
    theirs = st.load_file(str(path))
    assert theirs["w"].dtype == torch.bfloat16
    assert theirs["w"].float().tolist() == make(ember.bfloat16).float().tolist()
    assert theirs["z"].tolist() == make(ember.complex64).tolist()
    back = tmp_path / "back.safetensors"
    st.save_file({"w": theirs["w"] * 2}, str(back))
    assert ember.load(back)["w"].float().tolist() == (make(ember.bfloat16) * 2).float().tolist()


# --- PyTorch files --------------------------------------------------------------------------


def expected_torch_fixture():
    """The values of tests/python/data/torch_checkpoint.pt (see make_torch_fixture.py)."""
    ar = np.arange
    return {
        "model.weight": ar(6, dtype=np.float32).reshape(2, 3) / 4,
        "model.bias": np.array([-1.5, 2.25], np.float32),
        "bool": np.array([True, False, True]),
        "uint8": ar(250, 256, dtype=np.uint8),
        "int8": ar(-3, 3, dtype=np.int8),
        "int16": ar(-300, 300, 100, dtype=np.int16),
        "int32": ar(5, dtype=np.int32) * 100000,
        "int64": np.array([-(2**40), 0, 2**62]),
        "float16": ar(4, dtype=np.float16) / 8,
        "float64": ar(3, dtype=np.float64) / 3,
        "complex64": (ar(3.0) - 1j * ar(3.0)).astype(np.complex64),
        "complex128": ar(2.0) + 1j,
        "scalar": np.array(7),
        "shared_base": ar(12, dtype=np.float64),
        "shared_view": ar(2, 8, dtype=np.float64).reshape(2, 3),
        "transposed": ar(6.0, dtype=np.float32).reshape(2, 3).T,
        "empty": np.zeros((0, 3), np.float32),
    }


def check_torch_fixture(obj):
    expected = expected_torch_fixture()
    model = obj["model"]
    assert isinstance(model, OrderedDict) and list(model) == ["weight", "bias"]
    np.testing.assert_array_equal(model["weight"].numpy(), expected.pop("model.weight"))
    np.testing.assert_array_equal(model["bias"].numpy(), expected.pop("model.bias"))
    tensors = obj["tensors"]
    assert tensors["bfloat16"].dtype == ember.bfloat16
    assert tensors["bfloat16"].float().tolist() == [0.0, 0.5, 1.0, 1.5]
    for name, a in expected.items():
        got = tensors[name].numpy()
        assert got.dtype == a.dtype, name
        np.testing.assert_array_equal(got, a, err_msg=name)
    assert not tensors["transposed"].is_contiguous()  # torch's strides are kept
    tensors["shared_base"][3] = -1.0  # shared storage stays shared
    assert tensors["shared_view"][0, 1].item() == -1.0
    assert obj["param"].requires_grad and obj["param"].tolist() == [1.0, 1.0]
    assert obj["epoch"] == 3 and obj["lr"] == 0.01 and obj["betas"] == (0.9, 0.999)
    assert obj["name"] == "run" and obj["flags"] == [True, None, b"raw"]
    assert isinstance(obj["size"], ember.Size) and obj["size"] == (2, 3)
    assert obj["ids"] == {0: "zero", 1: "one"} and obj["tags"] == {"a"}


def test_load_committed_torch_fixture():
    check_torch_fixture(ember.load(FIXTURE))
    check_torch_fixture(ember.load(str(FIXTURE), map_location="cpu", weights_only=True))
    with open(FIXTURE, "rb") as f:
        check_torch_fixture(ember.load(f))


def test_torch_files_written_now(tmp_path):
    torch = pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixture", DATA / "make_torch_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path / "now.pt"
    torch.save(module.build(), path)
    check_torch_fixture(ember.load(path))

    net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                              torch.nn.Flatten(), torch.nn.Linear(4, 2))
    sd_path = tmp_path / "net.pth"
    torch.save(net.state_dict(), sd_path)
    theirs = net.state_dict()
    mine = ember.load(sd_path)
    assert list(mine) == list(theirs)
    for k in theirs:
        assert mine[k].shape == tuple(theirs[k].shape)
        np.testing.assert_array_equal(mine[k].numpy(), theirs[k].numpy())

    opt = torch.optim.Adam(net.parameters())
    net(torch.randn(2, 1, 3, 3)).sum().backward()
    opt.step()
    opt_path = tmp_path / "opt.pt"
    torch.save(opt.state_dict(), opt_path)
    state = ember.load(opt_path)
    assert state["param_groups"][0]["betas"] == (0.9, 0.999)
    exp_avg = opt.state_dict()["state"][0]["exp_avg"]
    np.testing.assert_array_equal(state["state"][0]["exp_avg"].numpy(), exp_avg.numpy())

    conj = torch.complex(torch.arange(3.0), torch.ones(3)).conj()
    torch.save({"conj": conj, "half": torch.arange(4, dtype=torch.bfloat16)}, tmp_path / "c.pt")
    back = ember.load(tmp_path / "c.pt")
    np.testing.assert_array_equal(back["conj"].numpy(), conj.resolve_conj().numpy())



def _write_torch_zip(path, data_pkl, records, prefix="archive/"):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(prefix + "data.pkl", data_pkl)
        z.writestr(prefix + "byteorder", "little")
        for key, raw in records.items():
            z.writestr(f"{prefix}data/{key}", raw)


def _pickle_str(text):
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def _pickle_ints(values):
    return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"


def _persistent_pickle(location, numel=2, size=(2,), stride=(1,), offset=0):
    """data.pkl as torch.save(tensor) writes it, assembled from pickle opcodes (no torch):
    _rebuild_tensor_v2(<storage "0" by persistent id>, offset, size, stride, False,
    OrderedDict())."""
    storage_pid = (b"(" + _pickle_str("storage") + b"ctorch\nFloatStorage\n" + _pickle_str("0")
                   + _pickle_str(location) + b"J" + struct.pack("<i", numel) + b"tQ")
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + storage_pid
            + b"J" + struct.pack("<i", offset) + _pickle_ints(size) + _pickle_ints(stride)
            + b"\x89ccollections\nOrderedDict\n)RtR.")


def test_handmade_torch_zip_and_geometry_checks(tmp_path):
    good = tmp_path / "good.pt"
    _write_torch_zip(good, _persistent_pickle("cpu"), {"0": struct.pack("<2f", 1.5, -2.0)})
    assert ember.load(good).tolist() == [1.5, -2.0]
    locations = []
    assert ember.load(good, map_location=lambda s, loc: locations.append(loc)).tolist() == [
        1.5, -2.0]
    assert locations == ["cpu"]
    with pytest.raises(AttributeError, match="cuda"):
        ember.load(good, map_location=lambda s, loc: s.cuda())  # the callable's own error
    cuda_pt = tmp_path / "cuda.pt"
    _write_torch_zip(cuda_pt, _persistent_pickle("cuda:0"), {"0": bytes(8)})
    if ember.cuda.is_available():
        on_gpu = ember.load(cuda_pt)
        assert on_gpu.device == ember.device("cuda", 0) and on_gpu.cpu().tolist() == [0.0, 0.0]
    else:
        with pytest.raises(RuntimeError,
                           match="Attempting to deserialize object on a CUDA device"):
            ember.load(cuda_pt)
    assert ember.load(cuda_pt, map_location="cpu").tolist() == [0.0, 0.0]
    assert ember.load(cuda_pt, map_location={"cuda:0": "cpu"}).tolist() == [0.0, 0.0]
    cases = {
        "size": (_persistent_pickle("cpu", size=(3,)), "do not fit a storage"),
        "offset": (_persistent_pickle("cpu", offset=5), "do not fit a storage"),
        "stride": (_persistent_pickle("cpu", size=(2,), stride=(-1,)), "negative stride"),
        "numel": (_persistent_pickle("cpu", numel=4), "should hold 4 elements"),
        "overflow": (_persistent_pickle("cpu", size=(2**31 - 1,) * 3, stride=(1, 1, 1)),
                     "overflows int64"),
        "lengths": (_persistent_pickle("cpu", size=(1, 2), stride=(1,)), "lengths differ"),
    }
    for name, (pkl, message) in cases.items():
        path = tmp_path / f"{name}.pt"
        _write_torch_zip(path, pkl, {"0": struct.pack("<2f", 1.5, -2.0)})
        with pytest.raises(RuntimeError, match=message):
            ember.load(path)
    missing = tmp_path / "missing.pt"
    _write_torch_zip(missing, _persistent_pickle("cpu"), {})
    with pytest.raises(RuntimeError, match="no record archive/data/0"):
        ember.load(missing)


# --- malicious, corrupt and truncated files -------------------------------------------------


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_rejected(tmp_path):
    marker = tmp_path / "pwned"
    for payload in [_Evil(marker), {"ok": 1, "bad": [_Evil(marker)]}]:
        path = tmp_path / "evil.pt"
        _write_torch_zip(path, pickle.dumps(payload, protocol=2), {})
        with pytest.raises(pickle.UnpicklingError, match=r"unsupported global "
                                                         r"(posix|os)\.system"):
            ember.load(path)
    assert not marker.exists()
    for global_pickle, name in [(b"\x80\x02cbuiltins\neval\nq\x00.", "builtins.eval"),
                                (b"\x80\x02ctorch\nload\nq\x00.", "torch.load"),
                                (b"\x80\x02c__builtin__\ngetattr\n.", "builtins.getattr")]:
        path = tmp_path / "global.pt"
        _write_torch_zip(path, global_pickle, {})
        with pytest.raises(pickle.UnpicklingError, match=f"global {name}"):
            ember.load(path)
    # An allowed callable with arguments it does not accept is still an error, not a call.
    path = tmp_path / "codec.pt"
    _write_torch_zip(path, b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x04\x00\x00\x00"
                           b"zlibq\x00\x86R.", {})
    with pytest.raises(pickle.UnpicklingError, match="latin1 text only"):
        ember.load(path)


# --- the weights-only allow-list and weights_only=False ----------------------------------------


@dataclasses.dataclass
class _Point:
    x: int
    y: list


def _point_file(tmp_path, obj=None, protocol=2):
    path = tmp_path / "point.pt"
    _write_torch_zip(path, pickle.dumps(obj or {"p": _Point(1, [2, 3])}, protocol=protocol), {})
    return path


@pytest.fixture
def clean_safe_globals():
    saved = ember.serialization.get_safe_globals()
    ember.serialization.clear_safe_globals()
    yield
    ember.serialization.clear_safe_globals()
    ember.serialization.add_safe_globals(saved)


@pytest.mark.parametrize("protocol", [2, 4])
def test_safe_globals_allow_trusted_classes(tmp_path, clean_safe_globals, protocol):
    path = _point_file(tmp_path, protocol=protocol)
    with pytest.raises(pickle.UnpicklingError) as info:
        ember.load(path)
    message = str(info.value)
    assert f"{__name__}._Point" in message
    assert "add_safe_globals([_Point])" in message and "safe_globals([_Point])" in message
    assert "weights_only=False" in message
    with ember.serialization.safe_globals([_Point]):
        assert ember.serialization.get_safe_globals() == [_Point]
        assert ember.load(path) == {"p": _Point(1, [2, 3])}
    assert ember.serialization.get_safe_globals() == []  # restored on leaving
    with pytest.raises(pickle.UnpicklingError, match="unsupported global"):
        ember.load(path)
    ember.serialization.add_safe_globals([_Point])
    assert ember.load(path, weights_only=True)["p"] == _Point(1, [2, 3])
    ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="unsupported global"):
        ember.load(path)


def test_safe_globals_under_another_name(tmp_path, clean_safe_globals):
    # A class the file names by a module path that does not exist here.
    module = types.ModuleType("elsewhere_models")
    Point = type("Point", (), {"__module__": "elsewhere_models"})  # noqa: N806
    module.Point = Point
    sys.modules["elsewhere_models"] = module
    try:
        obj = Point()
        obj.value = 7
        data = pickle.dumps(obj, protocol=2)
    finally:
        del sys.modules["elsewhere_models"]
    path = tmp_path / "renamed.pt"
    _write_torch_zip(path, data, {})
    with pytest.raises(pickle.UnpicklingError, match="elsewhere_models.Point"):
        ember.load(path)
    with ember.serialization.safe_globals([(_Point, "elsewhere_models.Point")]):
        loaded = ember.load(path)
    assert type(loaded) is _Point and loaded.value == 7


def test_safe_globals_argument_checks(clean_safe_globals):
    with pytest.raises(TypeError, match="expected a list"):
        ember.serialization.add_safe_globals(_Point)
    with pytest.raises(TypeError, match="classes or functions"):
        ember.serialization.add_safe_globals([3])
    with pytest.raises(TypeError, match="module.name"):
        ember.serialization.add_safe_globals([(_Point, "nodot")])
    with pytest.raises(TypeError, match="expected a list"):
        ember.serialization.safe_globals("x")
    assert ember.serialization.get_safe_globals() == []


def test_weights_only_false_unpickles_fully(tmp_path, clean_safe_globals, monkeypatch):
    path = _point_file(tmp_path, {"p": _Point(4, [5]), "c": collections.Counter("aab")})
    loaded = ember.load(path, weights_only=False)
    assert loaded == {"p": _Point(4, [5]), "c": collections.Counter("aab")}
    # PyTorch's switch for the default: TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 means weights_only
    # False when the caller does not say.
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert ember.load(path)["p"] == _Point(4, [5])
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0")
    with pytest.raises(pickle.UnpicklingError, match="unsupported global"):
        ember.load(path)
    # torch.* globals Ember does not provide name themselves.
    missing = tmp_path / "missing.pt"
    _write_torch_zip(missing, b"\x80\x02ctorch.nonexistent\nThing\nq\x00.", {})
    with pytest.raises(pickle.UnpicklingError, match="torch.nonexistent.Thing"):
        ember.load(missing, weights_only=False)


def test_torch_whole_model_loads_with_weights_only_false(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.LayerNorm(8),
                              torch.nn.Linear(8, 3))
    path = tmp_path / "whole.pt"
    torch.save(net, path)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        ember.load(path)
    mine = ember.load(path, weights_only=False)
    assert isinstance(mine, ember.nn.Sequential) and isinstance(mine[0], ember.nn.Linear)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    got = mine(ember.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    torch.save({"model": net.state_dict(), "opt": opt}, tmp_path / "ckpt.pt")
    ckpt = ember.load(tmp_path / "ckpt.pt", weights_only=False)
    assert type(ckpt["opt"]).__name__ == "SGD"
    assert ckpt["opt"].param_groups[0]["momentum"] == 0.9


def test_legacy_and_foreign_formats(tmp_path):
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + b"rest")
    with pytest.raises(RuntimeError, match="legacy"):
        ember.load(legacy)
    other = tmp_path / "other.bin"
    other.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00hello world12345")
    with pytest.raises(RuntimeError, match="not a safetensors or PyTorch zip file"):
        ember.load(other)
    script = tmp_path / "script.pt"
    with zipfile.ZipFile(script, "w") as z:
        z.writestr("m/constants.pkl", b"")
        z.writestr("m/code/__torch__.py", b"")
    with pytest.raises(RuntimeError, match="TorchScript"):
        ember.load(script)
    nopkl = tmp_path / "nopkl.pt"
    with zipfile.ZipFile(nopkl, "w") as z:
        z.writestr("a.txt", b"x")
    with pytest.raises(RuntimeError, match="no data.pkl"):
        ember.load(nopkl)


def test_every_truncation_of_a_safetensors_file_is_a_clear_error():
    data = saved_bytes({"w": make(ember.float32), "n": 3, "v": make(ember.int16, (4,))})
    for cut in range(len(data)):
        with pytest.raises(RuntimeError, match=r"\[load\]"):
            load_bytes(data[:cut])


def test_every_truncation_of_a_torch_file_is_a_clear_error():
    data = FIXTURE.read_bytes()
    for cut in list(range(0, 200, 7)) + list(range(200, len(data), 97)) + [len(data) - 1]:
        with pytest.raises(LOAD_ERRORS):
            load_bytes(data[:cut])


def test_corrupt_torch_records(tmp_path):
    data = bytearray(FIXTURE.read_bytes())
    with zipfile.ZipFile(FIXTURE) as z:
        info = z.getinfo("torch_checkpoint/data/14")
    # Flip one byte of a storage record: the CRC check fails.
    local = info.header_offset  # the local header's name and extra field lengths
    name_len, extra_len = struct.unpack("<HH", data[local + 26:local + 30])
    start = local + 30 + name_len + extra_len
    data[start + 5] ^= 0xFF
    with pytest.raises(RuntimeError, match="corrupt zip archive.*CRC"):
        load_bytes(bytes(data))
    garbage = b"PK\x03\x04" + bytes(100)
    with pytest.raises(RuntimeError, match="corrupt or truncated zip archive"):
        load_bytes(garbage)


def test_corrupt_compressed_records_are_clear_errors():
    # Found by the readers' fuzzer: an LZMA member whose properties are invalid made zipfile
    # raise lzma.LZMAError out of ember.load. Each compression method's own error becomes the
    # loader's RuntimeError.
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=method) as z:
            z.writestr("archive/byteorder", b"little" * 50)
            z.writestr("archive/data.pkl", b"x")
        data = bytearray(buf.getvalue())
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
            info = z.getinfo("archive/byteorder")
        local = info.header_offset
        name_len, extra_len = struct.unpack("<HH", data[local + 26:local + 30])
        start = local + 30 + name_len + extra_len
        # The start of the compressed stream: zipfile's LZMA member begins with a 4-byte
        # header, then the 5 bytes of LZMA properties, which become invalid here.
        skip = 4 if method == zipfile.ZIP_LZMA else 0
        data[start + skip:start + 9] = b"\xff" * (9 - skip)
        with pytest.raises(RuntimeError, match="corrupt zip archive"):
            load_bytes(bytes(data))


def test_corrupt_safetensors_headers():
    payload = np.arange(4, dtype="<f4").tobytes()
    entry = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}
    assert load_bytes(with_header({"x": entry}, payload))["x"].tolist() == [0, 1, 2, 3]
    cases = [
        (struct.pack("<Q", 2**62) + b"{}", "header length .* exceeds the limit"),
        (struct.pack("<Q", 1000) + b"{}", "truncated: the header needs 1000 bytes"),
        (struct.pack("<Q", 5) + b"{abc}", "not valid JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a safetensors or PyTorch zip file"),
        (struct.pack("<Q", 6) + b"{}\n[1]", "not a JSON object|not valid JSON"),
        (struct.pack("<Q", 3) + b"{\xff}", "not valid JSON"),
        (with_header({"x": {**entry, "dtype": "F99"}}, payload), "unknown dtype 'F99'"),
        (with_header({"x": {**entry, "shape": [-4]}}, payload), "non-negative integer"),
        (with_header({"x": {**entry, "shape": [5]}}, payload), "needs 20 bytes"),
        (with_header({"x": {**entry, "data_offsets": [0, 32]}}, payload), "needs 16 bytes"),
        (with_header({"x": {**entry, "data_offsets": [16, 32]}}, payload), "truncated"),
        (with_header({"x": {**entry, "data_offsets": [4, 0]}}, payload), "data_offsets"),
        (with_header({"x": {**entry, "shape": "4"}}, payload), "needs a shape list"),
        (with_header({"x": entry, "y": {**entry, "data_offsets": [8, 24]}}, payload + bytes(8)),
         "overlaps the previous one"),
        (with_header({"x": {**entry, "shape": [2], "data_offsets": [8, 16]}}, payload),
         "leaves a gap"),
        (with_header({"x": entry}, payload + b"junk"), "cover 16 data bytes but the file has 20"),
        (with_header({"x": entry, "__metadata__": {"a": 1}}, payload), "strings to strings"),
        (with_header({"x": 5}, payload), "is not an object"),
        (with_header({"x": {**entry, "shape": [2**40, 2**40]}}, payload), "needs"),
        (with_header({"x": {**entry, "shape": [0, 2**70], "data_offsets": [0, 0]},
                      "y": {**entry, "data_offsets": [0, 16]}}, payload), "cannot represent"),
        (with_header({"x": {**entry, "shape": [0, 2**62, 4], "data_offsets": [0, 0]},
                      "y": {**entry, "data_offsets": [0, 16]}}, payload), "cannot represent"),
    ]
    for data, message in cases:
        with pytest.raises(RuntimeError, match=message):
            load_bytes(data)


def test_corrupt_ember_metadata():
    good = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}
    payload = np.arange(4, dtype="<f4").tobytes()

    def with_meta(structure, tensors):
        meta = {"format": "pt", "ember.structure": json.dumps(structure),
                "ember.tensors": json.dumps(tensors)}
        return with_header({"__metadata__": meta, "x": good}, payload)

    ok = with_meta({"list": [{"tensor": 0}]}, [{"entry": "x", "dtype": "float32"}])
    assert load_bytes(ok)[0].tolist() == [0, 1, 2, 3]
    view = {"view_of": "x", "dtype": "float32", "shape": [2], "stride": [1]}
    cases = [
        (with_meta({"tensor": 1}, [{"entry": "x", "dtype": "float32"}]), "bad 'tensor' node"),
        (with_meta({"tensor": 0}, [{"entry": "y", "dtype": "float32"}]), "missing entry"),
        (with_meta({"tensor": 0}, [{"entry": "x", "dtype": "int64"}]), "does not match"),
        (with_meta({"tensor": 0}, [{"entry": "x", "dtype": "nope"}]), "no valid dtype"),
        (with_meta({"tensor": 0}, [{**view, "offset": 12}]), "do not fit a storage"),
        (with_meta({"tensor": 0}, [{**view, "offset": 2}]), "not a multiple of 4"),
        (with_meta({"tensor": 0}, [{**view, "offset": 0, "stride": [-1]}]), "negative stride"),
        (with_meta({"tensor": 0}, [{**view, "offset": 0, "shape": "ab"}]), "tensor 0"),
        (with_meta({"oops": 1}, []), "unknown tag 'oops'"),
        (with_meta({"float": "pi"}, []), "bad 'float' node"),
        (with_meta({"dict": [[1]]}, []), "bad 'dict' node"),
        (with_meta([1, 2], []), "unexpected node"),
        (with_meta({"tensor": 0}, {"x": 1}), "not a list"),
        (with_meta({"list": []}, []).replace(b'"ember.tensors"', b'"ember.tensorz"'),
         "malformed ember metadata"),
    ]
    for data, message in cases:
        with pytest.raises(RuntimeError, match=message):
            load_bytes(data)
    deep = '{"list":[' * 100000 + "]}" * 100000
    with pytest.raises(RuntimeError, match="malformed ember metadata"):
        load_bytes(with_meta_raw(deep, good, payload))


def with_meta_raw(structure_text, entry, payload):
    meta = {"format": "pt", "ember.structure": structure_text, "ember.tensors": "[]"}
    return with_header({"__metadata__": meta, "x": entry}, payload)


def test_random_corruption_of_torch_format_never_crashes():
    q = ember.quantize_per_tensor(make(ember.float32), 0.5, 3, ember.quint8)
    data = saved_bytes({"w": make(ember.float64, (3, 3)), "q": q, "n": np.arange(3),
                        "v": [make(ember.int8, (5,)), 2.5]}, fmt="torch")
    rng = random.Random(1)
    for _ in range(300):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
        try:
            load_bytes(bytes(corrupt))
        except LOAD_ERRORS:
            pass
    for cut in range(0, len(data), max(1, len(data) // 50)):
        with pytest.raises(LOAD_ERRORS):
            load_bytes(data[:cut])


def test_random_corruption_never_crashes():
    data = saved_bytes({"w": make(ember.float64, (3, 3)), "v": [make(ember.int8, (5,)), 2.5],
                        "view": {"a": make(ember.float32)}})
    rng = random.Random(0)
    header_end = header_of(data)[1]
    for _ in range(300):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            corrupt[rng.randrange(header_end)] = rng.randrange(256)
        try:
            load_bytes(bytes(corrupt))
        except LOAD_ERRORS:
            pass
