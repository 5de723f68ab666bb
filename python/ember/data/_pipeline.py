"""DataPipeline, WebDataset and WebLoader: WebDataset's pipeline API over Ember's exact-split
source, with resumable state.

Note [Pipeline state]: ``state_dict()`` describes where the live iteration is, so that
``load_state_dict()`` on a fresh pipeline (another process, after a crash) continues with the very
next sample. It has two forms:

- ``exact``: each stage's own state. The source's is (epoch, piece, sample in piece); a shuffle
  keeps the source positions of the items in its buffer and its generator's state, and refetches
  those samples on resume. Taken when every stage is Ember's and sits at a boundary (no batch
  half-filled).
- ``replay``: the epoch and how many items were emitted. Resuming rebuilds the epoch and discards
  that many, which is exact for deterministic stages but costs the work again. Used when a stage
  is a user's own generator.

Either form may carry ``skip``: items to discard after restoring (WebLoader's worker snapshots
are taken every few items and the rest is skipped).
"""

from __future__ import annotations

import copy
import os
import sys

from ..utils.data import DataLoader, IterableDataset
from ..utils.data._utils.collate import default_convert
from . import _stages
from ._handlers import reraise_exception
from ._source import ShardSource, rank_and_world, single_node_only, split_by_node, split_by_worker
from ._stages import Stage, StageContext, _Curried
from ._urls import expand_urls

__all__ = ["DataPipeline", "FluidInterface", "WebDataset", "WebLoader"]


class FluidInterface:
    """The chainable methods; each returns a new pipeline with one more stage."""

    def batched(self, batchsize, collation_fn=_stages.default_collation_fn, partial=True):
        return self.compose(_stages.batched(batchsize, collation_fn=collation_fn, partial=partial))

    def unbatched(self):
        return self.compose(_stages.unbatched())

    def listed(self, batchsize, partial=True):
        return self.compose(_stages.listed(batchsize, partial=partial))

    def unlisted(self):
        return self.compose(_stages.unlisted())

    def shuffle(self, size, **kw):
        if not size:
            return self
        return self.compose(_stages.shuffle(size, **kw))

    def map(self, f, handler=reraise_exception):
        return self.compose(_stages.map(f, handler=handler))

    def decode(self, *args, pre=None, post=None, only=None, partial=False,
               handler=reraise_exception, allow_pickle=False):
        return self.compose(_stages.decode(*args, pre=pre, post=post, only=only, partial=partial,
                                           handler=handler, allow_pickle=allow_pickle))

    def map_dict(self, handler=reraise_exception, **kw):
        return self.compose(_stages.map_dict(handler=handler, **kw))

    def select(self, predicate, **kw):
        return self.compose(_stages.select(predicate))

    def to_tuple(self, *args, **kw):
        return self.compose(_stages.to_tuple(*args, **kw))

    def map_tuple(self, *args, handler=reraise_exception):
        return self.compose(_stages.map_tuple(*args, handler=handler))

    def slice(self, *args):
        return self.compose(_stages.slice(*args))

    def rename(self, **kw):
        return self.compose(_stages.rename(**kw))

    def rsample(self, p=0.5):
        return self.compose(_stages.rsample(p))

    def extract_keys(self, *args, **kw):
        return self.compose(_stages.extract_keys(*args, **kw))

    def rename_keys(self, *args, **kw):
        return self.compose(_stages.rename_keys(*args, **kw))


