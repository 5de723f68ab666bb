// linalg.eig / eigvals on the CPU: LAPACK's ?geev (Hessenberg QR) per matrix. Real matrices
// return eigenvalues as (re, im) pairs and a complex-conjugate pair of eigenvectors as two real
// columns (re, im); they are expanded here into the complex outputs PyTorch returns.
#include "core/dtype.h"
#include "kernels/cpu/lapack.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
namespace {

constexpr const char* kOp = "linalg.eig";

template <typename T>
void eig_real(const Tensor& A, const Tensor& W, const Tensor& V, const Tensor& infos) {
  using C = std::complex<T>;
  const int n = lapack::to_int(linalg::rows(A), kOp), lda = std::max(1, n);
  const bool vectors = V.defined();
  const char jobvr = vectors ? 'V' : 'N';
  T* a = A.data<T>();
  // The query gets real arrays: ?hseqr's query may look at them.
  std::vector<T> query_parts(2 * int64_t(n) + (vectors ? int64_t(n) * n : 1));
  T work_size{}, dummy{};
  int info = 0;
  lapack::geev('N', jobvr, n, a, lda, query_parts.data(), query_parts.data() + n, &dummy, 1,
               query_parts.data() + 2 * n, vectors ? lda : 1, &work_size, -1, &info);
  const int lwork = lapack::query_size(work_size);
  C* w = W.data<C>();
  C* v = vectors ? V.data<C>() : nullptr;
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t nn = int64_t(n) * n;
  lapack::for_each_matrix(linalg::batch_count(A), nn * n, [&](int64_t b) {
    lapack::Workspace<T> work(0, lwork);
    lapack::Workspace<T> parts(1, 2 * int64_t(n) + (vectors ? nn : 0));
    T* wr = parts.get();
    T* wi = wr + n;
    T* vr = vectors ? wi + n : &dummy;
    lapack::geev('N', jobvr, n, a + b * nn, lda, wr, wi, &dummy, 1, vr, vectors ? lda : 1,
                 work.get(), lwork, &infos_data[b]);
    C* wb = w + b * n;
    for (int j = 0; j < n; ++j) wb[j] = C(wr[j], wi[j]);
    if (!vectors) return;
    C* vb = v + b * nn;
    for (int j = 0; j < n; ++j) {
      const T* re = vr + int64_t(j) * n;
      if (wi[j] == T(0) || j + 1 == n) {
        for (int i = 0; i < n; ++i) vb[int64_t(j) * n + i] = C(re[i], T(0));
        continue;
      }
      // columns j, j+1 hold re and im of the eigenvector of wr[j] + i wi[j]; the next
      // eigenvalue is its conjugate, with the conjugate eigenvector.
      const T* im = re + n;
      for (int i = 0; i < n; ++i) {
        vb[int64_t(j) * n + i] = C(re[i], im[i]);
        vb[int64_t(j + 1) * n + i] = C(re[i], -im[i]);
      }
      ++j;
    }
  });
}

template <typename C>
void eig_complex(const Tensor& A, const Tensor& W, const Tensor& V, const Tensor& infos) {
  using R = typename RealOf<C>::type;
  const int n = lapack::to_int(linalg::rows(A), kOp), lda = std::max(1, n);
  const bool vectors = V.defined();
  const char jobvr = vectors ? 'V' : 'N';
  C* a = A.data<C>();
  C* w = W.data<C>();
  C* v = vectors ? V.data<C>() : nullptr;
  // The query gets real arrays: ?hseqr's query may look at them.
  C work_size{}, dummy{};
  R rwork_dummy{};
  int info = 0;
  lapack::geev('N', jobvr, n, a, lda, w, &dummy, 1, vectors ? v : &dummy, vectors ? lda : 1,
               &work_size, -1, &rwork_dummy, &info);
  const int lwork = lapack::query_size(work_size);
  int32_t* infos_data = infos.data<int32_t>();
  const int64_t nn = int64_t(n) * n;
  lapack::for_each_matrix(linalg::batch_count(A), nn * n, [&](int64_t b) {
    lapack::Workspace<C> work(0, lwork);
    lapack::Workspace<R> rwork(1, 2 * int64_t(n));
    lapack::geev('N', jobvr, n, a + b * nn, lda, w + b * n, &dummy, 1,
                 vectors ? v + b * nn : &dummy, vectors ? lda : 1, work.get(), lwork, rwork.get(),
                 &infos_data[b]);
  });
}

void eig_kernel(const Tensor& A, const Tensor& W, const Tensor& V, const Tensor& infos) {
  dispatch_dtype<lapack::kLapackTypes>(A.dtype(), kOp, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T>) {
      eig_complex<T>(A, W, V, infos);
    } else {
      eig_real<T>(A, W, V, infos);
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(linalg_eig_stub, CPU, eig_kernel);

}  // namespace native
}  // namespace ember
