"""Exact splitting: every sample once per epoch across ranks and workers (property tests over the
plan, and end to end through WebDataset and DataLoader workers), equal counts with equalize,
reproducible shuffles, resampling and with_epoch."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.data as wds


@settings(max_examples=300, deadline=None)
@given(counts=st.lists(st.integers(0, 40), min_size=0, max_size=9),
       world=st.integers(1, 4), workers=st.integers(1, 4), epoch=st.integers(0, 3),
       seed=st.integers(0, 2**40), shuffle=st.booleans(), known=st.booleans())
def test_plan_covers_every_sample_once(counts, world, workers, epoch, seed, shuffle, known):
    readers = world * workers
    seen = collections.Counter()
    for reader in range(readers):
        for piece in wds.plan(len(counts), counts if known else None, reader=reader,
                              readers=readers, epoch=epoch, seed=seed, shuffle=shuffle,
                              equalize=False):
            stop = piece.stop if piece.stop is not None else counts[piece.shard]
            for k in range(piece.start, stop, piece.step):
                seen[(piece.shard, k)] += 1
    expected = {(s, k) for s, n in enumerate(counts) for k in range(n)}
    assert set(seen) == expected
    assert all(v == 1 for v in seen.values())


@settings(max_examples=200, deadline=None)
@given(counts=st.lists(st.integers(0, 30), min_size=1, max_size=8),
       readers=st.integers(1, 12), epoch=st.integers(0, 3), shuffle=st.booleans())
def test_plan_equalize_gives_equal_counts_and_covers_all(counts, readers, epoch, shuffle):
    total = sum(counts)
    per_reader, seen = [], set()
    for reader in range(readers):
        n = 0
        for piece in wds.plan(len(counts), counts, reader=reader, readers=readers, epoch=epoch,
                              seed=7, shuffle=shuffle, equalize=True):
            for k in range(piece.start, piece.stop, piece.step):
                seen.add((piece.shard, k))
                n += 1
        per_reader.append(n)
    assert len(set(per_reader)) == 1
    assert per_reader[0] == (-(-total // readers) if total else 0)
    assert len(seen) == total


def test_plan_is_a_pure_function_and_shuffles_per_epoch():
    args = dict(reader=1, readers=3, seed=5, shuffle=True, equalize=False)
    counts = [10] * 12
    assert wds.plan(12, counts, epoch=2, **args) == wds.plan(12, counts, epoch=2, **args)
    orders = {tuple(p.shard for p in wds.plan(12, None, epoch=e, **args)) for e in range(6)}
    assert len(orders) > 1
    with pytest.raises(ValueError, match="equalize=True needs"):
        wds.plan(3, None, reader=0, readers=2, epoch=0, seed=0, shuffle=False, equalize=True)


def _keys(ds):
    return [s["__key__"] for s in ds]


@pytest.mark.parametrize("world", [1, 2, 3, 7])
@pytest.mark.parametrize("indexed", [True, False])
def test_ranks_read_each_sample_once(small_shards, plain_shards, world, indexed):
    pattern, _ = small_shards if indexed else plain_shards
    keys = []
    for rank in range(world):
        keys += _keys(wds.WebDataset(pattern, rank=rank, world_size=world, shardshuffle=True))
    assert sorted(keys) == [f"k{i:05d}" for i in range(100)]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_dataloader_workers_and_ranks_read_each_sample_once(small_shards, workers):
    pattern, _ = small_shards
    keys = []
    for rank in range(2):
        ds = wds.WebDataset(pattern, rank=rank, world_size=2).to_tuple("__key__")
        loader = ember.utils.data.DataLoader(ds, batch_size=None, num_workers=workers)
        keys += [k[0] for k in loader]
    assert sorted(keys) == [f"k{i:05d}" for i in range(100)]


def test_more_readers_than_shards_without_an_index(plain_shards):
    pattern, _ = plain_shards  # 4 shards, 10 readers: shards are shared by sample
    keys = []
    for rank in range(10):
        keys += _keys(wds.WebDataset(pattern, rank=rank, world_size=10, empty_check=False))
    assert sorted(keys) == [f"k{i:05d}" for i in range(100)]


def test_rank_from_environment_and_arguments(small_shards, monkeypatch):
    pattern, _ = small_shards
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "4")
    from_env = _keys(wds.WebDataset(pattern))
    assert from_env == _keys(wds.WebDataset(pattern, rank=1, world_size=4))
    assert len(from_env) == 25
    assert len(_keys(wds.WebDataset(pattern, nodesplitter=None))) == 100
    with pytest.raises(ValueError, match="splitter"):
        list(wds.WebDataset(pattern, nodesplitter=wds.single_node_only))
    with pytest.raises(ValueError, match="rank 5 is not in"):
        list(wds.WebDataset(pattern, rank=5, world_size=2))


@pytest.mark.parametrize("world", [2, 3, 6])
def test_equalize_gives_every_rank_the_same_number_of_batches(plain_shards, world):
    pattern, _ = plain_shards  # 100 samples: not divisible by 3 or 6
    batches, keys = [], set()
    for rank in range(world):
        ds = wds.WebDataset(pattern, rank=rank, world_size=world, equalize=True)
        out = list(ds.to_tuple("__key__").batched(4))
        batches.append(len(out))
        keys |= {k for b in out for k in b[0]}
    assert len(set(batches)) == 1
    assert len(keys) == 100


def test_equalize_needs_counts_for_streams(small_shards):
    _, urls = small_shards
    ds = wds.WebDataset([f"pipe:cat {u}" for u in urls], rank=0, world_size=2, equalize=True)
    with pytest.raises(ValueError, match="index_shards"):
        list(ds)
    index = wds.index_shards(urls, write=False)
    streamed = {f"pipe:cat {u}": index[u] for u in urls}
    ds = wds.WebDataset(list(streamed), rank=0, world_size=3, equalize=True, index=streamed)
    assert len(list(ds)) == 34


def test_shuffling_is_reproducible_and_differs_by_epoch_and_seed(small_shards):
    pattern, _ = small_shards

    def run(seed, epoch):
        ds = wds.WebDataset(pattern, shardshuffle=True, seed=seed).shuffle(30)
        ds.set_epoch(epoch)
        return _keys(ds)

    assert run(1, 0) == run(1, 0)
    assert run(1, 0) != run(1, 1)
    assert run(1, 0) != run(2, 0)
    assert sorted(run(3, 2)) == [f"k{i:05d}" for i in range(100)]
    ds = wds.WebDataset(pattern, shardshuffle=True, seed=9).shuffle(30)
    first, second = _keys(ds), _keys(ds)  # epochs advance by themselves
    assert first != second and sorted(first) == sorted(second)


def test_shuffle_buffer_in_bytes(small_shards):
    pattern, _ = small_shards
    out = _keys(wds.WebDataset(pattern).shuffle("2KB", initial=1))
    assert sorted(out) == [f"k{i:05d}" for i in range(100)] and out != sorted(out)
    with pytest.raises(ValueError, match="not a size"):
        wds.shuffle("12 parsecs")


def test_resampled_and_with_epoch(small_shards):
    pattern, _ = small_shards
    ds = wds.WebDataset(pattern, resampled=True).with_epoch(250)
    a, b = _keys(ds), _keys(ds)
    assert len(a) == len(b) == 250 and a != b
    # with_epoch on a plain dataset continues where the previous epoch stopped.
    ds = wds.WebDataset(pattern).with_epoch(30)
    chunks = [_keys(ds) for _ in range(4)]
    flat = [k for c in chunks for k in c]
    assert flat[:100] == [f"k{i:05d}" for i in range(100)]
    assert flat[100:] == [f"k{i:05d}" for i in range(20)]


def test_len_from_index(small_shards, plain_shards):
    assert len(wds.WebDataset(small_shards[0], rank=1, world_size=3)) == 33
    with pytest.raises(TypeError, match="no length"):
        len(wds.WebDataset(plain_shards[0]))
    assert len(wds.WebDataset(plain_shards[0]).with_length(5)) == 5


def test_custom_splitters_choose_whole_shards(small_shards):
    pattern, urls = small_shards

    def only_first_two(src):
        for i, item in enumerate(src):
            if i < 2:
                yield item

    keys = _keys(wds.WebDataset(pattern, nodesplitter=only_first_two))
    assert keys == [f"k{i:05d}" for i in range(40)]


def test_functional_pipeline(small_shards):
    pattern, urls = small_shards
    pipeline = wds.DataPipeline(
        wds.SimpleShardList(pattern), wds.split_by_worker, wds.tarfile_to_samples(),
        wds.shuffle(10), wds.decode(), wds.to_tuple("cls", "npy"), wds.batched(8))
    batches = list(pipeline)
    labels = np.concatenate([b[0] for b in batches])
    assert sorted(labels.tolist()) == list(range(100))
    assert batches[0][1].shape == (8, 3)
    assert len(batches) == 13


def test_stages_match_webdataset_semantics(small_shards):
    pattern, _ = small_shards
    ds = (wds.WebDataset(pattern).decode().select(lambda s: s["cls"] % 2 == 0)
          .rename(label="cls", vec="npy;missing").map_dict(label=lambda x: x * 10)
          .to_tuple("label vec").map_tuple(None, lambda v: v.sum()).slice(2, 20, 3))
    out = list(ds)
    assert [x[0] for x in out] == [40, 100, 160, 220, 280, 340]
    assert out[0][1] == 3 * 4
    batches = list(wds.WebDataset(pattern).decode().to_tuple("cls", "json").batched(
        30, partial=False))
    assert len(batches) == 3 and isinstance(batches[0][0], np.ndarray)
    assert isinstance(batches[0][1], list) and batches[0][1][0]["n"] == 0
    flat = list(wds.WebDataset(pattern).decode().to_tuple("cls").batched(7).unbatched())
    assert [x[0] for x in flat] == list(range(100))
    with pytest.raises(ValueError, match="didn't find"):
        list(wds.WebDataset(pattern).to_tuple("nope"))
    assert list(wds.WebDataset(pattern).to_tuple("nope", handler=wds.ignore_and_continue)) == []


def _is_even(sample):
    return int(sample["cls"]) % 2 == 0


def _plus_one(x):
    return x + 1


def test_pipelines_pickle_for_spawned_workers(small_shards):
    """Workers started with "spawn" receive the dataset pickled: every stage must pickle."""
    import pickle

    pattern, _ = small_shards
    ds = (wds.WebDataset(pattern, shardshuffle=True).shuffle(10).decode(
        wds.handle_extension("txt", bytes.decode)).select(_is_even)
        .rename(label="cls", keep=True).map_dict(label=_plus_one).rename_keys(v="*npy",
                                                                               keep_unselected=True)
        .extract_keys("label", "v").map_tuple(None, len).batched(5).unbatched())
    copy = pickle.loads(pickle.dumps(ds))
    assert list(copy) == list(ds)
    loader = wds.WebLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="spawn")
    labels = sorted(int(x[0]) for x in loader)
    assert labels == list(range(1, 100, 2))
