// Public ops of ember.linalg's solve family: each runs the native op unless an input requires
// grad; then it runs the native op's checks (so errors still name the op called, and come before
// the out= refusal), records the node (autograd/derivatives/linalg/{solve,lu}.cpp) and raises
// the op's LinAlgError for a failed factorization. logdet, linalg.lu_factor and
// linalg.ldl_factor are composites of public ops.
#include "api/linalg/solve.h"

#include <limits>

#include "api/autocast.h"
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/linalg/common.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/linalg/solve.h"
#include "autograd/variable.h"

namespace ember {

namespace nl = native::linalg;

// ---- Cholesky ------------------------------------------------------------------------------

TensorPair linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors, const Tensor& L_out,
                              const Tensor& info_out) {
  if (autocast::active() && !L_out.defined() && !info_out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_cholesky_ex(A2, upper, check_errors);
  }
  if (!autograd::should_record(A)) {
    return native::linalg_cholesky_ex(A, upper, check_errors, L_out, info_out);
  }
  const char* op = "linalg.cholesky_ex";
  nl::check_square_float_matrix(A, op);
  nl::check_out(L_out, A.dtype(), op);
  nl::check_out(info_out, ScalarType::Int32, op);
  TensorPair r = derivatives::linalg_cholesky_ex(A, upper, L_out, info_out);
  if (check_errors) nl::raise_for_infos(r.second, A, op, nl::describe_not_positive_definite);
  return r;
}

Tensor linalg_cholesky(const Tensor& A, bool upper, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_cholesky(A2, upper);
  }
  if (!autograd::should_record(A)) return native::linalg_cholesky(A, upper, out);
  const char* op = "linalg.cholesky";
  nl::check_square_float_matrix(A, op);
  nl::check_out(out, A.dtype(), op);
  TensorPair r = derivatives::linalg_cholesky_ex(A, upper, out, Tensor());
  nl::raise_for_infos(r.second, A, op, nl::describe_not_positive_definite);
  return r.first;
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor B2 = autocast::to_fp32(B), L2 = autocast::to_fp32(L);
    autocast::ExcludeGuard no_autocast;
    return ember::cholesky_solve(B2, L2, upper);
  }
  if (!autograd::should_record(B, L)) return native::cholesky_solve(B, L, upper, out);
  nl::check_cholesky_solve_args(B, L, out);
  return derivatives::cholesky_solve(B, L, upper, out);
}

Tensor cholesky_inverse(const Tensor& L, bool upper, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor L2 = autocast::to_fp32(L);
    autocast::ExcludeGuard no_autocast;
    return ember::cholesky_inverse(L2, upper);
  }
  if (!autograd::should_record(L)) return native::cholesky_inverse(L, upper, out);
  const char* op = "cholesky_inverse";
  nl::check_square_float_matrix(L, op);
  nl::check_out(out, L.dtype(), op);
  return derivatives::cholesky_inverse(L, upper, out);
}

// ---- inverse and solve ---------------------------------------------------------------------

TensorPair linalg_inv_ex(const Tensor& A, bool check_errors, const Tensor& inverse_out,
                         const Tensor& info_out) {
  if (autocast::active() && !inverse_out.defined() && !info_out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_inv_ex(A2, check_errors);
  }
  if (!autograd::should_record(A)) {
    return native::linalg_inv_ex(A, check_errors, inverse_out, info_out);
  }
  const char* op = "linalg.inv_ex";
  nl::check_square_float_matrix(A, op);
  nl::check_out(inverse_out, A.dtype(), op);
  nl::check_out(info_out, ScalarType::Int32, op);
  TensorPair r = derivatives::linalg_inv_ex(A, inverse_out, info_out);
  if (check_errors) nl::raise_for_infos(r.second, A, op, nl::describe_singular_inverse);
  return r;
}

Tensor linalg_inv(const Tensor& A, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32 (linalg.inv, torch.inverse)
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_inv(A2);
  }
  if (!autograd::should_record(A)) return native::linalg_inv(A, out);
  const char* op = "linalg.inv";
  nl::check_square_float_matrix(A, op);
  nl::check_out(out, A.dtype(), op);
  TensorPair r = derivatives::linalg_inv_ex(A, out, Tensor());
  nl::raise_for_infos(r.second, A, op, nl::describe_singular_inverse);
  return r.first;
}

