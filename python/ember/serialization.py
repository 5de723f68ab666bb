"""ember.save / ember.load, as torch.save / torch.load.

``ember.save`` writes PyTorch's zip format by default (Note [Torch zip writer] in
_torch_save.py); this module also has the safetensors format and ``ember.load``'s dispatch.

Note [Save format]: ``ember.save(..., format="safetensors")`` writes a safetensors file,
readable by the ``safetensors`` package (``safetensors.numpy.load_file`` gives the tensors as a
flat dict):

- 8 bytes: little-endian u64 N, the header's length;
- N bytes: a JSON object, ``name -> {"dtype", "shape", "data_offsets": [begin, end]}`` per
  tensor, padded with spaces so that the data starts 8-byte aligned;
- the tensors' data, little-endian, C order, back to back (offsets relative to the data start,
  largest element size first, so that every tensor is aligned to its element size).

The header's ``"__metadata__"`` (a string -> string map) holds ``"format": "pt"`` (the tensors
are PyTorch-shaped), and:

- ``"ember.structure"``: JSON of the saved object. Scalars (null, booleans, integers, strings,
  finite floats) are themselves; everything else is an object with one tag: ``{"dict": [[k,
  v], ...]}``, ``{"odict": ...}`` (OrderedDict), ``{"list": [...]}``, ``{"tuple": [...]}``,
  ``{"size": [...]}`` (ember.Size), ``{"float": "nan" | "inf" | "-inf"}``, ``{"complex":
  [re, im]}``, ``{"bytes": base64}``, ``{"dtype": name}``, ``{"device": name}``,
  ``{"qtensor": [dtype, qscheme, i, scales, zero_points, axis]}`` (a quantized tensor: its
  integers are tensor i) and ``{"tensor": i}``, an index into:
- ``"ember.tensors"``: JSON list of tensor descriptors: ``{"entry": name, "dtype": d}`` for a
  tensor stored as header entry ``name``, or ``{"view_of": name, "dtype", "shape", "stride",
  "offset"}`` (offset in bytes) for a tensor that shares memory with entry ``name``; either may
  carry ``"requires_grad": true`` and ``"parameter": true``.

Tensors that share memory are stored once: the same tensor object twice is one descriptor (it
loads as one object), and views of one storage become one entry plus views (they load sharing
memory again). safetensors has no complex128: such a tensor is stored as an ``F64`` entry of
shape ``(*shape, 2)`` (real and imaginary parts, as ``view_as_real`` gives) and its descriptor
says ``"complex128"``; complex64 uses safetensors' ``C64``.

Loading a safetensors file never runs code from it: the structure is plain JSON. Zip (``.pt``)
files go through the restricted unpickler of ``_torch_pickle`` unless the caller passes
weights_only=False. A safetensors file without ember's metadata (one written by the
``safetensors`` package) loads as a flat dict of tensors."""

import base64
import io
import json
import math
import os
import struct
import sys
import threading
from collections import OrderedDict

import numpy as np

import ember

from . import _C

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals",
           "save"]

# safetensors' own limit on the header, which also bounds what a corrupt length can make us
# allocate.
_MAX_HEADER_SIZE = 100_000_000

_DTYPE_TO_SAFETENSORS = {
    ember.bool: "BOOL",
    ember.uint8: "U8",
    ember.int8: "I8",
    ember.int16: "I16",
    ember.int32: "I32",
    ember.int64: "I64",
    ember.float16: "F16",
    ember.bfloat16: "BF16",
    ember.float32: "F32",
    ember.float64: "F64",
    ember.complex64: "C64",
    ember.complex128: "F64",  # as (..., 2) float64 pairs, see Note [Save format]
}
_SAFETENSORS_TO_DTYPE = {v: k for k, v in _DTYPE_TO_SAFETENSORS.items() if k != ember.complex128}
_SAFETENSORS_ITEMSIZE = {
    "BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4,
    "F32": 4, "I64": 8, "U64": 8, "F64": 8, "C64": 8, "F8_E5M2": 1, "F8_E4M3": 1,
}
# The start of a legacy (non-zip) torch.save file: a protocol-2 pickle of its magic number.
_LEGACY_TORCH_MAGIC = b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19"
_DTYPES_BY_NAME = {str(d).split(".")[-1]: d
                   for d in (*_DTYPE_TO_SAFETENSORS, ember.qint8, ember.quint8, ember.qint32,
                             ember.quint4x2)}


def _op_error(what, source=None):
    where = f" {source}:" if source else ""
    return RuntimeError(f"[load]{where} {what}")


# --- saving ---------------------------------------------------------------------------------


