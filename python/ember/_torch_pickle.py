"""Reading PyTorch ``.pt`` / ``.pth`` files (``torch.save``'s zip format) without torch and
without running code from the file.

Note [Restricted unpickler]: a torch.save archive holds ``<prefix>/data.pkl``, a pickle of the
saved object whose tensors refer to storages by persistent id ``("storage", <torch.XStorage>,
key, location, numel)``, and each storage's raw bytes in ``<prefix>/data/<key>``. Unpickling
calls whatever globals the pickle names, so :class:`_RestrictedUnpickler` resolves only an
allowlist, each to an Ember function that validates its arguments: the tensor and parameter
rebuild functions, the storage and dtype names, ``torch.Size``, ``collections.OrderedDict``
and a few builtins (set, frozenset, complex, bytearray, and ``_codecs.encode`` for latin-1
text, which protocol 2 uses for bytes). Any other global raises ``pickle.UnpicklingError``.
A tensor's geometry is checked against its storage before it is built (``_C._rebuild_tensor``).
"""

import _compat_pickle
import collections
import io
import lzma
import os
import pickle
import struct
import sys
import zipfile
import zlib

import ember

from . import _C

# Storage classes as torch pickles them -> the dtype of their elements.
_STORAGE_DTYPES = {
    "BoolStorage": ember.bool,
    "ByteStorage": ember.uint8,
    "CharStorage": ember.int8,
    "ShortStorage": ember.int16,
    "IntStorage": ember.int32,
    "LongStorage": ember.int64,
    "HalfStorage": ember.float16,
    "BFloat16Storage": ember.bfloat16,
    "FloatStorage": ember.float32,
    "DoubleStorage": ember.float64,
    "ComplexFloatStorage": ember.complex64,
    "ComplexDoubleStorage": ember.complex128,
    "UntypedStorage": ember.uint8,
    # Quantized tensors' integers (torch._utils._rebuild_qtensor).
    "QInt8Storage": ember.int8,
    "QUInt8Storage": ember.uint8,
    "QInt32Storage": ember.int32,
}
_QUANTIZED_BY_INTS = {ember.int8: ember.qint8, ember.uint8: ember.quint8,
                      ember.int32: ember.qint32}
_QSCHEMES = {q.name: q for q in (ember.per_tensor_affine, ember.per_channel_affine,
                                 ember.per_channel_affine_float_qparams)}

_DTYPES = {
    name: getattr(ember, name)
    for name in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                 "float32", "float64", "complex64", "complex128", "half", "float", "double",
                 "short", "int", "long", "cfloat", "cdouble", "qint8", "quint8", "qint32",
                 "quint4x2")
}

# A compressed record may expand at most this much (torch.save stores records uncompressed;
# the bound keeps a small crafted file from asking for huge allocations).
_MAX_COMPRESSION_RATIO = 100


def _error(what, source):
    where = f" {source}:" if source else ""
    return RuntimeError(f"[load]{where} {what}")


class _RestoreError(Exception):
    """Carries an error of map_location (or of the device check) through the unpickler, which
    would otherwise report it as a malformed file."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class _StorageType:
    """What ``torch.FloatStorage`` and friends unpickle to: the element dtype."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"torch.{self.name}"


class _LoadedStorage:
    """A storage read from the archive: Ember's untyped storage and its element dtype."""

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


def _check_int(value, what):
    if not isinstance(value, int) or isinstance(value, bool):
        raise pickle.UnpicklingError(f"[load] {what} must be an int, got {type(value).__name__}")
    if not -(2**63) <= value < 2**63:
        raise pickle.UnpicklingError(f"[load] {what} {value} does not fit in int64")
    return value


def _check_int_tuple(value, what):
    if not isinstance(value, (tuple, list)):
        raise pickle.UnpicklingError(f"[load] {what} must be a tuple, got {type(value).__name__}")
    return tuple(_check_int(v, what) for v in value)


def _apply_metadata(t, metadata):
    """torch records lazily conjugated / negated views as metadata flags on the storage."""
    if metadata:
        if not isinstance(metadata, dict):
            raise pickle.UnpicklingError("[load] tensor metadata must be a dict")
        if metadata.get("conj"):
            t = t.conj()
        if metadata.get("neg"):
            t = -t
    return t


