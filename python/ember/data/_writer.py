"""TarWriter and ShardWriter, as WebDataset's: samples (dicts with ``__key__``) are encoded by
extension and written as ``key.ext`` members, in sorted field order, in POSIX ustar archives
(pax headers for long names) that GNU tar, Python's tarfile and the webdataset package read.
With ``index=True`` a sidecar index (``<shard>.index.json``) is written next to each shard."""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import re
import time

import numpy as np

from .. import _C
from ._index import ShardIndex, write_sidecar

__all__ = ["TarWriter", "ShardWriter", "make_encoder", "default_handlers"]

_RECORD = 10240  # tar's record size: the archive is padded to a multiple of it


def _to_numpy(x):
    import ember

    if isinstance(x, ember.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def _npy(x):
    buf = io.BytesIO()
    np.save(buf, _to_numpy(x), allow_pickle=False)
    return buf.getvalue()


def _npz(d):
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: _to_numpy(v) for k, v in d.items()})
    return buf.getvalue()


def _pth(x):
    import ember

    buf = io.BytesIO()
    ember.save(x, buf)
    return buf.getvalue()


def _image(fmt):
    def encode(image):
        import PIL.Image

        if isinstance(image, np.ndarray) or hasattr(image, "numpy"):
            array = _to_numpy(image)
            if array.dtype != np.uint8:
                array = (np.clip(array, 0, 1) * 255 + 0.5).astype(np.uint8)
            if array.ndim == 3 and array.shape[0] in (1, 3, 4) and array.shape[2] not in (1, 3, 4):
                array = array.transpose(1, 2, 0)
            if array.ndim == 3 and array.shape[2] == 1:
                array = array[:, :, 0]
            image = PIL.Image.fromarray(np.ascontiguousarray(array))
        buf = io.BytesIO()
        image.save(buf, format=fmt)
        return buf.getvalue()

    return encode


def _add(handlers, keys, f):
    for k in keys.split():
        handlers[k] = f


def _make_handlers():
    h = {}
    _add(h, "cls cls2 class count index inx id", lambda x: str(x).encode("ascii"))
    _add(h, "txt text transcript html htm", lambda x: x.encode("utf-8"))
    _add(h, "pyd pickle", pickle.dumps)
    _add(h, "pth", _pth)
    _add(h, "npy", _npy)
    _add(h, "npz", _npz)
    _add(h, "json jsn", lambda x: json.dumps(x).encode("utf-8"))
    _add(h, "jpg jpeg img image", _image("JPEG"))
    _add(h, "png", _image("PNG"))
    _add(h, "pbm pgm ppm", _image("PPM"))
    _add(h, "tiff tif", _image("TIFF"))
    return h


default_handlers = _make_handlers()


def _encode_field(value, name, handlers):
    if name.startswith("_"):
        if not isinstance(value, str):
            raise ValueError(f"TarWriter: metadata field {name!r} must be a str")
        return value
    compress = name.endswith(".gz")
    base = name[:-3] if compress else name
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif isinstance(value, str):
        data = value.encode("utf-8")
    else:
        ext = re.sub(r".*\.", "", base).lower()
        handler = handlers.get(ext)
        if handler is None:
            raise ValueError(f"TarWriter: no encoder for .{ext} fields ({type(value).__name__}); "
                             "pass bytes, or an encoder")
        data = handler(value)
    return gzip.compress(data, mtime=0) if compress else data


def make_encoder(spec):
    """An encoder from WebDataset's specs: True (by extension), False/None (values must be
    bytes already), a dict of handlers by extension, or a callable on whole samples."""
    if spec is False or spec is None:
        return lambda sample: sample
    if callable(spec):
        return spec
    if spec is True or isinstance(spec, dict):
        handlers = default_handlers if spec is True else spec
        return lambda sample: {k: _encode_field(v, k, handlers) for k, v in sample.items()}
    raise ValueError(f"{spec!r}: unknown encoder spec")