class _Saver:
    """Walks the object to save: builds the structure JSON and collects the tensors."""

    def __init__(self):
        self.descriptors = []  # per tensor index: its descriptor (names filled in later)
        self.tensors = []  # per tensor index: the tensor
        self.paths = []  # per tensor index: where it first appeared, for its entry name
        self.index_of = {}  # id(tensor) -> tensor index; the tensors stay alive in self.tensors
        self.active = set()  # ids of the containers being walked, to refuse cycles

    def encode(self, obj, path):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and type(obj) is not bool:
            return int(obj)
        if isinstance(obj, float):
            if math.isfinite(obj):
                return float(obj)
            return {"float": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, complex):
            return {"complex": [self.encode(obj.real, path), self.encode(obj.imag, path)]}
        if isinstance(obj, ember.Tensor) and obj.is_quantized:
            return {"qtensor": self.encode_quantized(obj, path)}
        if isinstance(obj, ember.Tensor):
            return {"tensor": self.add_tensor(obj, path)}
        if isinstance(obj, np.generic) and not isinstance(obj, (np.str_, np.bytes_, np.void)):
            return self.encode(obj.item(), path)  # NumPy scalars load as Python numbers
        if isinstance(obj, (bytes, bytearray)):
            return {"bytes": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, ember.dtype):
            return {"dtype": str(obj).split(".")[-1]}
        if isinstance(obj, ember.device):
            return {"device": str(obj)}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self.active:
                raise ValueError(f"[save] the object contains itself (at {path or 'the top'})")
            self.active.add(id(obj))
            try:
                return self.encode_container(obj, path)
            finally:
                self.active.discard(id(obj))
        raise TypeError(
            f"[save] cannot save an object of type {type(obj).__module__}.{type(obj).__qualname__}"
            f" (at {path or 'the top'}): ember.save stores tensors, numbers, strings, None and "
            "dicts, lists and tuples of them (save a module's state_dict(), not the module)"
        )

    def encode_container(self, obj, path):
        def child(key):
            return f"{path}.{key}" if path else str(key)

        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not (k is None or isinstance(k, (bool, int, float, str, tuple))):
                    raise TypeError(f"[save] unsupported dict key type {type(k).__name__} "
                                    f"(at {path or 'the top'})")
                items.append([self.encode(k, path), self.encode(v, child(k))])
            tag = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {tag: items}
        if isinstance(obj, ember.Size):
            return {"size": [int(s) for s in obj]}
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            raise TypeError(f"[save] cannot save the named tuple {type(obj).__qualname__} "
                            f"(at {path or 'the top'}): convert it to a tuple or a dict")
        values = [self.encode(v, child(i)) for i, v in enumerate(obj)]
        return {"tuple" if isinstance(obj, tuple) else "list": values}

    def encode_quantized(self, q, path):
        """[dtype, qscheme, integers (a tensor index), scales, zero points, axis]. quint4x2 and
        real zero points (embedding tables: a scale and zero point per row) take a seventh field,
        the shape; their integers are stored packed (two a byte for quint4x2) and their scales
        and zero points as tensors (indices), not as text."""
        ints = self.add_tensor(q.int_repr(), path)
        dtype = str(q.dtype).split(".")[-1]
        if q.dtype == ember.quint4x2 or q.qscheme() == ember.per_channel_affine_float_qparams:
            per_channel = q.qscheme().name.startswith("per_channel")
            scales = q.q_per_channel_scales() if per_channel else ember.tensor([q.q_scale()])
            zps = (q.q_per_channel_zero_points().double() if per_channel
                   else ember.tensor([float(q.q_zero_point())], dtype=ember.float64))
            return [dtype, q.qscheme().name, ints, self.add_tensor(_narrowed(scales), path),
                    self.add_tensor(_narrowed(zps), path),
                    q.q_per_channel_axis() if per_channel else 0, list(q.shape)]
        if q.qscheme().name.startswith("per_channel"):
            return [dtype, q.qscheme().name, ints, q.q_per_channel_scales().tolist(),
                    q.q_per_channel_zero_points().tolist(), q.q_per_channel_axis()]
        return [dtype, q.qscheme().name, ints, [q.q_scale()], [q.q_zero_point()], 0]

    def add_tensor(self, t, path):
        index = self.index_of.get(id(t))
        if index is not None:
            return index  # the same object again: one descriptor, one object on load
        if t.device.type != "cpu":
            t = t.cpu()
        index = len(self.tensors)
        self.index_of[id(t)] = index
        self.tensors.append(t)
        self.paths.append(path or "tensor")
        descriptor = {"dtype": str(t.dtype).split(".")[-1]}
        if t.requires_grad:
            descriptor["requires_grad"] = True
        if _is_parameter(t):
            descriptor["parameter"] = True
        self.descriptors.append(descriptor)
        return index


