"""SyncBatchNorm, as torch.nn.SyncBatchNorm: batch normalisation whose statistics cover the batch
of every process of a group (each with its own part), for data-parallel training with small
per-process batches.

In training, each process computes per-channel (count, mean, M2) of its part; one all_gather
combines them exactly (Chan's parallel variance), so every process normalises with the global
mean and variance. Backward all-reduces the per-channel sums of dy and dy * (x - mean), which
the input gradient needs; the weight and bias gradients stay local, and DDP averages them. Out
of training, with one process, or without a process group it is a plain BatchNorm.
"""

from __future__ import annotations

import ember
from ember.autograd import Function

from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _channel_view(t, dim):
    """(C,) -> broadcastable over an (N, C, ...) input of ``dim`` dimensions."""
    return t.view([1, -1] + [1] * (dim - 2))


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group, world):
        import ember.distributed as dist

        channels = x.shape[1]
        dims = [0] + list(range(2, x.dim()))
        count = x.numel() // channels if channels else 0
        if count:
            mean = x.mean(dims)
            m2 = ((x - _channel_view(mean, x.dim())) ** 2).sum(dims)
        else:
            mean = ember.zeros(channels, dtype=x.dtype)
            m2 = ember.zeros(channels, dtype=x.dtype)
        stats = ember.cat([ember.full((channels,), float(count), dtype=ember.float64),
                           mean.to(ember.float64), m2.to(ember.float64)])
        gathered = [ember.empty_like(stats) for _ in range(world)]
        dist.all_gather(gathered, stats, group=group)
        counts = ember.stack([g[:channels] for g in gathered])
        means = ember.stack([g[channels:2 * channels] for g in gathered])
        m2s = ember.stack([g[2 * channels:] for g in gathered])
        total = counts.sum(0)
        if channels and float(total[0]) <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(x.shape)} across the group")
        global_mean = (counts * means).sum(0) / total
        global_m2 = (m2s + counts * (means - global_mean) ** 2).sum(0)
        var = global_m2 / total
        if running_mean is not None:
            with ember.no_grad():
                running_mean.mul_(1 - momentum).add_(global_mean.to(running_mean.dtype),
                                                     alpha=momentum)
                unbiased = global_m2 / (total - 1)
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype),
                                                    alpha=momentum)
        mean_x = global_mean.to(x.dtype)
        invstd = (var + eps).rsqrt().to(x.dtype)
        x_hat = (x - _channel_view(mean_x, x.dim())) * _channel_view(invstd, x.dim())
        out = x_hat
        if weight is not None:
            out = out * _channel_view(weight, x.dim())
        if bias is not None:
            out = out + _channel_view(bias, x.dim())
        ctx.save_for_backward(x_hat, weight, invstd)
        ctx.group, ctx.world, ctx.total = group, world, float(total[0]) if channels else 0.0
        ctx.has_bias = bias is not None
        return out

    @staticmethod
    def backward(ctx, grad_out):
        import ember.distributed as dist

        x_hat, weight, invstd = ctx.saved_tensors
        dim = grad_out.dim()
        dims = [0] + list(range(2, dim))
        sum_dy = grad_out.sum(dims)
        sum_dy_xhat = (grad_out * x_hat).sum(dims)
        grad_weight = sum_dy_xhat if weight is not None else None
        grad_bias = sum_dy if ctx.has_bias else None
        both = ember.cat([sum_dy, sum_dy_xhat])
        dist.all_reduce(both, group=ctx.group)
        channels = sum_dy.shape[0]
        mean_dy = both[:channels] / ctx.total
        mean_dy_xhat = both[channels:] / ctx.total
        scale = invstd if weight is None else invstd * weight
        grad_x = _channel_view(scale, dim) * (grad_out - _channel_view(mean_dy, dim) -
                                             x_hat * _channel_view(mean_dy_xhat, dim))
        return grad_x, grad_weight, grad_bias, None, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over the batches of every process of ``process_group`` (default: the
    default group); input (N, C, *)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        import ember.distributed as dist

        self._check_input_dim(input)
        if not (self.training and dist.is_available() and dist.is_initialized()):
            return super().forward(input)
        group = self.process_group if self.process_group is not None else \
            dist.GroupMember.WORLD
        world = dist.get_world_size(group)
        if world <= 1:
            return super().forward(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked)
        running = self.track_running_stats
        return _SyncBatchNormFunction.apply(
            input, self.weight, self.bias, self.running_mean if running else None,
            self.running_var if running else None, self.eps, momentum, group, world)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm holding the same
        parameters and statistics (recursively)."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
            if module.affine:
                with ember.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return converted


