// linalg.lstsq on the CPU: LAPACK's ?gels (QR), ?gelsy (complete orthogonal factorization with
// column pivoting), ?gelsd (SVD, divide and conquer) and ?gelss (SVD) per matrix. Small real
// full-rank systems take ?gelsy's steps in L1 (gelsy_small).
#include <limits>
#include <type_traits>

#include "core/dtype.h"
#include "kernels/cpu/lapack.h"
#include "kernels/cpu/linalg/qr_small.h"
#include "kernels/linalg/spectral_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
T max_abs(const T* x, int64_t count) {
  T r = 0;
  for (int64_t i = 0; i < count; ++i) r = std::max(r, std::abs(x[i]));
  return r;
}

// ?gelsy's steps for a small real A (m x n, m >= n) whose rank comes out as n: QR with column
// pivoting (?laqp2's algorithm), the rank by LAPACK's own incremental condition estimator
// (?laic1, as ?gelsy calls it), Q^T B, R^-1, the permutation. Works on copies and returns false,
// having written nothing, where ?gelsy would scale A or B (entries outside [smlnum, bignum]),
// finds a lower rank (its complete orthogonal factorization follows), or a column norm needs
// LAPACK's scaling; LAPACK then solves the untouched system. On success b's first m rows hold
// what ?gelsy leaves there: the solution in rows 0..n-1 and Q^T B below.
template <typename T>
bool gelsy_small(int m, int n, int nrhs, const T* a, T* b, int ldb, T rcond, int* rank) {
  const int64_t a_count = int64_t(m) * n;
  if (m < n || nrhs < 1 || a_count > linalg_small::kMaxElements ||
      int64_t(m) * nrhs > linalg_small::kMaxElements) {
    return false;
  }
  const T smlnum = std::numeric_limits<T>::min() / (std::numeric_limits<T>::epsilon());
  const T bignum = T(1) / smlnum;
  if (!linalg_small::all_finite(a, a_count)) return false;
  const T anrm = max_abs(a, a_count);
  if (!(anrm >= smlnum && anrm <= bignum)) return false;
  for (int j = 0; j < nrhs; ++j) {
    if (!linalg_small::all_finite(b + int64_t(j) * ldb, m)) return false;
  }
  T bnrm = 0;
  for (int j = 0; j < nrhs; ++j) bnrm = std::max(bnrm, max_abs(b + int64_t(j) * ldb, m));
  if (bnrm != T(0) && !(bnrm >= smlnum && bnrm <= bignum)) return false;

  lapack::Workspace<T> scratch(1, a_count + int64_t(m) * nrhs + 5 * int64_t(n));
  T* qr = scratch.get();
  T* x = qr + a_count;
  T* tau = x + int64_t(m) * nrhs;
  T* work = tau + n;  // 2n for the norms, then the two condition vectors
  lapack::Workspace<int> jpvt(2, n);
  std::copy(a, a + a_count, qr);
  if (!linalg_small::geqp2(m, n, qr, jpvt.get(), tau, work)) return false;

  // ?gelsy's rank loop: stop at the first column that makes the estimated condition too large.
  T* xmin = work;
  T* xmax = work + n;
  T smax = std::abs(qr[0]);
  T smin = smax;
  if (smax == T(0)) return false;
  xmin[0] = xmax[0] = T(1);
  for (int r = 1; r < n; ++r) {
    const T* col = qr + int64_t(r) * m;
    T sminpr, smaxpr, s1, c1, s2, c2;
    lapack::laic1(2, r, xmin, smin, col, col[r], &sminpr, &s1, &c1);
    lapack::laic1(1, r, xmax, smax, col, col[r], &smaxpr, &s2, &c2);
    if (!(smaxpr * rcond <= sminpr)) return false;  // rank r < n
    for (int i = 0; i < r; ++i) {
      xmin[i] *= s1;
      xmax[i] *= s2;
    }
    xmin[r] = c1;
    xmax[r] = c2;
    smin = sminpr;
    smax = smaxpr;
  }

  for (int j = 0; j < nrhs; ++j) {
    std::copy(b + int64_t(j) * ldb, b + int64_t(j) * ldb + m, x + int64_t(j) * m);
  }
  linalg_small::apply_qt(m, nrhs, n, qr, tau, x, m);
  linalg_small::solve_upper(n, nrhs, qr, m, x, m);
  for (int j = 0; j < nrhs; ++j) {
    const T* xj = x + int64_t(j) * m;
    T* bj = b + int64_t(j) * ldb;
    for (int i = 0; i < n; ++i) bj[jpvt.get()[i] - 1] = xj[i];
    std::copy(xj + n, xj + m, bj + n);
  }
  *rank = n;
  return true;
}

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
        if constexpr (std::is_floating_point_v<T>) {
          if (gelsy_small(m, n, nrhs, ai, bi, ldb, rcond, &r)) break;
        }
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

}  // namespace native
}  // namespace ember
