"""Pipeline stages with WebDataset's names and semantics, written as iterator classes so that a
running pipeline can say exactly where it is.

A stage is a callable ``stage(upstream_iterator, context) -> iterator``. Per-item stages (map,
select, decode, to_tuple, ...) keep no state; ``shuffle`` keeps its buffer as the source
positions of the items in it (see ``position``), so its state is a few integers per item and a
resumed pipeline refetches exactly those samples; ``batched`` and ``unbatched`` are exact at
batch boundaries. Anything else (a user's generator stage) makes the pipeline fall back to
replaying the epoch up to the saved count, which is exact but slower.
"""

from __future__ import annotations

import builtins
import re
import sys

import numpy as np

from ._handlers import reraise_exception

__all__ = ["Stage", "map", "select", "to_tuple", "map_dict", "map_tuple", "rename", "decode",
           "slice", "shuffle", "batched", "unbatched", "listed", "unlisted", "rsample",
           "extract_keys", "rename_keys", "non_empty",
           "default_collation_fn", "getfirst", "pipelinefilter"]


class StageContext:
    """What a stage may need from the pipeline: the seed/epoch/reader that seed its randomness,
    its place in the chain, and a way to rebuild items from source positions."""

    def __init__(self, seed, epoch, reader, index, refetch):
        self.seed, self.epoch, self.reader = seed, epoch, reader
        self.index, self.refetch = index, refetch


class Stage:
    """Base of Ember's stages: ``make_iter(upstream, context)`` builds the running iterator."""

    def __call__(self, upstream, context=None):
        return self.make_iter(upstream, context)


def position(it):
    """The source position of the item ``it`` emitted last, when every stage down to the source
    passes items one for one (or drops them); else None."""
    while it is not None:
        if not getattr(it, "preserves_position", False):
            return None
        if hasattr(it, "last_position"):
            return it.last_position
        it = getattr(it, "upstream", None)
    return None


def position_tracked(it) -> bool:
    """Whether items leaving ``it`` can be traced to source positions."""
    while it is not None:
        if not getattr(it, "preserves_position", False):
            return False
        if hasattr(it, "last_position"):
            return True
        it = getattr(it, "upstream", None)
    return False


class _Drop(Exception):
    """Raised by a per-item function to drop the item (select)."""


class _StageIter:
    """Base of the running stage iterators: exact state, none of their own unless overridden.
    ``preserves_position``: the item emitted is the last one pulled (see ``position``)."""

    preserves_position = True
    exact_state = True

    def __iter__(self):
        return self

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def _stage_rng(context, seed, salt):
    """A stage's generator: the seed (the stage's own, or the dataset's), the epoch, the reader
    and the stage's place, so every reader and epoch differs and a resumed run matches."""
    from ._plan import rng_for

    key = (context.epoch, context.reader, context.index) if context else (0, 0, 0)
    if seed is None:
        seed = context.seed if context else 0
    return rng_for(seed, *key, salt)


class _ItemIter(_StageIter):

    def __init__(self, upstream, fn, handler):
        self.upstream, self.fn, self.handler = upstream, fn, handler

    def __next__(self):
        while True:
            item = next(self.upstream)
            try:
                return self.fn(item)
            except _Drop:
                continue
            except Exception as exn:
                if self.handler(exn):
                    continue
                raise StopIteration from None



class _PerItem(Stage):
    def __init__(self, fn, handler=reraise_exception):
        self.fn, self.handler = fn, handler

    def make_iter(self, upstream, context=None):
        return _ItemIter(upstream, self.fn, self.handler)


def map(f, handler=reraise_exception):  # noqa: A001 - WebDataset's name
    """Applies ``f`` to each sample."""
    return _PerItem(f, handler)


# The per-item functions are classes, not closures, so that pipelines pickle (DataLoader workers
# started with "spawn" receive the dataset pickled).
class _Keep:
    def __init__(self, predicate):
        self.predicate = predicate

    def __call__(self, sample):
        if self.predicate(sample):
            return sample
        raise _Drop


def select(predicate):
    """Keeps the samples for which ``predicate(sample)`` is true."""
    return _PerItem(_Keep(predicate))


