// linalg.eigh / eigvalsh on the CPU, per matrix: Eigen's SelfAdjointEigenSolver (tridiagonal QR)
// up to kEigenMaxSize, LAPACK's ?syevd / ?heevd (divide and conquer) above. Measured on this
// machine (docs/design/linalg.md): Eigen is 1.2-1.6x faster up to n = 64, even at n = 96, and
// LAPACK is faster from n = 128 on (1.3x at 256, 1.6x at 512).
#include <Eigen/Eigenvalues>
#include <cmath>

#include "core/dtype.h"
#include "kernels/cpu/lapack.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
namespace {

constexpr int kEigenMaxSize = 80;

template <typename T>
bool all_finite(const T* a, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(std::real(a[i])) || !std::isfinite(std::imag(a[i]))) return false;
  }
  return true;
}

// One small matrix with Eigen; false (nothing written) when it holds NaN or inf, which is left
// to LAPACK so that the failure is reported as LAPACK's, as PyTorch does.
template <typename T>
bool eigh_eigen(T* a, typename RealOf<T>::type* w, int n, bool upper, bool vectors, int32_t* info) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  Eigen::Map<Mat> A(a, n, n);
  if (!all_finite(a, int64_t(n) * n)) return false;
  const int options = vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly;
  Eigen::SelfAdjointEigenSolver<Mat> es;
  // The solver reads the lower triangle; the upper one's Hermitian matrix is that of A^H.
  if (upper) {
    es.compute(Mat(A.adjoint()), options);
  } else {
    es.compute(A, options);
  }
  if (es.info() != Eigen::Success) {
    *info = 1;
    return true;
  }
  Eigen::Map<Eigen::Matrix<typename RealOf<T>::type, Eigen::Dynamic, 1>>(w, n) = es.eigenvalues();
  if (vectors) A = es.eigenvectors();
  return true;
}

template <typename T>
void eigh_typed(const Tensor& A, const Tensor& W, const Tensor& infos, bool upper, bool vectors) {
  using R = typename RealOf<T>::type;
  const int n = lapack::to_int(linalg::rows(A), "linalg.eigh");
  const int lda = std::max(1, n);
  const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  T work_size{};
  R rwork_size = 1;
  int iwork_size = 1, info = 0;
  lapack::heevd(jobz, uplo, n, nullptr, lda, nullptr, &work_size, -1, &rwork_size, -1, &iwork_size,
                -1, &info);
  const int lwork = lapack::query_size(work_size), lrwork = lapack::query_size(rwork_size);
  const int liwork = std::max(1, iwork_size);
  T* a = A.data<T>();
  R* w = W.data<R>();
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t stride = int64_t(n) * n;
  lapack::for_each_matrix(linalg::batch_count(A), stride * n, [&](int64_t b) {
    if (n <= kEigenMaxSize &&
        eigh_eigen(a + b * stride, w + b * n, n, upper, vectors, &infos_data[b])) {
      return;
    }
    lapack::Workspace<T> work(0, lwork);
    lapack::Workspace<R> rwork(1, lrwork);
    lapack::Workspace<int> iwork(2, liwork);
    lapack::heevd(jobz, uplo, n, a + b * stride, lda, w + b * n, work.get(), lwork, rwork.get(),
                  lrwork, iwork.get(), liwork, &infos_data[b]);
  });
}

void eigh_kernel(const Tensor& A, const Tensor& W, const Tensor& infos, bool upper, bool vectors) {
  dispatch_dtype<lapack::kLapackTypes>(A.dtype(), "linalg.eigh", [&](auto tag) {
    eigh_typed<typename decltype(tag)::type>(A, W, infos, upper, vectors);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_eigh_stub, CPU, eigh_kernel);

}  // namespace native
}  // namespace ember
