"""The source stage of a WebDataset: the samples of this reader's share of the shards, read by
the C++ tar reader in small batches with the GIL released. Its position, (epoch, piece, sample in
piece), is the resumable state of the whole stream (see _pipeline.py, Note [Pipeline state])."""

from __future__ import annotations

import os
import sys
from collections import deque

from .. import _C
from ._handlers import reraise_exception
from ._index import resolve_index, sample_count
from ._plan import Piece, plan, rng_for, shard_order

__all__ = ["ShardError", "split_by_node", "split_by_worker", "single_node_only", "rank_and_world",
           "worker_and_workers"]

ShardError = _C._data.ShardError
ShardError.__module__ = "ember.data"
ShardError.__doc__ = ("A shard that cannot be opened or read, or is not a valid tar archive: an "
                      "OSError and a tarfile.ReadError. ``url`` and ``offset`` (the byte offset "
                      "of the bad header or entry) say where.")

_READ_BATCH = 64


def rank_and_world(rank=None, world_size=None, group=None):
    """This process's (rank, world size): the arguments when given, else ember.distributed's
    when it is initialised, else the RANK and WORLD_SIZE environment variables, else (0, 1)."""
    r = w = None
    if rank is None or world_size is None:
        try:
            from .. import distributed as dist

            if dist.is_available() and dist.is_initialized():
                r, w = dist.get_rank(group), dist.get_world_size(group)
        except (ImportError, AttributeError, RuntimeError):
            pass
        if r is None:
            r, w = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    if rank is not None:
        r = int(rank)
    if world_size is not None:
        w = int(world_size)
    if w < 1 or not 0 <= r < w:
        raise ValueError(f"rank {r} is not in [0, world_size={w})")
    return r, w


def worker_and_workers():
    """(logical worker id, number of workers) of this DataLoader worker, (0, 1) outside one.
    WebLoader rotates the ids when it resumes, so the worker that delivers first is the one whose
    turn was next."""
    from ..utils.data import get_worker_info

    info = get_worker_info()
    if info is None and "torch" in sys.modules:  # iterated by torch's DataLoader
        info = sys.modules["torch"].utils.data.get_worker_info()
    if info is None:
        return 0, 1
    rotation = getattr(info.dataset, "_ember_worker_rotation", 0)
    return (info.id + rotation) % info.num_workers, info.num_workers


# WebDataset-style splitters: generator filters over {"url": ...} dicts, usable in a
# DataPipeline. Passed to WebDataset(nodesplitter=, workersplitter=), they select its exact
# sample-level split instead of a shard-level one.
def split_by_node(src, group=None):
    """Keeps every world_size-th shard, starting at this rank's."""
    rank, world = rank_and_world(group=group)
    for i, item in enumerate(src):
        if i % world == rank:
            yield item


def split_by_worker(src):
    """Keeps every num_workers-th shard, starting at this worker's."""
    worker, workers = worker_and_workers()
    for i, item in enumerate(src):
        if i % workers == worker:
            yield item


def single_node_only(src, group=None):
    """Passes everything, and refuses to run with a world size above 1 (every rank would read
    every sample)."""
    _, world = rank_and_world(group=group)
    if world > 1:
        raise ValueError("you need to add a splitter to your dataset when training on several "
                         "nodes: WebDataset(..., nodesplitter=ember.data.split_by_node)")
    yield from src


