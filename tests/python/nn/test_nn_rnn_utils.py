"""ember.nn.utils.rnn: PackedSequence, pack_padded_sequence, pad_packed_sequence, pad_sequence,
pack_sequence, unpack_sequence, unpad_sequence, invert_permutation: layouts against NumPy,
round trips, gradients, errors, and parity with torch.nn.utils.rnn."""

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.nn.utils import rnn
from ember.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def seqs(lengths=(4, 2, 3), feat=(2,), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, *feat)) for n in lengths]


def np_pad(arrays, batch_first=False, value=0.0, side="right"):
    t = max(len(a) for a in arrays)
    out = np.full((len(arrays), t, *arrays[0].shape[1:]), value)
    for b, a in enumerate(arrays):
        if side == "right":
            out[b, : len(a)] = a
        else:
            out[b, t - len(a):] = a
    return out if batch_first else out.swapaxes(0, 1)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("feat", [(), (2,), (2, 3)])
def test_pad_sequence(batch_first, side, feat):
    arrays = seqs(feat=feat)
    y = pad_sequence([ember.tensor(a) for a in arrays], batch_first=batch_first,
                     padding_value=-1.5, padding_side=side)
    np.testing.assert_array_equal(y.numpy(), np_pad(arrays, batch_first, -1.5, side))


def test_pad_sequence_gradient_and_dtypes():
    arrays = seqs()
    ts = tuple(ember.tensor(a, requires_grad=True) for a in arrays)
    assert gradcheck(lambda *x: pad_sequence(list(x), batch_first=True), ts)
    ints = pad_sequence([ember.tensor([1, 2, 3]), ember.tensor([4])], padding_value=9)
    assert ints.dtype == ember.int64
    assert ints.tolist() == [[1, 4], [2, 9], [3, 9]]


def test_pack_padded_sequence_layout():
    arrays = seqs((4, 3, 2))
    padded = ember.tensor(np_pad(arrays))  # (T, B, 2)
    packed = pack_padded_sequence(padded, [4, 3, 2])
    assert isinstance(packed, PackedSequence)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1]
    assert packed.batch_sizes.dtype == ember.int64
    expected = [arrays[b][t] for t in range(4) for b in range(3) if t < len(arrays[b])]
    np.testing.assert_array_equal(packed.data.numpy(), np.stack(expected))
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    # Named-tuple behaviour.
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert data is packed.data and packed[1] is batch_sizes


def test_pack_unsorted_and_round_trip():
    arrays = seqs((2, 5, 3))
    padded = ember.tensor(np_pad(arrays, batch_first=True))
    packed = pack_padded_sequence(padded, ember.tensor([2, 5, 3]), batch_first=True,
                                  enforce_sorted=False)
    assert packed.sorted_indices.tolist() == [1, 2, 0]
    assert packed.unsorted_indices.tolist() == [2, 0, 1]
    out, lengths = pad_packed_sequence(packed, batch_first=True, padding_value=7.0)
    assert lengths.tolist() == [2, 5, 3]
    np.testing.assert_array_equal(out.numpy(), np_pad(arrays, True, 7.0))
    out, _ = pad_packed_sequence(packed, total_length=8)
    assert out.shape == (8, 3, 2)
    np.testing.assert_array_equal(out.numpy()[:5], np_pad(arrays))
    assert (out.numpy()[5:] == 0).all()


def test_pack_sequence_and_unpack_sequence():
    arrays = seqs((3, 5, 1))
    packed = pack_sequence([ember.tensor(a) for a in arrays], enforce_sorted=False)
    back = unpack_sequence(packed)
    for a, b in zip(arrays, back):
        np.testing.assert_array_equal(b.numpy(), a)
    padded = ember.tensor(np_pad(arrays))
    for a, b in zip(arrays, unpad_sequence(padded, ember.tensor([3, 5, 1]))):
        np.testing.assert_array_equal(b.numpy(), a)
    # unpad_sequence does not change its input (PyTorch transposes it in place).
    assert padded.shape == (5, 3, 2)


