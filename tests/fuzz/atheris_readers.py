"""Coverage-guided fuzzing of the checkpoint readers with atheris (PyPI): ``ember.load`` on
arbitrary bytes must return or raise an ordinary exception, never crash, hang or run code.

    PYTHONPATH=build/python .venv/bin/python tests/fuzz/atheris_readers.py -atheris_runs=200000
    PYTHONPATH=build/python .venv/bin/python tests/fuzz/atheris_readers.py -max_total_time=60

libFuzzer's own flags pass through (``-max_len``, ``-timeout``, ``-dict``, a corpus directory).
The seeds are valid files of both formats Ember reads, built at start: a safetensors file that
``ember.save`` wrote, a PyTorch zip checkpoint (a pickle of plain data and one tensor
storage) and Ember's own zip checkpoint (views, a parameter, a quantized tensor, a NumPy
array), so that mutations start from inputs that reach deep into the parsers. Any exception
of a class in ``EXPECTED`` is a clean refusal; anything else (a Python error that escapes, such
as AttributeError, or a signal) is a finding that libFuzzer reports with its input saved.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import tempfile
import zipfile

import atheris
import numpy as np

import ember  # noqa: E402

# Coverage feedback from every loaded Python function (the readers are Python over ember's
# C++ tensors); instrument_imports() misses packages that an editable install's finder loads.
atheris.instrument_all()

# What a reader may raise for a corrupt or truncated file: RuntimeError (Ember's checks), and
# the errors of the standard decoders it builds on (zip, pickle, JSON, UTF-8, struct sizes).
EXPECTED = (
    RuntimeError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    EOFError,
    OverflowError,
    MemoryError,
    zipfile.BadZipFile,
    pickle.UnpicklingError,
    UnicodeDecodeError,
    NotImplementedError,
)


def safetensors_seed() -> bytes:
    buf = io.BytesIO()
    ember.save({"w": ember.arange(12.0).reshape(3, 4), "step": 3, "b": ember.ones(2)}, buf,
               format="safetensors")
    return buf.getvalue()


def ember_zip_seed() -> bytes:
    """What ember.save writes by default: PyTorch's zip format, with a view, a parameter, a
    quantized tensor and a NumPy array."""
    buf = io.BytesIO()
    w = ember.arange(12.0).reshape(3, 4)
    ember.save({"w": w, "t": w.t(), "p": ember.nn.Parameter(ember.ones(2)),
                "q": ember.quantize_per_tensor(ember.ones(3), 0.5, 2, ember.quint8),
                "n": np.arange(3), "step": 3}, buf)
    return buf.getvalue()


class _StorageRef:
    """Pickles as torch's persistent id of one float32 storage (what torch.save writes)."""


def torch_zip_seed() -> bytes:
    """A minimal PyTorch 1.6+ zip checkpoint: {'w': tensor of 4 floats, 'epoch': 2}."""

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if isinstance(obj, _StorageRef):
                return ("storage", _TorchFloatStorage, "0", "cpu", 4)
            return None

    class _TorchFloatStorage:
        pass

    _TorchFloatStorage.__module__ = "torch"
    _TorchFloatStorage.__qualname__ = _TorchFloatStorage.__name__ = "FloatStorage"

    class _Rebuild:
        def __reduce__(self):
            return (_rebuild_tensor_v2, (_StorageRef(), 0, (4,), (1,), False, {}))

    def _rebuild_tensor_v2(*args):  # stands in for torch._utils._rebuild_tensor_v2
        raise AssertionError("only pickled, never called")

    _rebuild_tensor_v2.__module__ = "torch._utils"
    _rebuild_tensor_v2.__qualname__ = _rebuild_tensor_v2.__name__ = "_rebuild_tensor_v2"
    sys.modules.setdefault("torch._utils", type(sys)("torch._utils"))
    sys.modules["torch._utils"]._rebuild_tensor_v2 = _rebuild_tensor_v2
    sys.modules.setdefault("torch", type(sys)("torch")).FloatStorage = _TorchFloatStorage
    try:
        data = io.BytesIO()
        Pickler(data, protocol=2).dump({"w": _Rebuild(), "epoch": 2})
    finally:
        del sys.modules["torch._utils"], sys.modules["torch"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data.getvalue())
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/data/0", bytes(range(16)))
        z.writestr("archive/version", "3\n")
    return out.getvalue()


def test_one_input(data: bytes) -> None:
    try:
        ember.load(io.BytesIO(data))
    except EXPECTED:
        pass


def main(argv: list[str]) -> None:
    seeds = [safetensors_seed(), torch_zip_seed(), ember_zip_seed()]
    for seed in seeds:  # the seeds themselves must load
        ember.load(io.BytesIO(seed))
    # libFuzzer reads its starting corpus from a directory; one is given unless the caller
    # names their own (any argument that is not a -flag).
    if not any(not a.startswith("-") for a in argv[1:]):
        corpus = tempfile.mkdtemp(prefix="ember-atheris-")
        for i, seed in enumerate(seeds):
            with open(os.path.join(corpus, f"seed{i}"), "wb") as f:
                f.write(seed)
        argv = [*argv, corpus]
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
