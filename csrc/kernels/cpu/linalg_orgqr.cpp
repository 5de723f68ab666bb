// The product of Householder reflectors on the CPU: LAPACK's ?orgqr / ?ungqr per matrix.
#include "kernels/cpu/lapack.h"
#include "ops/linalg_spectral.h"

namespace ember {
namespace {

template <typename T>
void orgqr_typed(const Tensor& Q, const Tensor& tau, const Tensor& infos) {
  const int m = lapack::to_int(linalg::rows(Q), "linalg.householder_product");
  const int n = lapack::to_int(linalg::cols(Q), "linalg.householder_product");
  const int k = lapack::to_int(tau.size(tau.dim() - 1), "linalg.householder_product");
  const int lda = std::max(1, m);
  T work_size{};
  int info = 0;
  lapack::orgqr(m, n, k, nullptr, lda, nullptr, &work_size, -1, &info);
  const int lwork = lapack::query_size(work_size);
  T* q = Q.data<T>();
  const T* t = tau.data<T>();
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t stride = int64_t(m) * n;
  lapack::for_each_matrix(linalg::batch_count(Q), stride * std::max(k, 1), [&](int64_t b) {
    lapack::Workspace<T> work(0, lwork);
    lapack::orgqr(m, n, k, q + b * stride, lda, t + b * k, work.get(), lwork, &infos_data[b]);
  });
}

void orgqr_kernel(const Tensor& Q, const Tensor& tau, const Tensor& infos) {
  dispatch_dtype<lapack::kLapackTypes>(Q.dtype(), "linalg.householder_product", [&](auto tag) {
    orgqr_typed<typename decltype(tag)::type>(Q, tau, infos);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_orgqr_stub, CPU, orgqr_kernel);

}  // namespace ember
