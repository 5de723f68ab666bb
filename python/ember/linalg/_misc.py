"""torch.linalg's products, norms and matrix functions that are not decompositions.

Each is a C++ function of ``ember._C._linalg`` (PyTorch's torch._C._linalg), bound directly:
one call per op, no Python in between.
"""

from .._C import _linalg

__all__ = [
    "cross",
    "diagonal",
    "matrix_exp",
    "matrix_power",
    "multi_dot",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

vector_norm = _linalg.linalg_vector_norm
cross = _linalg.linalg_cross
vecdot = _linalg.linalg_vecdot
vander = _linalg.linalg_vander
diagonal = _linalg.linalg_diagonal
multi_dot = _linalg.linalg_multi_dot
matrix_power = _linalg.linalg_matrix_power
matrix_exp = _linalg.linalg_matrix_exp
tensorinv = _linalg.linalg_tensorinv
tensorsolve = _linalg.linalg_tensorsolve

