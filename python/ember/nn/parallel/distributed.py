"""DistributedDataParallel, as torch.nn.parallel.DistributedDataParallel, on ember.distributed.

Note [DDP buckets]: at construction rank 0's parameters and buffers are broadcast, and the
parameters that need gradients are grouped into buckets in reverse registration order (the
order backward usually produces their gradients), one dtype per bucket, the first bucket at most
1 MiB and the others ``bucket_cap_mb``. A post-accumulate-grad hook on each parameter marks it
ready during backward; when every parameter of a bucket is ready, its gradients are copied into
the bucket's flat buffer (unless they are views of it already, with
``gradient_as_bucket_view=True``) and the bucket's all-reduce starts asynchronously, so
communication overlaps the rest of backward. Buckets start in index order on every rank (a
bucket ready early waits for the ones before it), because collectives must be issued in the same
order everywhere. The hook that readies the last bucket waits for all of them and writes the
averaged gradients back, so ``backward()`` returns with the gradients synchronised.
"""

from __future__ import annotations

import contextlib
import functools

import ember
import ember.distributed as dist
from ember.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


class GradBucket:
    """What a communication hook gets (torch.distributed.GradBucket): the flat ``buffer()`` of a
    bucket's gradients and where each parameter's gradient sits in it."""

    def __init__(self, index, buffer, params, offsets, is_last):
        self._index, self._buffer, self._params = index, buffer, params
        self._offsets, self._is_last = offsets, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer.copy_(buffer)

    def gradients(self):
        return [self._buffer[o:o + p.numel()].view(p.shape)
                for p, o in zip(self._params, self._offsets)]

    def parameters(self):
        return list(self._params)

    def is_last(self):
        return self._is_last


class _Bucket:
    def __init__(self, index, params):
        self.index, self.params = index, params
        self.offsets, total = [], 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = ember.zeros(total, dtype=params[0].dtype)
        # Each parameter's slice of the buffer, made once: the buffer never moves.
        self.views = [self.buffer[o:o + p.numel()].view(p.shape)
                      for p, o in zip(params, self.offsets)]
        self.pending = len(params)
        self.future = None

    def view_of(self, i):
        return self.views[i]


def _build_buckets(params, cap_bytes):
    """Parameters in reverse order, split into buckets of one dtype and at most cap bytes (the
    first at most 1 MiB, so that communication starts early)."""
    buckets, current, current_bytes = [], [], 0
    limit = min(_FIRST_BUCKET_BYTES, cap_bytes)
    for p in reversed(params):
        size = p.numel() * p.element_size()
        if current and (current_bytes + size > limit or p.dtype != current[0].dtype):
            buckets.append(current)
            current, current_bytes, limit = [], 0, cap_bytes
        current.append(p)
        current_bytes += size
    if current:
        buckets.append(current)
    return buckets