def getfirst(sample, keys, default=None, missing_is_error=True):
    """The value of the first of ``keys`` (a list, or a string of alternatives joined by ``;``)
    present in the sample."""
    if isinstance(keys, str):
        keys = keys.split(";")
    for k in keys:
        if k in sample:
            return sample[k]
    if missing_is_error:
        raise ValueError(f"didn't find {keys} in {list(sample.keys())}")
    return default


class _ToTuple:
    def __init__(self, args, missing_is_error, none_is_error):
        self.args = args
        self.fields = [f.split(";") if isinstance(f, str) else list(f) for f in args]
        self.simple = all(len(f) == 1 for f in self.fields)
        self.names = [f[0] for f in self.fields]
        self.missing_is_error, self.none_is_error = missing_is_error, none_is_error

    def __call__(self, sample):
        if self.simple and not self.none_is_error and not self.missing_is_error:
            return tuple(sample.get(k) for k in self.names)
        if self.simple:
            try:
                result = tuple([sample[k] for k in self.names])
            except KeyError:
                result = tuple(getfirst(sample, f, missing_is_error=self.missing_is_error)
                               for f in self.fields)
        else:
            result = tuple(getfirst(sample, f, missing_is_error=self.missing_is_error)
                           for f in self.fields)
        if self.none_is_error and any(x is None for x in result):
            raise ValueError(f"to_tuple {self.args} got {list(sample.keys())}")
        return result


def to_tuple(*args, handler=reraise_exception, missing_is_error=True, none_is_error=None):
    """Turns a dict sample into a tuple of the named fields (``"jpg;png cls"`` style)."""
    if none_is_error is None:
        none_is_error = missing_is_error
    if len(args) == 1 and isinstance(args[0], str) and " " in args[0]:
        args = args[0].split()
    return _PerItem(_ToTuple(args, missing_is_error, none_is_error), handler)


class _MapDict:
    def __init__(self, fns):
        self.fns = fns

    def __call__(self, sample):
        for k, f in self.fns.items():
            sample[k] = f(sample[k])
        return sample


def map_dict(handler=reraise_exception, **kw):
    """Applies a function per field: ``map_dict(jpg=f, cls=g)``."""
    if not kw:
        raise ValueError("map_dict needs at least one field=function")
    for key, f in kw.items():
        if not callable(f):
            raise TypeError(f"map_dict: {key}= is not callable")
    return _PerItem(_MapDict(kw), handler)


class _MapTuple:
    def __init__(self, fns):
        self.fns = fns

    def __call__(self, sample):
        out = list(sample)
        for i in range(min(len(self.fns), len(out))):
            if self.fns[i] is not None:
                out[i] = self.fns[i](out[i])
        return tuple(out)


def map_tuple(*args, handler=reraise_exception):
    """Applies a function per position of a tuple sample (None leaves it)."""
    return _PerItem(_MapTuple(list(args)), handler)


class _Rename:
    def __init__(self, keep, kw):
        self.keep, self.kw = keep, kw
        self.replaced = {x for v in kw.values()
                         for x in (v.split(";") if isinstance(v, str) else list(v))}

    def __call__(self, sample):
        if not self.keep:
            return {k: getfirst(sample, v) for k, v in self.kw.items()}
        result = {k: v for k, v in sample.items() if k not in self.replaced}
        result.update({k: getfirst(sample, v) for k, v in self.kw.items()})
        return result


def rename(handler=reraise_exception, keep=True, **kw):
    """Renames fields: ``rename(image="jpg;png", label="cls")``. With ``keep=False`` only the
    renamed fields remain."""
    return _PerItem(_Rename(keep, kw), handler)


def decode(*args, handler=reraise_exception, **kw):
    """Decodes each field by its extension (see :class:`ember.data.Decoder`)."""
    from ._decode import Decoder, imagehandler

    handlers = [imagehandler(x) if isinstance(x, str) else x for x in args]
    return _DecodeStage(Decoder(handlers, **kw), handler)


