"""``ember.nn.utils.spectral_norm`` / ``remove_spectral_norm``: the older, hook-based spectral
normalization (``parametrizations.spectral_norm`` is the newer form). The parameter moves to
``<name>_orig``, the power-iteration vectors are the buffers ``<name>_u`` / ``<name>_v``, and a
forward pre-hook sets ``<name> = <name>_orig / sigma`` before every forward (refining u and v
first in training mode). State_dict keys and the ``spectral_norm`` metadata version are
PyTorch's, including the conversion of version-0 checkpoints (which stored ``<name>`` but no
``<name>_v``)."""

from __future__ import annotations

import ember
import ember.nn.functional as F
from ember import Tensor
from ember.nn.modules import conv as _conv
from ember.nn.parameter import Parameter


def _conv_transpose_classes() -> tuple:
    # The output dim of a transposed convolution's weight is 1 (weight is in x out x k...).
    return tuple(
        getattr(_conv, n)
        for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        if hasattr(_conv, n)
    )


__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``.

    Invariant after every power-iteration step: u = normalize(W v), and sigma = u^T W v is
    the estimate of W's largest singular value (W: the weight as a matrix, ``dim`` first).
    """

    # Version 1 stores <name>_v; version 0 (None) checkpoints stored <name> and no v.
    _version: int = 1

    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim]
            )
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with ember.no_grad():
                w = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    # In place: the buffers themselves carry the estimate to the next forward.
                    v.copy_(F.normalize(ember.mv(w.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ember.mv(w, v), dim=0, eps=self.eps))
            # Clones, so the next in-place update cannot change what backward uses.
            u = u.clone()
            v = v.clone()
        sigma = ember.dot(u, ember.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module) -> None:
        with ember.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(
            module, self.name, self.compute_weight(module, do_power_iteration=module.training)
        )

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma) -> Tensor:
        # A v with u = normalize(W v) and u^T W v = target_sigma: the least-squares solution
        # of W v = u (through the pseudo-inverse, as W^T W may be singular), rescaled.
        wt = weight_mat.t()
        v = (ember.linalg.pinv(wt @ weight_mat) @ (wt @ u.unsqueeze(1))).squeeze(1)
        return v * (target_sigma / ember.dot(u, ember.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with ember.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # Code that reads module.<name> before the first forward (initialisers) finds the raw
        # weight, as a plain attribute (assigning the Parameter would register it again).
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)

        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 checkpoint (<name>_orig, <name>, <name>_u) to version 1."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (
            version is None
            and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
            and weight_key not in state_dict
        ):
            # A current layout without metadata (a state dict made by hand): nothing to do.
            return
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            key = weight_key + suffix
            if key not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(key)
        if has_missing_keys:
            return
        with ember.no_grad():
            # Version 0 kept W = W_orig / sigma and u = normalize(W_orig v): recover sigma from
            # the two weights, then a v that satisfies the invariant.
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records the layout version under ``_metadata[...]['spectral_norm']``."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (``n_power_iterations`` steps per training forward), through a forward pre-hook. ``dim`` is
    the output dim (default 0, 1 for ConvTranspose)."""
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``: ``<name>`` is one parameter again, holding W_orig / sigma."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            module._forward_pre_hooks_with_kwargs.pop(k, None)
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")

    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        inner = getattr(hook, "hook", hook)  # Ember wraps these hooks in _WrappedHook
        if isinstance(inner, SpectralNormLoadStateDictPreHook) and inner.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