class ShardSource:
    """What a WebDataset reads: the shard URLs and how they are split, shuffled and repeated."""

    def __init__(self, urls, *, handler=reraise_exception, shardshuffle=False, seed=0,
                 resampled=False, repeat=1, split_nodes=True, split_workers=True,
                 nodesplitter=None, workersplitter=None, equalize=False, index=None, rank=None,
                 world_size=None, select_files=None, rename_files=None, empty_check=True):
        self.urls = list(urls)
        self.handler = handler
        self.shuffle = bool(shardshuffle)
        self.seed = int(seed)
        self.resampled = resampled
        self.repeat = repeat  # number of epochs one iteration runs through
        self.split_nodes = split_nodes
        self.split_workers = split_workers
        self.nodesplitter = nodesplitter
        self.workersplitter = workersplitter
        self.equalize = equalize
        self.index_spec = index
        self.rank, self.world_size = rank, world_size
        self.select_files = select_files
        self.rename_files = rename_files
        self.empty_check = empty_check
        self._index = None
        self._index_resolved = False
        self._counts = None

    def __getstate__(self):  # indexes and counts are re-read in each worker
        state = dict(self.__dict__)
        state.update(_index=None, _index_resolved=False, _counts=None)
        return state

    @property
    def index(self):
        if not self._index_resolved:
            self._index = resolve_index(self.urls, self.index_spec)
            self._index_resolved = True
        return self._index

    def counts(self):
        """Every shard's sample count when known without reading streams, else None. Local shards
        are scanned only when ``equalize`` asks for counts (an index makes it free)."""
        if self._counts is None:
            index = self.index
            if index is not None and all(u in index for u in self.urls):
                self._counts = [len(index[u]) for u in self.urls]
            elif self.equalize:
                counts = [sample_count(u, index) for u in self.urls]
                self._counts = False if any(c is None for c in counts) else counts
            else:
                self._counts = False
        return self._counts or None

    def reader_identity(self):
        rank, world = (rank_and_world(self.rank, self.world_size) if self.split_nodes else (0, 1))
        worker, workers = worker_and_workers() if self.split_workers else (0, 1)
        return rank * workers + worker, world * workers

    def pieces(self, epoch, reader, readers) -> list[Piece]:
        if self.nodesplitter is not None or self.workersplitter is not None:
            # A user's WebDataset-style splitters choose whole shards.
            order = shard_order(len(self.urls), seed=self.seed, epoch=epoch, shuffle=self.shuffle)
            items = iter([{"url": self.urls[i], "__index__": i} for i in order])
            if self.nodesplitter is not None:
                items = self.nodesplitter(items)
            if self.workersplitter is not None:
                items = self.workersplitter(items)
            return [Piece(item["__index__"], 0, None) for item in items]
        return plan(len(self.urls), self.counts(), reader=reader, readers=readers, epoch=epoch,
                    seed=self.seed, shuffle=self.shuffle, equalize=self.equalize)

    def iterate(self, epoch):
        reader, readers = self.reader_identity()
        return SourceIter(self, epoch, reader, readers)


