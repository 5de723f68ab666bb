"""ember.Size: the tuple subclass that Tensor.shape and Tensor.size() return, as torch.Size."""

import operator


class Size(tuple):
    __slots__ = ()

    def __new__(cls, sizes=()):
        # Every element goes through __index__, as torch.Size: ints, NumPy integers and integer
        # one-element tensors convert; floats, strings and other tensors raise TypeError.
        if type(sizes) is tuple and all(type(s) is int for s in sizes):
            return super().__new__(cls, sizes)  # the common case, nothing to convert
        items = []
        for i, s in enumerate(sizes):
            try:
                items.append(operator.index(s))
            except TypeError:
                raise TypeError(
                    f"ember.Size() takes an iterable of 'int' (item {i} is "
                    f"'{type(s).__name__}')"
                ) from None
        return super().__new__(cls, items)

    def __repr__(self):
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __reduce__(self):
        return (Size, (tuple(self),))
