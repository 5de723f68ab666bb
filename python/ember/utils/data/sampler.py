"""Samplers, as torch.utils.data.sampler: iterables over dataset indices (or over batches of
indices, for :class:`BatchSampler`) that decide the order in which a DataLoader reads."""

import itertools
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

import ember

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: subclasses define ``__iter__`` (and ``__len__`` for ``len(DataLoader)``)."""

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator():
    """A generator seeded from the global one, as torch's samplers do without ``generator``:
    ``ember.manual_seed`` then fixes the order, and each epoch draws a new permutation."""
    seed = int(ember.empty((), dtype=ember.int64).random_().item())
    generator = ember.Generator()
    generator.manual_seed(seed)
    return generator


class RandomSampler(Sampler[int]):
    """A random permutation of the indices, or ``num_samples`` draws with replacement."""

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        # data_source may change its size between epochs: read it each time.
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _fresh_generator() if self.generator is None else self.generator
        if self.replacement:
            # Blocks of 32 draws: lazy enough for huge num_samples, few enough calls.
            for _ in range(self.num_samples // 32):
                yield from ember.randint(0, n, (32,), dtype=ember.int64,
                                         generator=generator).tolist()
            yield from ember.randint(0, n, (self.num_samples % 32,), dtype=ember.int64,
                                     generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from ember.randperm(n, generator=generator).tolist()
            yield from ember.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order, without replacement."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = ember.as_tensor(weights, dtype=ember.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given "
                f"weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand_tensor = ember.multinomial(self.weights, self.num_samples, self.replacement,
                                        generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            # zip of one iterator repeated batch_size times stops at the first short batch.
            yield from (list(batch) for batch in zip(*[sampler_iter] * self.batch_size))
        else:
            batch = list(itertools.islice(sampler_iter, self.batch_size))
            while batch:
                yield batch
                batch = list(itertools.islice(sampler_iter, self.batch_size))

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