class _DecodeIter(_StageIter):
    """Decodes samples in order; with several threads and JPEGs to decode, it reads a few
    samples ahead and decodes their JPEGs together across the threads (Note [Decoding ahead]).
    The samples read ahead are kept by source position, as shuffle's buffer, so the state stays
    exact."""

    def __init__(self, upstream, decoder, handler, context, ahead):
        self.upstream, self.decoder, self.handler = upstream, decoder, handler
        self.context, self.ahead = context, ahead
        self.pending = []  # [(sample, source position, fields decoded already)], reversed
        self.failure = None  # what the upstream raised while reading ahead, raised in turn
        self.last_position = None

    def _read_ahead(self):
        samples, positions = [], []
        for _ in builtins.range(self.ahead):
            try:
                samples.append(next(self.upstream))
            except StopIteration:
                break
            except Exception as exn:  # after the samples read before it
                self.failure = exn
                break
            positions.append(position(self.upstream))
        ready = self.decoder.decode_jpegs_together(samples) if len(samples) > 1 else \
            [None] * len(samples)
        self.pending = list(zip(samples, positions, ready))[::-1]

    def _refill(self):
        if self.failure is not None:
            return  # raise it now
        if self.ahead > 1:
            self._read_ahead()
            return
        try:
            sample = next(self.upstream)
        except StopIteration:
            return
        self.pending = [(sample, position(self.upstream), None)]

    def __next__(self):
        while True:
            if not self.pending:
                self._refill()
                if not self.pending:
                    if self.failure is not None:
                        failure, self.failure = self.failure, None
                        raise failure
                    raise StopIteration
            sample, where, ready = self.pending.pop()
            try:
                result = self.decoder.decode(sample, ready)
            except Exception as exn:
                if self.handler(exn):
                    continue
                raise StopIteration from None
            self.last_position = where
            return result

    @property
    def state_capturable(self):
        return not self.pending or (position_tracked(self.upstream) and
                                    all(p is not None for _, p, _ in self.pending))

    def state_dict(self):
        return {"positions": [list(p) for _, p, _ in reversed(self.pending)]}

    def load_state_dict(self, state):
        positions = [tuple(p) for p in state.get("positions", [])]
        samples = self.context.refetch(self.context.index, positions) if positions else []
        ready = self.decoder.decode_jpegs_together(samples) if len(samples) > 1 else \
            [None] * len(samples)
        self.pending = list(zip(samples, positions, ready))[::-1]


class _DecodeStage(Stage):
    """The decode stage.

    Note [Decoding ahead]: decoding a JPEG takes most of a sample's time, and one sample at a
    time leaves all but one core idle when the pipeline runs in the main process. So the decode
    stage takes ``4 x threads`` samples at once and decodes their JPEG fields in one C++ call
    spread over Ember's threads (``ember.set_num_threads``), then finishes each sample, in
    order, as before: what comes out, and the order of errors and handler calls, are the same.
    DataLoader workers run one thread each, so there it decodes one sample at a time."""

    def __init__(self, decoder, handler=reraise_exception):
        self.decoder, self.handler = decoder, handler

    def make_iter(self, upstream, context=None):
        import ember

        threads = ember.get_num_threads()
        ahead = 4 * threads if threads > 1 and self.decoder.decodes_jpegs() else 1
        return _DecodeIter(upstream, self.decoder, self.handler, context, ahead)


# -- slice -------------------------------------------------------------------------------------
class _SliceIter(_StageIter):

    def __init__(self, upstream, start, stop, step):
        self.upstream, self.start, self.stop, self.step = upstream, start, stop, step
        self.seen = 0

    def __next__(self):
        while True:
            if self.stop is not None and self.seen >= self.stop:
                raise StopIteration
            item = next(self.upstream)
            i = self.seen
            self.seen += 1
            if i >= self.start and (i - self.start) % self.step == 0:
                return item

    def state_dict(self):
        return {"seen": self.seen}

    def load_state_dict(self, state):
        self.seen = int(state["seen"])


class slice(Stage):  # noqa: A001 - WebDataset's name
    """``itertools.islice`` of the stream: ``slice(stop)`` or ``slice(start, stop[, step])``."""

    def __init__(self, *args):
        s = builtins.slice(*args)
        self.start, self.stop, self.step = s.start or 0, s.stop, s.step or 1

    def make_iter(self, upstream, context=None):
        return _SliceIter(upstream, self.start, self.stop, self.step)


