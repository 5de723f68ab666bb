// linalg.eigh / eigvalsh on the CPU: LAPACK's ?syevd / ?heevd (divide and conquer) per matrix.
#include "core/dtype.h"
#include "kernels/cpu/lapack.h"
#include "ops/linalg_spectral.h"

namespace ember {
namespace {

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

}  // namespace ember
