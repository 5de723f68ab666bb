"""Embedding functions of ``torch.nn.functional``: embedding, embedding_bag (C++ ops
``ember.embedding`` / ``ember.embedding_bag`` with their own backward) and one_hot."""

import ember

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    with ember.no_grad():
        ember.embedding_renorm_(weight.detach(), input, max_norm, norm_type)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer ``input``: shape input.shape + (embedding_dim,).

    ``padding_idx``: that row gets no gradient. ``max_norm``: the referenced rows are rescaled in
    place to a ``norm_type``-norm of at most max_norm before the lookup."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return ember.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embeddings without materialising the lookups.

    ``input`` 2-D (B, N): B bags of N indices; 1-D with ``offsets``: bag b starts at offsets[b]."""
    if weight.dtype == ember.long and input.is_floating_point():
        import warnings

        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. "
            "Usage `embedding_bag(weight, input, ...)` is deprecated, "
            "and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if not weight.dim() == 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None"
                ", as input is treated is a mini-batch of"
                " fixed length sequences. However, found "
                f"offsets of type {type(offsets)}"
            )
        offsets = ember.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. "
            "per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    ret, _, _, _ = ember.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum,
                                       sparse, per_sample_weights, include_last_offset,
                                       padding_idx)
    return ret


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,) with a 1 at each index."""
    if tensor.dtype != ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return ember.zeros(*tensor.shape, num_classes, dtype=ember.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    elif int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = ember.zeros(*tensor.shape, num_classes, dtype=ember.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)
