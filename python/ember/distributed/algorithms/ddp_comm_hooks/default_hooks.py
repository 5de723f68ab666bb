"""The built-in DDP communication hooks: ``allreduce_hook`` (what DDP does without a hook) and
the compressing ``fp16_compress_hook`` / ``bf16_compress_hook``, which halve the bytes sent at
the cost of precision. A hook takes (state, bucket) and returns a Future of the bucket's
averaged gradients; ``state`` is the process group (None: the default one)."""

from __future__ import annotations

import ember
import ember.distributed as dist

__all__ = ["allreduce_hook", "bf16_compress_hook", "fp16_compress_hook",
           "bf16_compress_wrapper", "fp16_compress_wrapper"]


def _group(state):
    return state if state is not None else dist.GroupMember.WORLD


def allreduce_hook(process_group, bucket):
    """Averages the bucket over the group: divide, then one all-reduce."""
    group = _group(process_group)
    buffer = bucket.buffer()
    buffer.div_(dist.get_world_size(group))
    work = dist.all_reduce(buffer, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def _compress_hook(dtype):
    def hook(process_group, bucket):
        group = _group(process_group)
        buffer = bucket.buffer()
        compressed = buffer.to(dtype).div_(dist.get_world_size(group))
        work = dist.all_reduce(compressed, group=group, async_op=True)

        def decompress(fut):
            buffer.copy_(fut.value()[0])
            return buffer

        return work.get_future().then(decompress)

    return hook


fp16_compress_hook = _compress_hook(ember.float16)
fp16_compress_hook.__name__ = "fp16_compress_hook"
fp16_compress_hook.__doc__ = "Sends the bucket as float16 (halves the bytes), averaged."
bf16_compress_hook = _compress_hook(ember.bfloat16)
bf16_compress_hook.__name__ = "bf16_compress_hook"
bf16_compress_hook.__doc__ = "Sends the bucket as bfloat16 (halves the bytes), averaged."


def _wrapper(dtype):
    def wrap(hook):
        def wrapped(state, bucket):
            buffer = bucket.buffer()
            original = buffer.clone()
            buffer_in_dtype = buffer.to(dtype)
            bucket._buffer = buffer_in_dtype
            future = hook(state, bucket)

            def decompress(fut):
                value = fut.value()
                value = value[0] if isinstance(value, (list, tuple)) else value
                original.copy_(value)
                buffer.copy_(original)
                bucket._buffer = buffer
                return buffer

            return future.then(decompress)

        return wrapped

    return wrap


fp16_compress_wrapper = _wrapper(ember.float16)
bf16_compress_wrapper = _wrapper(ember.bfloat16)
