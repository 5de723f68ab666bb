// float64 / complex GEMM through Eigen. Each matrix is mapped in place (row-major when its
// column stride is 1, column-major otherwise), so nothing is copied. Eigen parallelises one large
// product with OpenMP itself; many small products are spread over the batch instead (Eigen then
// runs serially inside the parallel region).
#include <Eigen/Core>

#include "core/parallel.h"
#include "kernels/cpu/gemm_cpu.h"

namespace ember {
namespace native {
namespace {

template <typename T, int Order>
using Map = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, Eigen::Unaligned,
                       Eigen::OuterStride<>>;
template <typename T>
using RowMap = Map<T, Eigen::RowMajor>;
template <typename T>
using ColMap = Map<T, Eigen::ColMajor>;

template <typename T, typename MA, typename MB>
void run(const GemmParams& p, T alpha, T beta) {
  T* a = static_cast<T*>(p.a.data);
  T* b = static_cast<T*>(p.b.data);
  T* c = static_cast<T*>(p.c.data);
  const int64_t lda = MA::IsRowMajor ? p.a.row_stride : p.a.col_stride;
  const int64_t ldb = MB::IsRowMajor ? p.b.row_stride : p.b.col_stride;
  auto one = [&](int64_t i) {
    MA A(a + i * p.a.batch_stride, p.m, p.k, Eigen::OuterStride<>(lda));
    MB B(b + i * p.b.batch_stride, p.k, p.n, Eigen::OuterStride<>(ldb));
    RowMap<T> C(c + i * p.c.batch_stride, p.m, p.n, Eigen::OuterStride<>(p.c.row_stride));
    if (beta == T(0)) {
      if (alpha == T(1))
        C.noalias() = A * B;
      else
        C.noalias() = alpha * (A * B);
    } else {
      if (beta != T(1)) C *= beta;
      if (alpha == T(1))
        C.noalias() += A * B;
      else
        C.noalias() += alpha * (A * B);
    }
  };
  const int64_t work = p.m * p.n * p.k;
  if (p.batch > 1 && work < (int64_t(1) << 21)) {
    parallel_for(0, p.batch, std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(work, 1)),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t i = b0; i < b1; ++i) one(i);
                 });
  } else {
    for (int64_t i = 0; i < p.batch; ++i) one(i);
  }
}

template <typename T>
void eigen_gemm_t(const GemmParams& p) {
  const T alpha = p.alpha.to<T>(), beta = p.beta.to<T>();
  const bool a_row = p.a.col_stride == 1, b_row = p.b.col_stride == 1;
  if (a_row && b_row)
    run<T, RowMap<T>, RowMap<T>>(p, alpha, beta);
  else if (a_row)
    run<T, RowMap<T>, ColMap<T>>(p, alpha, beta);
  else if (b_row)
    run<T, ColMap<T>, RowMap<T>>(p, alpha, beta);
  else
    run<T, ColMap<T>, ColMap<T>>(p, alpha, beta);
}

}  // namespace

void eigen_gemm(const GemmParams& p) {
  switch (p.dtype) {
    case ScalarType::Float64:
      return eigen_gemm_t<double>(p);
    case ScalarType::Complex64:
      return eigen_gemm_t<complex64>(p);
    default:
      return eigen_gemm_t<complex128>(p);
  }
}

}  // namespace native
}  // namespace ember