def _rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False, dtype=None):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError("[load] a tensor must be rebuilt from a storage record")
    offset = _check_int(storage_offset, "storage_offset")
    t = _C._rebuild_tensor(storage.storage, dtype or storage.dtype,
                           _check_int_tuple(size, "size"), _check_int_tuple(stride, "stride"),
                           offset)
    if not isinstance(requires_grad, bool):
        raise pickle.UnpicklingError("[load] requires_grad must be a bool")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride, requires_grad)
    return _apply_metadata(t, metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if not isinstance(dtype, ember.dtype):
        raise pickle.UnpicklingError("[load] _rebuild_tensor_v3 needs a dtype")
    t = _rebuild_tensor(storage, storage_offset, size, stride, requires_grad, dtype)
    return _apply_metadata(t, metadata)


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad,
                     backward_hooks):
    """torch's quantized tensor: its integers in the storage, the scheme's parameters."""
    ints = _rebuild_tensor(storage, storage_offset, size, stride)
    if ints.dtype not in _QUANTIZED_BY_INTS:
        raise pickle.UnpicklingError("[load] a quantized tensor needs a QInt8, QUInt8 or QInt32 "
                                     "storage")
    if not isinstance(quantizer_params, tuple) or not quantizer_params:
        raise pickle.UnpicklingError("[load] malformed quantizer parameters")
    scheme = quantizer_params[0]
    try:
        if scheme is ember.per_tensor_affine and len(quantizer_params) == 3:
            _, scale, zero_point = quantizer_params
            q = ember._make_per_tensor_quantized_tensor(ints, float(scale),
                                                        _check_int(zero_point, "zero_point"))
        elif scheme is ember.per_channel_affine and len(quantizer_params) == 4:
            _, scales, zero_points, axis = quantizer_params
            if not isinstance(scales, ember.Tensor) or not isinstance(zero_points, ember.Tensor):
                raise pickle.UnpicklingError("[load] per-channel scales and zero points must be "
                                             "tensors")
            q = ember._make_per_channel_quantized_tensor(ints, scales.double().tolist(),
                                                         zero_points.long().tolist(),
                                                         _check_int(axis, "axis"))
        else:
            raise pickle.UnpicklingError(f"[load] unsupported quantization scheme {scheme!r}")
    except (ValueError, TypeError, RuntimeError, IndexError) as e:
        raise pickle.UnpicklingError(f"[load] bad quantized tensor: {e}") from None
    if q.dtype != _QUANTIZED_BY_INTS[ints.dtype]:
        raise pickle.UnpicklingError("[load] quantized tensor and storage types differ")
    return q


def _rebuild_packed_qtensor(ints, dtype, scheme, scales, zero_points, axis, shape):
    """Ember's quantized layouts torch's rebuild does not describe (quint4x2's packed
    integers, float zero points): see Note [Torch zip writer] in _torch_save.py."""
    if (not isinstance(ints, ember.Tensor) or dtype not in ("quint8", "quint4x2", "qint8")
            or scheme not in _QSCHEMES or not isinstance(scales, ember.Tensor)
            or not isinstance(zero_points, ember.Tensor)):
        raise pickle.UnpicklingError("[load] malformed packed quantized tensor")
    try:
        return _C._quantized._make_quantized(
            ints, getattr(ember, dtype), scheme, scales.double().tolist(),
            zero_points.double().tolist(), _check_int(axis, "axis"),
            list(_check_int_tuple(shape, "shape")))
    except (ValueError, TypeError, RuntimeError, IndexError) as e:
        raise pickle.UnpicklingError(f"[load] bad packed quantized tensor: {e}") from None


def _rebuild_numpy(data, dtype, shape):
    """A NumPy array (or scalar, for shape None) of a plain dtype from its C-order bytes,
    as Ember's writer stores them (see _torch_save.py)."""
    import numpy as np

    if not isinstance(data, bytes) or not isinstance(dtype, str) or len(dtype) > 16:
        raise pickle.UnpicklingError("[load] malformed NumPy array record")
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise pickle.UnpicklingError(f"[load] unknown NumPy dtype {dtype!r}") from None
    if np_dtype.fields is not None or np_dtype.subdtype is not None or (
            np_dtype.kind not in "biufcSU?"):
        raise pickle.UnpicklingError(f"[load] NumPy arrays of dtype {dtype!r} are not rebuilt")
    dims = () if shape is None else _check_int_tuple(shape, "NumPy shape")
    count = 1
    for d in dims:
        if d < 0:
            raise pickle.UnpicklingError("[load] negative NumPy dimension")
        count *= d
    if count * np_dtype.itemsize != len(data):
        raise pickle.UnpicklingError(f"[load] NumPy array of shape {dims} and dtype {dtype} "
                                     f"needs {count * np_dtype.itemsize} bytes, got {len(data)}")
    array = np.frombuffer(data, dtype=np_dtype).reshape(dims).copy()
    return array[()] if shape is None else array


