// linalg.cholesky / cholesky_ex, cholesky_solve and cholesky_inverse.
#include "core/shape.h"
#include "ops/compare.h"
#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/solve.h"
#include "ops/range_factories.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

using namespace linalg;

std::string linalg::describe_not_positive_definite(int32_t info) {
  return str_cat(
      "The factorization could not be completed because the input is not positive-definite (the "
      "leading minor of order ",
      info, " is not positive-definite).");
}

namespace {

TensorPair cholesky_compute(const Tensor& A, bool upper, const Tensor& L_out,
                            const Tensor& info_out, const char* op) {
  Tensor infos = empty_int32(batch_shape(A), op);
  Tensor L;
  if (A.is_contiguous() && upper) {
    // A row-major A is the column-major M = A^T, and the triangle of A that is read is the
    // other triangle of M: the factor of M from that triangle, read row-major, is A's factor
    // (U_M^T = L, with conjugates cancelling for complex A). No transposing copy.
    Tensor M = column_major_copy(mT(A), op);
    cholesky_stub(A.device(), M, infos, !upper, /*from_other_triangle=*/false);
    L = mT(M);
  } else if (A.is_contiguous()) {
    // The lower factor, column-major as PyTorch returns it: A copied as is holds A's lower
    // triangle transposed in its upper one, which the kernel moves into place (one transpose of
    // the strict triangle; reading the factor back row-major would take a second one).
    // (The copy of mT(A) is a plain copy: its column-major layout is A's row-major one.)
    L = column_major_copy(mT(A), op);
    cholesky_stub(A.device(), L, infos, upper, /*from_other_triangle=*/true);
  } else {
    L = column_major_copy(A, op);
    cholesky_stub(A.device(), L, infos, upper, /*from_other_triangle=*/false);
  }
  return {finish_out(L, L_out, op), finish_out(infos, info_out, op)};
}

}  // namespace

TensorPair linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors, const Tensor& L_out,
                              const Tensor& info_out) {
  const char* op = "linalg.cholesky_ex";
  check_square_float_matrix(A, op);
  check_out(L_out, A.dtype(), op);
  check_out(info_out, ScalarType::Int32, op);
  TensorPair r = cholesky_compute(A, upper, L_out, info_out, op);
  if (check_errors) raise_for_infos(r.second, A, op, describe_not_positive_definite);
  return r;
}

Tensor linalg_cholesky(const Tensor& A, bool upper, const Tensor& out) {
  const char* op = "linalg.cholesky";
  check_square_float_matrix(A, op);
  check_out(out, A.dtype(), op);
  TensorPair r = cholesky_compute(A, upper, out, Tensor(), op);
  raise_for_infos(r.second, A, op, describe_not_positive_definite);
  return r.first;
}

namespace {

// A^{-1} B with A = L L^H (lower) or U^H U (upper): two triangular solves on a column-major copy
// of B broadcast with L's batch.
Tensor cholesky_solve_compute(const Tensor& B, const Tensor& L, bool upper, const char* op) {
  const DimVector batch = broadcast_shapes(batch_shape(B), batch_shape(L), op);
  Tensor X = column_major_copy(expand_batch(B, batch), op);
  triangular_solve_batch(L, X, upper, false, upper ? MatrixOp::Adjoint : MatrixOp::None, op);
  triangular_solve_batch(L, X, upper, false, upper ? MatrixOp::None : MatrixOp::Adjoint, op);
  return X;
}

}  // namespace

void linalg::check_cholesky_solve_args(const Tensor& B, const Tensor& L, const Tensor& out) {
  const char* op = "cholesky_solve";
  EMBER_CHECK(B.dim() >= 2, "[", op, "] b should have at least 2 dimensions, but has ", B.dim(),
              " dimensions instead");
  EMBER_CHECK(L.dim() >= 2, "[", op, "] u should have at least 2 dimensions, but has ", L.dim(),
              " dimensions instead");
  check_square(L, op);
  check_float_or_complex(B, op, "B");
  EMBER_CHECK(B.dtype() == L.dtype(), "[", op,
              "] Expected b and A to have the same dtype, but found b of type ",
              torch_type_name(B.dtype()), " and A of type ", torch_type_name(L.dtype()),
              " instead.");
  EMBER_CHECK(rows(L) == rows(B), "[", op,
              "] Incompatible matrix sizes for cholesky_solve: each A matrix is ", rows(L), " by ",
              rows(L), " but each b matrix is ", rows(B), " by ", cols(B));
  check_out(out, B.dtype(), op);
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper, const Tensor& out) {
  const char* op = "cholesky_solve";
  check_cholesky_solve_args(B, L, out);
  return finish_out(cholesky_solve_compute(B, L, upper, op), out, op);
}

Tensor cholesky_inverse(const Tensor& L, bool upper, const Tensor& out) {
  const char* op = "cholesky_inverse";
  check_square_float_matrix(L, op);
  check_out(out, L.dtype(), op);
  // potri fails on a zero diagonal element of the factor (the matrix is singular).
  const int64_t n = rows(L);
  const Tensor zero_diag = contiguous(eq(diagonal(L, 0, -2, -1), scalar_tensor(0, L.dtype())));
  Tensor infos = empty_int32(batch_shape(L), op);
  const bool* z = zero_diag.data<bool>();
  int32_t* info = infos.data<int32_t>();
  for (int64_t b = 0; b < infos.numel(); ++b) {
    info[b] = 0;
    for (int64_t i = 0; i < n && info[b] == 0; ++i) {
      if (z[b * n + i]) info[b] = static_cast<int32_t>(i + 1);
    }
  }
  raise_for_infos(infos, L, op, [](int32_t i) {
    return str_cat("The diagonal element ", i,
                   " is zero, the inversion could not be completed because the input matrix is "
                   "singular.");
  });
  const Tensor identity = eye(n, n, TensorOptions(L.dtype()));
  return finish_out(cholesky_solve_compute(identity, L, upper, op), out, op);
}

}  // namespace native
}  // namespace ember
