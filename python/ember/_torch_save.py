"""``ember.save`` in PyTorch's zip checkpoint format, readable by ``torch.load``.

Note [Torch zip writer]: the archive is what ``torch.save`` writes (PyTorch >= 1.6):

- ``<name>/data.pkl``: a protocol-2 pickle of the object, in which every tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  (parameters wrap theirs in ``_rebuild_parameter``; quantized tensors use
  ``_rebuild_qtensor``) and every storage the persistent id ``("storage",
  torch.<Type>Storage, key, "cpu", numel)``;
- ``<name>/data/<key>``: each storage's bytes, stored (not compressed), 64-byte aligned;
- ``<name>/byteorder`` ("little") and ``<name>/version`` ("3").

The archive is written by ``_zip_writer.write_stored_zip``, which checksums the records on a
thread pool while the calling thread writes the ones before them: Python's ``zipfile`` runs the
CRC pass and the write pass of each record one after the other.

Ember's objects are written under PyTorch's names (``ember.Size`` as ``torch.Size``, dtypes as
``torch.float32``, ...), so that ``torch.load`` rebuilds them as its own. Tensors that share a
storage share one record and load as views again; the same tensor twice loads as one object.
Everything else pickles as pickle does: a whole Ember module is pickled by its class
(``ember.nn.modules.linear.Linear``), so loading it needs Ember and ``weights_only=False``, as
a whole PyTorch module needs torch. Quantized tensors whose layout PyTorch's rebuild function
does not describe (quint4x2's packed integers, embedding tables' float zero points) use Ember's
own ``ember._torch_pickle._rebuild_packed_qtensor``.
"""

import collections
import io
import os
import pickle

import numpy as np

import ember

from . import _C
from ._zip_writer import write_stored_zip

# Storage classes by dtype, as torch names them in the persistent ids.
_STORAGE_NAMES = {
    ember.bool: "BoolStorage", ember.uint8: "ByteStorage", ember.int8: "CharStorage",
    ember.int16: "ShortStorage", ember.int32: "IntStorage", ember.int64: "LongStorage",
    ember.float16: "HalfStorage", ember.bfloat16: "BFloat16Storage",
    ember.float32: "FloatStorage", ember.float64: "DoubleStorage",
    ember.complex64: "ComplexFloatStorage", ember.complex128: "ComplexDoubleStorage",
}
_QUANTIZED_STORAGE = {ember.qint8: "QInt8Storage", ember.quint8: "QUInt8Storage",
                      ember.qint32: "QInt32Storage"}
_ALIGNMENT = 64  # data records start at a multiple of this, as torch.save's


