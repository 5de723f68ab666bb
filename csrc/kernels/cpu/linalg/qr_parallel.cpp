// Blocked Householder QR of one large real matrix with the trailing updates spread over Ember's
// threads: LAPACK's ?geqrf and ?orgqr loops (panel ?geqr2 / ?org2r, ?larft, ?larfb), with each
// ?larfb split by columns into one call per thread (OpenBLAS single-threaded inside). OpenBLAS's
// own threading of ?geqrf parallelises only parts of each ?larfb (its GEMMs) and scaled poorly
// here (512 x 512: 16.8 ms at 1 thread, 17.6 ms at 2). See docs/design/linalg.md.
#include "kernels/cpu/linalg/qr_parallel.h"

#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/lapack.h"

extern "C" {
void scipy_sgeqr2_(const int*, const int*, float*, const int*, float*, float*, int*);
void scipy_dgeqr2_(const int*, const int*, double*, const int*, double*, double*, int*);
void scipy_sorg2r_(const int*, const int*, const int*, float*, const int*, const float*, float*,
                   int*);
void scipy_dorg2r_(const int*, const int*, const int*, double*, const int*, const double*, double*,
                   int*);
void scipy_slarft_(const char*, const char*, const int*, const int*, const float*, const int*,
                   const float*, float*, const int*, FLen, FLen);
void scipy_dlarft_(const char*, const char*, const int*, const int*, const double*, const int*,
                   const double*, double*, const int*, FLen, FLen);
void scipy_slarfb_(const char*, const char*, const char*, const char*, const int*, const int*,
                   const int*, const float*, const int*, const float*, const int*, float*,
                   const int*, float*, const int*, FLen, FLen, FLen, FLen);
void scipy_dlarfb_(const char*, const char*, const char*, const char*, const int*, const int*,
                   const int*, const double*, const int*, const double*, const int*, double*,
                   const int*, double*, const int*, FLen, FLen, FLen, FLen);
}

namespace ember {
namespace native {
namespace lapack {
namespace {

void geqr2(int m, int n, float* a, int lda, float* tau, float* work) {
  int info = 0;
  scipy_sgeqr2_(&m, &n, a, &lda, tau, work, &info);
}
void geqr2(int m, int n, double* a, int lda, double* tau, double* work) {
  int info = 0;
  scipy_dgeqr2_(&m, &n, a, &lda, tau, work, &info);
}
void org2r(int m, int n, int k, float* a, int lda, const float* tau, float* work) {
  int info = 0;
  scipy_sorg2r_(&m, &n, &k, a, &lda, tau, work, &info);
}
void org2r(int m, int n, int k, double* a, int lda, const double* tau, double* work) {
  int info = 0;
  scipy_dorg2r_(&m, &n, &k, a, &lda, tau, work, &info);
}
// T of the block reflector H = I - V T V^T (forward, columnwise).
void larft(int n, int k, const float* v, int ldv, const float* tau, float* t, int ldt) {
  scipy_slarft_("F", "C", &n, &k, v, &ldv, tau, t, &ldt, 1, 1);
}
void larft(int n, int k, const double* v, int ldv, const double* tau, double* t, int ldt) {
  scipy_dlarft_("F", "C", &n, &k, v, &ldv, tau, t, &ldt, 1, 1);
}
// C = H^T C (trans 'T') or H C ('N') from the left.
void larfb(char trans, int m, int n, int k, const float* v, int ldv, const float* t, int ldt,
           float* c, int ldc, float* work, int ldwork) {
  scipy_slarfb_("L", &trans, "F", "C", &m, &n, &k, v, &ldv, t, &ldt, c, &ldc, work, &ldwork, 1, 1,
                1, 1);
}
void larfb(char trans, int m, int n, int k, const double* v, int ldv, const double* t, int ldt,
           double* c, int ldc, double* work, int ldwork) {
  scipy_dlarfb_("L", &trans, "F", "C", &m, &n, &k, v, &ldv, t, &ldt, c, &ldc, work, &ldwork, 1, 1,
                1, 1);
}

constexpr int kBlock = 32;  // ?geqrf's block size (ilaenv) on this OpenBLAS

// Applies the block reflector (V: rows x ib at v, T) to the columns [0, cols) of C, one column
// slice per thread.
template <typename T>
void larfb_parallel(char trans, int rows, int cols, int ib, const T* v, int lda, const T* t, T* c) {
  const int threads = std::max(1, get_num_threads());
  const int slice = std::max(8, (cols + threads - 1) / threads + 7) / 8 * 8;
  const int slices = (cols + slice - 1) / slice;
  parallel_for(0, slices, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t s = lo; s < hi; ++s) {
      const int c0 = int(s) * slice, width = std::min(slice, cols - c0);
      std::vector<T> work(size_t(width) * ib);
      larfb(trans, rows, width, ib, v, lda, t, kBlock, c + int64_t(c0) * lda, lda, work.data(),
            width);
    }
  });
}

}  // namespace

bool qr_parallel_eligible(int64_t batch, int64_t m, int64_t n) {
  return batch == 1 && std::min(m, n) >= kParallelQrMin && get_num_threads() > 1 &&
         !in_parallel_region();
}

template <typename T>
void geqrf_parallel(int m, int n, T* a, int lda, T* tau) {
  const int k = std::min(m, n);
  std::vector<T> tmat(kBlock * kBlock), work(std::max(1, n));
  int i = 0;
  for (; i + kBlock < k; i += kBlock) {
    T* aii = a + int64_t(i) * lda + i;
    geqr2(m - i, kBlock, aii, lda, tau + i, work.data());
    larft(m - i, kBlock, aii, lda, tau + i, tmat.data(), kBlock);
    larfb_parallel('T', m - i, n - i - kBlock, kBlock, aii, lda, tmat.data(),
                   aii + int64_t(kBlock) * lda);
  }
  geqr2(m - i, n - i, a + int64_t(i) * lda + i, lda, tau + i, work.data());
}

template <typename T>
void orgqr_parallel(int m, int n, int k, T* a, int lda, const T* tau) {
  std::vector<T> tmat(kBlock * kBlock), work(std::max(1, n));
  // The last block (from kk on) unblocked, then the blocks before it backwards, as ?orgqr.
  const int ki = k > kBlock ? (k - kBlock - 1) / kBlock * kBlock : -kBlock;
  const int kk = std::min(k, ki + kBlock);
  for (int j = kk; j < n; ++j) std::fill(a + int64_t(j) * lda, a + int64_t(j) * lda + kk, T(0));
  org2r(m - kk, n - kk, k - kk, a + int64_t(kk) * lda + kk, lda, tau + kk, work.data());
  for (int i = ki; i >= 0; i -= kBlock) {
    const int ib = std::min(kBlock, k - i);
    T* aii = a + int64_t(i) * lda + i;
    if (i + ib < n) {
      larft(m - i, ib, aii, lda, tau + i, tmat.data(), kBlock);
      larfb_parallel('N', m - i, n - i - ib, ib, aii, lda, tmat.data(), aii + int64_t(ib) * lda);
    }
    org2r(m - i, ib, ib, aii, lda, tau + i, work.data());
    for (int j = i; j < i + ib; ++j)
      std::fill(a + int64_t(j) * lda, a + int64_t(j) * lda + i, T(0));
  }
}

template void geqrf_parallel<float>(int, int, float*, int, float*);
template void geqrf_parallel<double>(int, int, double*, int, double*);
template void orgqr_parallel<float>(int, int, int, float*, int, const float*);
template void orgqr_parallel<double>(int, int, int, double*, int, const double*);

}  // namespace lapack
}  // namespace native
}  // namespace ember
