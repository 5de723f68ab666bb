"""``ember.nn.utils.weight_norm`` / ``remove_weight_norm``: the older, hook-based weight
normalization (PyTorch keeps it, deprecated in favour of
``ember.nn.utils.parametrizations.weight_norm``). The weight becomes two parameters,
``<name>_g`` (magnitude) and ``<name>_v`` (direction), and a forward pre-hook recomputes
``<name> = g * v / ||v||`` before every forward. Also the two helpers both versions share."""

from __future__ import annotations

import warnings

import ember
from ember import Tensor
from ember.nn.parameter import Parameter

__all__ = ["WeightNorm", "norm_except_dim", "remove_weight_norm", "weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against v
    (size 1 except along dim). ``dim=-1`` means no dim is kept: the norm of the whole tensor
    (PyTorch's convention, which weight_norm(dim=None) relies on)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = [v.size(0)] + [1] * (v.dim() - 1)
        return v.contiguous().view(v.size(0), -1).norm(pow, dim=1).view(*shape)
    if dim == v.dim() - 1:
        shape = [1] * (v.dim() - 1) + [v.size(-1)]
        return v.contiguous().view(-1, v.size(-1)).norm(pow, dim=0).view(*shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v * (g / ||v||), the norm over every dim but ``dim`` (differentiable in v and g)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: recomputes the weight from g and v."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn(
            "ember.nn.utils.weight_norm is deprecated in favor of "
            "ember.nn.utils.parametrizations.weight_norm.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        # A plain attribute (not a parameter), so it is not saved; the hook refreshes it.
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        with ember.no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` (w = g v / ||v||, the norm
    over every dim but ``dim``; over everything for ``dim=None``) and recompute it before each
    forward. Deprecated in PyTorch: prefer ``parametrizations.weight_norm``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo ``weight_norm``: ``<name>`` becomes one parameter again, holding g v / ||v||."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            module._forward_pre_hooks_with_kwargs.pop(k, None)
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
