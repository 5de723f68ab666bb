"""ember.utils.data: datasets, samplers, collation and the DataLoader (in-process and with
worker processes), checked against PyTorch where it is installed."""

import collections
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

Point = collections.namedtuple("Point", ["x", "y"])


def gen(seed):
    g = ember.Generator()
    g.manual_seed(seed)
    return g


def to_plain(obj):
    """Batches as comparable Python data: tensors -> ("tensor", dtype name, nested lists)."""
    if isinstance(obj, ember.Tensor):
        return ("tensor", str(obj.dtype).split(".")[-1], obj.tolist())
    if type(obj).__module__ == "torch" and type(obj).__name__ in ("Tensor", "Parameter"):
        return ("tensor", str(obj.dtype).split(".")[-1], obj.tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: to_plain(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [to_plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [to_plain(v) for v in obj])
    return obj


class Squares(Dataset):
    def __init__(self, n=10):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


# --- datasets -------------------------------------------------------------------------------


def test_tensor_dataset():
    x = ember.arange(12).reshape(6, 2)
    y = ember.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    assert a.tolist() == [8, 9] and b.item() == 4
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ember.arange(5))


def test_subset_concat_chain_stack():
    base = Squares(10)
    sub = Subset(base, [3, 1, 4])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [9, 1, 16]
    assert sub.__getitems__([0, 2]) == [9, 16]
    cat = ConcatDataset([Squares(3), Squares(2)])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert cat[-1] == 1 and cat[-5] == 0
    assert cat.cumulative_sizes == [3, 5]
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        cat[-6]
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])
    assert len(Squares(2) + Squares(3)) == 5

    class Stream(IterableDataset):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __len__(self):
            return len(self.items)

    chain = Stream([1, 2]) + Stream([3])
    assert isinstance(chain, ChainDataset)
    assert list(chain) == [1, 2, 3] and len(chain) == 3
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Stream([1])])

    stack = StackDataset(Squares(3), Squares(3))
    assert stack[2] == (4, 4) and stack.__getitems__([0, 1]) == [(0, 0), (1, 1)]
    named = StackDataset(a=Squares(2), b=Subset(Squares(5), [4, 3]))
    assert named[1] == {"a": 1, "b": 9} and named.__getitems__([0]) == [{"a": 0, "b": 16}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))


def test_random_split():
    ds = Squares(10)
    a, b = random_split(ds, [7, 3], generator=gen(0))
    assert len(a) == 7 and len(b) == 3
    assert sorted(a.indices + b.indices) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=gen(0))
    assert a.indices == a2.indices
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=gen(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    parts = random_split(Squares(11), [0.5, 0.5], generator=gen(1))
    assert [len(p) for p in parts] == [6, 5]  # the remainder goes round-robin from the start
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [5, 4])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(ds, [0.5, 1.2, -0.7])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(Squares(2), [1.0, 0.0])


# --- samplers -------------------------------------------------------------------------------


def test_sequential_and_random_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    s = RandomSampler(range(20), generator=gen(3))
    first = list(s)
    assert sorted(first) == list(range(20)) and len(s) == 20
    assert first == list(RandomSampler(range(20), generator=gen(3)))
    assert list(s) != first  # the generator moves on: a new permutation each epoch
    # Without a generator, the global seed fixes the order.
    ember.manual_seed(5)
    one = list(RandomSampler(range(30)))
    ember.manual_seed(5)
    assert list(RandomSampler(range(30))) == one
    # More samples than elements without replacement: whole permutations, then a partial one.
    many = list(RandomSampler(range(4), num_samples=10, generator=gen(0)))
    assert len(many) == 10 and sorted(many[:4]) == [0, 1, 2, 3]
    rep = list(RandomSampler(range(3), replacement=True, num_samples=70, generator=gen(0)))
    assert len(rep) == 70 and set(rep) <= {0, 1, 2}
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)


def test_subset_and_weighted_samplers():
    s = SubsetRandomSampler([10, 20, 30, 40], generator=gen(0))
    assert sorted(s) == [10, 20, 30, 40] and len(s) == 4
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=gen(0))
    drawn = list(w)
    assert len(drawn) == 200 and set(drawn) == {1, 3}
    assert drawn.count(3) > drawn.count(1)
    assert drawn == list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=gen(0)))
    nr = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=gen(2)))
    assert sorted(nr) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=None)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights "
                                         r"have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 1)


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    assert len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 0)


