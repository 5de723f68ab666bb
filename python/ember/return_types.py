"""Named-tuple result types of ops that return several tensors, as ``torch.return_types``.

Each type behaves like PyTorch's structseq: a ``tuple`` subclass built from one sequence,
with read-only fields, ``n_fields`` / ``n_sequence_fields``, pickling, and the same repr::

    >>> ember.max(ember.tensor([1, 3, 2]), dim=0)
    ember.return_types.max(
    values=tensor(3),
    indices=tensor(1))

Ops called with ``out=`` return the ``<name>_out`` type, as PyTorch does.
"""

from __future__ import annotations

__all__ = ["all_return_types"]


def _structseq(name: str, fields: tuple[str, ...]) -> type:
    n = len(fields)

    def __new__(cls, sequence, dict=None):  # noqa: A002 (structseq's signature)
        try:
            values = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(values) != n:
            raise TypeError(
                f"ember.return_types.{name}() takes a {n}-sequence ({len(values)}-sequence given)"
            )
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"ember.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self), {}))

    namespace = {
        "__new__": __new__,
        "__repr__": __repr__,
        "__str__": __repr__,
        "__reduce__": __reduce__,
        "__slots__": (),
        "__module__": __name__,
        "__qualname__": name,
        "__match_args__": fields,
        "n_fields": n,
        "n_sequence_fields": n,
        "n_unnamed_fields": 0,
    }
    for i, f in enumerate(fields):
        namespace[f] = property(
            lambda self, i=i: tuple.__getitem__(self, i), doc=f"Alias for field {i}"
        )
    return type(name, (tuple,), namespace)


# Field names of every PyTorch return type; "<name>_out" types share them.
_FIELDS = {
    "aminmax": ("min", "max"),
    "cummax": ("values", "indices"),
    "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"),
    "histogramdd": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_polar": ("U", "H"),
    "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"),
    "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"),
    "median": ("values", "indices"),
    "min": ("values", "indices"),
    "mode": ("values", "indices"),
    "nanmedian": ("values", "indices"),
    "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"),
    "sort": ("values", "indices"),
    "svd": ("U", "S", "V"),
    "topk": ("values", "indices"),
    "triangular_solve": ("solution", "cloned_coefficient"),
}

all_return_types = []
for _name, _fields in _FIELDS.items():
    for _n in (_name, _name + "_out") if _name != "histogramdd" else (_name,):
        _t = _structseq(_n, _fields)
        globals()[_n] = _t
        all_return_types.append(_t)
        __all__.append(_n)
del _name, _fields, _n, _t
