// Cholesky (potrf) through Eigen's blocked in-place LLT, which reports the first leading minor
// that is not positive-definite (LAPACK's info).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>

#include "dispatch/dtype_dispatch.h"
#include "ops/linalg_common.h"
#include "ops/linalg_solve_stubs.h"

namespace ember {
namespace linalg {
namespace {

constexpr uint32_t kLinalgTypes = kFloat32 | kFloat64 | kComplex64 | kComplex128;

template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <typename T>
using MutMap = Eigen::Map<ColMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename T>
int32_t cholesky_one(T* a, int64_t n, int64_t lda, bool upper) {
  MutMap<T> A(a, n, n, Eigen::OuterStride<>(lda));
  // Eigen's Upper variant factors the transposed lower problem: U^H U from the upper triangle.
  const Eigen::Index failed = upper ? Eigen::internal::llt_inplace<T, Eigen::Upper>::blocked(A)
                                    : Eigen::internal::llt_inplace<T, Eigen::Lower>::blocked(A);
  int32_t info = failed >= 0 ? static_cast<int32_t>(failed + 1) : 0;
  if (info == 0) {
    // potrf also stops at a NaN pivot, which Eigen's "x <= 0" test lets through.
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(std::real(A(i, i)))) {
        info = static_cast<int32_t>(i + 1);
        break;
      }
    }
  }
  if (upper) {
    A.template triangularView<Eigen::StrictlyLower>().setZero();
  } else {
    A.template triangularView<Eigen::StrictlyUpper>().setZero();
  }
  return info;
}

void cholesky_kernel(const Tensor& A, const Tensor& infos, bool upper) {
  const int64_t n = rows(A), batch = batch_count(A), lda = leading_dim(A);
  int32_t* info = infos.data<int32_t>();
  dispatch_dtype<kLinalgTypes>(A.dtype(), "linalg.cholesky", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* a = A.data<T>();
    for_each_matrix(batch, n * n * n / 3 + 1, [&](int64_t b) {
      info[b] = n == 0 ? 0 : cholesky_one(a + matrix_offset(A, b), n, lda, upper);
    });
  });
}

}  // namespace
}  // namespace linalg

EMBER_REGISTER_KERNEL(cholesky_stub, CPU, &linalg::cholesky_kernel);

}  // namespace ember
