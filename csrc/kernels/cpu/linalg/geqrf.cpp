// QR on the CPU: LAPACK's ?geqrf (blocked Householder QR) per matrix; small real matrices run
// ?geqr2's algorithm in L1 (linalg_qr_small.h), which is what ?geqrf runs for them, faster.
#include <type_traits>

#include "kernels/cpu/lapack.h"
#include "kernels/cpu/linalg/qr_parallel.h"
#include "kernels/cpu/linalg/qr_small.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
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
  const bool small = std::is_floating_point_v<T> && stride <= linalg_small::kMaxElements;
  const bool parallel = std::is_floating_point_v<T> &&
                        lapack::qr_parallel_eligible(linalg::batch_count(A), m, n) &&
                        linalg_small::all_finite(a, stride);
  lapack::for_each_matrix(linalg::batch_count(A), parallel ? 0 : stride * k, [&](int64_t b) {
    T* ab = a + b * stride;
    bool done = false;
    if constexpr (std::is_floating_point_v<T>) {
      if (parallel) {
        lapack::geqrf_parallel(m, n, ab, lda, t);
        done = true;
      } else if (small && linalg_small::all_finite(ab, stride)) {
        // On a scratch copy: where LAPACK's scaling is needed the kernel gives up midway, and
        // LAPACK then factors the untouched matrix.
        lapack::Workspace<T> scratch(1, stride);
        T* s = scratch.get();
        std::copy(ab, ab + stride, s);
        done = linalg_small::geqr2(m, n, s, t + b * k);
        if (done) std::copy(s, s + stride, ab);
      }
    }
    if (!done) {
      lapack::Workspace<T> work(0, lwork);
      lapack::geqrf(m, n, ab, lda, t + b * k, work.get(), lwork, &infos_data[b]);
    }
    if (!r) return;
    T* rb = r + b * r_rows * n;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < r_rows; ++i) rb[j * r_rows + i] = i <= j ? ab[j * m + i] : T(0);
    }
  });
}

// One matrix in L1: read (transposing a row-major input), factor, write R, expand Q, write Q.
template <typename T>
bool qr_small_typed(const Tensor& A, const Tensor& Q, const Tensor& R) {
  const int m = static_cast<int>(linalg::rows(A)), n = static_cast<int>(linalg::cols(A));
  const int64_t stride = int64_t(m) * n;
  const bool row_major = A.is_contiguous() && n > 1;
  const T* a = A.data<T>();
  T* q = Q.data<T>();
  T* r = R.data<T>();
  const int64_t batch = linalg::batch_count(A);
  lapack::for_each_matrix(batch, stride * n, [&](int64_t b) {
    lapack::Workspace<T> scratch(1, stride + n);
    T* s = scratch.get();
    T* tau = s + stride;
    const T* ab = a + b * stride;
    T* qb = q + b * stride;
    T* rb = r + b * int64_t(n) * n;
    auto load = [&] {
      if (row_major) {
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) s[int64_t(j) * m + i] = ab[int64_t(i) * n + j];
      } else {
        std::copy(ab, ab + stride, s);
      }
    };
    load();
    bool done = linalg_small::all_finite(s, stride) && linalg_small::geqr2(m, n, s, tau);
    if (!done) {  // non-finite or badly scaled: LAPACK, on an untouched copy
      load();
      lapack::Workspace<T> work(0, std::max(1, 64 * n));
      int info = 0;
      lapack::geqrf(m, n, s, m, tau, work.get(), std::max(1, 64 * n), &info);
    }
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) rb[int64_t(j) * n + i] = i <= j ? s[int64_t(j) * m + i] : T(0);
    }
    if (done) {
      linalg_small::org2r(m, n, n, s, tau);
    } else {
      lapack::Workspace<T> work(0, std::max(1, 64 * n));
      int info = 0;
      lapack::orgqr(m, n, n, s, m, tau, work.get(), std::max(1, 64 * n), &info);
    }
    std::copy(s, s + stride, qb);
  });
  return true;
}

static_assert(kQrSmallMaxElements == linalg_small::kMaxElements, "one size limit for both");

bool qr_small_kernel(const Tensor& A, const Tensor& Q, const Tensor& R) {
  const int64_t elements = linalg::rows(A) * linalg::cols(A);
  if (elements > linalg_small::kMaxElements) return false;
  if (A.dtype() == ScalarType::Float64) return qr_small_typed<double>(A, Q, R);
  if (A.dtype() == ScalarType::Float32) return qr_small_typed<float>(A, Q, R);
  return false;
}

void geqrf_kernel(const Tensor& A, const Tensor& tau, const Tensor& R, const Tensor& infos) {
  dispatch_dtype<lapack::kLapackTypes>(A.dtype(), "linalg.qr", [&](auto tag) {
    geqrf_typed<typename decltype(tag)::type>(A, tau, R, infos);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_geqrf_stub, CPU, geqrf_kernel);
EMBER_REGISTER_KERNEL(linalg_qr_small_stub, CPU, qr_small_kernel);

}  // namespace native
}  // namespace ember
