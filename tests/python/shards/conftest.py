"""Shards for the ember.data tests: small datasets written once per session."""

import numpy as np
import pytest

import ember.data as wds


def write_dataset(directory, *, shards, per_shard, index=False, prefix="s"):
    """``shards`` shards of ``per_shard`` samples with keys k00000.. and npy/cls/json fields;
    returns the brace pattern and the list of URLs."""
    pattern = str(directory / f"{prefix}-%03d.tar")
    n = 0
    with wds.ShardWriter(pattern, maxcount=per_shard, index=index, mtime=0) as writer:
        for _ in range(shards * per_shard):
            writer.write({"__key__": f"k{n:05d}", "npy": np.full(3, n, dtype=np.float32),
                          "cls": n, "json": {"n": n, "name": f"sample {n}"}})
            n += 1
    urls = [pattern % i for i in range(shards)]
    return str(directory / f"{prefix}-{{000..{shards - 1:03d}}}.tar"), urls


@pytest.fixture(scope="session")
def small_shards(tmp_path_factory):
    """5 shards x 20 samples, with sidecar indexes."""
    return write_dataset(tmp_path_factory.mktemp("small"), shards=5, per_shard=20, index=True)


@pytest.fixture(scope="session")
def plain_shards(tmp_path_factory):
    """4 shards of 25 samples, no indexes."""
    return write_dataset(tmp_path_factory.mktemp("plain"), shards=4, per_shard=25)
