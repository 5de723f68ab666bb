"""Named-tuple results of the ordering ops (torch.return_types.sort / topk / kthvalue /
histogram): tuples whose fields are also attributes, printed as PyTorch prints them:

    ember.return_types.sort(
    values=tensor([1., 2.]),
    indices=tensor([1, 0]))

The lead merges these into ember.return_types.
"""

import collections


def _make(name, fields):
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"ember.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__})
    cls.__module__ = "ember.return_types"
    cls.__qualname__ = name
    return cls


sort = _make("sort", ("values", "indices"))
topk = _make("topk", ("values", "indices"))
kthvalue = _make("kthvalue", ("values", "indices"))
histogram = _make("histogram", ("hist", "bin_edges"))

__all__ = ["sort", "topk", "kthvalue", "histogram"]
