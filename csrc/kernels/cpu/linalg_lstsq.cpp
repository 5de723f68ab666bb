// linalg.lstsq on the CPU: LAPACK's ?gels (QR), ?gelsy (complete orthogonal factorization with
// column pivoting), ?gelsd (SVD, divide and conquer) and ?gelss (SVD) per matrix.
#include "core/dtype.h"
#include "kernels/cpu/lapack.h"
#include "ops/linalg_spectral.h"

namespace ember {
namespace {

template <typename T>
void lstsq_typed(const Tensor& A, const Tensor& B, const Tensor& rank, const Tensor& S,
                 const Tensor& infos, LstsqDriver driver, double rcond_) {
  using R = typename RealOf<T>::type;
  constexpr const char* op = "linalg.lstsq";
  const int m = lapack::to_int(linalg::rows(A), op), n = lapack::to_int(linalg::cols(A), op);
  const int nrhs = lapack::to_int(linalg::cols(B), op);
  const int lda = std::max(1, m), ldb = std::max({1, m, n}), k = std::min(m, n);
  const R rcond = static_cast<R>(rcond_);
  // Workspace query (rwork / iwork sizes come back from gelsd's query too).
  T work_size{};
  R rwork_size = 1;
  int iwork_size = 1, qrank = 0, info = 0;
  switch (driver) {
    case LstsqDriver::gels:
      lapack::gels(m, n, nrhs, nullptr, lda, nullptr, ldb, &work_size, -1, &info);
      break;
    case LstsqDriver::gelsy:
      lapack::gelsy(m, n, nrhs, nullptr, lda, nullptr, ldb, nullptr, rcond, &qrank, &work_size, -1,
                    nullptr, &info);
      rwork_size = R(2 * n);
      break;
    case LstsqDriver::gelsd:
      lapack::gelsd(m, n, nrhs, nullptr, lda, nullptr, ldb, nullptr, rcond, &qrank, &work_size, -1,
                    &rwork_size, &iwork_size, &info);
      break;
    case LstsqDriver::gelss:
      lapack::gelss(m, n, nrhs, nullptr, lda, nullptr, ldb, nullptr, rcond, &qrank, &work_size, -1,
                    nullptr, &info);
      rwork_size = R(5 * k);
      break;
  }
  const int lwork = lapack::query_size(work_size);
  const int64_t lrwork = std::max<int64_t>(1, static_cast<int64_t>(rwork_size));
  const int64_t liwork = std::max(1, iwork_size);

  T* a = A.data<T>();
  T* b = B.data<T>();
  int64_t* rank_data = rank.numel() ? rank.data<int64_t>() : nullptr;
  R* s = S.numel() ? S.data<R>() : nullptr;
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t a_stride = int64_t(m) * n, b_stride = int64_t(ldb) * nrhs;
  lapack::for_each_matrix(linalg::batch_count(A), a_stride * std::max(k, 1), [&](int64_t i) {
    lapack::Workspace<T> work(0, lwork);
    T* ai = a + i * a_stride;
    T* bi = b + i * b_stride;
    int r = 0;
    int* inf = &infos_data[i];
    switch (driver) {
      case LstsqDriver::gels:
        lapack::gels(m, n, nrhs, ai, lda, bi, ldb, work.get(), lwork, inf);
        break;
      case LstsqDriver::gelsy: {
        lapack::Workspace<int> jpvt(2, n);
        std::fill(jpvt.get(), jpvt.get() + std::max(n, 1), 0);  // every column is free
        lapack::Workspace<R> rwork(1, lrwork);
        lapack::gelsy(m, n, nrhs, ai, lda, bi, ldb, jpvt.get(), rcond, &r, work.get(), lwork,
                      rwork.get(), inf);
        break;
      }
      case LstsqDriver::gelsd: {
        lapack::Workspace<R> rwork(1, lrwork);
        lapack::Workspace<int> iwork(2, liwork);
        lapack::gelsd(m, n, nrhs, ai, lda, bi, ldb, s + i * k, rcond, &r, work.get(), lwork,
                      rwork.get(), iwork.get(), inf);
        break;
      }
      case LstsqDriver::gelss: {
        lapack::Workspace<R> rwork(1, lrwork);
        lapack::gelss(m, n, nrhs, ai, lda, bi, ldb, s + i * k, rcond, &r, work.get(), lwork,
                      rwork.get(), inf);
        break;
      }
    }
    if (rank_data) rank_data[i] = r;
  });
}

void lstsq_kernel(const Tensor& A, const Tensor& B, const Tensor& rank, const Tensor& S,
                  const Tensor& infos, LstsqDriver driver, double rcond) {
  dispatch_dtype<lapack::kLapackTypes>(A.dtype(), "linalg.lstsq", [&](auto tag) {
    lstsq_typed<typename decltype(tag)::type>(A, B, rank, S, infos, driver, rcond);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_lstsq_stub, CPU, lstsq_kernel);

}  // namespace ember
