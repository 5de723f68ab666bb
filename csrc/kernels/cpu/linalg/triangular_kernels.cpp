// Triangular solves (trsm) through Eigen: the shared triangular_solve_inplace and the
// triangular_solve_stub kernel (linalg.solve_triangular, triangular_solve, cholesky_solve, ...).
// Only left-side solves exist here: the ops turn X op(T) = B into op(T)^T X^T = B^T.
#include <Eigen/Core>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/linalg/eigen.h"
#include "kernels/cpu/linalg/triangular.h"
#include "kernels/linalg/batch.h"

namespace ember {
namespace native {
namespace linalg {
namespace {

template <int Mode, typename MA, typename MB>
void solve_mode(const MA& A, MB& B) {
  A.template triangularView<Mode>().solveInPlace(B);
}

template <typename MA, typename MB>
void solve_triangle(const MA& A, MB& B, bool upper, bool unit) {
  if (upper) {
    unit ? solve_mode<Eigen::UnitUpper>(A, B) : solve_mode<Eigen::Upper>(A, B);
  } else {
    unit ? solve_mode<Eigen::UnitLower>(A, B) : solve_mode<Eigen::Lower>(A, B);
  }
}

template <typename T, typename MB>
void solve_op(const ConstMap<T>& A, MB& B, bool upper, bool unit, MatrixOp op) {
  if constexpr (!Eigen::NumTraits<T>::IsComplex) {
    // Real matrices: A^H is A^T and conj(A) is A.
    if (op == MatrixOp::Adjoint) op = MatrixOp::Transpose;
    if (op == MatrixOp::Conj) op = MatrixOp::None;
  }
  switch (op) {
    case MatrixOp::None:
      solve_triangle(A, B, upper, unit);
      break;
    case MatrixOp::Transpose:  // the transpose of an upper triangle is lower
      solve_triangle(A.transpose(), B, !upper, unit);
      break;
    case MatrixOp::Adjoint:
      if constexpr (Eigen::NumTraits<T>::IsComplex) solve_triangle(A.adjoint(), B, !upper, unit);
      break;
    case MatrixOp::Conj:
      if constexpr (Eigen::NumTraits<T>::IsComplex) solve_triangle(A.conjugate(), B, upper, unit);
      break;
  }
}

}  // namespace

template <typename T>
void triangular_solve_inplace(const T* a, int64_t lda, int64_t n, T* b, int64_t ldb, int64_t nrhs,
                              bool upper, bool unit, MatrixOp op) {
  if (n == 0 || nrhs == 0) return;
  ConstMap<T> A(a, n, n, Eigen::OuterStride<>(lda));
  if (nrhs == 1) {
    // One right-hand side: Eigen's trsv, about twice faster than trsm with a single column.
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> v(b, n);
    solve_op<T>(A, v, upper, unit, op);
    return;
  }
  MutMap<T> B(b, n, nrhs, Eigen::OuterStride<>(ldb));
  solve_op<T>(A, B, upper, unit, op);
}

#define EMBER_LINALG_TRIANGULAR_INSTANTIATE(T)                                                \
  template void triangular_solve_inplace<T>(const T*, int64_t, int64_t, T*, int64_t, int64_t, \
                                            bool, bool, MatrixOp);
EMBER_LINALG_TRIANGULAR_INSTANTIATE(float)
EMBER_LINALG_TRIANGULAR_INSTANTIATE(double)
EMBER_LINALG_TRIANGULAR_INSTANTIATE(std::complex<float>)
EMBER_LINALG_TRIANGULAR_INSTANTIATE(std::complex<double>)
#undef EMBER_LINALG_TRIANGULAR_INSTANTIATE

namespace {

void triangular_solve_kernel(const Tensor& A, const Tensor& B, bool upper, bool unitriangular,
                             MatrixOp op) {
  const int64_t n = rows(B), nrhs = cols(B), batch = batch_count(B);
  if (n == 0 || nrhs == 0 || batch == 0) return;
  const int64_t lda = leading_dim(A), ldb = leading_dim(B);
  dispatch_dtype<kLinalgTypes>(B.dtype(), "triangular_solve", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = A.data<T>();
    T* b = B.data<T>();
    for_each_matrix(batch, n * n * nrhs, [&](int64_t i) {
      triangular_solve_inplace<T>(a + matrix_offset(A, i), lda, n, b + matrix_offset(B, i), ldb,
                                  nrhs, upper, unitriangular, op);
    });
  });
}

}  // namespace
}  // namespace linalg

EMBER_REGISTER_KERNEL(triangular_solve_stub, CPU, &linalg::triangular_solve_kernel);

}  // namespace native
}  // namespace ember