# -- shuffle -----------------------------------------------------------------------------------
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3}


def parse_bytes(text: str) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size in bytes: {text!r} (use e.g. '256MiB' or '1GB')")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def item_bytes(item) -> int:
    """Roughly the memory an item holds: bytes, arrays and tensors, through dicts and tuples."""
    if isinstance(item, (bytes, bytearray, str)):
        return len(item)
    if isinstance(item, np.ndarray):
        return item.nbytes
    if isinstance(item, dict):
        return sum(item_bytes(v) for v in item.values())
    if isinstance(item, (list, tuple)):
        return sum(item_bytes(v) for v in item)
    nbytes = getattr(item, "nbytes", None)
    return int(nbytes) if isinstance(nbytes, int) else 64


class _ShuffleIter(_StageIter):
    preserves_position = False  # the item emitted is not the last one pulled

    def __init__(self, upstream, stage, context):
        self.upstream, self.stage, self.context = upstream, stage, context
        self.rng = _stage_rng(context, stage.seed, 0x5F) if stage.rng is None else None
        self.buffer, self.positions, self.sizes = [], [], []
        self.nbytes = 0
        self.exhausted = False

    def _full(self):
        if self.stage.max_bytes is not None:
            return self.nbytes >= self.stage.max_bytes
        return len(self.buffer) >= self.stage.bufsize

    def _pull(self):
        try:
            item = next(self.upstream)
        except StopIteration:
            self.exhausted = True
            return
        size = item_bytes(item) if self.stage.max_bytes is not None else 0
        self.buffer.append(item)
        self.positions.append(position(self.upstream))
        self.sizes.append(size)
        self.nbytes += size

    def __next__(self):
        if not self.exhausted:
            self._pull()
            if not self._full():
                self._pull()  # grows two for one until full, as WebDataset's
            while not self.exhausted and len(self.buffer) < self.stage.initial \
                    and not self._full():
                self._pull()
        if not self.buffer:
            raise StopIteration
        n = len(self.buffer)
        k = int(self.rng.integers(n)) if self.rng is not None else self.stage.rng.randint(0, n - 1)
        for seq in (self.buffer, self.positions, self.sizes):
            seq[k], seq[-1] = seq[-1], seq[k]
        self.positions.pop()
        self.nbytes -= self.sizes.pop()
        return self.buffer.pop()

    @property
    def state_capturable(self):
        return self.rng is not None and position_tracked(self.upstream) and \
            all(p is not None for p in self.positions)

    def state_dict(self):
        return {"rng": self.rng.bit_generator.state, "positions": [list(p) for p in self.positions],
                "exhausted": self.exhausted}

    def load_state_dict(self, state):
        self.rng.bit_generator.state = state["rng"]
        positions = [tuple(p) for p in state["positions"]]
        self.buffer = self.context.refetch(self.context.index, positions) if positions else []
        self.positions = positions
        self.sizes = [item_bytes(x) if self.stage.max_bytes is not None else 0
                      for x in self.buffer]
        self.nbytes = sum(self.sizes)
        self.exhausted = bool(state["exhausted"])


class shuffle(Stage):  # noqa: A001 - WebDataset's name
    """Shuffles through a buffer of ``bufsize`` items, or of that many bytes when given as a
    string (``"256MiB"``); yields once ``initial`` items are in. Seeded from the dataset's seed,
    the epoch and the reader unless ``seed=`` or ``rng=`` (a ``random.Random``) is given."""

    def __init__(self, bufsize=1000, initial=100, rng=None, seed=None, handler=None):
        self.max_bytes = parse_bytes(bufsize) if isinstance(bufsize, str) else None
        self.bufsize = int(bufsize) if self.max_bytes is None else sys.maxsize
        self.initial = min(int(initial), self.bufsize)
        self.rng, self.seed = rng, seed

    def make_iter(self, upstream, context=None):
        return _ShuffleIter(upstream, self, context)