def _broadcast_coalesced(tensors, group, src_rank):
    """Broadcasts ``tensors`` from ``src_rank`` with one collective per dtype."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for dtype in sorted(by_dtype, key=str):
        group_tensors = by_dtype[dtype]
        flat = ember.cat([t.detach().reshape(-1) for t in group_tensors])
        dist.broadcast(flat, src=src_rank, group=group)
        offset = 0
        with ember.no_grad():
            for t in group_tensors:
                t.copy_(flat[offset:offset + t.numel()].view(t.shape))
                offset += t.numel()


def _default_allreduce(state, bucket):
    global _allreduce_hook
    if _allreduce_hook is None:  # imported on first use: ember.distributed loads after nn
        from ember.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

        _allreduce_hook = allreduce_hook
    return _allreduce_hook(state, bucket)


_allreduce_hook = None


class DistributedDataParallel(Module):
    """Data parallelism across the processes of ``process_group`` (default: the default group):
    each process runs the module on its own inputs, and backward averages the gradients of
    every parameter across processes (Note [DDP buckets])."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: expected an nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments "
                             "only work with single-device/multiple-device GPU modules; Ember's "
                             f"modules are on the CPU (got device_ids={device_ids})")
        self.module = module
        self.process_group = process_group if process_group is not None else \
            dist.GroupMember.WORLD
        if self.process_group is None:
            raise ValueError("Default process group has not been initialized, please make sure "
                             "to call init_process_group.")
        if getattr(self.process_group, "_gloo", True) is None:
            # An NCCL-only group reduces CUDA tensors; DDP's modules are on the CPU (CUDA modules
            # need CUDA kernels for their ops, which do not exist yet).
            raise RuntimeError("DistributedDataParallel: the process group's backend is "
                               f"{self.process_group._backend!r}, which reduces CUDA tensors, "
                               "but Ember's DDP trains CPU modules: use the gloo backend (or "
                               "'cpu:gloo,cuda:nccl')")
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._world = dist.get_world_size(self.process_group)
        self._group_src = dist.get_global_rank(self.process_group, 0)
        self._comm_hook = _default_allreduce
        self._comm_state = self.process_group
        self._hook_registered = False
        self._plan_work = None
        self._join_divisor = None  # set while joined ranks shadow the active ones
        self._join_divide_initial = True

        seen, params = set(), []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        state = [p for p in module.parameters()] + [b for b in module.buffers()]
        if state:
            _broadcast_coalesced(state, self.process_group, self._group_src)
        cap = int((_DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._buckets = [_Bucket(i, ps) for i, ps in enumerate(_build_buckets(params, cap))]
        self._where = {}  # id(param) -> (bucket, index in bucket)
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        self._hooks = [p.register_post_accumulate_grad_hook(functools.partial(self._ready, p))
                       for p in params]
        self._reset_iteration()
        self._in_backward = False

    # -- iteration state ---------------------------------------------------------------------
    def _reset_iteration(self):
        for b in self._buckets:
            b.pending = len(b.params)
            b.future = None
            b.ready = [False] * len(b.params)
            b.used = [True] * len(b.params)
        self._next_bucket = 0
        self._launched = 0
        self._expect_backward = False

    def forward(self, *inputs, **kwargs):
        if self._expect_backward and self.require_backward_grad_sync and self._launched_any():
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss.")
        self._reset_iteration()
        if self._join_divisor is not None:
            active = ember.ones(1)
            dist.all_reduce(active, group=self.process_group)  # "still active", see _Join
            if not self._join_divide_initial:
                self._join_divisor = int(active.item())
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                _broadcast_coalesced(buffers, self.process_group, self._group_src)
        output = self.module(*inputs, **kwargs)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self._expect_backward = True
            if self.find_unused_parameters:
                self._mark_unused(output)
        return output

    def _launched_any(self):
        return any(b.pending != len(b.params) for b in self._buckets)

    def _mark_unused(self, output):
        """Marks ready the parameters that ``output`` does not depend on (they get no gradient,
        so their hook never fires)."""
        used = set()
        stack = [t.grad_fn for t in _tensors_in(output) if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            try:
                used.add(id(node.variable))
            except AttributeError:
                pass
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)
        for t in _tensors_in(output):
            if t.grad_fn is None and t.requires_grad:
                used.add(id(t))
        for p in self._params:
            if id(p) not in used:
                self._mark_ready(p, unused=True)

    # -- backward ----------------------------------------------------------------------------
    def _ready(self, param, _tensor=None):
        # Only after DDP's own forward (a direct call of .module, or a forward under no_sync,
        # leaves the gradients local).
        if not self.require_backward_grad_sync or not self._expect_backward:
            return
        self._mark_ready(param)

    def _mark_ready(self, param, unused=False):
        bucket, i = self._where[id(param)]
        if bucket.ready[i]:
            return
        bucket.ready[i] = True
        bucket.used[i] = not unused
        bucket.pending -= 1
        if unused:
            bucket.view_of(i).zero_()
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        while self._next_bucket < len(self._buckets) and \
                self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _launch(self, bucket):
        with ember.no_grad():
            for i, p in enumerate(bucket.params):
                if not bucket.ready[i] or p.grad is None:
                    continue
                view = bucket.view_of(i)
                if p.grad.data_ptr() != view.data_ptr():
                    view.copy_(p.grad)
        if bucket.index == 0 and self._comm_hook is _default_allreduce:
            # The buckets' all-reduces are the same every step: declared once, they skip the
            # group's argument checks (Note [Checking collectives]); a no-op while followed.
            # Declared right before the first one, so the group's worker wakes once for both.
            self._plan_work = self.process_group._gloo.declare_allreduce_plan(
                [b.buffer for b in self._buckets], dist.ReduceOp.SUM.value)
        grad_bucket = GradBucket(bucket.index, bucket.buffer, bucket.params, bucket.offsets,
                                 bucket.index == len(self._buckets) - 1)
        bucket.future = self._comm_hook(self._comm_state, grad_bucket)

    def _globally_used(self):
        """Per bucket, which parameters got a gradient on some rank (one small all-reduce, only
        with find_unused_parameters): a parameter unused everywhere keeps grad None."""
        if not self.find_unused_parameters:
            return None
        flags = ember.tensor([int(u) for b in self._buckets for u in b.used], dtype=ember.int32)
        dist.all_reduce(flags, group=self.process_group)
        used, k = [], 0
        for b in self._buckets:
            used.append([bool(flags[k + i].item()) for i in range(len(b.params))])
            k += len(b.params)
        return used

    def _finish(self):
        # The group runs its collectives in call order, so once the last bucket's has ended the
        # plan and every earlier bucket have too: waiting for it first wakes this thread once,
        # not once per bucket (each wake-up competes for the cores with the group's threads).
        self._buckets[-1].future.wait()
        if self._plan_work is not None:
            self._plan_work.wait(self.process_group._gloo.timeout_seconds)
            self._plan_work = None
        used_somewhere = self._globally_used()
        with ember.no_grad():
            for index, bucket in enumerate(self._buckets):
                result = bucket.future.wait()
                if isinstance(result, (list, tuple)):
                    result = result[0]
                if result is not bucket.buffer:
                    bucket.buffer.copy_(result)
                if self._join_divisor is not None:
                    bucket.buffer.mul_(self._world / self._join_divisor)
                for i, p in enumerate(bucket.params):
                    view = bucket.view_of(i)
                    if used_somewhere is not None and not used_somewhere[index][i]:
                        continue
                    if p.grad is None:
                        p.grad = view.clone() if not self.gradient_as_bucket_view else view
                    elif p.grad.data_ptr() != view.data_ptr():
                        if self.gradient_as_bucket_view and p.grad.shape == view.shape:
                            p.grad = view
                        else:
                            p.grad.copy_(view)
        self._expect_backward = False
        for b in self._buckets:
            b.future = None

    # -- public API --------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the context; the first backward after it
        synchronises them."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def register_comm_hook(self, state, hook):
        """Replaces the all-reduce of each bucket by ``hook(state, bucket) -> Future`` whose
        value is the bucket's reduced (averaged) buffer. Once, before the first backward."""
        if self._hook_registered:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._hook_registered = True
        self._comm_hook, self._comm_state = hook, state

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Uneven inputs: a rank that runs out of batches leaves the ``with`` loop and then
        shadows the others' collectives (with zero gradients) until every rank is done."""
        return _Join(self, divide_by_initial_world_size, enable, throw_on_early_termination)

    def _shadow_backward(self):
        """One joined iteration: zero gradients into every bucket's all-reduce."""
        self._reset_iteration()
        plan = None
        if self._comm_hook is _default_allreduce:  # as _launch does on the active ranks
            plan = self.process_group._gloo.declare_allreduce_plan(
                [b.buffer for b in self._buckets], dist.ReduceOp.SUM.value)
        for bucket in self._buckets:
            bucket.buffer.zero_()
            grad_bucket = GradBucket(bucket.index, bucket.buffer, bucket.params, bucket.offsets,
                                     bucket.index == len(self._buckets) - 1)
            bucket.future = self._comm_hook(self._comm_state, grad_bucket)
        for bucket in self._buckets:
            bucket.future.wait()
            bucket.future = None
        if plan is not None:
            plan.wait(self.process_group._gloo.timeout_seconds)

    def state_dict(self, *args, **kwargs):
        return super().state_dict(*args, **kwargs)


class _Join:
    def __init__(self, ddp, divide_by_initial_world_size, enable, throw_on_early_termination):
        self.ddp, self.enable = ddp, enable
        self.divide_initial = divide_by_initial_world_size
        self.throw = throw_on_early_termination

    def __enter__(self):
        if self.enable:
            self.ddp._join_divisor = self.ddp._world
            self.ddp._join_divide_initial = self.divide_initial
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self.enable:
            return False
        if exc_type is not None:
            self.ddp._join_divisor = None
            return False
        group = self.ddp.process_group
        shadowed = 0
        try:
            while True:
                flag = ember.zeros(1)
                dist.all_reduce(flag, group=group)  # each active rank adds 1 in its forward
                active = int(flag.item())
                if active == 0:
                    break
                if self.throw:
                    raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                       "Throwing across all ranks.")
                if self.ddp.broadcast_buffers:
                    buffers = list(self.ddp.module.buffers())
                    if buffers:
                        _broadcast_coalesced(buffers, group, self.ddp._group_src)
                self.ddp._shadow_backward()
                shadowed += 1
            self._sync_final_model(shadowed == 0)
        finally:
            self.ddp._join_divisor = None
        return False

    def _sync_final_model(self, is_last_joiner):
        """The ranks that joined early skipped the last optimizer steps: every rank takes the
        model of a rank that joined last, as PyTorch's DDP join hook does."""
        group = self.ddp.process_group
        me = dist.get_rank(group)
        candidate = ember.tensor([me if is_last_joiner else -1], dtype=ember.int64)
        dist.all_reduce(candidate, op=dist.ReduceOp.MAX, group=group)
        src = dist.get_global_rank(group, int(candidate.item()))
        state = list(self.ddp.module.parameters()) + list(self.ddp.module.buffers())
        _broadcast_coalesced(state, group, src)


def _tensors_in(value):
    if isinstance(value, ember.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)