TensorPair linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors,
                           const Tensor& result_out, const Tensor& info_out) {
  if (!autograd::should_record(A, B)) {
    return native::linalg_solve_ex(A, B, left, check_errors, result_out, info_out);
  }
  const char* op = "linalg.solve_ex";
  nl::check_solve_args(A, B, left, op);
  nl::check_out(result_out, A.dtype(), op);
  nl::check_out(info_out, ScalarType::Int32, op);
  TensorPair r = derivatives::linalg_solve_ex(A, B, left, result_out, info_out);
  if (check_errors) nl::raise_for_infos(r.second, A, op, nl::describe_singular_solve);
  return r;
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32 (not linalg.solve_ex)
    const Tensor A2 = autocast::to_fp32(A), B2 = autocast::to_fp32(B);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_solve(A2, B2, left);
  }
  if (!autograd::should_record(A, B)) return native::linalg_solve(A, B, left, out);
  const char* op = "linalg.solve";
  nl::check_solve_args(A, B, left, op);
  nl::check_out(out, A.dtype(), op);
  TensorPair r = derivatives::linalg_solve_ex(A, B, left, out, Tensor());
  nl::raise_for_infos(r.second, A, op, nl::describe_singular_solve);
  return r.first;
}

// ---- determinants --------------------------------------------------------------------------

Tensor linalg_det(const Tensor& A, const Tensor& out) {
  if (!autograd::should_record(A)) return native::linalg_det(A, out);
  const char* op = "linalg.det";
  nl::check_square_float_matrix(A, op);
  nl::check_out(out, A.dtype(), op);
  return derivatives::linalg_det(A, out);
}

TensorPair linalg_slogdet(const Tensor& A, const Tensor& sign_out, const Tensor& logabsdet_out) {
  if (!autograd::should_record(A)) return native::linalg_slogdet(A, sign_out, logabsdet_out);
  const char* op = "linalg.slogdet";
  nl::check_square_float_matrix(A, op);
  nl::check_out(sign_out, A.dtype(), op);
  nl::check_out(logabsdet_out, to_real(A.dtype()), op);
  return derivatives::linalg_slogdet(A, sign_out, logabsdet_out);
}

Tensor logdet(const Tensor& A) {
  // PyTorch's composite: log(sign) + log|det| for complex A; for real A, log|det| where the
  // determinant is not negative and nan where it is.
  const char* op = "logdet";
  nl::check_square_float_matrix(A, op);
  auto [sign, logabsdet] = ember::linalg_slogdet(A);
  if (A.is_complex()) return ember::add(ember::log(sign), logabsdet);
  const Tensor nan =
      scalar_tensor(Scalar(std::numeric_limits<double>::quiet_NaN()), logabsdet.dtype());
  return ember::where(ember::eq(sign, scalar_tensor(Scalar(-1.0), sign.dtype())), nan, logabsdet);
}

// ---- triangular solves ---------------------------------------------------------------------

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const Tensor& out) {
  if (!autograd::should_record(A, B)) {
    return native::linalg_solve_triangular(A, B, upper, left, unitriangular, out);
  }
  nl::check_solve_triangular_args(A, B, left, out);
  // B cast to A's dtype (as PyTorch) by the recorded conversion, so its gradient reaches B.
  const Tensor B2 = B.dtype() == A.dtype() ? B : ember::to_dtype(B, A.dtype());
  return derivatives::linalg_solve_triangular(A, B2, upper, left, unitriangular, out);
}

TensorPair triangular_solve(const Tensor& b, const Tensor& A, bool upper, bool transpose,
                            bool unitriangular, const Tensor& solution_out,
                            const Tensor& coefficient_out) {
  // Autocast: float32 (torch.triangular_solve; linalg.solve_triangular is not on the list).
  if (autocast::active() && !solution_out.defined() && !coefficient_out.defined()) {
    const Tensor b2 = autocast::to_fp32(b), A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::triangular_solve(b2, A2, upper, transpose, unitriangular);
  }
  if (!autograd::should_record(b, A)) {
    return native::triangular_solve(b, A, upper, transpose, unitriangular, solution_out,
                                    coefficient_out);
  }
  nl::check_triangular_solve_args(b, A, solution_out, coefficient_out);
  return derivatives::triangular_solve(b, A, upper, transpose, unitriangular, solution_out,
                                       coefficient_out);
}

// ---- LU ------------------------------------------------------------------------------------

TensorTriple linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors,
                                 const Tensor& LU_out, const Tensor& pivots_out,
                                 const Tensor& info_out) {
  // Autocast: float32, for torch.lu (PyTorch's _lu_with_info), which the bindings run through
  // this function. (PyTorch leaves linalg.lu_factor_ex itself off the list; it has no
  // lower-precision kernel there, so only inputs that would fail otherwise see a difference.)
  if (autocast::active() && !LU_out.defined() && !pivots_out.defined() && !info_out.defined()) {
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_lu_factor_ex(A2, pivot, check_errors);
  }
  if (!autograd::should_record(A)) {
    return native::linalg_lu_factor_ex(A, pivot, check_errors, LU_out, pivots_out, info_out);
  }
  const char* op = "linalg.lu_factor_ex";
  nl::check_lu_input(A, op);
  nl::check_out(LU_out, A.dtype(), op);
  nl::check_out(pivots_out, ScalarType::Int32, op);
  nl::check_out(info_out, ScalarType::Int32, op);
  TensorTriple r = derivatives::linalg_lu_factor_ex(A, pivot, LU_out, pivots_out, info_out);
  if (check_errors) nl::raise_for_infos(std::get<2>(r), A, op, nl::describe_zero_pivot);
  return r;
}

