// ember.linalg's solve family (PyTorch semantics, float32/64 and complex64/128, any batch dims):
// Cholesky, inverse, determinants, linear solves, triangular solves, LU and LDL factorizations
// and the top-level aliases (det, logdet, slogdet, inverse, cholesky_solve, cholesky_inverse,
// lu_unpack, triangular_solve). `op` names in messages follow PyTorch ("linalg.inv", ...).
//
// Each op validates first (so errors name the op the user called), then computes; the api layer
// (api/linalg/solve.h) records the differentiable ones, running the same checks before it does.
// logdet, linalg.lu_factor and linalg.ldl_factor are composites there. Results come back in
// the column-major layout the factorizations produce, as PyTorch's do; `*_out` arguments are
// the out= tensors (undefined: none).
#pragma once
#include <string>
#include <tuple>

#include "core/tensor.h"
#include "kernels/linalg/solve_stubs.h"

namespace ember {
namespace native {

using TensorPair = std::pair<Tensor, Tensor>;
using TensorTriple = std::tuple<Tensor, Tensor, Tensor>;

// --- Cholesky (linalg_cholesky.cpp) ---
Tensor linalg_cholesky(const Tensor& A, bool upper, const Tensor& out = {});
TensorPair linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors,
                              const Tensor& L_out = {}, const Tensor& info_out = {});
// cholesky_solve(B, L): A^{-1} B with A = L L^H (or U^H U); B and L broadcast over batches.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper, const Tensor& out = {});
// cholesky_inverse(L): A^{-1} with A = L L^H (or U^H U).
Tensor cholesky_inverse(const Tensor& L, bool upper, const Tensor& out = {});

// --- Inverse and solve (linalg_inv.cpp) ---
Tensor linalg_inv(const Tensor& A, const Tensor& out = {});
TensorPair linalg_inv_ex(const Tensor& A, bool check_errors, const Tensor& inverse_out = {},
                         const Tensor& info_out = {});
// left: AX = B, else XA = B. B is a batch of vectors when it is 1-D or A's shape minus its last
// dim (PyTorch's rule); batch dims broadcast.
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left, const Tensor& out = {});
TensorPair linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors,
                           const Tensor& result_out = {}, const Tensor& info_out = {});

// --- Determinants (linalg_det.cpp) ---
Tensor linalg_det(const Tensor& A, const Tensor& out = {});
TensorPair linalg_slogdet(const Tensor& A, const Tensor& sign_out = {},
                          const Tensor& logabsdet_out = {});

// --- Triangular solves (linalg_triangular.cpp) ---
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const Tensor& out = {});
// The older torch.triangular_solve(b, A): (solution, clone of A).
TensorPair triangular_solve(const Tensor& b, const Tensor& A, bool upper, bool transpose,
                            bool unitriangular, const Tensor& solution_out = {},
                            const Tensor& coefficient_out = {});

// --- LU (linalg_lu.cpp) ---
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

// --- LDL (linalg_ldl.cpp) ---
TensorTriple linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors,
                                  const Tensor& LD_out = {}, const Tensor& pivots_out = {},
                                  const Tensor& info_out = {});
Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const Tensor& out = {});

