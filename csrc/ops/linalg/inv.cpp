// linalg.inv / inv_ex and linalg.solve / solve_ex: an LU factorization of A's own batch, then
// getrs on the (broadcast) right-hand sides. Also the family's shared helpers and the LU
// factorization the backward passes reuse (linalg::LuFactors).
#include <algorithm>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/linalg/common.h"
#include "ops/linalg/solve.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {
namespace linalg {

DimVector batch_shape(const Tensor& t, int64_t matrix_dims) {
  DimVector b;
  for (int64_t d = 0; d + matrix_dims < t.dim(); ++d) b.push_back(t.size(d));
  return b;
}

DimVector with_dims(IntArrayRef batch, std::initializer_list<int64_t> extra) {
  DimVector s(batch);
  for (int64_t e : extra) s.push_back(e);
  return s;
}

Tensor empty_int32(IntArrayRef sizes, const char* op) {
  return empty_tensor(sizes, ScalarType::Int32, Device(), op);
}

void check_out(const Tensor& out, ScalarType dtype, const char* op) {
  if (out.defined()) check_out_dtype(out, dtype, op);
}

Tensor expand_batch(const Tensor& t, IntArrayRef batch, int64_t matrix_dims) {
  DimVector shape(batch);
  for (int64_t d = t.dim() - matrix_dims; d < t.dim(); ++d) shape.push_back(t.size(d));
  if (IntArrayRef(shape).equals(t.sizes())) return t;
  return expand(t, shape);
}

int64_t work_leading_dim(int64_t m, size_t itemsize) {
  const int64_t bytes = m * static_cast<int64_t>(itemsize);
  return m >= 64 && bytes % 4096 == 0 ? m + 64 / static_cast<int64_t>(itemsize) : m;
}

Tensor empty_work(IntArrayRef sizes, ScalarType dtype, const char* op) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t m = sizes[nd - 2], n = sizes[nd - 1];
  const int64_t ld = work_leading_dim(m, element_size(dtype));
  if (ld == m) return empty_column_major(sizes, dtype, op);
  DimVector strides(nd);
  strides[nd - 2] = 1;
  strides[nd - 1] = ld;
  int64_t step = ld * std::max<int64_t>(n, 1);
  for (int64_t d = nd - 3; d >= 0; --d) {
    strides[d] = step;
    step *= std::max<int64_t>(sizes[d], 1);
  }
  return empty_strided_tensor(sizes, strides, dtype, Device(), op);
}

Tensor work_copy(const Tensor& A, const char* op) {
  Tensor w = empty_work(A.sizes(), A.dtype(), op);
  copy_into(w, A, op, /*bump_version=*/false);
  return w;
}

Tensor unpadded(const Tensor& W, const char* op) {
  return is_column_major_batch(W) ? W : column_major_copy(W, op);
}

Tensor column_major(const Tensor& t, const char* op) {
  return is_column_major_batch(t) ? t : column_major_copy(t, op);
}

LuFactors lu_factor_square(const Tensor& A, const char* op) {
  LuFactors f;
  const int64_t n = rows(A);
  // A contiguous real A is a column-major A^T: factored without a transposing copy.
  f.transposed = A.is_contiguous() && !A.is_complex();
  f.LU = work_copy(f.transposed ? mT(A) : A, op);
  const DimVector batch = batch_shape(A);
  f.pivots = empty_int32(with_dims(batch, {n}), op);
  f.infos = empty_int32(batch, op);
  lu_factor_stub(A.device(), f.LU, f.pivots, f.infos, /*pivot=*/true);
  if (f.transposed) {
    // A singular A: the first zero pivot of A^T's LU need not be A's, which PyTorch's infos and
    // messages report. Rare, so that case factors A again for its infos.
    const int32_t* info = f.infos.data<int32_t>();
    if (std::any_of(info, info + f.infos.numel(), [](int32_t i) { return i != 0; })) {
      Tensor LU = work_copy(A, op);
      Tensor pivots = empty_int32(with_dims(batch, {n}), op);
      lu_factor_stub(A.device(), LU, pivots, f.infos, /*pivot=*/true);
    }
  }
  return f;
}

MatrixOp op_on_transpose(MatrixOp op) {
  switch (op) {
    case MatrixOp::None:
      return MatrixOp::Transpose;
    case MatrixOp::Transpose:
      return MatrixOp::None;
    case MatrixOp::Adjoint:
      return MatrixOp::Conj;
    case MatrixOp::Conj:
      return MatrixOp::Adjoint;
  }
  return op;
}

void lu_solve_inplace(const LuFactors& f, const Tensor& B, MatrixOp op) {
  const DimVector batch = batch_shape(B);
  lu_solve_stub(B.device(), expand_batch(f.LU, batch), expand_batch(f.pivots, batch, 1), B,
                f.transposed ? op_on_transpose(op) : op);
}

