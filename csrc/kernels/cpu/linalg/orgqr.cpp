// The product of Householder reflectors on the CPU: LAPACK's ?orgqr / ?ungqr per matrix; small
// real matrices run ?org2r's algorithm in L1 (linalg_qr_small.h), which is what ?orgqr runs for
// them, faster.
#include <type_traits>

#include "kernels/cpu/lapack.h"
#include "kernels/cpu/linalg/qr_parallel.h"
#include "kernels/cpu/linalg/qr_small.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
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
  const bool small = std::is_floating_point_v<T> && stride <= linalg_small::kMaxElements;
  const bool parallel =
      std::is_floating_point_v<T> && lapack::qr_parallel_eligible(linalg::batch_count(Q), m, n) &&
      linalg_small::all_finite(q, int64_t(m) * k) && linalg_small::all_finite(t, k);
  const int64_t work = parallel ? 0 : stride * std::max(k, 1);
  lapack::for_each_matrix(linalg::batch_count(Q), work, [&](int64_t b) {
    T* qb = q + b * stride;
    if constexpr (std::is_floating_point_v<T>) {
      if (parallel) {
        lapack::orgqr_parallel(m, n, k, qb, lda, t);
        return;
      }
      // Non-finite input goes to LAPACK, whose ?larf skips the zero tail of a reflector (so
      // where an inf meets a zero, the results differ from a plain product).
      if (small && linalg_small::all_finite(qb, int64_t(m) * k) &&
          linalg_small::all_finite(t + b * k, k)) {
        linalg_small::org2r(m, n, k, qb, t + b * k);
        return;
      }
    }
    lapack::Workspace<T> work(0, lwork);
    lapack::orgqr(m, n, k, qb, lda, t + b * k, work.get(), lwork, &infos_data[b]);
  });
}

void orgqr_kernel(const Tensor& Q, const Tensor& tau, const Tensor& infos) {
  dispatch_dtype<lapack::kLapackTypes>(Q.dtype(), "linalg.householder_product", [&](auto tag) {
    orgqr_typed<typename decltype(tag)::type>(Q, tau, infos);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_orgqr_stub, CPU, orgqr_kernel);

}  // namespace native
}  // namespace ember
