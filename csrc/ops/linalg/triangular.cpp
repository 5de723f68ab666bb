// linalg.solve_triangular and the older triangular_solve, on the triangular_solve_stub (trsm).
#include "core/shape.h"
#include "ops/linalg/common.h"
#include "ops/linalg/solve.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace linalg {

void triangular_solve_batch(const Tensor& A, const Tensor& X, bool upper, bool unitriangular,
                            MatrixOp op, const char* name) {
  Tensor M = A;
  if (!is_column_major_batch(A)) {
    // A row-major A is the column-major M = A^T: its upper triangle is M's lower one and
    // op(A) is op'(M); no copy needed. Other layouts are copied.
    const Tensor AT = mT(A);
    if (is_column_major_batch(AT)) {
      M = AT;
      upper = !upper;
      op = op_on_transpose(op);
    } else {
      M = column_major_copy(A, name);
    }
  }
  triangular_solve_stub(X.device(), expand_batch(M, batch_shape(X)), X, upper, unitriangular, op);
}

Tensor triangular_solve_matrices(const Tensor& A, const Tensor& B, bool upper, bool left,
                                 bool unitriangular, MatrixOp op, const char* name) {
  const DimVector batch = broadcast_shapes(batch_shape(A), batch_shape(B), name);
  if (left) {
    Tensor X = column_major_copy(expand_batch(B, batch), name);
    triangular_solve_batch(A, X, upper, unitriangular, op, name);
    return X;
  }
  // X op(A) = B <=> op(A)^T X^T = B^T: solve for the column-major X^T, return its transpose.
  Tensor XT = column_major_copy(expand_batch(mT(B), batch), name);
  triangular_solve_batch(A, XT, upper, unitriangular, op_on_transpose(op), name);
  return mT(XT);
}

void check_solve_triangular_args(const Tensor& A, const Tensor& B, bool left, const Tensor& out) {
  const char* op = "linalg.solve_triangular";
  check_at_least_2d(A, op, "A");
  check_at_least_2d(B, op, "B");
  check_square(A, op);
  check_float_or_complex(A, op);
  const int64_t n = rows(A);
  EMBER_CHECK(left ? rows(B) == n : cols(B) == n, "[", op,
              "] Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
              " (", n, "x", n, " and ", rows(B), "x", cols(B), ")");
  // PyTorch casts B to A's dtype here; a complex B with a real A would lose its imaginary part,
  // so that one case is refused.
  EMBER_CHECK(B.dtype() == A.dtype() || !B.is_complex() || A.is_complex(), "[", op,
              "] Expected A and B to have the same dtype, but found A of type ",
              torch_type_name(A.dtype()), " and B of type ", torch_type_name(B.dtype()),
              " instead");
  check_out(out, A.dtype(), op);
}

void check_triangular_solve_args(const Tensor& b, const Tensor& A, const Tensor& solution_out,
                                 const Tensor& coefficient_out) {
  const char* op = "triangular_solve";
  EMBER_CHECK(b.dim() >= 2, "[", op, "] Expected b to have at least 2 dimensions, but it has ",
              b.dim(), " dimensions instead");
  EMBER_CHECK(A.dim() >= 2, "[", op, "] Expected A to have at least 2 dimensions, but it has ",
              A.dim(), " dimensions instead");
  check_square(A, op);
  check_float_or_complex(A, op);
  EMBER_CHECK(b.dtype() == A.dtype(), "[", op,
              "] Expected b and A to have the same dtype, but found b of type ",
              torch_type_name(b.dtype()), " and A of type ", torch_type_name(A.dtype()),
              " instead.");
  EMBER_CHECK(rows(A) == rows(b), "[", op,
              "] Incompatible matrix sizes for triangular_solve: each A matrix is ", rows(A),
              " by ", rows(A), " but each b matrix is ", rows(b), " by ", cols(b));
  check_out(solution_out, A.dtype(), op);
  check_out(coefficient_out, A.dtype(), op);
}

}  // namespace linalg

using namespace linalg;

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const Tensor& out) {
  const char* op = "linalg.solve_triangular";
  check_solve_triangular_args(A, B, left, out);
  const Tensor B2 = B.dtype() == A.dtype() ? B : to_dtype(B, A.dtype());
  return finish_out(
      triangular_solve_matrices(A, B2, upper, left, unitriangular, MatrixOp::None, op), out, op);
}

TensorPair triangular_solve(const Tensor& b, const Tensor& A, bool upper, bool transpose,
                            bool unitriangular, const Tensor& solution_out,
                            const Tensor& coefficient_out) {
  const char* op = "triangular_solve";
  check_triangular_solve_args(b, A, solution_out, coefficient_out);
  const DimVector batch = broadcast_shapes(batch_shape(b), batch_shape(A), op);
  Tensor X = triangular_solve_matrices(A, b, upper, /*left=*/true, unitriangular,
                                       transpose ? MatrixOp::Transpose : MatrixOp::None, op);
  Tensor coefficient = column_major_copy(expand_batch(A, batch), op);
  return {finish_out(X, solution_out, op), finish_out(coefficient, coefficient_out, op)};
}

}  // namespace native
}  // namespace ember