def _make_parameter(data, requires_grad):
    if not isinstance(data, ember.Tensor):
        raise pickle.UnpicklingError("[load] a Parameter must wrap a tensor")
    if not isinstance(requires_grad, bool):
        raise pickle.UnpicklingError("[load] requires_grad must be a bool")
    nn = sys.modules.get("ember.nn")
    if nn is None:
        try:
            import ember.nn as nn
        except ImportError:
            nn = None
    if nn is not None and hasattr(nn, "Parameter"):
        return nn.Parameter(data, requires_grad=requires_grad)
    return data.detach().requires_grad_(requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _make_parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    # The state holds Python attributes of Parameter subclasses; plain parameters have none.
    return _make_parameter(data, requires_grad)


def _size(*args):
    if len(args) != 1:
        raise pickle.UnpicklingError("[load] torch.Size takes one sequence")
    return ember.Size(_check_int_tuple(args[0], "torch.Size"))


def _encode_latin1(text, encoding="latin1"):
    # Protocol 2 pickles bytes as _codecs.encode(str, "latin1"); no other codec is allowed.
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("[load] _codecs.encode is allowed for latin1 text only")
    return text.encode("latin1")


def _ordered_dict(*args):
    if len(args) > 1:
        raise pickle.UnpicklingError("[load] OrderedDict takes at most one argument")
    return collections.OrderedDict(*args)


def _checked(builtin):
    def construct(*args):
        if len(args) > 1:
            raise pickle.UnpicklingError(f"[load] {builtin.__name__} takes at most one argument")
        return builtin(*args)

    construct.__name__ = builtin.__name__
    return construct


def _device(*args):
    if len(args) not in (1, 2) or not isinstance(args[0], str):
        raise pickle.UnpicklingError("[load] torch.device takes a device string")
    return ember.device(*args)


_ALLOWED = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_qtensor"): _rebuild_qtensor,
    ("ember._torch_pickle", "_rebuild_packed_qtensor"): _rebuild_packed_qtensor,
    ("ember._torch_pickle", "_rebuild_numpy"): _rebuild_numpy,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch", "Size"): _size,
    ("torch", "device"): _device,
    ("collections", "OrderedDict"): _ordered_dict,
    ("builtins", "set"): _checked(set),
    ("builtins", "frozenset"): _checked(frozenset),
    ("builtins", "complex"): complex,
    ("builtins", "bytearray"): _checked(bytearray),
    ("_codecs", "encode"): _encode_latin1,
}


def _torch_global(module, name):
    """The Ember object for a global that torch.save's pickles name for tensors, storages,
    sizes, devices and dtypes, or None."""
    if (module, name) in _ALLOWED:
        return _ALLOWED[(module, name)]
    if module == "torch" and name in _STORAGE_DTYPES:
        return _StorageType(name, _STORAGE_DTYPES[name])
    if module == "torch" and name in _DTYPES:
        return _DTYPES[name]
    if module == "torch" and name in _QSCHEMES:
        return _QSCHEMES[name]
    return None


def _python3_name(module, name):
    # Protocol 2 pickles name Python 2 modules (__builtin__.set); map them as pickle does.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _persistent_storage(load_storage, pid):
    if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
            or not isinstance(pid[1], _StorageType) or not isinstance(pid[2], str)
            or not isinstance(pid[3], str)):
        raise pickle.UnpicklingError(f"[load] unsupported persistent id {str(pid)[:100]}")
    _, storage_type, key, location, numel = pid
    return load_storage(storage_type.dtype, key, location, _check_int(numel, "numel"))


class _StorageUnpickler(pickle.Unpickler):
    """What both unpicklers share: storages come from the archive's records."""

    def __init__(self, file, load_storage):
        super().__init__(file, encoding="utf-8")
        self.load_storage = load_storage

    def persistent_load(self, pid):
        return _persistent_storage(self.load_storage, pid)


