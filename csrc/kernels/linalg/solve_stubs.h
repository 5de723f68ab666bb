// Kernel stubs of the linalg solve family (LU, Cholesky, triangular solves, LDL).
//
// Every kernel works in place on batches of column-major matrices (ops/linalg/common.h: strides
// (..., 1, ld), ld >= rows), the layout LAPACK and Eigen factor in. Batch dims may be broadcast
// (stride 0): a kernel finds matrix b of a batch with matrix_offset (below), so a factorization
// of A's own batch serves a larger broadcast batch of right-hand sides without copies.
// Pivots and infos are int32 with LAPACK's conventions (1-based row interchanges; info 0 is
// success, k > 0 names the failing pivot or leading minor).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/stub.h"

namespace ember {
namespace native {

// op(A) in a solve: A, A^T, A^H, or conj(A) (the last arises when a right-side solve with A^H is
// turned into a left-side one by transposition: X A^H = B <=> conj(A) X^T = B^T).
enum class MatrixOp { None, Transpose, Adjoint, Conj };

// LU with partial pivoting (getrf) of each (m, n) matrix of LU, in place; pivots (batch, k) and
// infos (batch) contiguous int32. pivot=false: no row interchanges (pivots are 1..k).
using LuFactorFn = void (*)(const Tensor& LU, const Tensor& pivots, const Tensor& infos,
                            bool pivot);
EMBER_DECLARE_STUB(lu_factor_stub, LuFactorFn);

// B <- op(A)^{-1} B for each matrix of B (getrs), A = P^T L U given by LU and pivots, which have
// B's batch shape (broadcast dims stride 0; pivots' last dim contiguous).
using LuSolveFn = void (*)(const Tensor& LU, const Tensor& pivots, const Tensor& B, MatrixOp op);
EMBER_DECLARE_STUB(lu_solve_stub, LuSolveFn);

// X <- A^{-1} for each matrix (getri's result through getrs on the identity): X is a
// column-major batch of LU's shape, overwritten.
using LuInverseFn = void (*)(const Tensor& LU, const Tensor& pivots, const Tensor& X);
EMBER_DECLARE_STUB(lu_inverse_stub, LuInverseFn);

// det (batch), or sign and log|det| (batch, contiguous), of the matrices whose LU is given.
using LuDetFn = void (*)(const Tensor& LU, const Tensor& pivots, const Tensor& det);
EMBER_DECLARE_STUB(lu_det_stub, LuDetFn);
using LuSlogdetFn = void (*)(const Tensor& LU, const Tensor& pivots, const Tensor& sign,
                             const Tensor& logabsdet);
EMBER_DECLARE_STUB(lu_slogdet_stub, LuSlogdetFn);

// The permutation matrices P (batch, m, m; any strides, written whole) of A = P L U from the
// pivots (batch, k) of an m-row LU.
using LuPermutationFn = void (*)(const Tensor& pivots, const Tensor& P);
EMBER_DECLARE_STUB(lu_permutation_stub, LuPermutationFn);

// Cholesky (potrf) in place: reads the lower (or upper) triangle, writes L (or U = L^H) there
// and zeroes the other triangle; infos (batch) get the order of the first leading minor that is
// not positive-definite. from_other_triangle: the triangle to read is stored transposed in the
// other one (A^T's, as a row-major input copied as is), so the result lands where it is read.
using CholeskyFn = void (*)(const Tensor& A, const Tensor& infos, bool upper,
                            bool from_other_triangle);
EMBER_DECLARE_STUB(cholesky_stub, CholeskyFn);

// B <- op(T)^{-1} B (trsm, left side) with T the upper or lower triangle of each matrix of A
// (unit diagonal assumed when unitriangular). A has B's batch shape (broadcast dims stride 0).
using TriangularSolveFn = void (*)(const Tensor& A, const Tensor& B, bool upper, bool unitriangular,
                                   MatrixOp op);
EMBER_DECLARE_STUB(triangular_solve_stub, TriangularSolveFn);

// Bunch-Kaufman LDL^T (sytrf) / LDL^H (hetrf) in place, lower triangle, LAPACK's LD and pivots.
using LdlFactorFn = void (*)(const Tensor& LD, const Tensor& pivots, const Tensor& infos,
                             bool hermitian);
EMBER_DECLARE_STUB(ldl_factor_stub, LdlFactorFn);
// B <- A^{-1} B (sytrs / hetrs) with A given by ldl_factor's LD and pivots (B's batch shape).
using LdlSolveFn = void (*)(const Tensor& LD, const Tensor& pivots, const Tensor& B,
                            bool hermitian);
EMBER_DECLARE_STUB(ldl_solve_stub, LdlSolveFn);

namespace linalg {

// Element offset of matrix b (row-major flat index over the batch dims, all dims but the last
// two) of t, honouring broadcast (stride 0) batch dims.
inline int64_t matrix_offset(const Tensor& t, int64_t b) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 3; d >= 0 && b > 0; --d) {
    const int64_t size = t.size(d);
    offset += (b % size) * t.stride(d);
    b /= size;
  }
  return offset;
}

// Leading dimension of t's column-major matrices (a single column may carry any stride).
inline int64_t leading_dim(const Tensor& t) {
  const int64_t m = t.size(t.dim() - 2), n = t.size(t.dim() - 1);
  return n <= 1 ? (m > 0 ? m : 1) : t.stride(t.dim() - 1);
}

}  // namespace linalg
}  // namespace native
}  // namespace ember