class _Run:
    """One live iteration: the chain of stage iterators and what it has emitted."""

    def __init__(self, pipeline, start_epoch):
        self.pipeline = pipeline
        self.start_epoch = start_epoch
        self.emitted = 0
        self._emitted_at_start = 0
        self.chain = []
        pipeline._build_chain(start_epoch, self)

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            try:
                item = next(self.chain[-1])
            except StopIteration:
                # A foreign source under repeat()/with_epoch(): the next epoch, rebuilt.
                if not self._next_repetition():
                    raise
                continue
            self.emitted += 1
            return item

    def _next_repetition(self) -> bool:
        pipeline = self.pipeline
        if isinstance(pipeline.pipeline[0], ShardSource):
            return False  # the source repeats epochs itself
        self.repetition = getattr(self, "repetition", 0) + 1
        if self.repetition >= pipeline.repetitions or self.emitted == self._emitted_at_start:
            return False  # done, or an empty epoch (repeating it would loop forever)
        self._emitted_at_start = self.emitted
        self.chain = []
        pipeline._build_chain(self.start_epoch + self.repetition, self)
        return True

    def exact(self) -> bool:
        for it in self.chain:
            if not getattr(it, "exact_state", False):
                return False
            if not getattr(it, "state_capturable", True):
                return False
        return True

    def refetch(self, stage_index, positions):
        """The items stage ``stage_index`` received for these source positions."""
        raws = self.chain[0].fetch(positions)
        it = iter(raws)
        for i in range(1, stage_index):
            it = self.pipeline._apply(self.pipeline.pipeline[i], it, self.start_epoch, i, self)
        items = list(it)
        if len(items) != len(raws):
            raise ValueError("cannot resume exactly: a stage before the shuffle dropped a sample "
                             "it kept before (does it draw random numbers?)")
        return items

    def close(self):
        close = getattr(self.chain[0], "close", None) if self.chain else None
        if close is not None:
            close()


