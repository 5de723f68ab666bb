"""The legacy tensor-type classes (ember.FloatTensor, LongTensor, ...), as PyTorch's."""

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:
    torch = None

TYPES = {"FloatTensor": ember.float32, "DoubleTensor": ember.float64, "LongTensor": ember.int64,
         "IntTensor": ember.int32, "ShortTensor": ember.int16, "ByteTensor": ember.uint8,
         "CharTensor": ember.int8, "BoolTensor": ember.bool, "HalfTensor": ember.float16,
         "BFloat16Tensor": ember.bfloat16}


@pytest.mark.parametrize("name", sorted(TYPES))
def test_constructors_and_isinstance(name):
    cls = getattr(ember, name)
    dtype = TYPES[name]
    assert cls(2, 3).shape == (2, 3) and cls(2, 3).dtype == dtype
    assert cls(4).shape == (4,)
    assert cls(ember.Size([1, 2])).shape == (1, 2)
    assert cls().shape == (0,)
    data = cls([1, 0, 1])
    assert data.dtype == dtype and data.tolist() in ([1, 0, 1], [True, False, True])
    assert isinstance(data, cls)
    assert isinstance(data, ember.Tensor)
    other = ember.FloatTensor if dtype != ember.float32 else ember.LongTensor
    assert not isinstance(data, other)
    assert cls(data) is data
    with pytest.raises(TypeError):
        other(data)
    assert ember.ones(2).type(cls).dtype == dtype


def test_legacy_constructor_pattern_from_word_language_model():
    # torch.LongTensor(seq_len * batch_size).zero_().view(-1, batch_size)
    t = ember.LongTensor(35 * 2).zero_().view(-1, 2)
    assert t.shape == (35, 2) and int(t.abs().sum()) == 0
    with pytest.raises(TypeError):
        ember.FloatTensor(2, "3")


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
def test_matches_pytorch():
    for name in TYPES:
        e, t = getattr(ember, name)([1, 2]), getattr(torch, name)([1, 2])
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