def _is_parameter(t):
    nn = sys.modules.get("ember.nn")
    parameter = getattr(nn, "Parameter", None) if nn is not None else None
    return parameter is not None and isinstance(t, parameter)


def _byte_span(t):
    """[first, last) bytes of t's storage that t reads; None for a tensor with no elements."""
    if t.numel() == 0:
        return None
    item = t.element_size()
    first = t.storage_offset() * item
    last = first + item
    for size, stride in zip(t.shape, t.stride()):
        last += (size - 1) * stride * item
    return first, last


def _storage_bytes_view(t, first, last):
    """A NumPy uint8 array over bytes [first, last) of t's storage (no copy)."""
    raw = _C._rebuild_tensor(t.untyped_storage(), ember.uint8, (last - first,), (1,), first)
    return raw.numpy()


def _tensor_bytes(t):
    """The bytes of t in C order, as a NumPy uint8 array (a view when t is contiguous)."""
    if t.numel() == 0:
        return np.empty(0, np.uint8)
    c = t.contiguous()
    first = c.storage_offset() * c.element_size()
    return _storage_bytes_view(c, first, first + c.numel() * c.element_size())


class _Entry:
    """One tensor of the safetensors header: its name, dtype code, shape and bytes."""

    def __init__(self, name, code, shape, data):
        self.name, self.code, self.shape, self.data = name, code, list(shape), data


def _plan_entries(saver):
    """Groups the tensors by storage: a storage used by one tensor is that tensor's entry;
    one used by several different tensors (views) is saved once (see Note [Save format])."""
    groups = {}
    for index, t in enumerate(saver.tensors):
        span = _byte_span(t)
        if span is None:
            key = ("empty", index)
        else:
            key = ("storage", t.untyped_storage().data_ptr())
        groups.setdefault(key, []).append(index)

    entries = []
    used_names = {"__metadata__"}

    def unique(name):
        candidate, k = name, 1
        while candidate in used_names:
            candidate, k = f"{name}__{k}", k + 1
        used_names.add(candidate)
        return candidate

    for indices in groups.values():
        if len(indices) == 1:
            index = indices[0]
            t = saver.tensors[index]
            name = unique(saver.paths[index])
            shape = list(t.shape) + ([2] if t.dtype == ember.complex128 else [])
            entries.append(_Entry(name, _DTYPE_TO_SAFETENSORS[t.dtype], shape, _tensor_bytes(t)))
            saver.descriptors[index]["entry"] = name
            continue
        spans = {i: _byte_span(saver.tensors[i]) for i in indices}
        first = min(s[0] for s in spans.values())
        last = max(s[1] for s in spans.values())
        # A contiguous tensor covering the whole span becomes the entry under its own name,
        # so that safetensors readers see it as it is; otherwise the span is a uint8 entry.
        base = next((i for i in indices if spans[i] == (first, last)
                     and saver.tensors[i].is_contiguous()
                     and saver.tensors[i].dtype != ember.complex128), None)
        if base is not None:
            t = saver.tensors[base]
            name = unique(saver.paths[base])
            entries.append(_Entry(name, _DTYPE_TO_SAFETENSORS[t.dtype], t.shape,
                                  _storage_bytes_view(t, first, last)))
            saver.descriptors[base]["entry"] = name
        else:
            t = saver.tensors[indices[0]]
            name = unique(saver.paths[indices[0]] + ".__storage__")
            entries.append(_Entry(name, "U8", [last - first],
                                  _storage_bytes_view(t, first, last)))
        for i in indices:
            if i == base:
                continue
            v = saver.tensors[i]
            saver.descriptors[i].update(
                view_of=name, shape=list(v.shape), stride=list(v.stride()),
                offset=v.storage_offset() * v.element_size() - first)
    return entries


def _to_little_endian(data, code):
    if sys.byteorder == "little" or _SAFETENSORS_ITEMSIZE[code] == 1:
        return data
    unit = 4 if code == "C64" else _SAFETENSORS_ITEMSIZE[code]
    return data.view(f"<u{unit}").byteswap().view(np.uint8)