class DataPipeline(IterableDataset, FluidInterface):
    """A source followed by stages: ``DataPipeline(source, stage, stage, ...)``. The source is
    an iterable (or a callable returning one); a stage is one of Ember's (``ember.data.shuffle``,
    ``batched``, ...) or any function from an iterator to an iterator, as in WebDataset. Lists
    among the arguments are flattened."""

    def __init__(self, *args):
        super().__init__()
        from . import _register_with_torch

        _register_with_torch()
        self.pipeline = []
        self.nsamples = -1
        self.repetitions = 1
        self.length = None
        self._next_epoch = 0
        self._pending = None
        self._live = None
        self._stream = None
        self._in_epoch = 0
        for arg in args:
            if isinstance(arg, list):
                for a in arg:
                    self.append(a)
            else:
                self.append(arg)

    # -- building --------------------------------------------------------------------------
    def append(self, f):
        self.pipeline.append(f)

    def compose(self, *args):
        result = copy.copy(self)
        result.pipeline = list(self.pipeline)
        result._live = result._stream = None
        for arg in args:
            result.append(arg)
        return result

    def _seed(self):
        source = self.pipeline[0] if self.pipeline else None
        return source.seed if isinstance(source, ShardSource) else 0

    def _apply(self, stage, it, epoch, index, run):
        if isinstance(stage, (Stage, _Curried)):
            reader = getattr(run.chain[0], "reader_id", 0) if run.chain else 0
            return stage(it, StageContext(self._seed(), epoch, reader, index, run.refetch))
        return iter(stage(it))

    def _build_chain(self, epoch, run):
        if not self.pipeline:
            raise ValueError("DataPipeline has no source")
        source = self.pipeline[0]
        if isinstance(source, ShardSource):
            source.repeat = self.repetitions
            it = source.iterate(epoch)
        else:
            set_epoch = getattr(source, "set_epoch", None)
            if set_epoch is not None:
                set_epoch(epoch)
            it = iter(source() if callable(source) and not hasattr(source, "__iter__") else source)
        run.chain.append(it)
        for i, stage in enumerate(self.pipeline[1:], 1):
            it = self._apply(stage, it, epoch, i, run)
            run.chain.append(it)

    # -- epochs ----------------------------------------------------------------------------
    def set_epoch(self, epoch):
        """The epoch of the next iteration (it seeds shard order and shuffles). Without calls,
        each iteration in a process uses the next epoch number, starting at 0."""
        self._next_epoch = int(epoch)

    def with_length(self, n, silent=False):
        self.length = int(n)
        return self

    def with_epoch(self, nsamples=-1, nbatches=-1):
        """Each iteration yields the next ``nsamples`` items of an endless stream of passes over
        the data (which continues where the previous epoch stopped)."""
        self.repetitions = sys.maxsize
        self.nsamples = max(nsamples, nbatches)
        return self

    def repeat(self, nepochs=-1, nbatches=-1):
        self.repetitions = nepochs if nepochs > 0 else sys.maxsize
        self.nsamples = nbatches
        return self

    def __len__(self):
        if self.length is None:
            raise TypeError(f"{type(self).__name__} has no length; use .with_length(n)")
        return self.length

    # -- iteration -------------------------------------------------------------------------
    def _new_run(self):
        pending, self._pending = self._pending, None
        if pending is None or pending.get("fresh"):
            if pending is not None:
                self._next_epoch = int(pending["epoch"])
            epoch = self._next_epoch
            self._next_epoch += 1
            return _Run(self, epoch), 0
        run = _Run(self, int(pending["start_epoch"]))
        self._next_epoch = run.start_epoch + 1
        if pending["mode"] == "exact":
            for it, state in zip(run.chain, pending["stages"]):
                it.load_state_dict(state)
            run.emitted = int(pending["emitted"])
            skip = int(pending.get("skip", 0))
        else:
            skip = int(pending["emitted"]) + int(pending.get("skip", 0))
        for _ in range(skip):
            try:
                next(run)
            except StopIteration:
                break
        in_epoch = int(pending.get("in_epoch", 0))
        if pending["mode"] == "exact":
            in_epoch += skip
        return run, in_epoch

    def iterator(self):
        if self.nsamples > 0:
            # with_epoch: a stream that persists across iterations.
            if self._stream is None or self._pending is not None:
                self._stream, self._in_epoch = self._new_run()
            run = self._stream
            while self._in_epoch < self.nsamples:
                try:
                    item = next(run)
                except StopIteration:
                    self._stream = None
                    break
                self._in_epoch += 1
                yield item
            self._in_epoch = 0
            return
        run, _ = self._new_run()
        self._live = run
        try:
            yield from run
        finally:
            run.close()

    def __iter__(self):
        return self.iterator()

    # -- state -----------------------------------------------------------------------------
    def state_dict(self):
        """Where the live iteration is (see Note [Pipeline state]); before any iteration, the
        start of the next epoch."""
        run = self._stream if self.nsamples > 0 else self._live
        if run is None:
            return {"version": 1, "fresh": True, "epoch": self._next_epoch}
        state = {"version": 1, "fresh": False, "start_epoch": run.start_epoch,
                 "emitted": run.emitted}
        if self.nsamples > 0:
            state["in_epoch"] = self._in_epoch
        if run.exact():
            state["mode"] = "exact"
            state["stages"] = [it.state_dict() for it in run.chain]
        else:
            state["mode"] = "replay"
        return state

    def load_state_dict(self, state):
        """Makes the next iteration continue from ``state`` (from ``state_dict()``)."""
        if not isinstance(state, dict) or state.get("version") != 1:
            raise ValueError("not a DataPipeline state (expected the dict state_dict() returns)")
        if "stages" in state and len(state["stages"]) != len(self.pipeline):
            raise ValueError(f"the state has {len(state['stages'])} stages, this pipeline "
                             f"{len(self.pipeline)}: it was saved from another pipeline")
        self._pending = dict(state)
        self._stream = None
        self._live = None

    def close(self):
        for run in (self._live, self._stream):
            if run is not None:
                run.close()
        self._live = self._stream = None

    def stage(self, i):
        """The i-th element of the pipeline (0 is the source)."""
        return self.pipeline[i]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_DEFAULT = object()