Tensor lu_solve_matrices(const LuFactors& f, const Tensor& B, bool left, bool adjoint,
                         const char* op) {
  const DimVector batch = broadcast_shapes(batch_shape(f.LU), batch_shape(B), op);
  if (left) {
    // op(A) X = B on a column-major copy of B (broadcast to the common batch).
    Tensor X = work_copy(expand_batch(B, batch), op);
    lu_solve_inplace(f, X, adjoint ? MatrixOp::Adjoint : MatrixOp::None);
    return unpadded(X, op);
  }
  // X op(A) = B <=> op(A)^T X^T = B^T, with A^T, or (A^H)^T = conj(A): solve for the
  // column-major X^T and return its transposed view.
  Tensor XT = work_copy(expand_batch(mT(B), batch), op);
  lu_solve_inplace(f, XT, adjoint ? MatrixOp::Conj : MatrixOp::Transpose);
  return mT(unpadded(XT, op));
}

bool solve_is_vector_rhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  if (B.dim() != A.dim() - 1) return false;
  for (int64_t d = 0; d < B.dim(); ++d) {
    if (B.size(d) != A.size(d)) return false;
  }
  return true;
}

void check_solve_args(const Tensor& A, const Tensor& B, bool left, const char* op) {
  check_square_float_matrix(A, op);
  EMBER_CHECK(B.dim() >= 1, "[", op, "] The input tensor B must have at least 1 dimensions.");
  EMBER_CHECK(A.dtype() == B.dtype(), "[", op,
              "] Expected A and B to have the same dtype, but found A of type ",
              torch_type_name(A.dtype()), " and B of type ", torch_type_name(B.dtype()),
              " instead");
  const bool vector_case = solve_is_vector_rhs(A, B);
  const int64_t n = rows(A);
  const int64_t b_rows = vector_case ? B.size(B.dim() - 1) : B.size(B.dim() - 2);
  const int64_t b_cols = vector_case ? 1 : B.size(B.dim() - 1);
  EMBER_CHECK(left ? b_rows == n : b_cols == n, "[", op,
              "] Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
              " (", n, "x", n, " and ", b_rows, "x", b_cols, ")");
}

std::string describe_singular_solve(int32_t) {
  return "The solver failed because the input matrix is singular.";
}

std::string describe_singular_inverse(int32_t info) {
  return str_cat("The diagonal element ", info,
                 " is zero, the inversion could not be completed because the input matrix is "
                 "singular.");
}

SolveResult solve_with_factors(const Tensor& A, const Tensor& B, bool left, const char* op) {
  SolveResult r;
  r.vector_case = solve_is_vector_rhs(A, B);
  const Tensor B2 = r.vector_case ? unsqueeze(B, -1) : B;
  r.factors = lu_factor_square(A, op);
  r.info = r.factors.infos;
  r.X = lu_solve_matrices(r.factors, B2, left, /*adjoint=*/false, op);
  if (r.vector_case) r.X = squeeze(r.X, {-1});
  return r;
}

}  // namespace linalg

using namespace linalg;

TensorPair linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors,
                           const Tensor& result_out, const Tensor& info_out) {
  const char* op = "linalg.solve_ex";
  check_solve_args(A, B, left, op);
  check_out(result_out, A.dtype(), op);
  check_out(info_out, ScalarType::Int32, op);
  SolveResult s = solve_with_factors(A, B, left, op);
  TensorPair r = {finish_out(s.X, result_out, op), finish_out(s.info, info_out, op)};
  if (check_errors) raise_for_infos(r.second, A, op, describe_singular_solve);
  return r;
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left, const Tensor& out) {
  const char* op = "linalg.solve";
  check_solve_args(A, B, left, op);
  check_out(out, A.dtype(), op);
  SolveResult s = solve_with_factors(A, B, left, op);
  Tensor X = finish_out(s.X, out, op);
  raise_for_infos(s.info, A, op, describe_singular_solve);
  return X;
}

namespace {

TensorPair inv_compute(const Tensor& A, const Tensor& inverse_out, const Tensor& info_out,
                       const char* op) {
  LuFactors f = lu_factor_square(A, op);
  Tensor X = empty_work(A.sizes(), A.dtype(), op);
  lu_inverse_stub(A.device(), f.LU, f.pivots, X);
  X = unpadded(X, op);
  // The factors of A^T give (A^T)^{-1} = (A^{-1})^T: its transposed view is A^{-1}.
  if (f.transposed) X = mT(X);
  return {finish_out(X, inverse_out, op), finish_out(f.infos, info_out, op)};
}

}  // namespace

TensorPair linalg_inv_ex(const Tensor& A, bool check_errors, const Tensor& inverse_out,
                         const Tensor& info_out) {
  const char* op = "linalg.inv_ex";
  check_square_float_matrix(A, op);
  check_out(inverse_out, A.dtype(), op);
  check_out(info_out, ScalarType::Int32, op);
  TensorPair r = inv_compute(A, inverse_out, info_out, op);
  if (check_errors) raise_for_infos(r.second, A, op, describe_singular_inverse);
  return r;
}

Tensor linalg_inv(const Tensor& A, const Tensor& out) {
  const char* op = "linalg.inv";
  check_square_float_matrix(A, op);
  check_out(out, A.dtype(), op);
  TensorPair r = inv_compute(A, out, Tensor(), op);
  raise_for_infos(r.second, A, op, describe_singular_inverse);
  return r.first;
}

}  // namespace native
}  // namespace ember