# -- batching ----------------------------------------------------------------------------------
def _combine(values, combine_tensors=True, combine_scalars=True):
    import ember

    first = values[0]
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return np.array(list(values)) if combine_scalars else list(values)
    if isinstance(first, ember.Tensor):
        if combine_tensors:
            shapes = {tuple(x.shape) for x in values}
            if len(shapes) != 1:
                raise ValueError(f"batched: all shapes must be equal to stack tensors, got "
                                 f"{shapes}")
            return ember.stack(list(values))
        return list(values)
    if isinstance(first, np.ndarray):
        if combine_tensors:
            shapes = {x.shape for x in values}
            if len(shapes) != 1:
                raise ValueError(f"batched: all shapes must be equal to stack arrays, got "
                                 f"{shapes}")
            return np.array(list(values))
        return list(values)
    return list(values)


def default_collation_fn(samples, combine_tensors=True, combine_scalars=True):
    """WebDataset's collation: per field, numbers become a NumPy array, tensors are stacked,
    arrays are stacked, anything else becomes a list. Tuples stay tuples, dicts dicts."""
    rows = [s if isinstance(s, dict) else dict(enumerate(s)) for s in samples]
    keys = list(rows[0].keys())
    for row in rows[1:]:
        if set(row.keys()) != set(keys):
            raise ValueError("batched: samples have different fields")
    result = {k: _combine([row[k] for row in rows], combine_tensors, combine_scalars)
              for k in keys}
    if isinstance(samples[0], (list, tuple)):
        return tuple(result[i] for i in range(len(keys)))
    return result


class _BatchedIter(_StageIter):
    preserves_position = False

    def __init__(self, upstream, stage):
        self.upstream, self.stage = upstream, stage
        self.pending = []

    def __next__(self):
        for item in self.upstream:
            self.pending.append(item)
            if len(self.pending) >= self.stage.batchsize:
                break
        if not self.pending or (len(self.pending) < self.stage.batchsize
                                and not self.stage.partial):
            self.pending = []
            raise StopIteration
        batch, self.pending = self.pending, []
        return self.stage.collation_fn(batch) if self.stage.collation_fn is not None else batch

    @property
    def state_capturable(self):
        return not self.pending



class batched(Stage):  # noqa: A001 - WebDataset's name
    """Groups ``batchsize`` samples and collates them (``collation_fn=None`` gives lists);
    ``partial=False`` drops a short last batch."""

    def __init__(self, batchsize, collation_fn=default_collation_fn, partial=True):
        if int(batchsize) < 1:
            raise ValueError(f"batched: batchsize must be positive, got {batchsize}")
        self.batchsize, self.collation_fn, self.partial = int(batchsize), collation_fn, partial

    def make_iter(self, upstream, context=None):
        return _BatchedIter(upstream, self)


def listed(batchsize, partial=True):
    """Groups samples into lists, without collation."""
    return batched(batchsize, collation_fn=None, partial=partial)


class _UnbatchedIter(_StageIter):
    preserves_position = False

    def __init__(self, upstream, columns=True):
        self.upstream = upstream
        self.columns = columns
        self.pending = []

    def __next__(self):
        while not self.pending:
            batch = next(self.upstream)
            if not self.columns:
                self.pending = list(batch)
            elif isinstance(batch, (tuple, list)):
                n = len(batch[0]) if len(batch) else 0
                self.pending = [tuple(field[i] for field in batch) for i in range(n)]
            elif isinstance(batch, dict):
                n = len(next(iter(batch.values())))
                self.pending = [{k: v[i] for k, v in batch.items()} for i in range(n)]
            else:
                self.pending = list(batch)
            self.pending.reverse()
        return self.pending.pop()

    @property
    def state_capturable(self):
        return not self.pending



class unbatched(Stage):  # noqa: A001 - WebDataset's name
    """Splits batches back into samples: a tuple or list is a batch of columns (what collation
    makes), a dict one of named columns."""

    def make_iter(self, upstream, context=None):
        return _UnbatchedIter(upstream)


class unlisted(Stage):  # noqa: A001 - WebDataset's name
    """Splits lists of samples (``listed``) back into samples."""

    def make_iter(self, upstream, context=None):
        return _UnbatchedIter(upstream, columns=False)