class WebDataset(DataPipeline):
    """Samples of WebDataset tar shards, as ``webdataset.WebDataset`` with the same arguments.

    By default every sample is read exactly once per epoch across all ranks and DataLoader
    workers (see ``ember.data._plan``); rank and world size come from ``rank=``/``world_size=``,
    an initialised ``ember.distributed``, or the RANK/WORLD_SIZE environment variables.
    ``equalize=True`` gives every reader the same number of samples (so every rank the same
    number of batches). ``nodesplitter=None`` / ``workersplitter=None`` turn a split off; other
    callables choose whole shards, as in WebDataset. ``shardshuffle`` (True or a number) shuffles
    the shard order per epoch; ``seed`` (default ``$WDS_SEED`` or 0, the same in every process)
    seeds it and every shuffle stage. ``index`` is an index file, a dict from ``index_shards``,
    True to require sidecars, or None to use sidecars when every shard has one.
    """

    def __init__(self, urls, handler=reraise_exception, mode=None, resampled=False, repeat=False,
                 shardshuffle=None, cache_size=-1, cache_dir=None, url_to_name=None,
                 detshuffle=False, nodesplitter=_DEFAULT, workersplitter=_DEFAULT,
                 select_files=None, rename_files=None, empty_check=True, verbose=False, seed=None,
                 *, rank=None, world_size=None, equalize=False, index=None):
        super().__init__()
        if cache_dir is not None or cache_size not in (-1, 0):
            raise ValueError("WebDataset: Ember streams shards and has no shard cache; drop "
                             "cache_dir/cache_size (or copy the shards locally)")
        if mode not in (None, "resampled"):
            raise ValueError(f"WebDataset: unknown mode {mode!r}")
        if isinstance(urls, str) and urls.endswith((".yaml", ".yml")):
            raise ValueError("WebDataset: YAML dataset specs are not supported; pass the shard "
                             "URLs (a brace pattern or a list)")
        if seed is None:
            seed = int(os.environ.get("WDS_SEED", 0))
        # Ember's exact split is used for a dimension whose splitter is the default (or Ember's
        # own split function); None turns it off; any other callable splits whole shards.
        node_exact = nodesplitter is _DEFAULT or nodesplitter is split_by_node
        worker_exact = workersplitter is _DEFAULT or workersplitter is split_by_worker
        node_custom = not node_exact and nodesplitter not in (None, single_node_only)
        worker_custom = not worker_exact and workersplitter is not None
        custom = node_custom or worker_custom
        self._single_node_only = nodesplitter is single_node_only
        source = ShardSource(
            expand_urls(urls), handler=handler, shardshuffle=bool(shardshuffle), seed=seed,
            resampled=resampled or mode == "resampled",
            split_nodes=node_exact and not custom, split_workers=worker_exact and not custom,
            nodesplitter=(nodesplitter if node_custom else split_by_node if custom and node_exact
                          else None),
            workersplitter=(workersplitter if worker_custom else split_by_worker
                            if custom and worker_exact else None),
            equalize=equalize, index=index, rank=rank, world_size=world_size,
            select_files=select_files, rename_files=rename_files, empty_check=empty_check)
        self.append(source)
        if repeat:
            self.repetitions = sys.maxsize

    @property
    def urls(self):
        return self.pipeline[0].urls

    @property
    def seed(self):
        return self.pipeline[0].seed

    def iterator(self):
        if self._single_node_only:
            source = self.pipeline[0]
            if rank_and_world(source.rank, source.world_size)[1] > 1:
                raise ValueError("you need to add a splitter to your dataset when training on "
                                 "several nodes: WebDataset(..., nodesplitter="
                                 "ember.data.split_by_node)")
        return super().iterator()

    def __len__(self):
        if self.length is not None:
            return self.length
        source = self.pipeline[0]
        counts = source.counts()
        if counts is None or len(self.pipeline) > 1:
            raise TypeError("WebDataset has no length (without an index, or after stages); use "
                            ".with_length(n)")
        reader, readers = source.reader_identity()
        pieces = source.pieces(self._next_epoch, reader, readers)
        return sum(p.count(counts[p.shard]) for p in pieces)


# -- WebLoader --------------------------------------------------------------------------------
_SNAPSHOT_EVERY = 64