def _serialize_header(entries, metadata):
    # Largest element size first keeps every tensor aligned (the header is padded to 8).
    entries.sort(key=lambda e: -_SAFETENSORS_ITEMSIZE[e.code])
    header = {"__metadata__": metadata}
    offset = 0
    for e in entries:
        header[e.name] = {"dtype": e.code, "shape": e.shape,
                          "data_offsets": [offset, offset + e.data.nbytes]}
        offset += e.data.nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format=None):
    """Saves ``obj`` to ``f``, a path or a writable binary file.

    By default in PyTorch's zip checkpoint format (Note [Torch zip writer] in
    ``_torch_save.py``): anything picklable (tensors, state_dicts, whole modules, optimizers,
    NumPy arrays, dataclasses, nested containers), tensors stored raw with their sharing kept;
    ``torch.load`` reads it. ``format="safetensors"``, or a path ending in ``.safetensors``,
    writes the safetensors format instead (Note [Save format]: tensors and plain values only,
    no pickle). ``ember.load`` tells the two apart by their first bytes."""
    if format is None:
        is_path = isinstance(f, (str, os.PathLike))
        format = ("safetensors" if is_path and os.fspath(f).endswith(".safetensors")
                  else "torch")
    if format not in ("torch", "safetensors"):
        raise ValueError(f"[save] format must be 'torch' or 'safetensors', got {format!r}")
    if format == "safetensors":
        return _save_safetensors(obj, f)
    if pickle_module is not None:
        raise RuntimeError("[save] pickle_module is not supported: Ember's writer pickles with "
                           "its own pickler, which gives tensors torch's names")
    if not _use_new_zipfile_serialization:
        raise ValueError("[save] the legacy (pre-1.6, non-zip) torch.save format is not "
                         "written by ember: leave _use_new_zipfile_serialization=True")
    from ._torch_save import archive_name, save_torch_zip

    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            save_torch_zip(obj, out, archive_name(f), pickle_protocol)
    else:
        save_torch_zip(obj, f, "archive", pickle_protocol)


def _save_safetensors(obj, f):
    saver = _Saver()
    structure = saver.encode(obj, "")
    entries = _plan_entries(saver)
    metadata = {
        "format": "pt",
        "ember.structure": json.dumps(structure, separators=(",", ":"), allow_nan=False),
        "ember.tensors": json.dumps(saver.descriptors, separators=(",", ":")),
    }
    header = _serialize_header(entries, metadata)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            _write(out, header, entries)
    else:
        _write(f, header, entries)


def _write(out, header, entries):
    out.write(header)
    for e in entries:
        if e.data.nbytes:
            out.write(memoryview(_to_little_endian(e.data, e.code)))


# --- loading --------------------------------------------------------------------------------


class _Reader:
    """Reads byte ranges of a file into owned ember tensors."""

    def __init__(self, f, source):
        self.f = f
        self.source = source
        f.seek(0, io.SEEK_END)
        self.size = f.tell()

    def read_exact(self, offset, n):
        self.f.seek(offset)
        data = self.f.read(n)
        if len(data) != n:
            raise _op_error(f"the file is truncated: expected {n} bytes at offset {offset}, "
                            f"got {len(data)}", self.source)
        return data

    def read_tensor_bytes(self, offset, n):
        """An owned uint8 ember tensor holding bytes [offset, offset + n) of the file."""
        out = ember.empty((n,), dtype=ember.uint8)
        if n == 0:
            return out
        buffer = memoryview(out.numpy())
        self.f.seek(offset)
        done = 0
        readinto = getattr(self.f, "readinto", None)
        while done < n:
            if readinto is not None:
                got = readinto(buffer[done:])
            else:
                chunk = self.f.read(n - done)
                got = len(chunk)
                buffer[done:done + got] = chunk
            if not got:
                raise _op_error(f"the file is truncated: expected {n} bytes at offset {offset}, "
                                f"got {done}", self.source)
            done += got
        return out


def _parse_int(value, what, source):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _op_error(f"malformed safetensors header: {what} must be a non-negative integer, "
                        f"got {value!r}", source)
    return value