namespace linalg {

// --- Helpers shared by the family's files ---
// All dims but the last `matrix_dims` (2 for matrices, 1 for vectors).
DimVector batch_shape(const Tensor& t, int64_t matrix_dims = 2);
// batch + extra dims.
DimVector with_dims(IntArrayRef batch, std::initializer_list<int64_t> extra);
Tensor empty_int32(IntArrayRef sizes, const char* op);
// Checks an out= tensor's dtype before computing (PyTorch's message); undefined passes.
void check_out(const Tensor& out, ScalarType dtype, const char* op);
// A view of t's matrices with the batch dims broadcast to `batch` (no copy when they match).
Tensor expand_batch(const Tensor& t, IntArrayRef batch, int64_t matrix_dims = 2);

// op(A) expressed on M = A^T: A = M^T, A^T = M, A^H = conj(M), conj(A) = M^H.
MatrixOp op_on_transpose(MatrixOp op);
// Work matrices: column-major with the leading dimension padded by a cache line when a column
// spans a multiple of 4 KiB (512 float64 rows): columns that far apart share cache sets, and a
// 512x512 LU ran at half speed. unpadded() returns the exact column-major layout results use.
int64_t work_leading_dim(int64_t m, size_t itemsize);
Tensor empty_work(IntArrayRef sizes, ScalarType dtype, const char* op);
Tensor work_copy(const Tensor& A, const char* op);
Tensor unpadded(const Tensor& W, const char* op);
// A column-major batch holding t's matrices (t itself when it is one already).
Tensor column_major(const Tensor& t, const char* op);

// X <- op(T)^{-1} X for the column-major batch X, T the upper / lower triangle of A's matrices
// (any layout; A's batch broadcasts to X's). No recording.
void triangular_solve_batch(const Tensor& A, const Tensor& X, bool upper, bool unitriangular,
                            MatrixOp op, const char* name);
// op(T)^{-1} B (left) or B op(T)^{-1}, batch dims broadcast. No recording.
Tensor triangular_solve_matrices(const Tensor& A, const Tensor& B, bool upper, bool left,
                                 bool unitriangular, MatrixOp op, const char* name);

// An LU factorization as the ops keep it for their backward passes: the factors of A, or of
// A^T when `transposed` (a row-major A is a column-major A^T, so factoring A^T saves the
// transposing copy).
struct LuFactors {
  Tensor LU, pivots, infos;
  bool transposed = false;
};
// Factors A (square, checked) without recording.
LuFactors lu_factor_square(const Tensor& A, const char* op);
// Solves op(A) X = B in place for a column-major batch B whose batch shape the factors'
// batch shape broadcasts to (no recording).
void lu_solve_inplace(const LuFactors& f, const Tensor& B, MatrixOp op);
// X with op(A) X = B (left) or X op(A) = B, op(A) = A or A^H (adjoint), from A's factors; B is
// a batch of matrices whose batch dims broadcast with the factors'. No recording.
Tensor lu_solve_matrices(const LuFactors& f, const Tensor& B, bool left, bool adjoint,
                         const char* op);

// det / slogdet with their LU factors (the backward needs them); no recording.
std::tuple<Tensor, LuFactors> det_with_factors(const Tensor& A);
std::tuple<Tensor, Tensor, LuFactors> slogdet_with_factors(const Tensor& A);
// solve_ex with its factors; `vector_case` as PyTorch's linalg_solve_is_vector_rhs.
struct SolveResult {
  Tensor X, info;
  LuFactors factors;
  bool vector_case = false;
};
SolveResult solve_with_factors(const Tensor& A, const Tensor& B, bool left, const char* op);
bool solve_is_vector_rhs(const Tensor& A, const Tensor& B);

// --- The ops' argument checks (also run by the api layer before it records a call) ---
// linalg.solve / solve_ex (`op` names the one called).
void check_solve_args(const Tensor& A, const Tensor& B, bool left, const char* op);
void check_cholesky_solve_args(const Tensor& B, const Tensor& L, const Tensor& out);
void check_solve_triangular_args(const Tensor& A, const Tensor& B, bool left, const Tensor& out);
void check_triangular_solve_args(const Tensor& b, const Tensor& A, const Tensor& solution_out,
                                 const Tensor& coefficient_out);
// The input check of lu_factor(_ex) and lu.
void check_lu_input(const Tensor& A, const char* op);
void check_lu_unpack_args(const Tensor& LU, const Tensor& pivots, bool unpack_pivots,
                          const Tensor& P_out, const Tensor& L_out, const Tensor& U_out);
void check_lu_solve_args(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                         const Tensor& out);
// Returns the pivots as the contiguous int32 tensor ldl_solve reads.
Tensor check_ldl_solve_args(const Tensor& LD, const Tensor& pivots, const Tensor& B,
                            const Tensor& out);

// --- LinAlgError messages for a non-zero info (raise_for_infos's `describe`) ---
std::string describe_not_positive_definite(int32_t info);  // cholesky
std::string describe_singular_solve(int32_t info);         // solve
std::string describe_singular_inverse(int32_t info);       // inv
std::string describe_zero_pivot(int32_t info);             // lu_factor
std::string describe_singular_d(int32_t info);             // ldl_factor

}  // namespace linalg
}  // namespace native
}  // namespace ember
