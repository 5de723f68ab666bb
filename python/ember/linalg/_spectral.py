"""ember.linalg's spectral family: eigh, eigvalsh, eig, eigvals, svd, svdvals, qr,
householder_product, lstsq, matrix_norm, norm, cond, matrix_rank, pinv, matrix_sqrth, polar.

Every function is the C++ binding itself (ember._C._linalg_spectral): one call per op.
"""

from .._C import _linalg_spectral as _impl

__all__ = [
    "cond",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "lstsq",
    "matrix_norm",
    "matrix_rank",
    "matrix_sqrth",
    "norm",
    "pinv",
    "polar",
    "qr",
    "svd",
    "svdvals",
]

eigh = _impl.eigh
eigvalsh = _impl.eigvalsh
svd = _impl.svd
svdvals = _impl.svdvals
qr = _impl.qr
householder_product = _impl.householder_product
lstsq = _impl.lstsq
pinv = _impl.pinv
matrix_rank = _impl.matrix_rank
matrix_norm = _impl.matrix_norm
norm = _impl.norm
cond = _impl.cond
eig = _impl.eig
eigvals = _impl.eigvals
matrix_sqrth = _impl.matrix_sqrth
polar = _impl.polar