class TarWriter:
    """Writes samples to a tar archive: a path (``.gz``/``.tgz`` compresses) or a binary file
    object. ``index=True`` (uncompressed paths only) also writes the shard's sidecar index."""

    def __init__(self, fileobj, user="bigdata", group="bigdata", mode=0o0444, compress=None,
                 encoder=True, keep_meta=False, mtime=None, format=None, *, index=False):
        self.path = os.fspath(fileobj) if isinstance(fileobj, (str, os.PathLike)) else None
        if compress is None:
            compress = self.path is not None and self.path.endswith(("gz", "tgz"))
        if compress not in (True, False, "gz"):
            raise ValueError(f"TarWriter: compress must be True, False or 'gz', got {compress!r}")
        if index and (compress or self.path is None):
            raise ValueError("TarWriter: index=True needs an uncompressed file path")
        self.own = None
        if self.path is not None:
            fileobj = self.own = open(self.path, "wb")
        self.raw = fileobj
        self.stream = gzip.GzipFile(fileobj=fileobj, mode="wb", mtime=0) if compress else fileobj
        self.encoder = make_encoder(encoder)
        self.user, self.group, self.mode, self.mtime = user, group, mode, mtime
        self.keep_meta = keep_meta
        self.offset = 0
        self.index = ShardIndex(self.path, None, [], [], []) if index else None
        self.closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _write(self, data):
        self.stream.write(data)
        self.offset += len(data)

    def write(self, obj):
        """Writes one sample; returns the bytes of its fields."""
        if self.closed:
            raise ValueError("TarWriter: write to a closed writer")
        obj = self.encoder(obj)
        if "__key__" not in obj:
            raise ValueError("TarWriter: the sample must have a __key__")
        key = obj["__key__"]
        if not isinstance(key, str) or not key:
            raise ValueError(f"TarWriter: __key__ must be a non-empty str, got {key!r}")
        start, total = self.offset, 0
        mtime = int(self.mtime if self.mtime is not None else time.time())
        for k in sorted(obj.keys()):
            if k == "__key__" or (k.startswith("_") and not self.keep_meta):
                continue
            v = obj[k]
            if isinstance(v, str):
                v = v.encode("utf-8")
            if not isinstance(v, (bytes, bytearray, memoryview)):
                raise ValueError(f"TarWriter: field {k!r} is {type(v).__name__} after encoding, "
                                 "not bytes")
            v = bytes(v)
            self._write(_C._data.tar_header(f"{key}.{k}", len(v), mtime, self.mode, self.user,
                                            self.group))
            self._write(v)
            if len(v) % 512:
                self._write(b"\0" * (512 - len(v) % 512))
            total += len(v)
        if self.index is not None and self.offset > start:
            self.index.keys.append(key)
            self.index.offsets.append(start)
            self.index.lengths.append(self.offset - start)
        return total

    def close(self):
        if self.closed:
            return
        self.closed = True
        end = self.offset + 1024
        self._write(b"\0" * (1024 + (-end) % _RECORD))
        if self.stream is not self.raw:
            self.stream.close()
        if self.own is not None:
            self.own.close()
        if self.index is not None:
            self.index.size = self.offset
            write_sidecar(self.index, self.path)


class ShardWriter:
    """Writes samples into numbered shards: ``ShardWriter("out-%06d.tar", maxcount=10000)``
    starts a new shard after ``maxcount`` samples or ``maxsize`` bytes. ``post(fname)`` runs on
    each finished shard. Other keyword arguments go to TarWriter (``index=True``, ...)."""

    def __init__(self, pattern, maxcount=100000, maxsize=3e9, post=None, start_shard=0,
                 verbose=0, opener=None, **kw):
        self.pattern, self.maxcount, self.maxsize = pattern, maxcount, maxsize
        self.post, self.verbose, self.opener, self.kw = post, verbose, opener, kw
        self.shard = start_shard
        self.tarstream = None
        self.fname = None
        self.total = 0
        self.count = 0
        self.size = 0

    def next_stream(self):
        self.finish()
        self.fname = self.pattern % self.shard
        if self.verbose:
            print(f"# writing {self.fname} {self.count} {self.size / 1e9:.1f} GB {self.total}")
        self.shard += 1
        target = self.opener(self.fname) if self.opener else self.fname
        self.tarstream = TarWriter(target, **self.kw)
        self.count = 0
        self.size = 0

    def write(self, obj):
        if self.tarstream is None or self.count >= self.maxcount or self.size >= self.maxsize:
            self.next_stream()
        size = self.tarstream.write(obj)
        self.count += 1
        self.total += 1
        self.size += size

    def finish(self):
        if self.tarstream is not None:
            self.tarstream.close()
            if callable(self.post):
                self.post(self.fname)
            self.tarstream = None

    def close(self):
        self.finish()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
