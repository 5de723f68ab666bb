"""The functional form's sources: shard lists and the tar-to-samples stage, for pipelines built
as ``DataPipeline(SimpleShardList(urls), split_by_worker, tarfile_to_samples(), shuffle(100),
decode("rgb8"), to_tuple("jpg", "cls"), batched(16))``. Splitting here is WebDataset's (whole
shards); WebDataset(...) gives the exact sample-level split."""

from __future__ import annotations

import os
import random
import sys

from .. import _C
from ..utils.data import IterableDataset
from ._handlers import reraise_exception
from ._plan import rng_for
from ._stages import pipelinefilter
from ._urls import expand_urls

__all__ = ["SimpleShardList", "ResampledShards", "tarfile_to_samples", "tarfile_samples",
           "select_and_rename", "resampled"]


class SimpleShardList(IterableDataset):
    """Yields ``{"url": url}`` for each shard; with ``seed``, in the order
    ``random.Random(seed).shuffle`` gives (WebDataset's, the same every epoch)."""

    def __init__(self, urls, seed=None):
        self.urls = expand_urls(urls)
        self.seed = seed

    def __len__(self):
        return len(self.urls)

    def __iter__(self):
        urls = list(self.urls)
        if self.seed is not None:
            random.Random(self.seed).shuffle(urls)
        for url in urls:
            yield {"url": url}


class ResampledShards(IterableDataset):
    """Yields ``nshards`` shards drawn with replacement, seeded by (seed, epoch, worker, rank)."""

    def __init__(self, urls, nshards=sys.maxsize, seed=0, worker_seed=None, deterministic=False,
                 max_urls=int(1e6), empty_check=True):
        self.urls = expand_urls(urls)
        if empty_check and not self.urls:
            raise ValueError("ResampledShards: no shards")
        self.nshards = nshards
        self.seed = seed
        self.epoch = -1

    def set_epoch(self, epoch):
        self.epoch = int(epoch) - 1

    def __iter__(self):
        from ._source import rank_and_world, worker_and_workers

        self.epoch += 1
        worker, _ = worker_and_workers()
        rank, _ = rank_and_world()
        rng = rng_for(self.seed, self.epoch, worker, rank, 0x5E5A)
        for _ in range(self.nshards):
            yield {"url": self.urls[int(rng.integers(len(self.urls)))]}


def _resampled(src, n=sys.maxsize):
    """``n`` items drawn with replacement from the (finite) ``src``, as WebDataset's
    ``resampled`` stage (freshly seeded, like it; ``ResampledShards`` takes a seed)."""
    items = list(src)
    if not items:
        return
    rng = random.Random(os.urandom(16))
    for _ in range(n):
        yield rng.choice(items)


resampled = pipelinefilter(_resampled)


def select_and_rename(sample, select_files, rename_files):
    """Applies WebDataset's ``rename_files`` and ``select_files`` (on member names
    ``key.ext``) to a sample."""
    out = {"__key__": sample["__key__"], "__url__": sample["__url__"]}
    for ext, value in sample.items():
        if ext.startswith("__"):
            continue
        name = sample["__key__"] + "." + ext
        if rename_files is not None:
            name = rename_files(name)
        if select_files is not None and not select_files(name):
            continue
        head, _, tail = name.rpartition("/")
        stem, dot, new_ext = tail.partition(".")
        if dot:
            out["__key__"] = f"{head}/{stem}" if head else stem
            out[new_ext.lower()] = value
    return out


def _samples(src, handler=reraise_exception, select_files=None, rename_files=None):
    from ._source import ShardError

    for item in src:
        url = item["url"] if isinstance(item, dict) else item
        try:
            with _C._data.ShardReader(url) as reader:
                while True:
                    batch = reader.read(64)
                    if not batch:
                        break
                    for sample in batch:
                        if select_files is not None or rename_files is not None:
                            sample = select_and_rename(sample, select_files, rename_files)
                        yield sample
        except ShardError as exn:
            if handler(exn):
                continue
            break


def tarfile_samples(src, handler=reraise_exception, select_files=None, rename_files=None):
    """Samples of the shards named by ``src`` (``{"url": ...}`` items or URL strings): the
    stage itself, as WebDataset's ``tarfile_samples``."""
    return _samples(src, handler, select_files, rename_files)


def tarfile_to_samples(handler=reraise_exception, select_files=None, rename_files=None):
    """The stage (curried form) that turns ``{"url": ...}`` items into samples."""
    return pipelinefilter(_samples)(handler, select_files, rename_files)
