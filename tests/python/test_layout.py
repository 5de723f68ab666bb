"""ember.layout / ember.strided: every tensor is dense and strided, factories take layout=None or
ember.strided and refuse the rest by name (ember/_layout.py, bindings/factory_args.cpp)."""

import copy
import pickle

import pytest

import ember


def test_tensor_layout_queries():
    for t in (ember.ones(2, 3), ember.ones(2, 3).t(), ember.tensor(1.5), ember.empty(0)):
        assert t.layout is ember.strided
        assert t.is_sparse is False and t.is_sparse_csr is False
    assert isinstance(ember.strided, ember.layout)
    assert repr(ember.strided) == "ember.strided"


def test_layout_pickles_and_copies_as_the_same_object():
    assert pickle.loads(pickle.dumps(ember.strided)) is ember.strided
    assert copy.deepcopy(ember.strided) is ember.strided
    with pytest.raises(AttributeError, match="immutable"):
        ember.strided.name = "x"


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: ember.zeros(2, 3, **kw),
        lambda **kw: ember.ones((2,), **kw),
        lambda **kw: ember.empty(2, **kw),
        lambda **kw: ember.randn(2, **kw),
        lambda **kw: ember.full((2,), 1.0, **kw),
        lambda **kw: ember.empty_strided((2,), (1,), **kw),
        lambda **kw: ember.zeros_like(ember.ones(2), **kw),
        lambda **kw: ember.full_like(ember.ones(2), 3.0, **kw),
        lambda **kw: ember.ones(2).new_full((2,), 1.0, **kw),
        lambda **kw: ember.ones(2).new_empty_strided((2,), (1,), **kw),
        lambda **kw: ember.arange(3, **kw),
        lambda **kw: ember.linspace(0, 1, 3, **kw),
        lambda **kw: ember.logspace(0, 1, 3, **kw),
        lambda **kw: ember.eye(2, **kw),
        lambda **kw: ember.scalar_tensor(1.0, **kw),
        lambda **kw: ember.normal(0.0, 1.0, (2,), **kw),
        lambda **kw: ember.hann_window(4, **kw),
        lambda **kw: ember.hamming_window(4, **kw),
        lambda **kw: ember.kaiser_window(4, **kw),
    ],
)
def test_factories_take_strided_and_refuse_other_layouts(make):
    assert make(layout=ember.strided).layout is ember.strided
    assert make(layout=None).layout is ember.strided
    expected = r"argument 'layout' must be ember.strided.*not 'sparse_coo'"
    with pytest.raises(TypeError, match=expected):
        make(layout="sparse_coo")