# -- rsample, extract_keys, rename_keys --------------------------------------------------------
class _RsampleIter(_StageIter):

    def __init__(self, upstream, p, context):
        self.upstream, self.p = upstream, p
        self.rng = _stage_rng(context, None, 0x52)

    def __next__(self):
        while True:
            item = next(self.upstream)
            if self.rng.random() < self.p:
                return item

    def state_dict(self):
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state):
        self.rng.bit_generator.state = state["rng"]


class rsample(Stage):  # noqa: A001 - WebDataset's name
    """Keeps each sample with probability ``p`` (seeded like shuffle, so resumable)."""

    def __init__(self, p=0.5):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"rsample: p must be in [0, 1], got {p}")
        self.p = p

    def make_iter(self, upstream, context=None):
        return _RsampleIter(upstream, self.p, context)


class _ExtractKeys:
    def __init__(self, patterns, duplicate_is_error, ignore_missing):
        self.patterns = patterns
        self.duplicate_is_error, self.ignore_missing = duplicate_is_error, ignore_missing

    def __call__(self, sample):
        from fnmatch import fnmatch

        result = []
        for pattern in self.patterns:
            alternatives = pattern.split(";") if isinstance(pattern, str) else pattern
            matches = [k for k in sample if any(fnmatch("." + k, p) or fnmatch(k, p)
                                                for p in alternatives)]
            if not matches:
                if self.ignore_missing:
                    continue
                raise ValueError(f"Cannot find {alternatives} in sample keys {list(sample)}.")
            if len(matches) > 1 and self.duplicate_is_error:
                raise ValueError(f"Multiple sample keys {list(sample)} match {alternatives}.")
            result.append(sample[matches[0]])
        return tuple(result)


def extract_keys(*patterns, duplicate_is_error=True, ignore_missing=False):
    """A tuple of the fields matching each glob pattern (``"*.jpg;*.png"``)."""
    return _PerItem(_ExtractKeys(patterns, duplicate_is_error, ignore_missing))


class _RenameKeys:
    def __init__(self, renamings, keep_unselected, must_match, duplicate_is_error):
        self.renamings = renamings
        self.keep_unselected, self.must_match = keep_unselected, must_match
        self.duplicate_is_error = duplicate_is_error

    def __call__(self, sample):
        from fnmatch import fnmatch

        out, matched = {}, {p: False for p, _ in self.renamings}
        for path, value in sample.items():
            name = re.sub(r".*/", "", path)
            new = None
            for pattern, output in reversed(self.renamings):
                if fnmatch(name.lower(), pattern):
                    matched[pattern] = True
                    new = output
                    break
            if new is None:
                if self.keep_unselected:
                    out[path] = value
                continue
            if new in out:
                if self.duplicate_is_error:
                    raise ValueError(f"Duplicate value in sample {list(sample)} after rename.")
                continue
            out[new] = value
        if self.must_match and not all(matched.values()):
            raise ValueError(f"Not all patterns ({matched}) matched sample keys ({list(sample)}).")
        return out


def rename_keys(*args, keep_unselected=False, must_match=True, duplicate_is_error=True, **kw):
    """Renames fields by glob patterns on their names: ``rename_keys(image="*.jpg")`` or
    ``rename_keys(("image", "*.jpg"))``; later patterns win."""
    renamings = [(pattern, output) for output, pattern in args]
    renamings += [(pattern, output) for output, pattern in kw.items()]
    return _PerItem(_RenameKeys(renamings, keep_unselected, must_match, duplicate_is_error))


def non_empty(src):
    """Passes the stream through, and raises ValueError if it was empty."""
    count = 0
    for item in src:
        count += 1
        yield item
    if count == 0:
        raise ValueError("pipeline stage received no samples")


def pipelinefilter(f):
    """WebDataset's decorator: ``pipelinefilter(f)(*args, **kw)`` is the stage ``lambda src:
    f(src, *args, **kw)``."""

    def stage(*args, **kw):
        return _Curried(f, args, kw)

    stage.__name__ = getattr(f, "__name__", "stage")
    stage.__doc__ = getattr(f, "__doc__", None)
    return stage


class _Curried:
    def __init__(self, f, args, kw):
        self.f, self.args, self.kw = f, args, kw

    def __call__(self, src, context=None):
        return self.f(src, *self.args, **self.kw)