class _Global:
    """A global written under the given module and name (torch's, which Ember need not have)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable; this is never called
        raise RuntimeError(f"{self.module}.{self.name} is written into files, not called")


_REBUILD_TENSOR_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_QTENSOR = _Global("torch._utils", "_rebuild_qtensor")
_REBUILD_PACKED_QTENSOR = _Global("ember._torch_pickle", "_rebuild_packed_qtensor")
_REBUILD_NUMPY = _Global("ember._torch_pickle", "_rebuild_numpy")
_SIZE = _Global("torch", "Size")
_DEVICE = _Global("torch", "device")


class _StorageRecord:
    def __init__(self, key, type_name, storage, nbytes, element_size):
        self.key, self.type_name, self.storage = key, type_name, storage
        self.nbytes, self.numel = nbytes, nbytes // element_size


class _Pickler(pickle._Pickler):
    """The pure-Python pickler: its save_global can write torch's names without importing
    torch (the C pickler insists that a global resolve to the same object here)."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.records = {}  # storage identity -> _StorageRecord

    # -- torch's names for Ember's objects --
    def reducer_override(self, obj):
        if isinstance(obj, ember.Tensor):
            return self.reduce_tensor(obj)
        if isinstance(obj, _Global):
            return obj.name  # a string: pickle calls save_global(obj, name)
        if isinstance(obj, ember.Size):
            return (_SIZE, (tuple(int(v) for v in obj),))
        if isinstance(obj, ember.device):
            return (_DEVICE, (str(obj),))
        if isinstance(obj, (ember.dtype, _C.qscheme)):
            return str(obj).split(".")[-1]
        if isinstance(obj, (np.ndarray, np.generic)) and _plain_numpy(obj.dtype):
            # Raw bytes, so that weights_only loading can rebuild them (NumPy's own reduce
            # names globals whose arguments could carry objects).
            array = np.ascontiguousarray(obj)
            shape = None if isinstance(obj, np.generic) else tuple(int(v) for v in obj.shape)
            return (_REBUILD_NUMPY, (array.tobytes(), array.dtype.str, shape))
        return NotImplemented

    def save_global(self, obj, name=None):
        if isinstance(obj, _Global):
            module, name = obj.module, obj.name
        elif isinstance(obj, (ember.dtype, _C.qscheme)):
            module, name = "torch", str(obj).split(".")[-1]
        else:
            return super().save_global(obj, name)
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRecord):
            return ("storage", _Global("torch", obj.type_name), obj.key, "cpu", obj.numel)
        return None

    # -- tensors --
    def record_for(self, t, type_name):
        storage = t.untyped_storage()
        nbytes = storage.nbytes()
        # A storage's identity is its address; storages without bytes have none to share.
        identity = storage.data_ptr() if nbytes else ("empty", len(self.records))
        record = self.records.get(identity)
        if record is None:
            record = _StorageRecord(str(len(self.records)), type_name, storage, nbytes,
                                    t.element_size())
            self.records[identity] = record
        elif record.type_name != type_name:
            raise RuntimeError(
                "[save] cannot save multiple tensors or storages that view the same data as "
                f"different types ({record.type_name} and {type_name}), as torch.save cannot: "
                "save a copy (clone()) of one of them")
        return record

    def reduce_tensor(self, t):
        if t.device.type != "cpu":
            t = t.cpu()
        if t.is_quantized:
            return self.reduce_quantized(t)
        if t.dtype not in _STORAGE_NAMES:
            raise TypeError(f"[save] cannot save a tensor of dtype {t.dtype}")
        nn = ember.nn if hasattr(ember, "nn") else None
        if nn is not None and isinstance(t, nn.Parameter):
            return (_REBUILD_PARAMETER, (t.detach(), t.requires_grad, collections.OrderedDict()))
        if getattr(t, "is_conj", None) is not None and t.is_conj():
            t = t.resolve_conj()
        record = self.record_for(t, _STORAGE_NAMES[t.dtype])
        return (_REBUILD_TENSOR_V2, (record, t.storage_offset(), ember.Size(t.shape),
                                     tuple(t.stride()), t.requires_grad,
                                     collections.OrderedDict()))

    def reduce_quantized(self, q):
        scheme = q.qscheme()
        if q.dtype in _QUANTIZED_STORAGE and scheme != ember.per_channel_affine_float_qparams:
            ints = q.int_repr()  # PyTorch's layout: the integers, one element each
            record = self.record_for(ints, _QUANTIZED_STORAGE[q.dtype])
            if scheme == ember.per_tensor_affine:
                params = (scheme, float(q.q_scale()), int(q.q_zero_point()))
            else:
                params = (scheme, q.q_per_channel_scales().double(),
                          q.q_per_channel_zero_points().long(), int(q.q_per_channel_axis()))
            return (_REBUILD_QTENSOR, (record, ints.storage_offset(), ember.Size(q.shape),
                                       tuple(ints.stride()), params, False,
                                       collections.OrderedDict()))
        per_channel = scheme.name.startswith("per_channel")
        scales = q.q_per_channel_scales() if per_channel else ember.tensor([q.q_scale()])
        zero_points = (q.q_per_channel_zero_points().double() if per_channel
                       else ember.tensor([float(q.q_zero_point())], dtype=ember.float64))
        axis = int(q.q_per_channel_axis()) if per_channel else 0
        from .serialization import _narrowed  # float32 where exact: half the bytes

        return (_REBUILD_PACKED_QTENSOR,
                (q.int_repr(), str(q.dtype).split(".")[-1], scheme.name,
                 _narrowed(scales).contiguous(), _narrowed(zero_points).contiguous(), axis,
                 tuple(int(v) for v in q.shape)))


def _plain_numpy(dtype):
    """Numbers, booleans and fixed-size strings: what _rebuild_numpy rebuilds."""
    return dtype.fields is None and dtype.subdtype is None and dtype.kind in "biufcSU?"


def _record_bytes(record):
    if record.nbytes == 0:
        return b""
    raw = _C._rebuild_tensor(record.storage, ember.uint8, (record.nbytes,), (1,), 0)
    return memoryview(raw.numpy())


def save_torch_zip(obj, out, name, protocol=2):
    """Writes ``obj`` to the binary file ``out`` as torch.save would, records under ``name``/."""
    if not isinstance(protocol, int) or not 2 <= protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"[save] pickle_protocol must be 2 to {pickle.HIGHEST_PROTOCOL}, got "
                         f"{protocol!r}")
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, protocol)
    pickler.dump(obj)
    records = [(f"{name}/data.pkl", buffer.getvalue()), (f"{name}/byteorder", b"little")]
    for record in sorted(pickler.records.values(), key=lambda r: int(r.key)):
        records.append((f"{name}/data/{record.key}", _record_bytes(record)))
    records.append((f"{name}/version", b"3\n"))
    # CRC-32s on worker threads while earlier records are written (Note [Torch zip writer]).
    write_stored_zip(out, records, alignment=_ALIGNMENT)


def archive_name(f):
    """The record prefix torch.save uses: the file's stem, or "archive"."""
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and all(c.isalnum() or c in "_-." for c in stem):
            return stem
    return "archive"
