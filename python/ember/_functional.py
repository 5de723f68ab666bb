"""Functions that are naturally Python: they compute on shapes, not on tensor data."""

import builtins

from ._size import Size


def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to, as torch.broadcast_shapes.

    Each shape is an int or a sequence of ints. Raises RuntimeError naming the first argument
    that does not broadcast, and ValueError for a negative size.
    """
    normalized = []
    for shape in shapes:
        if isinstance(shape, builtins.int) and not isinstance(shape, builtins.bool):
            normalized.append((shape,))
        elif isinstance(shape, (tuple, list)):
            normalized.append(tuple(shape))
        else:
            raise RuntimeError(
                "[broadcast_shapes] Input shapes should be of type ints, a tuple of ints, or a "
                f"list of ints, got {shape}"
            )
    result = [1] * builtins.max((len(s) for s in normalized), default=0)
    for idx, shape in enumerate(normalized):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] < 0:
                raise ValueError(
                    "[broadcast_shapes] Attempting to broadcast a dimension with negative length!"
                )
            if shape[i] == 1 or shape[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(
                    f"[broadcast_shapes] Attempting to broadcast a dimension of length {shape[i]} "
                    f"at {i}! Mismatching argument at index {idx} had {shape}; but expected shape "
                    f"should be broadcastable to {result}"
                )
            result[i] = shape[i]
    return Size(result)
