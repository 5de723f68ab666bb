"""Property test: random index expressions (ints, slices with positive steps, None, Ellipsis and
integer arrays as tensors or lists) give NumPy's results for t[...] and t[...] = v, with
PyTorch's rule that integers are applied as select() before advanced indexing."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from test_indexing import Arr, ember_index, np_getitem, np_setitem


@st.composite
def shapes(draw):
    ndim = draw(st.integers(1, 4))
    return tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))


@st.composite
def index_expressions(draw, shape):
    """An index expression for `shape`: (items, number of dims they consume)."""
    ndim = len(shape)
    n_consuming = draw(st.integers(0, ndim))
    use_ellipsis = draw(st.booleans())
    adv_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    items = []
    # Consuming items address dims left to right; an Ellipsis in between skips the rest.
    ellipsis_at = draw(st.integers(0, n_consuming)) if use_ellipsis else None
    dims = list(range(n_consuming))
    if use_ellipsis:
        dims = dims[:ellipsis_at] + [
            ndim - (n_consuming - k) for k in range(ellipsis_at, n_consuming)
        ]
    for pos, d in enumerate(dims):
        if pos == ellipsis_at:
            items.append(Ellipsis)
        if draw(st.integers(0, 4)) == 0:
            items.append(None)
        size = shape[d]
        kinds = ["slice"] + (["int", "array"] if size > 0 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(slice(draw(bound), draw(bound), step))
        else:
            # Arrays broadcast together: each uses a suffix of adv_shape with some 1s.
            k = draw(st.integers(0, len(adv_shape)))
            sub = tuple(1 if draw(st.booleans()) else s for s in adv_shape[len(adv_shape) - k :])
            values = np.array(
                draw(
                    st.lists(
                        st.integers(-size, size - 1),
                        min_size=int(np.prod(sub)),
                        max_size=int(np.prod(sub)),
                    )
                ),
                np.int64,
            ).reshape(sub)
            form = draw(st.sampled_from(["tensor", "int32", "list"]))
            if form == "list" and values.ndim != 1:
                form = "tensor"  # nested lists would be read as a tuple of indices
            items.append(Arr(values, form))
    if use_ellipsis and ellipsis_at == len(dims):
        items.append(Ellipsis)
    if draw(st.integers(0, 5)) == 0:
        items.append(None)
    return tuple(items)


def _broadcastable(expr):
    shapes_ = [i.values.shape for i in expr if isinstance(i, Arr)]
    try:
        np.broadcast_shapes(*shapes_)
        return True
    except ValueError:
        return False


@st.composite
def cases(draw):
    shape = draw(shapes())
    expr = draw(index_expressions(shape))
    return shape, expr


SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SETTINGS
@given(cases())
def test_getitem_random_expressions(case):
    shape, expr = case
    if not _broadcastable(expr):
        return
    arr = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t = ember.tensor(arr)
    want = np_getitem(arr, expr)
    got = t[ember_index(expr)]
    assert tuple(got.shape) == want.shape, (expr, tuple(got.shape), want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


@SETTINGS
@given(cases(), st.booleans())
def test_setitem_random_expressions(case, array_value):
    shape, expr = case
    if not _broadcastable(expr):
        return
    arr = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t = ember.tensor(arr)
    selected = np_getitem(arr, expr)
    # An array value is only well defined when no element is selected twice.
    unique = len(np.unique(selected)) == selected.size
    if array_value and unique and selected.ndim:
        value = -1.0 - np.arange(selected.size, dtype=np.float64).reshape(selected.shape)
        t[ember_index(expr)] = ember.tensor(value)
    else:
        value = -1.0
        t[ember_index(expr)] = value
    np_setitem(arr, expr, value)
    np.testing.assert_array_equal(t.numpy(), arr)