def _read_safetensors_header(reader):
    source = reader.source
    if reader.size < 8:
        raise _op_error(f"the file is truncated: {reader.size} bytes, fewer than the 8 of a "
                        "safetensors header length", source)
    (n,) = struct.unpack("<Q", reader.read_exact(0, 8))
    if n > _MAX_HEADER_SIZE:
        raise _op_error(f"malformed safetensors file: header length {n} exceeds the limit of "
                        f"{_MAX_HEADER_SIZE} bytes", source)
    if 8 + n > reader.size:
        raise _op_error(f"the file is truncated: the header needs {n} bytes but the file has "
                        f"{reader.size - 8} after the length", source)
    try:
        header = json.loads(reader.read_exact(8, n).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _op_error(f"malformed safetensors header: not valid JSON ({e})", source) from None
    if not isinstance(header, dict):
        raise _op_error("malformed safetensors header: not a JSON object", source)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise _op_error("malformed safetensors header: __metadata__ must map strings to "
                        "strings", source)
    data_start = 8 + n
    data_len = reader.size - data_start
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict):
            raise _op_error(f"malformed safetensors header: entry {name!r} is not an object",
                            source)
        code = info.get("dtype")
        shape = info.get("shape")
        offsets = info.get("data_offsets")
        if code not in _SAFETENSORS_ITEMSIZE:
            raise _op_error(f"malformed safetensors header: entry {name!r} has unknown dtype "
                            f"{code!r}", source)
        if not isinstance(shape, list) or not isinstance(offsets, list) or len(offsets) != 2:
            raise _op_error(f"malformed safetensors header: entry {name!r} needs a shape list "
                            "and two data_offsets", source)
        shape = [_parse_int(s, f"a dimension of {name!r}", source) for s in shape]
        begin, end = (_parse_int(o, f"the data_offsets of {name!r}", source) for o in offsets)
        # Python integers do not overflow; the product is compared with the file, not trusted.
        nbytes = math.prod(shape) * _SAFETENSORS_ITEMSIZE[code]
        if end < begin or end - begin != nbytes:
            raise _op_error(f"malformed safetensors header: entry {name!r} of dtype {code} and "
                            f"shape {shape} needs {nbytes} bytes, but its data_offsets are "
                            f"[{begin}, {end}]", source)
        if end > data_len:
            raise _op_error(f"the file is truncated: entry {name!r} ends at byte {end} of the "
                            f"data, but the file has {data_len} data bytes", source)
        entries.append((name, code, shape, begin, end))
    # The data must be covered exactly once, as safetensors requires: no overlap, no hole.
    position = 0
    for name, _, _, begin, end in sorted(entries, key=lambda e: (e[3], e[4])):
        if begin != position:
            problem = "overlaps the previous one" if begin < position else "leaves a gap before it"
            raise _op_error(f"malformed safetensors file: the data of entry {name!r} "
                            f"[{begin}, {end}] {problem} (expected it to start at {position})",
                            source)
        position = end
    if position != data_len:
        raise _op_error(f"malformed safetensors file: the tensors cover {position} data bytes "
                        f"but the file has {data_len}", source)
    return metadata, entries, data_start


def _load_safetensors(reader, restore):
    source = reader.source
    metadata, entries, data_start = _read_safetensors_header(reader)
    tensors = {}
    for name, code, shape, begin, end in sorted(entries, key=lambda e: e[3]):
        if code not in _SAFETENSORS_TO_DTYPE:
            raise _op_error(f"entry {name!r} has dtype {code}, which ember does not support",
                            source)
        raw = reader.read_tensor_bytes(data_start + begin, end - begin)
        dtype = _SAFETENSORS_TO_DTYPE[code]
        if sys.byteorder != "little" and _SAFETENSORS_ITEMSIZE[code] > 1:
            unit = 4 if code == "C64" else _SAFETENSORS_ITEMSIZE[code]
            raw.numpy().view(f"<u{unit}").byteswap(inplace=True)
        storage = restore(raw.untyped_storage(), "cpu")
        try:
            tensors[name] = _C._rebuild_tensor(storage, dtype, shape, _contiguous_strides(shape),
                                               0)
        except (RuntimeError, TypeError, ValueError, OverflowError):
            # An empty tensor whose other dimensions overflow int64 strides.
            raise _op_error(f"entry {name!r} has a shape Ember cannot represent: {shape}",
                            source) from None
    if "ember.structure" not in metadata:
        return {name: tensors[name] for name, *_ in entries}  # header order
    try:
        structure = json.loads(metadata["ember.structure"])
        descriptors = json.loads(metadata["ember.tensors"])
    except (KeyError, ValueError, RecursionError) as e:
        raise _op_error(f"malformed ember metadata ({type(e).__name__}: {e})", source) from None
    built = _build_tensors(descriptors, tensors, source)
    try:
        return _decode(structure, built, source)
    except RecursionError:
        raise _op_error("malformed ember metadata: the structure is nested too deeply",
                        source) from None


def _contiguous_strides(shape):
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return strides[::-1]