class SourceIter:
    """Samples of this reader, piece by piece; with ``repeat`` the epochs follow each other."""

    preserves_position = True
    exact_state = True

    def __init__(self, source: ShardSource, epoch: int, reader: int, readers: int):
        self.source = source
        self.reader_id, self.readers = reader, readers
        self.first_epoch = epoch
        self.last_position = None
        self._reader = None
        self._start_epoch(epoch)

    # -- epochs and pieces -----------------------------------------------------------------
    def _start_epoch(self, epoch):
        self._close_reader()
        self.epoch = epoch
        self.piece_index = 0
        self.taken = 0
        self.emitted_in_epoch = 0
        self._buffer = deque()
        self._exhausted = False
        self._read_total = 0
        if self.source.resampled:
            self._resample_rng = rng_for(self.source.seed, epoch, self.reader_id + 1, 0x5E5A)
            self._pieces = []
        else:
            self._pieces = self.source.pieces(epoch, self.reader_id, self.readers)

    def _piece(self, i):
        if self.source.resampled:
            while len(self._pieces) <= i:
                shard = int(self._resample_rng.integers(len(self.source.urls)))
                self._pieces.append(Piece(shard, 0, None))
        return self._pieces[i] if i < len(self._pieces) else None

    def _close_reader(self):
        if self._reader is not None:
            reader, self._reader = self._reader, None
            try:
                reader.close()
            except ShardError as exn:
                if not self.source.handler(exn):
                    raise StopIteration from None

    def _next_piece(self):
        self._close_reader()
        self._buffer.clear()
        self.piece_index += 1
        self.taken = 0

    # -- reading ---------------------------------------------------------------------------
    def _open(self, piece: Piece):
        url = self.source.urls[piece.shard]
        reader = _C._data.ShardReader(url)
        first = piece.start + self.taken * piece.step
        index = self.source.index
        entry = index.get(url) if index is not None else None
        self._reader = reader
        self._read_total = self.taken
        self._exhausted = False
        if first > 0:
            if entry is not None and reader.seekable and first < len(entry):
                reader.seek(entry.offsets[first])
            elif reader.skip(first) < first:
                self._exhausted = True

    def _fill(self) -> bool:
        """Reads more of the current piece into the buffer; False when the piece is done."""
        piece = self._piece(self.piece_index)
        if self._reader is None:
            self._open(piece)
        if self._exhausted:
            return False
        counts = self.source.counts()
        limit = piece.count(counts[piece.shard] if counts else None)
        if limit is not None and self._read_total >= limit:
            return False
        if piece.step == 1:
            want = _READ_BATCH if limit is None else min(_READ_BATCH, limit - self._read_total)
            samples = self._reader.read(want)
        else:
            samples = self._reader.read(1)
            if samples:
                self._reader.skip(piece.step - 1)
        if not samples:
            return False
        self._read_total += len(samples)
        if self.source.select_files is not None or self.source.rename_files is not None:
            from ._functional import select_and_rename

            samples = [select_and_rename(s, self.source.select_files, self.source.rename_files)
                       for s in samples]
        self._buffer.extend(samples)
        return True

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            if self._buffer:
                sample = self._buffer.popleft()
                self.last_position = (self.epoch, self.piece_index, self.taken)
                self.taken += 1
                self.emitted_in_epoch += 1
                return sample
            piece = self._piece(self.piece_index)
            if piece is None:
                if self.emitted_in_epoch == 0 and self.readers == 1 and self.source.empty_check:
                    raise ValueError("No samples found in the dataset (empty shards?); pass "
                                     "empty_check=False to WebDataset to allow it")
                self._close_reader()
                if self.epoch + 1 - self.first_epoch >= self.source.repeat \
                        or self.emitted_in_epoch == 0:
                    raise StopIteration
                self._start_epoch(self.epoch + 1)
                continue
            try:
                if not self._fill():
                    self._next_piece()
            except ShardError as exn:
                if self.source.handler(exn):
                    self._next_piece()
                else:
                    self._close_reader()
                    raise StopIteration from None

    def close(self):
        self._close_reader()

    # -- state -----------------------------------------------------------------------------
    def state_dict(self):
        return {"epoch": self.epoch, "piece": self.piece_index, "taken": self.taken,
                "emitted_in_epoch": self.emitted_in_epoch}

    def load_state_dict(self, state):
        self._start_epoch(int(state["epoch"]))
        self.piece_index = int(state["piece"])
        self.taken = int(state["taken"])
        # What this epoch emitted before the state was taken: an epoch resumed at its very end
        # (the rest buffered downstream) is not empty, and is followed by the next one.
        self.emitted_in_epoch = int(state.get("emitted_in_epoch", self.taken))

    def fetch(self, positions):
        """The raw samples at the given positions (epoch, piece, k), in the given order: what a
        resumed shuffle buffer held. Each piece is read once, forward."""
        wanted = sorted(set(positions))
        found = {}
        probe = SourceIter(self.source, wanted[0][0] if wanted else self.epoch, self.reader_id,
                           self.readers)
        for epoch, piece_index, k in wanted:
            if probe.epoch != epoch:
                probe._start_epoch(epoch)
            if probe.piece_index != piece_index or probe.taken > k:
                probe._close_reader()
                probe._buffer.clear()
                probe.piece_index, probe.taken = piece_index, k
            while probe.taken < k:
                if probe._buffer:
                    probe._buffer.popleft()
                    probe.taken += 1
                elif probe._reader is None:
                    probe.taken = k  # opening seeks there
                else:
                    n = k - probe.taken
                    probe._reader.skip(n * probe._piece(piece_index).step)
                    probe._read_total += n
                    probe.taken = k
            if not probe._buffer and not probe._fill():
                raise ValueError(f"cannot resume: sample {k} of piece {piece_index} of epoch "
                                 f"{epoch} is gone (did the shards change?)")
            found[(epoch, piece_index, k)] = probe._buffer.popleft()
            probe.taken += 1
        probe.close()
        return [found[p] for p in positions]
