"""Shard indexes: for each sample of a shard, its key, byte offset and length.

An index is JSON (never pickle): ``{"format": "ember.data.index", "version": 1, "shards":
[{"url", "size", "keys", "offsets", "lengths"}, ...]}``. It lives next to a local shard as
``<shard>.index.json`` (written by ``TarWriter(..., index=True)``, ``ShardWriter`` or
:func:`index_shards`), or in one file for a whole dataset (``index_shards(urls, output=path)``).
With an index, a reader seeks straight to a sample, every shard's sample count is known (exact
and equal splits, ``len()``), and :class:`ShardedDataset` reads samples by number.
"""

from __future__ import annotations

import bisect
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

from .. import _C
from ._urls import expand_urls

__all__ = ["ShardIndex", "index_shards", "load_index", "ShardedDataset", "INDEX_SUFFIX"]

INDEX_SUFFIX = ".index.json"
_FORMAT = "ember.data.index"


@dataclass
class ShardIndex:
    url: str
    size: int | None
    keys: list
    offsets: list
    lengths: list

    def __len__(self):
        return len(self.keys)

    def to_json(self):
        return {"url": self.url, "size": self.size, "keys": self.keys, "offsets": self.offsets,
                "lengths": self.lengths}

    @classmethod
    def from_json(cls, d, source):
        try:
            keys, offsets, lengths = list(d["keys"]), list(d["offsets"]), list(d["lengths"])
            size = d.get("size")
            url = str(d["url"])
        except (KeyError, TypeError) as exn:
            raise ValueError(f"{source}: not an ember.data index ({exn!r})") from None
        if not (len(keys) == len(offsets) == len(lengths)):
            raise ValueError(f"{source}: index lists of different lengths")
        for o, n in zip(offsets, lengths):
            if not (isinstance(o, int) and isinstance(n, int) and o >= 0 and n > 0
                    and o % 512 == 0):
                raise ValueError(f"{source}: bad offset/length {o}/{n} in the index")
        return cls(url, size, keys, offsets, lengths)


def local_path(url: str) -> str | None:
    """The file path of a local shard URL, or None for pipe:/http(s) URLs."""
    if url.startswith("file://"):
        return url[7:]
    if url.startswith("file:"):
        return url[5:]
    if url.startswith(("pipe:", "http://", "https://")):
        return None
    return url


def _parse(text, source) -> list[ShardIndex]:
    try:
        d = json.loads(text)
    except ValueError as exn:
        raise ValueError(f"{source}: the index is not valid JSON ({exn})") from None
    if not isinstance(d, dict) or d.get("format") != _FORMAT or d.get("version") != 1:
        raise ValueError(f"{source}: not an ember.data index (format/version missing)")
    return [ShardIndex.from_json(s, source) for s in d.get("shards", [])]


def load_index(path) -> dict[str, ShardIndex]:
    """The shard indexes of an index file, by shard URL."""
    with open(path, encoding="utf-8") as f:
        return {s.url: s for s in _parse(f.read(), path)}


def _dump(shards: list[ShardIndex]) -> str:
    return json.dumps({"format": _FORMAT, "version": 1, "shards": [s.to_json() for s in shards]},
                      separators=(",", ":"))


def write_sidecar(index: ShardIndex, path: str):
    tmp = f"{path}{INDEX_SUFFIX}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_dump([index]))
    os.replace(tmp, path + INDEX_SUFFIX)


def sidecar(url: str) -> ShardIndex | None:
    """The sidecar index of a local shard, when there is one and it matches the shard's size."""
    path = local_path(url)
    if path is None or not os.path.exists(path + INDEX_SUFFIX):
        return None
    with open(path + INDEX_SUFFIX, encoding="utf-8") as f:
        shards = _parse(f.read(), path + INDEX_SUFFIX)
    if len(shards) != 1:
        raise ValueError(f"{path + INDEX_SUFFIX}: a sidecar index must describe one shard")
    index = shards[0]
    size = os.path.getsize(path)
    if index.size is not None and index.size != size:
        raise ValueError(f"{path + INDEX_SUFFIX} is stale: it describes a {index.size}-byte "
                         f"shard, {path} has {size} bytes; rebuild it with "
                         "ember.data.index_shards")
    index.url = url
    return index


def scan_shard(url: str) -> ShardIndex:
    with _C._data.ShardReader(url) as reader:
        keys, offsets, lengths = reader.scan()
    path = local_path(url)
    size = os.path.getsize(path) if path is not None else None
    return ShardIndex(url, size, keys, offsets, lengths)


_count_cache: dict = {}
_count_lock = threading.Lock()


def sample_count(url: str, index: dict | None) -> int | None:
    """Samples in a shard: from the given index, a sidecar, or a scan of a local file (cached
    per file version); None for a stream without an index."""
    if index is not None and url in index:
        return len(index[url])
    path = local_path(url)
    if path is None:
        return None
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    with _count_lock:
        if key in _count_cache:
            return _count_cache[key]
    found = sidecar(url)
    count = len(found) if found is not None else len(scan_shard(url))
    with _count_lock:
        _count_cache[key] = count
    return count


