"""Collation, as torch.utils.data._utils.collate: how a list of samples becomes a batch.

``default_collate`` dispatches on the type of the first sample through
``default_collate_fn_map`` (type -> function; users may add entries and call
``collate(batch, collate_fn_map=...)``); containers recurse:

- tensors stack along a new dimension 0; NumPy arrays become tensors and stack;
- NumPy scalars, Python floats (float64) and ints (int64; bools give bool) become 1-D tensors;
- strings and bytes stay a list;
- mappings collate per key and keep their type; named tuples keep their type; other sequences
  (all of one length) collate per position: tuples give lists, lists stay lists.
"""

import collections
import copy
import re

import numpy as np

import ember

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtypes that cannot become tensors: bytes, strings, objects.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data):
    """Converts NumPy arrays and scalars inside ``data`` to tensors, keeping the containers;
    the DataLoader's conversion when automatic batching is off (``batch_size=None``)."""
    elem_type = type(data)
    if isinstance(data, ember.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # named tuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates ``batch`` (a list of samples): an exact type match in ``collate_fn_map`` first,
    then the first ``isinstance`` match, then the container rules."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    def recurse(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                # copy.copy keeps the mapping's type and attributes (e.g. a defaultdict's
                # factory); update replaces every value.
                clone = copy.copy(elem)
                clone.update({key: recurse([d[key] for d in batch]) for key in elem})
                return clone
            return elem_type({key: recurse([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: recurse([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # named tuple
        return elem_type(*(recurse(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [recurse(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = recurse(samples)
                return clone
            return elem_type([recurse(samples) for samples in transposed])
        except TypeError:
            return [recurse(samples) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return ember.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return ember.as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    ember.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Collates a list of samples into a batch with PyTorch's rules (see the module doc)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
