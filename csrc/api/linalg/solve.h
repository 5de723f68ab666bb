// Public ops of ember.linalg's solve family (ops/linalg/solve.h): the differentiable ones record
// their node here (api/linalg/solve.cpp) and run the native op once; logdet, linalg.lu_factor
// and linalg.ldl_factor are composites there. The linalg:: helpers are the native ones.
#pragma once
#include "ops/linalg/solve.h"

namespace ember {

using native::TensorPair;
using native::TensorTriple;

// --- Cholesky ---
Tensor linalg_cholesky(const Tensor& A, bool upper, const Tensor& out = {});
TensorPair linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors,
                              const Tensor& L_out = {}, const Tensor& info_out = {});
// cholesky_solve(B, L): A^{-1} B with A = L L^H (or U^H U); B and L broadcast over batches.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper, const Tensor& out = {});
// cholesky_inverse(L): A^{-1} with A = L L^H (or U^H U).
Tensor cholesky_inverse(const Tensor& L, bool upper, const Tensor& out = {});

// --- Inverse and solve ---
Tensor linalg_inv(const Tensor& A, const Tensor& out = {});
TensorPair linalg_inv_ex(const Tensor& A, bool check_errors, const Tensor& inverse_out = {},
                         const Tensor& info_out = {});
// left: AX = B, else XA = B. B is a batch of vectors when it is 1-D or A's shape minus its last
// dim (PyTorch's rule); batch dims broadcast.
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left, const Tensor& out = {});
TensorPair linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors,
                           const Tensor& result_out = {}, const Tensor& info_out = {});

// --- Determinants ---
Tensor linalg_det(const Tensor& A, const Tensor& out = {});
TensorPair linalg_slogdet(const Tensor& A, const Tensor& sign_out = {},
                          const Tensor& logabsdet_out = {});
// log(det(A)): nan for a negative real determinant, -inf for a singular matrix.
Tensor logdet(const Tensor& A);

// --- Triangular solves ---
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const Tensor& out = {});
// The older torch.triangular_solve(b, A): (solution, clone of A).
TensorPair triangular_solve(const Tensor& b, const Tensor& A, bool upper, bool transpose,
                            bool unitriangular, const Tensor& solution_out = {},
                            const Tensor& coefficient_out = {});

// --- LU ---
TensorPair linalg_lu_factor(const Tensor& A, bool pivot, const Tensor& LU_out = {},
                            const Tensor& pivots_out = {});
TensorTriple linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors,
                                 const Tensor& LU_out = {}, const Tensor& pivots_out = {},
                                 const Tensor& info_out = {});
// (P, L, U) with A = P L U; P is empty (batch, 0, 0) when pivot is false.
TensorTriple linalg_lu(const Tensor& A, bool pivot, const Tensor& P_out = {},
                       const Tensor& L_out = {}, const Tensor& U_out = {});
Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint, const Tensor& out = {});
// (P, L, U) from lu_factor's output; undefined tensors for the parts not unpacked.
TensorTriple lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots,
                       const Tensor& P_out = {}, const Tensor& L_out = {},
                       const Tensor& U_out = {});

// --- LDL ---
TensorPair linalg_ldl_factor(const Tensor& A, bool hermitian, const Tensor& LD_out = {},
                             const Tensor& pivots_out = {});
TensorTriple linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors,
                                  const Tensor& LD_out = {}, const Tensor& pivots_out = {},
                                  const Tensor& info_out = {});
Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const Tensor& out = {});

namespace linalg {
using native::linalg::batch_shape;
using native::linalg::check_out;
using native::linalg::column_major;
using native::linalg::det_with_factors;
using native::linalg::empty_int32;
using native::linalg::empty_work;
using native::linalg::expand_batch;
using native::linalg::lu_factor_square;
using native::linalg::lu_solve_inplace;
using native::linalg::lu_solve_matrices;
using native::linalg::LuFactors;
using native::linalg::op_on_transpose;
using native::linalg::slogdet_with_factors;
using native::linalg::solve_is_vector_rhs;
using native::linalg::solve_with_factors;
using native::linalg::SolveResult;
using native::linalg::triangular_solve_batch;
using native::linalg::triangular_solve_matrices;
using native::linalg::unpadded;
using native::linalg::with_dims;
using native::linalg::work_copy;
using native::linalg::work_leading_dim;
}  // namespace linalg

}  // namespace ember