def index_shards(urls, *, output=None, write=None) -> dict[str, ShardIndex]:
    """Indexes the shards (any URL kind: streams are read once). With ``output``, writes one
    index file for all of them; otherwise (``write`` defaults to True) a sidecar next to each
    local shard. Returns the indexes by URL."""
    shards = [scan_shard(u) for u in expand_urls(urls)]
    if output is not None:
        tmp = f"{os.fspath(output)}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(_dump(shards))
        os.replace(tmp, output)
    elif write is None or write:
        for s in shards:
            path = local_path(s.url)
            if path is not None:
                write_sidecar(s, path)
    return {s.url: s for s in shards}


def resolve_index(urls: list[str], index) -> dict[str, ShardIndex] | None:
    """The index a dataset uses: an index file path, a dict from index_shards, or None (then
    sidecars of local shards, where all of them have one); True requires sidecars."""
    if index is None or index is True:
        found = {}
        for u in urls:
            s = sidecar(u)
            if s is None:
                if index is True:
                    raise ValueError(f"index=True but {u} has no {INDEX_SUFFIX} sidecar; build "
                                     "one with ember.data.index_shards(urls)")
                return None
            found[u] = s
        return found
    if index is False:
        return None
    if isinstance(index, dict):
        return index
    return load_index(index)


class ShardedDataset:
    """Map-style access to the samples of indexed shards (as webdataset's ``wids``):
    ``len(ds)`` and ``ds[i]``, the i-th sample in shard order, read by one seek. Any sampler
    then gives exact global shuffling (``DataLoader(ds, shuffle=True)``,
    ``DistributedSampler(ds)``). ``transform`` is applied to each raw sample (a dict of bytes
    with ``__key__`` and ``__url__``), e.g. ``ember.data.Decoder(...)``; ``decode=`` is a
    shorthand for a Decoder (``"rgb8"``, or a list of specs and handlers)."""

    def __init__(self, urls, *, index=None, transform=None, decode=None, max_open=16):
        self.urls = expand_urls(urls)
        self.index = resolve_index(self.urls, True if index is None else index)
        missing = [u for u in self.urls if u not in self.index]
        if missing:
            raise ValueError(f"ShardedDataset: no index entry for {missing[0]}"
                             + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        self.cumulative = [0]
        for u in self.urls:
            self.cumulative.append(self.cumulative[-1] + len(self.index[u]))
        if decode is not None:
            from ._decode import Decoder, imagehandler

            specs = decode if isinstance(decode, (list, tuple)) else [decode]
            decoder = Decoder([imagehandler(s) if isinstance(s, str) else s for s in specs])
            transform = decoder if transform is None else _compose(decoder, transform)
        self.transform = transform
        self.max_open = max_open
        self._readers = OrderedDict()
        self._readers_pid = os.getpid()

    def __len__(self):
        return self.cumulative[-1]

    def locate(self, i: int):
        """(shard URL, key, offset, length) of sample i."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"ShardedDataset index {i} is out of range for {n} samples")
        i %= n
        s = bisect.bisect_right(self.cumulative, i) - 1
        entry = self.index[self.urls[s]]
        j = i - self.cumulative[s]
        return self.urls[s], entry.keys[j], entry.offsets[j], entry.lengths[j]

    def __getitem__(self, i):
        if not isinstance(i, int):
            if not hasattr(i, "__index__"):
                raise TypeError(f"ShardedDataset indices must be integers, got {type(i).__name__}")
            i = i.__index__()
        url, key, offset, length = self.locate(i)
        if self._readers_pid != os.getpid():
            # A forked DataLoader worker: the readers it inherited share their file offsets
            # with the parent's and the other workers' (one open file description each), so
            # concurrent reads would race. Open its own (dropping these closes only its copies).
            self._readers = OrderedDict()
            self._readers_pid = os.getpid()
        reader = self._readers.pop(url, None)
        if reader is None:
            reader = _C._data.ShardReader(url)
            if not reader.seekable:
                reader.close()
                raise ValueError(f"ShardedDataset needs seekable (local) shards; {url} is a stream")
        self._readers[url] = reader
        while len(self._readers) > self.max_open:
            self._readers.popitem(last=False)[1].close()
        sample = reader.read_at(offset, length)
        if sample["__key__"] != key:
            raise ValueError(f"{url}: the index says sample {i} is {key!r}, the shard has "
                             f"{sample['__key__']!r} there (stale index?)")
        return self.transform(sample) if self.transform is not None else sample

    def close(self):
        while self._readers:
            self._readers.popitem()[1].close()

    def __getstate__(self):  # readers are per process
        state = dict(self.__dict__)
        state["_readers"] = OrderedDict()
        state["_readers_pid"] = None
        return state

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class _compose:  # noqa: N801 - a picklable composition, used like a function
    def __init__(self, f, g):
        self.f, self.g = f, g

    def __call__(self, x):
        return self.g(self.f(x))