def _build_tensors(descriptors, entries, source):
    if not isinstance(descriptors, list):
        raise _op_error("malformed ember metadata: ember.tensors is not a list", source)
    built = []
    for i, d in enumerate(descriptors):
        if not isinstance(d, dict) or d.get("dtype") not in _DTYPES_BY_NAME:
            raise _op_error(f"malformed ember metadata: tensor {i} has no valid dtype", source)
        dtype = _DTYPES_BY_NAME[d["dtype"]]
        name = d.get("entry", d.get("view_of"))
        if not isinstance(name, str) or name not in entries:
            raise _op_error(f"malformed ember metadata: tensor {i} refers to a missing entry "
                            f"{name!r}", source)
        base = entries[name]
        try:
            if "entry" in d:
                t = base
                if dtype == ember.complex128:
                    if base.dtype != ember.float64 or base.dim() == 0 or base.shape[-1] != 2:
                        raise ValueError("a complex128 entry must be float64 of shape (..., 2)")
                    shape = list(base.shape[:-1])
                    t = _C._rebuild_tensor(base.untyped_storage(), ember.complex128, shape,
                                           _contiguous_strides(shape), 0)
                elif dtype != base.dtype:
                    raise ValueError(f"dtype {d['dtype']} does not match the entry's {base.dtype}")
            else:
                item = ember.empty((), dtype=dtype).element_size()
                offset = d.get("offset")
                if not isinstance(offset, int) or offset % item:
                    raise ValueError(f"view offset {offset!r} is not a multiple of {item}")
                first = base.storage_offset() * base.element_size()
                t = _C._rebuild_tensor(base.untyped_storage(), dtype, d.get("shape"),
                                       d.get("stride"), (first + offset) // item)
        except (ValueError, TypeError, RuntimeError, IndexError) as e:
            raise _op_error(f"malformed ember metadata: tensor {i}: {e}", source) from None
        if d.get("parameter"):
            nn = sys.modules.get("ember.nn") or _import_nn()
            if nn is not None and hasattr(nn, "Parameter"):
                t = nn.Parameter(t, requires_grad=bool(d.get("requires_grad")))
            elif d.get("requires_grad"):
                t = t.requires_grad_(True)
        elif d.get("requires_grad"):
            t = t.requires_grad_(True)
        built.append(t)
    return built


def _import_nn():
    try:
        import ember.nn as nn
    except ImportError:
        return None
    return nn


_SCALAR_TAGS = {"float", "complex", "bytes", "dtype", "device", "tensor"}


def _decode(node, tensors, source):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list) or not isinstance(node, dict) or len(node) != 1:
        raise _op_error(f"malformed ember metadata: unexpected node {str(node)[:80]}", source)
    (tag, value), = node.items()
    try:
        if tag == "tensor":
            return tensors[value]
        if tag == "qtensor":
            return _decode_quantized(value, tensors)
        if tag == "float":
            if value not in ("nan", "inf", "-inf"):
                raise ValueError(value)
            return float(value)
        if tag == "complex":
            return complex(*value)
        if tag == "bytes":
            return base64.b64decode(value.encode("ascii"), validate=True)
        if tag == "dtype":
            return _DTYPES_BY_NAME[value]
        if tag == "device":
            return ember.device(value)
        if tag in ("dict", "odict"):
            out = OrderedDict() if tag == "odict" else {}
            for k, v in value:
                out[_decode(k, tensors, source)] = _decode(v, tensors, source)
            return out
        if tag in ("list", "tuple", "size"):
            items = [_decode(v, tensors, source) for v in value]
            if tag == "list":
                return items
            return tuple(items) if tag == "tuple" else ember.Size(items)
    except RuntimeError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise _op_error(f"malformed ember metadata: bad {tag!r} node ({type(e).__name__}: {e})",
                        source) from None
    raise _op_error(f"malformed ember metadata: unknown tag {tag!r}", source)


def _narrowed(values):
    """float32 when that keeps every value exactly (observers make float32 scales), else the
    float64 values as they are: half the bytes for a per-row table's parameters."""
    values = values.double()
    narrow = values.float()
    return narrow if bool((narrow.double() == values).all()) else values


def _decode_quantized(value, tensors):
    if len(value) == 7:  # quint4x2 (packed integers) or real-valued zero points
        dtype, scheme, index, scales, zero_points, axis, shape = value
        return ember._C._quantized._make_quantized(
            tensors[index], _DTYPES_BY_NAME[dtype], str(scheme),
            tensors[scales].double().tolist(), tensors[zero_points].double().tolist(), int(axis),
            [int(v) for v in shape])
    dtype, scheme, index, scales, zero_points, axis = value
    ints = tensors[index]
    want = {"qint8": ember.int8, "quint8": ember.uint8, "qint32": ember.int32}[dtype]
    if ints.dtype != want:
        raise ValueError(f"{dtype} integers stored as {ints.dtype}")
    if scheme.startswith("per_channel"):
        return ember._make_per_channel_quantized_tensor(ints, [float(v) for v in scales],
                                                        [int(v) for v in zero_points], int(axis))
    if len(scales) != 1 or len(zero_points) != 1:
        raise ValueError(f"{len(scales)} scales for a per-tensor quantized tensor")
    return ember._make_per_tensor_quantized_tensor(ints, float(scales[0]), int(zero_points[0]))


