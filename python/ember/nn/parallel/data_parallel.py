"""DataParallel and data_parallel without accelerators (see the package's docstring)."""

from __future__ import annotations

from ember.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module`` as torch.nn.DataParallel does: the wrapped module is ``self.module``
    (so the state_dict keys gain a ``module.`` prefix, as PyTorch's). With no accelerator,
    PyTorch keeps ``device_ids`` empty and calls the module directly; so does Ember, which
    has none."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected an nn.Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """torch.nn.parallel.data_parallel: on a machine without accelerators PyTorch raises this
    error, as there is no device to scatter the inputs to; call the module directly (or wrap it
    in DataParallel, which does)."""
    raise RuntimeError("device type could not be determined")
