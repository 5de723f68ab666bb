// QR on the CPU: LAPACK's ?geqrf (blocked Householder QR) per matrix.
#include "kernels/cpu/lapack.h"
#include "ops/linalg_spectral.h"

namespace ember {
namespace {

template <typename T>
void geqrf_typed(const Tensor& A, const Tensor& tau, const Tensor& R, const Tensor& infos) {
  const int m = lapack::to_int(linalg::rows(A), "linalg.qr");
  const int n = lapack::to_int(linalg::cols(A), "linalg.qr");
  const int k = std::min(m, n), lda = std::max(1, m);
  T work_size{};
  int info = 0;
  lapack::geqrf(m, n, nullptr, lda, nullptr, &work_size, -1, &info);
  const int lwork = lapack::query_size(work_size);
  T* a = A.data<T>();
  T* t = tau.data<T>();
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t stride = int64_t(m) * n;
  T* r = R.defined() ? R.data<T>() : nullptr;
  const int64_t r_rows = R.defined() ? linalg::rows(R) : 0;
  lapack::for_each_matrix(linalg::batch_count(A), stride * k, [&](int64_t b) {
    lapack::Workspace<T> work(0, lwork);
    T* ab = a + b * stride;
    lapack::geqrf(m, n, ab, lda, t + b * k, work.get(), lwork, &infos_data[b]);
    if (!r) return;
    T* rb = r + b * r_rows * n;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < r_rows; ++i) rb[j * r_rows + i] = i <= j ? ab[j * m + i] : T(0);
    }
  });
}

void geqrf_kernel(const Tensor& A, const Tensor& tau, const Tensor& R, const Tensor& infos) {
  dispatch_dtype<lapack::kLapackTypes>(A.dtype(), "linalg.qr", [&](auto tag) {
    geqrf_typed<typename decltype(tag)::type>(A, tau, R, infos);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_geqrf_stub, CPU, geqrf_kernel);

}  // namespace ember
