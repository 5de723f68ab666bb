// Derivatives of the linalg solve family (ops/linalg/solve.h), with PyTorch's formulas
// (FunctionsManual.cpp: linalg_det_backward, slogdet_backward, cholesky_backward,
// linalg_solve_backward, linalg_lu_backward, linalg_lu_solve_LU, ...). Each wrapper runs its op
// with recording off and attaches one node to the differentiable outputs. Formulas use public
// ops when grad mode is on (create_graph=True), so double backward works; without it they reuse
// the forward's LU factors, as PyTorch does.
#pragma once
#include "api/linalg/solve.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

TensorPair linalg_inv_ex(const Tensor& A, const Tensor& inverse_out, const Tensor& info_out);
TensorPair linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, const Tensor& result_out,
                           const Tensor& info_out);
Tensor linalg_det(const Tensor& A, const Tensor& out);
TensorPair linalg_slogdet(const Tensor& A, const Tensor& sign_out, const Tensor& logabsdet_out);
TensorPair linalg_cholesky_ex(const Tensor& A, bool upper, const Tensor& L_out,
                              const Tensor& info_out);
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper, const Tensor& out);
Tensor cholesky_inverse(const Tensor& L, bool upper, const Tensor& out);
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const Tensor& out);
TensorPair triangular_solve(const Tensor& b, const Tensor& A, bool upper, bool transpose,
                            bool unitriangular, const Tensor& solution_out,
                            const Tensor& coefficient_out);

// LU family (linalg_lu.cpp).
TensorTriple linalg_lu_factor_ex(const Tensor& A, bool pivot, const Tensor& LU_out,
                                 const Tensor& pivots_out, const Tensor& info_out);
TensorTriple linalg_lu(const Tensor& A, bool pivot, const Tensor& P_out, const Tensor& L_out,
                       const Tensor& U_out);
Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint, const Tensor& out);
TensorTriple lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots,
                       const Tensor& P_out, const Tensor& L_out, const Tensor& U_out);

// LDL: PyTorch defines no derivative for the factorization (its node raises when reached);
// ldl_solve differentiates with respect to B only.
TensorTriple linalg_ldl_factor_ex(const Tensor& A, bool hermitian, const Tensor& LD_out,
                                  const Tensor& pivots_out, const Tensor& info_out);
Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const Tensor& out);

// The backward of linalg.lu's (P, L, U) with respect to A (PyTorch's linalg_lu_backward);
// lu_factor's reuses it.
Tensor linalg_lu_backward(const Tensor& L_grad, const Tensor& U_grad, const Tensor& P,
                          const Tensor& L, const Tensor& U, bool pivot);

}  // namespace derivatives
}  // namespace ember
