"""Variable-length sequences for the recurrent layers (torch.nn.utils.rnn): PackedSequence,
pack_padded_sequence, pad_packed_sequence, pad_sequence, unpad_sequence, pack_sequence,
unpack_sequence, invert_permutation.

Packing and padding are each one gather (``index_select``) with an index computed from the
lengths, so they cost one pass over the data whatever the number of sequences, and their
gradients come from index_select's."""

from collections.abc import Iterable
from typing import NamedTuple, Optional

import numpy as np

import ember
from ember import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and the per-time-step batch sizes of a packed batch of sequences.

    ``data``: the time steps of all sequences, time-major (step 0 of every sequence, then step
    1 of those that are long enough, ...). ``batch_sizes``: how many sequences take part in each
    step (int64, on the CPU). ``sorted_indices``: the permutation that sorted the batch by
    decreasing length (None when it was already sorted); ``unsorted_indices`` its inverse.
    Build one with pack_padded_sequence or pack_sequence, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(
            cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices)
        )

    def to(self, *args, **kwargs):
        """data converted like Tensor.to; the indices follow data's device, batch_sizes stays."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def cuda(self, *args, **kwargs):
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=ember.double)

    def float(self):
        return self.to(dtype=ember.float)

    def half(self):
        return self.to(dtype=ember.half)

    def long(self):
        return self.to(dtype=ember.long)

    def int(self):
        return self.to(dtype=ember.int)

    def short(self):
        return self.to(dtype=ember.short)

    def char(self):
        return self.to(dtype=ember.int8)

    def byte(self):
        return self.to(dtype=ember.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. "
                "Instances of PackedSequence should never be created manually. "
                "They should be instantiated by functions like pack_sequence "
                "and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    # PackedSequence((data, batch_sizes), sorted_indices=...)
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def _packed_sequence_init(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    data, batch_sizes, sorted_indices, unsorted_indices = _packed_sequence_init_args(
        data, batch_sizes, sorted_indices, unsorted_indices
    )
    return PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    output = ember.empty_like(permutation)
    output.scatter_(0, permutation, ember.arange(0, permutation.numel(), device=permutation.device))
    return output


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(
                f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                f"{lengths.dtype} tensor"
            )
        return np.asarray(lengths.to(ember.int64).numpy(), dtype=np.int64)
    return np.asarray(list(lengths), dtype=np.int64).reshape(-1)


def _pack_padded(input, lengths, batch_first):
    """data and batch_sizes of a (T, B, *) / (B, T, *) input whose lengths decrease."""
    steps = input if not batch_first else input.transpose(0, 1)  # (T, B, *)
    if steps.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    max_len, batch = steps.size(0), steps.size(1)
    if lengths.shape[0] != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.shape[0]} "
            f"(batch_size={batch})"
        )
    if lengths[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability."
        )
    if lengths[0] > max_len:
        raise RuntimeError(
            f"Expected the longest length ({lengths[0]}) to be at most the padded sequence "
            f"length ({max_len})"
        )
    # batch_sizes[t] = number of sequences longer than t.
    t = np.arange(lengths[0])
    batch_sizes = (lengths[None, :] > t[:, None]).sum(1).astype(np.int64)
    # Rows of the (T * B, *) view, time-major, keeping (t, b) with b < batch_sizes[t].
    keep = np.arange(batch)[None, :] < batch_sizes[:, None]
    rows = (t[:, None] * batch + np.arange(batch)[None, :])[keep]
    flat = steps.reshape(max_len * batch, *steps.shape[2:])
    data = flat.index_select(0, ember.from_numpy(np.ascontiguousarray(rows)))
    return data, ember.from_numpy(batch_sizes)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given
    lengths. With enforce_sorted=False the batch is first sorted by decreasing length (the
    permutation is kept in the result)."""
    lengths_np = _lengths_array(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-lengths_np, kind="stable")
        lengths_np = lengths_np[order]
        sorted_indices = ember.from_numpy(np.ascontiguousarray(order.astype(np.int64)))
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths_np, batch_first)
    return _packed_sequence_init(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded, lengths), padded of shape (T, B, *) (or
    (B, T, *)), T = total_length or the longest length; lengths int64 in the original order."""
    batch_sizes = np.asarray(sequence.batch_sizes.numpy(), dtype=np.int64)
    max_seq_length = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length "
                "of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = int(batch_sizes[0]) if batch_sizes.shape[0] > 0 else 0
    n = data.size(0)
    # Row of data for each (t, b); n (an appended padding row) where b has ended.
    starts = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]) if batch_sizes.size else []
    index = np.full((max_seq_length, batch), n, dtype=np.int64)
    for t, (start, size) in enumerate(zip(starts, batch_sizes)):
        index[t, :size] = start + np.arange(size)
    pad_row = ember.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    extended = ember.cat([data, pad_row], 0)
    padded = extended.index_select(0, ember.from_numpy(index.reshape(-1)))
    padded = padded.view(max_seq_length, batch, *data.shape[1:])
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    lengths = ember.from_numpy(lengths)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padding with
    padding_value on the right (or the left)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if s.dim() == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                "pad_sequence: all sequences must have the same trailing dimensions "
                f"{trailing}, got a sequence of shape {tuple(s.shape)}"
            )
    lengths = np.array([s.size(0) for s in sequences], dtype=np.int64)
    max_len = int(lengths.max())
    total = int(lengths.sum())
    dtype = sequences[0].dtype
    for s in sequences[1:]:
        dtype = ember.promote_types(dtype, s.dtype)
    pad_row = ember.full((1, *trailing), padding_value, dtype=dtype)
    flat = ember.cat([*(s.to(dtype) for s in sequences), pad_row], 0)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = np.arange(max_len)[None, :]  # (1, T)
    if padding_side == "right":
        offset = pos
    else:  # the sequence ends at the last step
        offset = pos - (max_len - lengths)[:, None]
    valid = (offset >= 0) & (offset < lengths[:, None])
    index = np.where(valid, starts[:, None] + offset, total)  # (B, T)
    if not batch_first:
        index = index.T
    out = flat.index_select(0, ember.from_numpy(np.ascontiguousarray(index).reshape(-1)))
    return out.view(*index.shape, *trailing)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths_np = _lengths_array(lengths)
    idx = ember.arange(padded_sequences.shape[1])
    # A boolean mask (a copy, as PyTorch), not a slice view of the padded batch.
    return [seq[idx < int(length)] for seq, length in zip(padded_sequences, lengths_np)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences of shape (L_i, *) (pad_sequence then pack_padded_sequence)."""
    lengths = ember.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence, in their original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