TensorPair linalg_lu_factor(const Tensor& A, bool pivot, const Tensor& LU_out,
                            const Tensor& pivots_out) {
  const char* op = "linalg.lu_factor";
  nl::check_lu_input(A, op);
  nl::check_out(LU_out, A.dtype(), op);
  nl::check_out(pivots_out, ScalarType::Int32, op);
  auto [LU, pivots, infos] = ember::linalg_lu_factor_ex(A, pivot, false, LU_out, pivots_out);
  nl::raise_for_infos(infos, A, op, nl::describe_zero_pivot);
  return {LU, pivots};
}

TensorTriple linalg_lu(const Tensor& A, bool pivot, const Tensor& P_out, const Tensor& L_out,
                       const Tensor& U_out) {
  if (!autograd::should_record(A)) return native::linalg_lu(A, pivot, P_out, L_out, U_out);
  const char* op = "linalg.lu";
  nl::check_lu_input(A, op);
  nl::check_out(P_out, A.dtype(), op);
  nl::check_out(L_out, A.dtype(), op);
  nl::check_out(U_out, A.dtype(), op);
  return derivatives::linalg_lu(A, pivot, P_out, L_out, U_out);
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint, const Tensor& out) {
  // Autocast: float32, for torch.lu_solve, which the bindings run through this function
  // (linalg.lu_solve itself is off PyTorch's list and has no lower-precision kernel there).
  if (autocast::active() && !out.defined()) {
    const Tensor LU2 = autocast::to_fp32(LU), B2 = autocast::to_fp32(B);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_lu_solve(LU2, pivots, B2, left, adjoint);
  }
  if (!autograd::should_record(LU, B)) {
    return native::linalg_lu_solve(LU, pivots, B, left, adjoint, out);
  }
  nl::check_lu_solve_args(LU, pivots, B, left, out);
  return derivatives::linalg_lu_solve(LU, pivots, B, left, adjoint, out);
}

TensorTriple lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots,
                       const Tensor& P_out, const Tensor& L_out, const Tensor& U_out) {
  // Only L and U depend on LU's values: the permutation alone records nothing.
  if (!unpack_data || !autograd::should_record(LU)) {
    return native::lu_unpack(LU, pivots, unpack_data, unpack_pivots, P_out, L_out, U_out);
  }
  nl::check_lu_unpack_args(LU, pivots, unpack_pivots, P_out, L_out, U_out);
  return derivatives::lu_unpack(LU, pivots, unpack_data, unpack_pivots, P_out, L_out, U_out);
}

// ---- LDL -----------------------------------------------------------------------------------

TensorTriple linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors,
                                  const Tensor& LD_out, const Tensor& pivots_out,
                                  const Tensor& info_out) {
  if (!autograd::should_record(A)) {
    return native::linalg_ldl_factor_ex(A, hermitian, check_errors, LD_out, pivots_out, info_out);
  }
  const char* op = "linalg.ldl_factor_ex";
  nl::check_square_float_matrix(A, op);
  nl::check_out(LD_out, A.dtype(), op);
  nl::check_out(pivots_out, ScalarType::Int32, op);
  nl::check_out(info_out, ScalarType::Int32, op);
  TensorTriple r = derivatives::linalg_ldl_factor_ex(A, hermitian, LD_out, pivots_out, info_out);
  if (check_errors) nl::raise_for_infos(std::get<2>(r), A, op, nl::describe_singular_d);
  return r;
}

TensorPair linalg_ldl_factor(const Tensor& A, bool hermitian, const Tensor& LD_out,
                             const Tensor& pivots_out) {
  const char* op = "linalg.ldl_factor";
  nl::check_square_float_matrix(A, op);
  nl::check_out(LD_out, A.dtype(), op);
  nl::check_out(pivots_out, ScalarType::Int32, op);
  auto [LD, pivots, infos] = ember::linalg_ldl_factor_ex(A, hermitian, false, LD_out, pivots_out);
  nl::raise_for_infos(infos, A, op, nl::describe_singular_d);
  return {LD, pivots};
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const Tensor& out) {
  if (!autograd::should_record(LD, B)) {
    return native::linalg_ldl_solve(LD, pivots, B, hermitian, out);
  }
  const Tensor piv32 = nl::check_ldl_solve_args(LD, pivots, B, out);
  return derivatives::linalg_ldl_solve(LD, piv32, B, hermitian, out);
}

}  // namespace ember
