"""InstanceNorm1d/2d/3d (``torch.nn.modules.instancenorm``): F.instance_norm as a layer."""

import warnings

from ember import Tensor
from ember.nn import functional as F

from .normalization import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Per-(sample, channel) normalisation over the spatial dims. Unlike the batch norms,
    affine and track_running_stats default to False, and num_batches_tracked is never
    incremented (PyTorch's behaviour: momentum=None means no update, not a cumulative average).
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         **factory_kwargs, bias=bias)

    # Each subclass defines _check_input_dim (the ranks it takes) and _get_no_batch_dim (the
    # rank of an unbatched input).

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        # Input statistics in training, and in eval when there are no running statistics.
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        version = local_metadata.get("version", None)
        # Checkpoints without a version (PyTorch < 0.4) saved running statistics even when
        # track_running_stats=False; they are reported and dropped rather than loaded.
        if version is None and not self.track_running_stats:
            running_stats_keys = [
                prefix + name for name in ("running_mean", "running_var")
                if prefix + name in state_dict
            ]
            if running_stats_keys:
                names = " and ".join(f'"{k}"' for k in running_stats_keys)
                error_msgs.append(
                    f"{type(self).__name__} was built with track_running_stats=False, but the "
                    f"state_dict holds running statistics ({names}). Checkpoints written before "
                    "PyTorch 0.4 saved them by default: drop these keys, or build the layer with "
                    "track_running_stats=True to use them."
                )
                for key in running_stats_keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            # num_features only sizes the parameters and buffers; without them it is unused.
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. "
                "You can silence this warning by not passing in num_features, "
                "which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or unbatched (C, L) input."""

    def _get_no_batch_dim(self) -> int:
        return 2

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or unbatched (C, H, W) input."""

    def _get_no_batch_dim(self) -> int:
        return 3

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or unbatched (C, D, H, W) input."""

    def _get_no_batch_dim(self) -> int:
        return 4

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")
