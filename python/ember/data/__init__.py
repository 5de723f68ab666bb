"""ember.data: WebDataset-compatible tar-shard datasets.

Shards are POSIX tar archives; consecutive files sharing a basename (the key) form a sample, each
extension a field. The names are WebDataset's, so ``import ember.data as wds`` runs WebDataset
pipelines: ``WebDataset(urls).shuffle(1000).decode("torchrgb").to_tuple("jpg", "cls")
.batched(64)``, ``WebLoader``, ``TarWriter``/``ShardWriter``, the functional ``DataPipeline``.

Beyond WebDataset:

- the tar reading, npy parsing and JPEG decoding run in C++ with the GIL released;
- every sample is read exactly once per epoch across ranks and workers, whatever the shard and
  worker counts, and ``equalize=True`` gives every rank the same number of batches;
- ``state_dict()`` / ``load_state_dict()`` resume mid-epoch at the exact next sample;
- a corrupt or truncated shard raises :class:`ShardError` with its URL and byte offset, or with a
  handler is skipped and counted in ``ember.data.report``;
- shard indexes (``index_shards``) give random access (:class:`ShardedDataset`), ``len()`` and
  exact splits without reading ahead.

See docs/design/data-pipeline.md.
"""

from ._decode import (
    IMAGE_EXTENSIONS,
    Continue,
    Decoder,
    DecodingError,
    basichandlers,
    gzfilter,
    handle_extension,
    imagehandler,
    imagespecs,
)
from ._functional import (
    ResampledShards,
    SimpleShardList,
    resampled,
    tarfile_samples,
    tarfile_to_samples,
)
from ._handlers import (
    SkipReport,
    ignore_and_continue,
    ignore_and_stop,
    report,
    reraise_exception,
    warn_and_continue,
    warn_and_stop,
)
from ._index import INDEX_SUFFIX, ShardedDataset, ShardIndex, index_shards, load_index
from ._pipeline import DataPipeline, FluidInterface, WebDataset, WebLoader
from ._plan import Piece, plan
from ._source import ShardError, single_node_only, split_by_node, split_by_worker
from ._stages import (
    batched,
    decode,
    default_collation_fn,
    extract_keys,
    getfirst,
    listed,
    map,
    map_dict,
    map_tuple,
    non_empty,
    pipelinefilter,
    rename,
    rename_keys,
    rsample,
    select,
    shuffle,
    slice,
    to_tuple,
    unbatched,
    unlisted,
)
from ._urls import braceexpand, expand_urls
from ._writer import ShardWriter, TarWriter

__all__ = [
    "WebDataset", "WebLoader", "DataPipeline", "FluidInterface", "ShardedDataset", "ShardIndex",
    "index_shards", "load_index", "INDEX_SUFFIX", "TarWriter", "ShardWriter", "ShardError",
    "Decoder", "DecodingError", "Continue", "imagehandler", "handle_extension", "basichandlers",
    "gzfilter", "imagespecs", "IMAGE_EXTENSIONS", "SimpleShardList", "ResampledShards",
    "tarfile_to_samples", "tarfile_samples", "split_by_node", "split_by_worker",
    "single_node_only", "reraise_exception", "ignore_and_continue", "warn_and_continue",
    "ignore_and_stop", "warn_and_stop", "SkipReport", "report", "batched", "unbatched",
    "listed", "unlisted", "shuffle", "map", "map_dict", "map_tuple", "select", "to_tuple",
    "rename", "slice", "decode", "getfirst", "default_collation_fn", "pipelinefilter",
    "braceexpand", "expand_urls", "Piece", "plan", "rsample", "extract_keys", "rename_keys",
    "non_empty", "resampled",
]


def _register_with_torch():  # also called by DataPipeline(), for torch imported later
    """When PyTorch is loaded too, its DataLoader sees Ember's iterable datasets (these
    pipelines) as iterable datasets: a program that swapped only its webdataset import for
    ember.data keeps working with torch.utils.data.DataLoader (workers split as with Ember's)."""
    import sys

    global _torch_registered
    if _torch_registered:
        return
    torch = sys.modules.get("torch")
    torch_iterable = getattr(getattr(getattr(torch, "utils", None), "data", None),
                             "IterableDataset", None)
    if torch_iterable is not None and hasattr(torch_iterable, "register"):
        from ..utils.data import IterableDataset

        torch_iterable.register(IterableDataset)
        _torch_registered = True


_torch_registered = False


_register_with_torch()
