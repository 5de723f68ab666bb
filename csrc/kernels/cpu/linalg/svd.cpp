// linalg.svd / svdvals on the CPU: LAPACK's ?gesdd (divide and conquer) per matrix.
#include <algorithm>
#include <cmath>
#include <complex>

#include "core/dtype.h"
#include "kernels/cpu/lapack.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
namespace {

enum class Finiteness { kFinite, kHasInf, kHasNan };

template <typename T>
Finiteness classify(const T* a, int64_t count) {
  Finiteness f = Finiteness::kFinite;
  for (int64_t i = 0; i < count; ++i) {
    const auto re = std::real(a[i]), im = std::imag(a[i]);
    if (std::isnan(re) || std::isnan(im)) return Finiteness::kHasNan;
    if (std::isinf(re) || std::isinf(im)) f = Finiteness::kHasInf;
  }
  return f;
}

template <typename T>
void svd_typed(const Tensor& A, const Tensor& U, const Tensor& S, const Tensor& Vh,
               const Tensor& infos, char jobz) {
  using R = typename RealOf<T>::type;
  const int m = lapack::to_int(linalg::rows(A), "linalg.svd");
  const int n = lapack::to_int(linalg::cols(A), "linalg.svd");
  const int k = std::min(m, n), mx = std::max(m, n);
  const bool vectors = jobz != 'N';
  // Leading dimensions and matrix strides of the factors ('N' passes dummies of size 1).
  const int ldu = std::max(1, m);
  const int ldvt = std::max(1, jobz == 'A' ? n : k);
  const int64_t u_stride = vectors ? linalg::rows(U) * linalg::cols(U) : 0;
  const int64_t vt_stride = vectors ? linalg::rows(Vh) * linalg::cols(Vh) : 0;
  T dummy{};
  T* u = vectors ? U.data<T>() : &dummy;
  T* vt = vectors ? Vh.data<T>() : &dummy;

  T work_size{};
  int info = 0;
  lapack::gesdd(jobz, m, n, nullptr, std::max(1, m), nullptr, nullptr, ldu, nullptr, ldvt,
                &work_size, -1, nullptr, nullptr, &info);
  const int lwork = lapack::query_size(work_size);
  // Complex rwork: the largest of LAPACK's bounds for either job (they changed across versions).
  const int64_t lrwork = is_complex_v<T>
                             ? std::max<int64_t>({1, int64_t(7) * k, int64_t(5) * k * k + 5 * k,
                                                  int64_t(2) * mx * k + 2 * k * k + k})
                             : 1;
  T* a = A.data<T>();
  R* s = S.data<R>();
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t a_stride = int64_t(m) * n;
  lapack::for_each_matrix(linalg::batch_count(A), a_stride * k, [&](int64_t b) {
    // Non-finite input never reaches gesdd: OpenBLAS's loops on some matrices holding inf
    // never end. NaN is LAPACK's error -4; inf is reported as a failure to converge (what
    // LAPACK gives for an all-inf matrix; PyTorch's MKL returns NaN factors for some others).
    const Finiteness f = classify(a + b * a_stride, a_stride);
    if (f != Finiteness::kFinite) {
      infos_data[b] = f == Finiteness::kHasNan ? -4 : std::max(1, k);
      return;
    }
    lapack::Workspace<T> work(0, lwork);
    lapack::Workspace<R> rwork(1, lrwork);
    lapack::Workspace<int> iwork(2, int64_t(8) * k);
    lapack::gesdd(jobz, m, n, a + b * a_stride, std::max(1, m), s + b * k,
                  vectors ? u + b * u_stride : u, ldu, vectors ? vt + b * vt_stride : vt, ldvt,
                  work.get(), lwork, rwork.get(), iwork.get(), &infos_data[b]);
  });
}

void svd_kernel(const Tensor& A, const Tensor& U, const Tensor& S, const Tensor& Vh,
                const Tensor& infos, char jobz) {
  dispatch_dtype<lapack::kLapackTypes>(A.dtype(), "linalg.svd", [&](auto tag) {
    svd_typed<typename decltype(tag)::type>(A, U, S, Vh, infos, jobz);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_svd_stub, CPU, svd_kernel);

}  // namespace native
}  // namespace ember
