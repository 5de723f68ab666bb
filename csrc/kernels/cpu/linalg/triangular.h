// Triangular solves on one column-major matrix (Eigen's blocked trsm), shared by the LU,
// Cholesky and triangular-solve kernels so that each (dtype, triangle, op) instantiates once.
// No Eigen here: the definitions live in linalg_triangular_kernels.cpp.
#pragma once
#include <complex>
#include <cstdint>

#include "kernels/linalg/solve_stubs.h"

namespace ember {
namespace native {
namespace linalg {

// b (n, nrhs; leading dim ldb) <- op(T)^{-1} b with T the upper or lower triangle of a (n, n;
// leading dim lda), unit diagonal when `unit`. op applies to T: Transpose of the upper triangle
// is a lower-triangular matrix, and so on.
template <typename T>
void triangular_solve_inplace(const T* a, int64_t lda, int64_t n, T* b, int64_t ldb, int64_t nrhs,
                              bool upper, bool unit, MatrixOp op);

#define EMBER_LINALG_TRIANGULAR_EXTERN(T)                                                   \
  extern template void triangular_solve_inplace<T>(const T*, int64_t, int64_t, T*, int64_t, \
                                                   int64_t, bool, bool, MatrixOp);
EMBER_LINALG_TRIANGULAR_EXTERN(float)
EMBER_LINALG_TRIANGULAR_EXTERN(double)
EMBER_LINALG_TRIANGULAR_EXTERN(std::complex<float>)
EMBER_LINALG_TRIANGULAR_EXTERN(std::complex<double>)
#undef EMBER_LINALG_TRIANGULAR_EXTERN

}  // namespace linalg
}  // namespace native
}  // namespace ember