def test_distributed_sampler():
    ds = Squares(10)
    parts = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False))
             for r in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded by wrapping around
    dropped = [list(DistributedSampler(ds, 3, r, shuffle=False, drop_last=True))
               for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    shuffled = [DistributedSampler(ds, 2, r, seed=7) for r in range(2)]
    epoch0 = [list(s) for s in shuffled]
    assert sorted(epoch0[0] + epoch0[1]) == list(range(10))  # one permutation, split
    for s in shuffled:
        s.set_epoch(1)
    epoch1 = [list(s) for s in shuffled]
    assert sorted(epoch1[0] + epoch1[1]) == list(range(10)) and epoch1 != epoch0
    assert len(shuffled[0]) == 5
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(ds, num_replicas=3, rank=3)
    # Without a process group, as PyTorch: the default group's error (or, in a build without
    # a backend, that the package is unavailable).
    import ember.distributed as dist

    if dist.is_available():
        with pytest.raises(ValueError, match="has not been initialized"):
            DistributedSampler(ds)
    else:
        with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
            DistributedSampler(ds)


def test_samplers_match_torch_where_deterministic():
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data
    for n, r, drop in [(10, 3, False), (10, 3, True), (2, 5, False), (7, 7, True)]:
        for rank in range(r):
            assert list(DistributedSampler(range(n), r, rank, shuffle=False, drop_last=drop)) \
                == list(tdata.DistributedSampler(range(n), r, rank, shuffle=False,
                                                 drop_last=drop))
    for bs, drop in [(1, False), (3, True), (4, False), (20, True)]:
        assert list(BatchSampler(range(10), bs, drop)) == \
            list(tdata.BatchSampler(range(10), bs, drop))


# --- collation ------------------------------------------------------------------------------


def collate_cases(lib):
    """Batches built from `lib` (ember or torch) tensors, with the same content."""
    t = lib.tensor
    return [
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [t(1), t(2), t(3)],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)],
        [np.int64(3), np.int64(4)],
        [np.array(2.0), np.array(3.0)],
        [1.5, 2.5],
        [1, 2, 3],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [{"a": 1, "b": t([1, 2])}, {"a": 2, "b": t([3, 4])}],
        [collections.OrderedDict(z=1.0, a=2), collections.OrderedDict(z=3.0, a=4)],
        [Point(1, t([0.5])), Point(2, t([1.5]))],
        [(1, "s", t([1])), (2, "t", t([2]))],
        [[1, 2.0], [3, 4.0]],
        [{"nested": [(t(1), np.array([1.0]))]}, {"nested": [(t(2), np.array([2.0]))]}],
        [np.array([[1, 2]], dtype=np.uint8), np.array([[3, 4]], dtype=np.uint8)],
        [t([True]), t([False])],
    ]