class _RestrictedUnpickler(_StorageUnpickler):
    """See Note [Restricted unpickler]; also the caller's allow-list (Note [Safe globals] in
    serialization.py)."""

    def __init__(self, file, load_storage):
        super().__init__(file, load_storage)
        from .serialization import _safe_globals_by_name

        self.user_globals = _safe_globals_by_name()

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        found = _torch_global(module, name)
        if found is not None:
            return found
        if (module, name) in self.user_globals:
            return self.user_globals[(module, name)]
        short = name.rpartition(".")[2]
        raise pickle.UnpicklingError(
            f"[load] Weights only load failed: unsupported global {module}.{name}: it is not an "
            "allowed global by default (ember.load with weights_only=True rebuilds tensors and "
            "plain containers only). If you trust this class or function, allow it with "
            f"`ember.serialization.add_safe_globals([{short}])` or the "
            f"`ember.serialization.safe_globals([{short}])` context manager. If you trust the "
            "whole file, load it with weights_only=False, which can run arbitrary code from it."
        )


class _FullUnpickler(_StorageUnpickler):
    """weights_only=False: any global, as pickle itself; torch's tensor, storage and dtype
    globals as above, and other ``torch.*`` globals as Ember's namesakes (torch.nn.Linear
    loads as ember.nn.Linear, whose instances have the same attributes)."""

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        found = _torch_global(module, name)
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            return _ember_namesake(module, name)
        return super().find_class(module, name)


def _ember_namesake(module, name):
    """Ember's object for torch's ``module.name``: the same path under ember, else the nearest
    enclosing package that has the name (torch.optim.adam.Adam -> ember.optim.Adam)."""
    import importlib

    parts = ["ember", *module.split(".")[1:]]
    while parts:
        try:
            obj = importlib.import_module(".".join(parts))
        except ImportError:
            parts.pop()
            continue
        for attr in name.split("."):
            obj = getattr(obj, attr, None)
            if obj is None:
                break
        if obj is not None:
            return obj
        parts.pop()
    raise pickle.UnpicklingError(f"[load] the file needs {module}.{name}, which ember does not "
                                 "provide")


def _find_prefix(archive, source):
    names = archive.namelist()
    pickles = [n for n in names if n == "data.pkl" or n.endswith("/data.pkl")]
    if not pickles:
        if any(n.endswith("constants.pkl") for n in names):
            raise _error("this is a TorchScript archive (torch.jit.save), not a torch.save "
                         "checkpoint", source)
        raise _error("not a PyTorch checkpoint: the zip archive has no data.pkl", source)
    shortest = min(pickles, key=len)
    if any(n.endswith("constants.pkl") for n in names) and any("/code/" in n for n in names):
        raise _error("this is a TorchScript archive (torch.jit.save), not a torch.save "
                     "checkpoint", source)
    return shortest[: -len("data.pkl")]


def _check_record_size(info, source):
    if info.compress_type != zipfile.ZIP_STORED and (
        info.file_size > _MAX_COMPRESSION_RATIO * info.compress_size + (1 << 20)
    ):
        raise _error(f"record {info.filename} claims {info.file_size} bytes from "
                     f"{info.compress_size} compressed bytes", source)


def _read_record(archive, name, source):
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise _error(f"the archive has no record {name}", source) from None
    _check_record_size(info, source)
    with archive.open(info) as record:
        return record.read()


def _record_data_offset(handle, info, source):
    """Where the data of the stored record ``info`` starts in the file: after its local header,
    whose name and extra field lengths may differ from the central directory's."""
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise _error(f"corrupt zip archive: bad local header for record {info.filename}", source)
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    return info.header_offset + 30 + name_len + extra_len


