"""Which samples each reader of an epoch gets: a pure function of (seed, epoch, rank, world size,
worker, number of workers) and the shard list.

Readers are the ``world_size * num_workers`` (rank, worker) pairs, numbered
``rank * num_workers + worker``. Every sample goes to exactly one reader per epoch:

- With sample counts known (an index, or ``equalize``): the epoch's shards, in their (shuffled)
  order, form one sequence of T samples, and reader c gets the contiguous positions
  ``[c*T//N, (c+1)*T//N)``. Counts differ by at most one; ``equalize`` pads the short readers
  with one repeat of their own first sample (or sample ``c % T`` when T < N), so that every
  reader, hence every rank, yields the same number of samples and batches.
- Without counts: whole shards round-robin when there are at least as many shards as readers;
  otherwise the readers of one shard take every g-th of its samples.

See docs/design/data-pipeline.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Piece", "plan", "shard_order", "rng_for"]


@dataclass(frozen=True)
class Piece:
    """Samples ``start, start + step, ...`` (below ``stop``, or to the end when None) of shard
    ``shard`` (an index into the shard list)."""

    shard: int
    start: int
    stop: int | None
    step: int = 1

    def count(self, shard_count: int | None) -> int | None:
        stop = self.stop if self.stop is not None else shard_count
        if stop is None:
            return None
        return max(0, -(-(stop - self.start) // self.step))


def rng_for(seed: int, *key: int) -> np.random.Generator:
    """A generator determined by the seed and the key, the same in every process."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [int(seed) & (2**63 - 1), *(int(k) for k in key)])))


def shard_order(num_shards: int, *, seed: int, epoch: int, shuffle: bool) -> list[int]:
    if not shuffle:
        return list(range(num_shards))
    return [int(i) for i in rng_for(seed, epoch, 0x5A4D).permutation(num_shards)]


def _slice(order, counts, lo, hi) -> list[Piece]:
    pieces, offset = [], 0
    for shard in order:
        n = counts[shard]
        a, b = max(lo, offset), min(hi, offset + n)
        if a < b:
            pieces.append(Piece(shard, a - offset, b - offset))
        offset += n
        if offset >= hi:
            break
    return pieces


def plan(num_shards: int, counts: list[int] | None, *, reader: int, readers: int, epoch: int,
         seed: int, shuffle: bool, equalize: bool) -> list[Piece]:
    """The pieces reader ``reader`` of ``readers`` reads in ``epoch``, in order."""
    if not 0 <= reader < readers:
        raise ValueError(f"reader {reader} is not in [0, {readers})")
    order = shard_order(num_shards, seed=seed, epoch=epoch, shuffle=shuffle)
    if counts is not None:
        total = sum(counts)
        lo, hi = reader * total // readers, (reader + 1) * total // readers
        pieces = _slice(order, counts, lo, hi)
        if equalize and total > 0:
            need = -(-total // readers)
            if hi - lo < need:
                first = lo if hi > lo else reader % total
                pieces += _slice(order, counts, first, first + 1)
        return pieces
    if equalize:
        raise ValueError(
            "equalize=True needs every shard's sample count: give local shards, or build an index "
            "with ember.data.index_shards(urls) and pass index=")
    if num_shards >= readers:
        return [Piece(order[i], 0, None) for i in range(reader, num_shards, readers)]
    if num_shards == 0:
        return []
    i = reader % num_shards
    group = len(range(i, readers, num_shards))
    return [Piece(order[i], reader // num_shards, None, group)]