# --- map_location ---------------------------------------------------------------------------


def _cuda_unavailable_error():
    return RuntimeError(
        "Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is "
        "False. If you are running on a CPU-only machine, please use ember.load with "
        "map_location=ember.device('cpu') to map your storages to the CPU."
    )


def _check_location(location):
    """The device a storage saved at ``location`` goes to without a mapping."""
    try:
        device = ember.device(location)
    except Exception as e:
        raise RuntimeError(f"[load] unknown device location {location!r} in the file") from e
    if device.type == "cuda":
        if not ember.cuda.is_available():
            raise _cuda_unavailable_error()
        count = ember.cuda.device_count()
        if (device.index or 0) >= count:
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {device.index} "
                               f"but ember.cuda.device_count() is {count}. Please use "
                               "ember.load with map_location to map your storages to an "
                               "existing device.")
        return device
    if device.type != "cpu":
        raise RuntimeError(f"[load] cannot restore a storage on device {location!r}: load with "
                           "map_location='cpu' and move the tensors with .to(device)")
    return device


def _on_device(storage, device):
    """The storage read from the file (host memory), on ``device``: its bytes are copied there as
    one storage, so that tensors which shared it in the file still share it."""
    if device.type == "cpu":
        return storage
    nbytes = storage.nbytes()
    flat = _C._rebuild_tensor(storage, ember.uint8, (nbytes,), (1,), 0)
    return flat.to(device).untyped_storage()


def _make_restore(map_location):
    """restore(storage, location) -> storage, applying ``map_location`` as torch.load does: a
    device (or its name), a dict from saved location to location, or a callable(storage,
    location) returning a storage (None: the default)."""

    def default(storage, location):
        return _on_device(storage, _check_location(location))

    if map_location is None:
        return default
    if isinstance(map_location, (str, ember.device)):
        target = str(map_location)

        def to_device(storage, location):
            return _on_device(storage, _check_location(target))

        return to_device
    if isinstance(map_location, dict):

        def mapped(storage, location):
            return default(storage, str(map_location.get(location, location)))

        return mapped
    if callable(map_location):

        def custom(storage, location):
            result = map_location(storage, location)
            if result is None:
                return default(storage, location)
            if isinstance(result, _C.UntypedStorage):
                return result
            raise TypeError(f"[load] map_location returned {type(result).__name__}, expected "
                            "an ember.UntypedStorage or None")

        return custom
    raise TypeError(f"[load] map_location must be None, a device, a str, a dict or a callable, "
                    f"got {type(map_location).__name__}")


# --- the weights-only allow-list -------------------------------------------------------------
#
# Note [Safe globals]: a PyTorch checkpoint's pickle names the globals it calls. With
# weights_only=True (the default) only tensors, containers and the entries of this list may be
# named: a class or function the caller trusts, or a pair (object, "module.name") when the file
# names it differently. The list is process-wide, as PyTorch's, behind a lock.

_safe_globals_lock = threading.Lock()
_safe_globals = []


def _check_safe_global(entry):
    if isinstance(entry, tuple):
        if (len(entry) != 2 or not isinstance(entry[1], str) or "." not in entry[1]
                or not callable(entry[0])):
            raise TypeError("[add_safe_globals] a tuple entry must be (class or function, "
                            f"'module.name'), got {entry!r}")
        return entry
    if not callable(entry) or not hasattr(entry, "__module__") or not hasattr(entry,
                                                                               "__qualname__"):
        raise TypeError("[add_safe_globals] expected classes or functions (or (object, "
                        f"'module.name') pairs), got {type(entry).__name__}")
    return entry


def add_safe_globals(safe_globals):
    """Marks the given classes or functions (or ``(object, "module.name")`` pairs) as safe for
    ``load(..., weights_only=True)``: a checkpoint's pickle may then name them. Only add what
    you trust: loading calls them with arguments from the file."""
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError("[add_safe_globals] expected a list of classes or functions, got "
                        f"{type(safe_globals).__name__}")
    checked = [_check_safe_global(e) for e in safe_globals]
    with _safe_globals_lock:
        _safe_globals.extend(checked)