class _TaggedDataset(IterableDataset):
    """What WebLoader's DataLoader iterates: the dataset's items, each tagged with (logical
    worker, items emitted, a full state snapshot every _SNAPSHOT_EVERY items)."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.epoch = None
        self.worker_states = {}
        self._ember_worker_rotation = 0

    def __iter__(self):
        from ._source import worker_and_workers

        worker, _ = worker_and_workers()
        ds = self.dataset
        state = self.worker_states.pop(worker, None)
        has_state = hasattr(ds, "load_state_dict") and hasattr(ds, "state_dict")
        if state is not None and has_state:
            ds.load_state_dict(state["snapshot"])
            count = int(state["count"])
        else:
            if self.epoch is not None and hasattr(ds, "set_epoch"):
                ds.set_epoch(self.epoch)
            count = 0
        self.epoch = None
        for item in ds:
            count += 1
            snapshot = ds.state_dict() if has_state and count % _SNAPSHOT_EVERY == 1 else None
            yield item, (worker, count, snapshot)


class _TagStripper:
    """The collate_fn: converts (or collates) the items, and passes the tags through."""

    def __init__(self, collate_fn, batched):
        self.collate_fn, self.batched = collate_fn, batched

    def __call__(self, data):
        if self.batched:
            return self.collate_fn([item for item, _ in data]), data[-1][1]
        item, tag = data
        return self.collate_fn(item), tag


class WebLoader(DataPipeline):
    """A DataLoader over a (Web)Dataset whose output is again a pipeline: ``WebLoader(ds,
    batch_size=None, num_workers=4).unbatched().shuffle(1000).batched(64)``. Arguments are
    DataLoader's. ``state_dict()`` / ``load_state_dict()`` resume at the next item, also with
    worker processes: each worker's stream is restored from its last snapshot."""

    def __init__(self, dataset, *args, **kw):
        super().__init__()
        batch_size = kw.get("batch_size", args[0] if args else 1)
        collate_fn = kw.pop("collate_fn", None)
        if collate_fn is None:
            from ..utils.data import default_collate

            collate_fn = default_collate if batch_size is not None else default_convert
        self.tagged = _TaggedDataset(dataset)
        self.dataset = dataset
        self.loader = DataLoader(self.tagged, *args, collate_fn=_TagStripper(
            collate_fn, batch_size is not None), **kw)
        self.num_workers = self.loader.num_workers
        self._loader_epoch = 0
        self._epoch_now = 0
        self._worker_progress = {}
        self._last_worker = None
        self._loader_pending = None
        self.append(self._iterate_loader)

    def _iterate_loader(self):
        pending, self._loader_pending = self._loader_pending, None
        workers = max(self.num_workers, 1)
        progress_by_worker = {}
        if pending is not None:
            self._loader_epoch = int(pending["epoch"])
            self.tagged.worker_states = {int(w): s for w, s in pending["workers"].items()}
            self.tagged._ember_worker_rotation = int(pending["next_worker"])
            for w, s in pending["workers"].items():
                progress_by_worker[int(w)] = {"snapshot": s["snapshot"], "count": s["count"],
                                              "base": s["count"]}
            self._last_worker = (int(pending["next_worker"]) - 1) % workers
        else:
            self.tagged.worker_states = {}
            self.tagged._ember_worker_rotation = 0
            self._last_worker = None
        self.tagged.epoch = self._loader_epoch
        self._epoch_now = self._loader_epoch
        self._loader_epoch += 1
        self._worker_progress = progress_by_worker
        for item, (worker, count, snapshot) in self.loader:
            progress = self._worker_progress.setdefault(
                worker, {"snapshot": None, "count": 0, "base": 0})
            if snapshot is not None:
                progress["snapshot"], progress["base"] = snapshot, count
            progress["count"] = count
            self._last_worker = worker
            yield item

    def state_dict(self):
        if len(self.pipeline) > 1:
            return super().state_dict()  # stages after the loader: replay
        workers = max(self.num_workers, 1)
        out = {}
        for w, p in self._worker_progress.items():
            if p.get("snapshot") is None:
                continue
            snap = dict(p["snapshot"])
            snap["skip"] = int(snap.get("skip", 0)) + p["count"] - p["base"]
            out[w] = {"snapshot": snap, "count": p["count"]}
        return {"version": 1, "webloader": True, "epoch": self._epoch_now,
                "num_workers": self.num_workers, "workers": out,
                "next_worker": (0 if self._last_worker is None
                                else (self._last_worker + 1) % workers)}

    def load_state_dict(self, state):
        if not state.get("webloader"):
            return super().load_state_dict(state)
        if int(state["num_workers"]) != self.num_workers:
            raise ValueError(f"the state was saved with num_workers={state['num_workers']}, this "
                             f"WebLoader has {self.num_workers}; the split depends on it")
        self._loader_pending = state

    def __len__(self):
        if self.length is not None:
            return self.length
        return len(self.loader)