def test_pack_and_pad_gradients():
    arrays = seqs((4, 3, 1))
    x = ember.tensor(np_pad(arrays), requires_grad=True)

    def round_trip(t):
        return pad_packed_sequence(pack_padded_sequence(t, [4, 3, 1]))[0]

    assert gradcheck(round_trip, (x,))
    y = round_trip(x)
    y.sum().backward()
    mask = np.zeros((4, 3, 2))
    for b, n in enumerate([4, 3, 1]):
        mask[:n, b] = 1
    np.testing.assert_array_equal(x.grad.numpy(), mask)


def test_packed_sequence_to_and_conversions():
    packed = pack_sequence([ember.tensor(a) for a in seqs((3, 1))])
    assert packed.to(ember.float64) is packed
    p32 = packed.float()
    assert p32.data.dtype == ember.float32 and p32.batch_sizes is packed.batch_sizes
    assert packed.to("cpu") is packed
    assert not packed.is_cuda
    unsorted = pack_sequence([ember.tensor(a) for a in seqs((1, 3))], enforce_sorted=False)
    half = unsorted.half()
    assert half.sorted_indices.tolist() == [1, 0]
    manual = PackedSequence(packed.data, packed.batch_sizes)
    assert manual.batch_sizes is packed.batch_sizes
    from_pair = PackedSequence((packed.data, packed.batch_sizes))
    assert from_pair.data is packed.data


def test_invert_permutation():
    p = ember.tensor([2, 0, 3, 1])
    assert invert_permutation(p).tolist() == [1, 3, 0, 2]
    assert invert_permutation(None) is None


def test_errors():
    padded = ember.zeros(4, 3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(padded, [2, 4, 1])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size"):
        pack_padded_sequence(padded, [4, 2])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(padded, [4, 2, 0])
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors"):
        pack_padded_sequence(ember.zeros(0, 3, 2), [1, 1, 1])
    packed = pack_padded_sequence(padded, [4, 2, 1])
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        pad_packed_sequence(packed, total_length=3)
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        pad_sequence([])
    with pytest.raises(RuntimeError, match="Expected iterable for input sequences"):
        pad_sequence(5)
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([ember.zeros(2)], padding_side="middle")
    with pytest.raises(RuntimeError, match="same trailing dimensions"):
        pad_sequence([ember.zeros(2, 3), ember.zeros(2, 4)])
    with pytest.raises(AssertionError, match="list or tuple of length 2"):
        PackedSequence(ember.zeros(3))
    assert rnn.__all__ == ["PackedSequence", "invert_permutation", "pack_padded_sequence",
                           "pad_packed_sequence", "pad_sequence", "unpad_sequence",
                           "pack_sequence", "unpack_sequence"]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_matches_torch(batch_first, enforce_sorted):
    torch = pytest.importorskip("torch")
    tr = torch.nn.utils.rnn
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    arrays = seqs(lengths, feat=(3,), seed=2)
    tp = tr.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=enforce_sorted)
    ep = pack_sequence([ember.tensor(a) for a in arrays], enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(ep.data.numpy(), tp.data.numpy())
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    if enforce_sorted:
        assert ep.sorted_indices is None and tp.sorted_indices is None
    else:
        assert ep.sorted_indices.tolist() == tp.sorted_indices.tolist()
        assert ep.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    to, tl = tr.pad_packed_sequence(tp, batch_first=batch_first, padding_value=-2.0,
                                    total_length=7)
    eo, el = pad_packed_sequence(ep, batch_first=batch_first, padding_value=-2.0, total_length=7)
    np.testing.assert_array_equal(eo.numpy(), to.numpy())
    assert el.tolist() == tl.tolist()
    for side in ("left", "right"):
        t = tr.pad_sequence([torch.tensor(a) for a in arrays], batch_first, 3.0, side)
        e = pad_sequence([ember.tensor(a) for a in arrays], batch_first, 3.0, side)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