def _read_record_into(archive, handle, info, buffer, source):
    """Reads record ``info`` into ``buffer`` (its exact size) and checks its CRC-32.

    torch.save stores records uncompressed: those are read straight from the file into the
    tensor's memory (one copy, where zipfile's reader makes several); others go through
    zipfile, which also checks the CRC."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        with archive.open(info) as record:
            done = 0
            while done < len(buffer):
                got = record.readinto(buffer[done:])
                if not got:
                    raise _error(f"record {info.filename} is truncated", source)
                done += got
            record.read(1)  # reaching the end makes zipfile check the CRC
        return
    handle.seek(_record_data_offset(handle, info, source))
    done = 0
    while done < len(buffer):
        got = handle.readinto(buffer[done:])
        if not got:
            raise _error(f"the file is truncated inside record {info.filename}", source)
        done += got
    if zlib.crc32(buffer) != info.CRC:
        raise _error(f"corrupt zip archive: Bad CRC-32 for record {info.filename}", source)


# What zipfile raises on a corrupt member: bad headers, truncation, and each decompressor's own
# error (deflate: zlib.error, LZMA: LZMAError, bzip2: OSError; an unknown method:
# NotImplementedError).
# A corrupt central directory can also send a seek to a negative offset (ValueError) or cut a
# header short (struct.error).
_CORRUPT_MEMBER_ERRORS = (
    zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, OSError, NotImplementedError,
    ValueError, struct.error
)


def _mapped_record(handle, path, info, nbytes, source):
    """The stored record ``info`` as a uint8 tensor over a copy-on-write mapping of the file
    (mmap=True: nothing is read until used, and writes to the tensors stay in memory, as
    torch.load(mmap=True)'s MAP_PRIVATE mapping)."""
    import numpy as np

    start = _record_data_offset(handle, info, source)
    size = os.fstat(handle.fileno()).st_size
    if start + nbytes > size:
        raise _error(f"the file is truncated inside record {info.filename}", source)
    mapped = np.memmap(path, dtype=np.uint8, mode="c", offset=start, shape=(nbytes,))
    return ember.from_numpy(mapped)


def load_torch_zip(handle, source, restore, weights_only=True, mmap=False):
    """Loads a torch.save zip archive from the open binary file ``handle``; ``restore``
    applies map_location to each storage (see serialization._make_restore). weights_only=False
    unpickles fully (_FullUnpickler)."""
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
        raise _error(f"corrupt or truncated zip archive ({e})", source) from None
    with archive:
        try:
            return _load_archive(archive, handle, source, restore, weights_only,
                                 source if mmap else None)
        except _CORRUPT_MEMBER_ERRORS as e:
            raise _error(f"corrupt zip archive ({type(e).__name__}: {e})", source) from None


def _load_archive(archive, handle, source, restore, weights_only=True, mmap_path=None):
    prefix = _find_prefix(archive, source)
    byteorder = "little"
    if prefix + "byteorder" in archive.namelist():
        byteorder = _read_record(archive, prefix + "byteorder", source).decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise _error(f"unknown byte order {byteorder!r}", source)
    storages = {}

    def load_storage(dtype, key, location, numel):
        cached = storages.get(key)
        if cached is not None:
            if cached.dtype != dtype:
                # Two dtypes over one storage: the bytes are shared, the element type is not.
                return _LoadedStorage(cached.storage, dtype)
            return cached
        name = f"{prefix}data/{key}"
        try:
            info = archive.getinfo(name)
        except KeyError:
            raise _error(f"the archive has no record {name} for storage {key}", source) from None
        item = ember.empty((), dtype=dtype).element_size()
        nbytes = numel * item
        if numel < 0 or info.file_size != nbytes:
            raise _error(f"storage {key} should hold {numel} elements of {dtype} ({nbytes} "
                         f"bytes) but its record has {info.file_size} bytes", source)
        _check_record_size(info, source)
        raw = None
        if (mmap_path is not None and nbytes and info.compress_type == zipfile.ZIP_STORED
                and not info.flag_bits & 0x1 and (byteorder == "little" or item == 1)):
            raw = _mapped_record(handle, mmap_path, info, nbytes, source)
        if raw is None:  # read into memory of its own (compressed, byte-swapped, or no mmap)
            raw = ember.empty((nbytes,), dtype=ember.uint8)
            if nbytes:
                _read_record_into(archive, handle, info, memoryview(raw.numpy()), source)
                if byteorder == "big" and item > 1:
                    unit = item // 2 if dtype.is_complex else item
                    raw.numpy().view(f"<u{unit}").byteswap(inplace=True)
        try:
            storage = restore(raw.untyped_storage(), location)
        except Exception as e:
            raise _RestoreError(e) from e  # the caller's error, not the file's
        loaded = _LoadedStorage(storage, dtype)
        storages[key] = loaded
        return loaded

    data = _read_record(archive, prefix + "data.pkl", source)
    unpickler_class = _RestrictedUnpickler if weights_only else _FullUnpickler
    unpickler = unpickler_class(io.BytesIO(data), load_storage)
    try:
        return unpickler.load()
    except _RestoreError as e:
        raise e.error from None
    except (pickle.UnpicklingError, RuntimeError):
        raise
    except RecursionError:
        raise _error("malformed data.pkl: nested too deeply", source) from None
    except _CORRUPT_MEMBER_ERRORS:
        raise
    except Exception as e:
        raise _error(f"malformed data.pkl ({type(e).__name__}: {e})", source) from None
