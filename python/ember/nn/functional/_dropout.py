"""Dropout functions of ``torch.nn.functional`` over the C++ ops ``ember.dropout``,
``ember.feature_dropout``, ``ember.alpha_dropout`` and ``ember.feature_alpha_dropout`` (random
draws from ember's default Philox generator: ``ember.manual_seed`` makes them reproducible)."""

import warnings

import ember

__all__ = [
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
]


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1 / (1 - p)."""
    _check_p(p)
    return ember.dropout_(input, p, training) if inplace else ember.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the mean and variance of SELU activations."""
    _check_p(p)
    if inplace:
        return ember.alpha_dropout_(input, p, training)
    return ember.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    _check_p(p)
    if inplace:
        return ember.feature_alpha_dropout_(input, p, training)
    return ember.feature_alpha_dropout(input, p, training)


def _feature_dropout(input, p, training, inplace):
    if inplace:
        return ember.feature_dropout_(input, p, training)
    return ember.feature_dropout(input, p, training)


def _unbatched_feature_dropout(input, p, training, inplace, is_batched):
    if is_batched:
        return _feature_dropout(input, p, training, inplace)
    # An unbatched input is treated as a batch of one; in place, the write goes through the
    # unsqueezed view, so the input itself is the result (PyTorch: unsqueeze_ / squeeze_).
    if inplace:
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    return _unbatched_feature_dropout(input, p, training, inplace, inp_dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) inputs (a 3-D input is taken as (N, C, L), as
    PyTorch does, with its warning)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _unbatched_feature_dropout(input, p, training, inplace, inp_dim == 5)
