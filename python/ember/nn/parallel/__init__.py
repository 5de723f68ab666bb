"""ember.nn.parallel, as torch.nn.parallel on a machine without accelerators (PyTorch's CPU
build behaves the same way): ``DataParallel`` runs the wrapped module as it is, and
``data_parallel`` has no device type to scatter to. Ember has no CUDA devices, so there is
nothing to replicate a module over; scripts that wrap their model in ``DataParallel`` (and save
its ``module.``-prefixed state_dict) run unchanged."""

from ember.nn.parallel.data_parallel import DataParallel, data_parallel
from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