def test_default_collate_rules():
    out = default_collate([ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])])
    assert out.shape == (2, 2) and out.dtype == ember.float32
    assert default_collate([1.5, 2.5]).dtype == ember.float64
    assert default_collate([1, 2]).dtype == ember.int64
    assert default_collate([True, False]).dtype == ember.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([np.float32(1), np.float32(2)]).dtype == ember.float32
    nt = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(nt, Point) and nt.x.tolist() == [1, 3] and nt.y.dtype == ember.float64
    tup = default_collate([(1, 2), (3, 4)])
    assert isinstance(tup, list) and [x.tolist() for x in tup] == [[1, 3], [2, 4]]
    od = default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert isinstance(od, collections.OrderedDict) and list(od) == ["b", "a"]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal "
                                           "size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy "
                                        "arrays, numbers, dicts or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="stack"):
        default_collate([ember.zeros(2), ember.zeros(3)])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": [np.float64(1.0), "s"], "c": (1, 2)})
    assert isinstance(out["a"], ember.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert isinstance(out["b"][0], ember.Tensor) and out["b"][1] == "s"
    assert out["c"] == [1, 2]  # tuples become lists, numbers stay numbers
    strings = np.array(["x"])
    assert default_convert(strings) is strings


def test_default_collate_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    for mine, theirs in zip(collate_cases(ember), collate_cases(torch)):
        assert to_plain(default_collate(mine)) == to_plain(torch_collate(theirs)), mine


# --- DataLoader in the main process ---------------------------------------------------------


def test_loader_order_batches_and_len():
    ds = TensorDataset(ember.arange(10), ember.arange(10) * 2)
    loader = DataLoader(ds, batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    assert [b[0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][1].tolist() == [0, 2, 4, 6]
    dropped = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[0].shape[0] for b in dropped] == [4, 4]
    unbatched = list(DataLoader(Squares(3), batch_size=None))
    assert unbatched == [0, 1, 4]  # no collation: default_convert leaves numbers alone
    assert [b.tolist() for b in DataLoader(Squares(3))] == [[0], [1], [4]]


def test_loader_shuffle_reproducible():
    ds = Squares(50)

    def order(loader):
        return [v for b in loader for v in b.tolist()]

    a = order(DataLoader(ds, batch_size=8, shuffle=True, generator=gen(1)))
    b = order(DataLoader(ds, batch_size=8, shuffle=True, generator=gen(1)))
    c = order(DataLoader(ds, batch_size=8, shuffle=True, generator=gen(2)))
    assert a == b and a != c and sorted(a) == sorted(i * i for i in range(50))
    loader = DataLoader(ds, batch_size=8, shuffle=True, generator=gen(1))
    assert order(loader) != order(loader)  # every epoch reshuffles
    ember.manual_seed(11)
    d = order(DataLoader(ds, batch_size=8, shuffle=True))
    ember.manual_seed(11)
    assert order(DataLoader(ds, batch_size=8, shuffle=True)) == d


def test_loader_samplers_and_collate_fn():
    ds = Squares(6)
    assert [b.tolist() for b in DataLoader(ds, sampler=[5, 0, 3], batch_size=2)] == [[25, 0],
                                                                                    [9]]
    assert [b.tolist() for b in DataLoader(ds, batch_sampler=[[1, 2], [0]])] == [[1, 4], [0]]
    assert list(DataLoader(ds, batch_size=3, collate_fn=sum)) == [5, 50]
    dicts = [{"x": ember.tensor([float(i)]), "name": f"n{i}"} for i in range(3)]
    batch = next(iter(DataLoader(dicts, batch_size=3)))
    assert batch["x"].shape == (3, 1) and batch["name"] == ["n0", "n1", "n2"]


def test_loader_argument_errors():
    ds = Squares(4)

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    cases = [
        (dict(num_workers=-1), ValueError, "num_workers option should be non-negative"),
        (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
        (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified"),
        (dict(persistent_workers=True), ValueError, "persistent_workers option needs"),
        (dict(sampler=[0], shuffle=True), ValueError, "sampler option is mutually exclusive"),
        (dict(batch_sampler=[[0]], batch_size=2), ValueError,
         "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
         "drop_last"),
        (dict(batch_size=None, drop_last=True), ValueError,
         "batch_size=None option disables auto-batching"),
        (dict(multiprocessing_context="fork"), ValueError,
         "multiprocessing_context can only be used with multi-process loading"),
        (dict(num_workers=1, multiprocessing_context="nope"), ValueError,
         "multiprocessing_context option should specify a valid start method"),
        (dict(num_workers=1, multiprocessing_context=3), TypeError,
         "multiprocessing_context option should be a valid context object"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            DataLoader(ds, **kwargs)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got "
                                         "shuffle=True"):
        DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(), sampler=[0])
    with pytest.raises(ValueError, match="expected unspecified batch_sampler option"):
        DataLoader(Stream(), batch_sampler=[[0]])
    loader = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 3
    loader.num_workers = 0  # other attributes may change


def test_loader_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
             dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
             dict(batch_sampler=[[0]], drop_last=True), dict(batch_size=None, drop_last=True)]
    for kwargs in cases:
        with pytest.raises(ValueError) as theirs:
            torch.utils.data.DataLoader(list(range(4)), **kwargs)
        with pytest.raises(ValueError) as mine:
            DataLoader(list(range(4)), **kwargs)
        assert str(mine.value) == str(theirs.value)


def test_loader_matches_torch_sequential():
    torch = pytest.importorskip("torch")
    samples = [{"x": i, "y": [float(i), i * 2.0], "s": str(i)} for i in range(7)]
    for kwargs in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                   dict(batch_size=1)]:
        mine = [to_plain(b) for b in DataLoader(samples, **kwargs)]
        theirs = [to_plain(b) for b in torch.utils.data.DataLoader(samples, **kwargs)]
        assert mine == theirs


class StreamRange(IterableDataset):
    """range(start, end), split between the workers by get_worker_info (the documented
    recipe), with a length."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = -(-(self.end - self.start) // info.num_workers)
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.end)))

    def __len__(self):
        return self.end - self.start


def test_iterable_dataset_in_process():
    assert [b.tolist() for b in DataLoader(StreamRange(0, 7), batch_size=3)] == [[0, 1, 2],
                                                                                [3, 4, 5], [6]]
    assert len(DataLoader(StreamRange(0, 7), batch_size=3)) == 3
    assert len(DataLoader(StreamRange(0, 7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(StreamRange(0, 7), batch_size=3, drop_last=True)] \
        == [[0, 1, 2], [3, 4, 5]]
    loader = DataLoader(StreamRange(0, 4), batch_size=None)
    assert len(loader) == 4 and list(loader) == [0, 1, 2, 3]

    class TooLong(StreamRange):
        def __len__(self):
            return 2

    loader = DataLoader(TooLong(0, 4), batch_size=None)
    len(loader)
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


# --- DataLoader with worker processes -------------------------------------------------------


class PidDataset(Dataset):
    def __getitem__(self, i):
        return {"i": i, "pid": os.getpid()}

    def __len__(self):
        return 8


class SeededRandom(Dataset):
    """Each item draws from the worker's seeded generators."""

    def __getitem__(self, i):
        info = get_worker_info()
        return {"ember": ember.rand(1).item(), "numpy": float(np.random.rand()),
                "worker": -1 if info is None else info.id}

    def __len__(self):
        return 6


class Failing(Dataset):
    def __getitem__(self, i):
        if i == 3:
            raise ValueError(f"bad sample {i}")
        return i

    def __len__(self):
        return 6


class FailingKey(Dataset):
    def __getitem__(self, i):
        raise KeyError("missing")

    def __len__(self):
        return 2


class Dying(Dataset):
    def __getitem__(self, i):
        if i == 5:
            os._exit(3)
        return i

    def __len__(self):
        return 8


class Slow(Dataset):
    def __getitem__(self, i):
        time.sleep(3.0)
        return i

    def __len__(self):
        return 2


class Unpicklable(Dataset):
    def __getitem__(self, i):
        return lambda: i

    def __len__(self):
        return 2


def test_workers_same_batches_as_main_process():
    ds = TensorDataset(ember.arange(20).float(), ember.arange(20))
    single = [to_plain(b) for b in DataLoader(ds, batch_size=3)]
    multi = [to_plain(b) for b in DataLoader(ds, batch_size=3, num_workers=2)]
    assert multi == single
    # Shuffling happens in the main process: the same generator seed gives the same order.
    a = [b.tolist() for b in DataLoader(Squares(20), batch_size=4, shuffle=True,
                                        generator=gen(4))]
    b = [b.tolist() for b in DataLoader(Squares(20), batch_size=4, shuffle=True,
                                        generator=gen(4), num_workers=2)]
    assert a == b
    # Views of a big tensor travel compactly and arrive intact.
    big = ember.arange(100000).reshape(1000, 100)
    rows = list(DataLoader(TensorDataset(big), batch_size=None, num_workers=2,
                           sampler=[7, 500]))
    assert rows[0][0].tolist() == big[7].tolist() and rows[1][0].shape == (100,)
    in_any_order = [v for b in DataLoader(Squares(10), batch_size=3, num_workers=2,
                                          in_order=False) for v in b.tolist()]
    assert sorted(in_any_order) == [i * i for i in range(10)]


def test_worker_info_seeds_and_init_fn():
    seen = [to_plain(b) for b in DataLoader(SeededRandom(), batch_size=None, num_workers=2,
                                            generator=gen(9))]
    again = [to_plain(b) for b in DataLoader(SeededRandom(), batch_size=None, num_workers=2,
                                             generator=gen(9))]
    assert seen == again  # the generator seeds the workers reproducibly
    assert {s[1]["worker"] for s in seen} == {0, 1}
    ember_draws = [s[1]["ember"] for s in seen]
    assert len(set(ember_draws)) == len(ember_draws)  # the workers' streams differ
    other = [to_plain(b) for b in DataLoader(SeededRandom(), batch_size=None, num_workers=2,
                                             generator=gen(10))]
    assert other != seen

    loader = DataLoader(Squares(4), batch_size=None, num_workers=2,
                        worker_init_fn=_record_worker_info)
    got = list(loader)
    assert sorted(got) == [0, 1, 4, 9]


def _record_worker_info(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2
    assert isinstance(info.dataset, Squares)
    assert ember.initial_seed() == info.seed
    with pytest.raises(AttributeError):
        info.id = 5  # frozen, as in torch


def test_worker_exception_carries_traceback():
    loader = DataLoader(Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as excinfo:
        list(loader)
    text = str(excinfo.value)
    assert "Caught ValueError in DataLoader worker process 1" in text
    assert "Original Traceback (most recent call last)" in text
    assert "in __getitem__" in text and "bad sample 3" in text
    with pytest.raises(KeyError) as excinfo:
        list(DataLoader(FailingKey(), num_workers=1))
    assert "Caught KeyError in DataLoader worker process 0" in str(excinfo.value)
    with pytest.raises(ZeroDivisionError, match="worker process 0"):
        list(DataLoader(Squares(2), num_workers=1, worker_init_fn=_failing_init))


def _failing_init(worker_id):
    raise ZeroDivisionError("division by zero in worker_init_fn")


def test_worker_unpicklable_result_is_an_error():
    with pytest.raises(Exception, match="while sending a batch"):
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1))


def test_worker_death_raises_not_hangs():
    start = time.monotonic()
    loader = DataLoader(Dying(), batch_size=None, num_workers=2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly"):
        for _ in loader:
            pass
    assert time.monotonic() - start < 10


class Big(Dataset):
    def __getitem__(self, i):
        return ember.ones(4_000_000)  # 16 MB: far more than a pipe holds

    def __len__(self):
        return 6


def test_worker_killed_while_sending_raises_not_hangs():
    it = iter(DataLoader(Big(), batch_size=None, num_workers=1))
    next(it)
    time.sleep(0.3)  # the worker is now blocked half-way through writing a batch
    os.kill(it._workers[0].pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        for _ in it:
            pass
    assert time.monotonic() - start < 5


def test_worker_timeout():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(DataLoader(Slow(), batch_size=None, num_workers=1, timeout=0.5))
    assert time.monotonic() - start < 3


def test_persistent_workers():
    loader = DataLoader(PidDataset(), batch_size=2, num_workers=2, persistent_workers=True)
    first = list(loader)
    second = list(loader)
    assert [b["i"].tolist() for b in first] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert [b["i"].tolist() for b in second] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    pids = {p for b in first for p in b["pid"].tolist()}
    assert len(pids) == 2 and pids == {p for b in second for p in b["pid"].tolist()}
    assert os.getpid() not in pids
    # An epoch left early does not leak into the next one.
    it = iter(loader)
    next(it)
    assert [b["i"].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # Without persistence, every epoch starts new workers.
    plain = DataLoader(PidDataset(), batch_size=4, num_workers=2)
    p1 = {p for b in plain for p in b["pid"].tolist()}
    p2 = {p for b in plain for p in b["pid"].tolist()}
    assert not p1 & p2


def test_iterable_dataset_sharded_between_workers():
    loader = DataLoader(StreamRange(0, 10), batch_size=2, num_workers=2)
    got = sorted(v for b in loader for v in b.tolist())
    assert got == list(range(10))
    # Worker 0 yields 0..4, worker 1 yields 5..9; batches alternate between them.
    batches = [b.tolist() for b in DataLoader(StreamRange(0, 10), batch_size=2, num_workers=2)]
    assert batches[:2] == [[0, 1], [5, 6]]
    dropped = [b.tolist() for b in DataLoader(StreamRange(0, 10), batch_size=3, drop_last=True,
                                              num_workers=2)]
    assert sorted(dropped) == [[0, 1, 2], [5, 6, 7]]
    persistent = DataLoader(StreamRange(0, 6), batch_size=None, num_workers=2,
                            persistent_workers=True)
    assert sorted(persistent) == list(range(6)) and sorted(persistent) == list(range(6))


def test_worker_count_warning_and_pin_memory():
    with pytest.warns(UserWarning, match="This DataLoader will create 64 worker processes"):
        DataLoader(Squares(2), num_workers=64)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true"):
        assert [b.tolist() for b in DataLoader(Squares(2), pin_memory=True)] == [[0], [1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataLoader(Squares(2), num_workers=1)


class _BigTensors(IterableDataset):
    """Batches of tensors large enough (>= 64 KiB) to travel through shared memory."""

    def __iter__(self):
        for i in range(12):
            yield [ember.full((3, 64, 128), float(i)), ember.arange(20000, dtype=ember.int64) + i,
                   ember.zeros(3)]


def _shm_names():
    return {n for n in os.listdir("/dev/shm") if n.startswith("ember_dl")} \
        if os.path.isdir("/dev/shm") else set()


@pytest.mark.parametrize("context", [None, "spawn"])
def test_large_tensors_travel_through_shared_memory_and_leave_no_names(context):
    before = _shm_names()
    loader = DataLoader(_BigTensors(), batch_size=None, num_workers=2,
                        multiprocessing_context=context)
    got = list(loader)
    assert len(got) == 24  # each worker iterates its own copy
    for images, ints, small in got:
        value = float(images[0, 0, 0])
        assert ember.equal(images, ember.full((3, 64, 128), value))
        assert ember.equal(ints, ember.arange(20000, dtype=ember.int64) + int(value))
        images.add_(1)  # writable, as PyTorch's
        assert small.shape == (3,)
    # An iterator dropped with results in flight releases their segments.
    it = iter(DataLoader(_BigTensors(), batch_size=None, num_workers=2, prefetch_factor=4))
    next(it)
    time.sleep(0.5)
    del it
    import gc

    gc.collect()
    assert _shm_names() <= before


class _NumberedBatches(IterableDataset):
    """40 batches of 200 KiB, each filled with its own number."""

    def __iter__(self):
        for i in range(40):
            yield ember.full((50, 1024), float(i))


def test_shared_memory_segments_are_reused_without_overwriting_held_batches():
    before = _shm_names()
    loader = DataLoader(_NumberedBatches(), batch_size=None, num_workers=1, prefetch_factor=2)
    it = iter(loader)
    held, segments_seen = [], 0
    for i, batch in enumerate(it):
        assert ember.equal(batch, ember.full((50, 1024), float(i)))
        if i % 10 == 0:
            held.append((i, batch))  # kept: its segment must not be written again
        segments_seen = max(segments_seen, len(it._segments._open))
    # Batches dropped as soon as read free their segments: a handful served all 40.
    assert 1 <= segments_seen <= 6
    for i, batch in held:
        assert ember.equal(batch, ember.full((50, 1024), float(i)))
    del it, batch
    assert _shm_names() <= before


def test_persistent_workers_reuse_segments_across_epochs_and_leave_no_names():
    before = _shm_names()
    loader = DataLoader(_NumberedBatches(), batch_size=None, num_workers=2,
                        persistent_workers=True)
    for _ in range(3):
        got = sorted(float(b[0, 0]) for b in loader)
        assert got == sorted([float(i) for i in range(40)] * 2)
    assert len(loader._iterator._segments._open) <= 12
    del loader
    import gc

    gc.collect()
    assert _shm_names() <= before


def test_program_exit_with_live_workers_leaves_no_names_and_no_tracker_warnings(tmp_path):
    script = tmp_path / "exit_early.py"
    script.write_text(
        "import ember\n"
        "from ember.utils.data import DataLoader, IterableDataset\n"
        "class D(IterableDataset):\n"
        "    def __iter__(self):\n"
        "        for i in range(100):\n"
        "            yield ember.full((50, 1024), float(i))\n"
        "loader = DataLoader(D(), batch_size=None, num_workers=2, persistent_workers=True)\n"
        "it = iter(loader)\n"
        "kept = [next(it) for _ in range(5)]\n"
        "print('ok', float(kept[4][0, 0]))\n")
    before = _shm_names()
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
    assert "leaked" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert _shm_names() <= before


def test_fork_worker_while_another_thread_holds_the_resource_tracker_lock(tmp_path):
    # Note [Resource tracker after fork]: a process forked while another thread holds the
    # tracker's lock (as a DataLoader worker can be) gets a usable lock.
    script = tmp_path / "held_lock.py"
    script.write_text(
        "import os, threading\n"
        "from multiprocessing import resource_tracker\n"
        "import ember.utils.data  # registers the at-fork reset\n"
        "held, release = threading.Event(), threading.Event()\n"
        "def hold():\n"
        "    with resource_tracker._resource_tracker._lock:\n"
        "        held.set()\n"
        "        release.wait()\n"
        "threading.Thread(target=hold, daemon=True).start()\n"
        "held.wait()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = resource_tracker._resource_tracker._lock.acquire(timeout=10)\n"
        "    os._exit(0 if ok else 3)\n"
        "release.set()\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('child', os.waitstatus_to_exitcode(status))\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "child 0", result.stdout + result.stderr