def get_safe_globals():
    """The classes and functions added by :func:`add_safe_globals`, in order."""
    with _safe_globals_lock:
        return list(_safe_globals)


def clear_safe_globals():
    """Empties the list of :func:`add_safe_globals`."""
    with _safe_globals_lock:
        _safe_globals.clear()


class safe_globals:
    """Context manager: the given globals are safe (as :func:`add_safe_globals`) inside the
    ``with`` block, and the list is restored on leaving it."""

    def __init__(self, safe_globals):
        if not isinstance(safe_globals, (list, tuple)):
            raise TypeError("[safe_globals] expected a list of classes or functions, got "
                            f"{type(safe_globals).__name__}")
        self._globals = [_check_safe_global(e) for e in safe_globals]
        self._saved = None

    def __enter__(self):
        with _safe_globals_lock:
            self._saved = list(_safe_globals)
            _safe_globals.extend(self._globals)
        return self

    def __exit__(self, *exc):
        with _safe_globals_lock:
            _safe_globals[:] = self._saved
        return False


def _safe_globals_by_name():
    """{(module, qualified name): object} of the allow-list."""
    out = {}
    for entry in get_safe_globals():
        if isinstance(entry, tuple):
            obj, full = entry
            module, _, name = full.rpartition(".")
        else:
            obj, module, name = entry, entry.__module__, entry.__qualname__
        out[(module, name)] = obj
    return out


# --- ember.load -----------------------------------------------------------------------------


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Loads what :func:`save` wrote, a safetensors file (as a flat dict of tensors), or a
    PyTorch ``.pt``/``.pth`` file written by ``torch.save`` (the zip format of PyTorch 1.6+).

    ``f`` is a path or a readable binary file. ``map_location`` is accepted as in torch.load
    (a device, its name, a dict or a callable); Ember's tensors live on the CPU, so a location
    other than the CPU raises. A truncated or corrupt file raises RuntimeError naming the
    problem.

    ``mmap=True`` (``f`` a path to a PyTorch zip file) maps each stored storage record from the
    file copy-on-write instead of reading it: loading costs no reads, pages come in when used,
    and writes to the tensors stay in memory. Otherwise the tensors own their memory.

    ``weights_only=True`` (the default, as PyTorch 2.6+): a PyTorch file's pickle may only
    rebuild tensors, plain containers, dtypes, devices and the globals of the allow-list
    (:func:`add_safe_globals`, :func:`safe_globals`); no code runs from the file.
    ``weights_only=False`` unpickles the file fully, whole modules and optimizers included
    (PyTorch's ``torch.*`` classes load as Ember's): **unpickling can run arbitrary code from
    the file**, so pass it only for files you trust. Ember's own files hold no pickle."""
    if pickle_module is not None:
        raise RuntimeError("[load] pickle_module is not supported: pass weights_only=False to "
                           "unpickle a trusted file fully")
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") in ("0", "")
    weights_only = bool(weights_only)
    restore = _make_restore(map_location)
    if isinstance(f, (str, os.PathLike)):
        source = os.fspath(f)
        with open(source, "rb") as handle:
            return _load_from(handle, source, restore, weights_only, bool(mmap))
    if mmap:
        raise ValueError("[load] mmap=True needs a path (a file name), not a file object, as "
                         "torch.load does")
    if not hasattr(f, "read"):
        raise TypeError(f"[load] expected a path or a binary file object, got {type(f).__name__}")
    seekable = getattr(f, "seekable", None)
    if seekable is None or not seekable() or not hasattr(f, "readinto"):
        f = io.BytesIO(f.read())
    return _load_from(f, getattr(f, "name", None), restore, weights_only)


def _load_from(handle, source, restore, weights_only=True, mmap=False):
    start = handle.tell() if hasattr(handle, "tell") else 0
    if start:
        # A file object positioned after other data: read from there on.
        handle = io.BytesIO(handle.read())
    reader = _Reader(handle, source)
    head = reader.read_exact(0, min(reader.size, 14))
    if head[:2] == b"PK":
        from . import _torch_pickle

        return _torch_pickle.load_torch_zip(handle, source, restore, weights_only,
                                            mmap and start == 0)
    if head[:13] == _LEGACY_TORCH_MAGIC:
        raise _op_error("this is a PyTorch file in the legacy (pre-1.6, non-zip) format, which "
                        "ember cannot read: load it with torch and save it again with a current "
                        "torch.save", source)
    if len(head) >= 9 and head[8:9] != b"{":
        raise _op_error("not a safetensors or PyTorch zip file (unrecognised first bytes)",
                        source)
    return _load_safetensors(reader, restore)
