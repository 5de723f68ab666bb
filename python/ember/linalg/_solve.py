"""ember.linalg's solve family: Cholesky, inverse, determinants, linear and triangular solves, LU
and LDL factorizations. The functions are the C++ bindings themselves (one call per op)."""

from .._C._linalg_solve import (
    cholesky,
    cholesky_ex,
    det,
    inv,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
)

__all__ = [
    "cholesky",
    "cholesky_ex",
    "det",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
]
