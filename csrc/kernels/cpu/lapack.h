// LAPACK for ember.linalg's CPU kernels: OpenBLAS from the PyPI package scipy-openblas32 (the
// build that NumPy and SciPy ship; 32-bit integers, every symbol prefixed `scipy_`). Why LAPACK
// rather than Eigen, and the measurements: docs/design/linalg.md.
//
// The routines are declared here (the package's own lapack.h is macro-heavy C and is not
// needed), then wrapped in ember::lapack as overloads on the element type, so that a kernel
// written once as a template calls e.g. lapack::geqrf(m, n, a, ...) for float, double,
// complex<float> and complex<double>. Complex arrays are std::complex, which has the layout of
// Fortran's COMPLEX. Character arguments are followed by their hidden Fortran lengths.
//
// Threads: see Note [LAPACK threads] in lapack_runtime.cpp. Every kernel runs its matrices
// through lapack::for_each_matrix (below), never calls a routine from a bare parallel_for.
#pragma once
#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/linalg/batch.h"

extern "C" {
using c64 = std::complex<float>;
using c128 = std::complex<double>;
using FLen = size_t;  // hidden length of a Fortran CHARACTER argument

// Symmetric / Hermitian eigendecomposition (divide and conquer).
void scipy_ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*,
                   const int*, int*, const int*, int*, FLen, FLen);
void scipy_dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
                   const int*, int*, const int*, int*, FLen, FLen);
void scipy_cheevd_(const char*, const char*, const int*, c64*, const int*, float*, c64*, const int*,
                   float*, const int*, int*, const int*, int*, FLen, FLen);
void scipy_zheevd_(const char*, const char*, const int*, c128*, const int*, double*, c128*,
                   const int*, double*, const int*, int*, const int*, int*, FLen, FLen);

// Singular value decomposition (divide and conquer).
void scipy_sgesdd_(const char*, const int*, const int*, float*, const int*, float*, float*,
                   const int*, float*, const int*, float*, const int*, int*, int*, FLen);
void scipy_dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*,
                   const int*, double*, const int*, double*, const int*, int*, int*, FLen);
void scipy_cgesdd_(const char*, const int*, const int*, c64*, const int*, float*, c64*, const int*,
                   c64*, const int*, c64*, const int*, float*, int*, int*, FLen);
void scipy_zgesdd_(const char*, const int*, const int*, c128*, const int*, double*, c128*,
                   const int*, c128*, const int*, c128*, const int*, double*, int*, int*, FLen);

// Householder QR and the product of its reflectors.
void scipy_sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void scipy_dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void scipy_cgeqrf_(const int*, const int*, c64*, const int*, c64*, c64*, const int*, int*);
void scipy_zgeqrf_(const int*, const int*, c128*, const int*, c128*, c128*, const int*, int*);
void scipy_sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*,
                   const int*, int*);
void scipy_dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
                   const int*, int*);
void scipy_cungqr_(const int*, const int*, const int*, c64*, const int*, const c64*, c64*,
                   const int*, int*);
void scipy_zungqr_(const int*, const int*, const int*, c128*, const int*, const c128*, c128*,
                   const int*, int*);

// Least squares: QR (gels), complete orthogonal factorization (gelsy), SVD (gelsd, gelss).
void scipy_sgels_(const char*, const int*, const int*, const int*, float*, const int*, float*,
                  const int*, float*, const int*, int*, FLen);
void scipy_dgels_(const char*, const int*, const int*, const int*, double*, const int*, double*,
                  const int*, double*, const int*, int*, FLen);
void scipy_cgels_(const char*, const int*, const int*, const int*, c64*, const int*, c64*,
                  const int*, c64*, const int*, int*, FLen);
void scipy_zgels_(const char*, const int*, const int*, const int*, c128*, const int*, c128*,
                  const int*, c128*, const int*, int*, FLen);
void scipy_sgelsy_(const int*, const int*, const int*, float*, const int*, float*, const int*, int*,
                   const float*, int*, float*, const int*, int*);
void scipy_dgelsy_(const int*, const int*, const int*, double*, const int*, double*, const int*,
                   int*, const double*, int*, double*, const int*, int*);
void scipy_cgelsy_(const int*, const int*, const int*, c64*, const int*, c64*, const int*, int*,
                   const float*, int*, c64*, const int*, float*, int*);
void scipy_zgelsy_(const int*, const int*, const int*, c128*, const int*, c128*, const int*, int*,
                   const double*, int*, c128*, const int*, double*, int*);
void scipy_sgelsd_(const int*, const int*, const int*, float*, const int*, float*, const int*,
                   float*, const float*, int*, float*, const int*, int*, int*);
void scipy_dgelsd_(const int*, const int*, const int*, double*, const int*, double*, const int*,
                   double*, const double*, int*, double*, const int*, int*, int*);
void scipy_cgelsd_(const int*, const int*, const int*, c64*, const int*, c64*, const int*, float*,
                   const float*, int*, c64*, const int*, float*, int*, int*);
void scipy_zgelsd_(const int*, const int*, const int*, c128*, const int*, c128*, const int*,
                   double*, const double*, int*, c128*, const int*, double*, int*, int*);
void scipy_sgelss_(const int*, const int*, const int*, float*, const int*, float*, const int*,
                   float*, const float*, int*, float*, const int*, int*);
void scipy_dgelss_(const int*, const int*, const int*, double*, const int*, double*, const int*,
                   double*, const double*, int*, double*, const int*, int*);
void scipy_cgelss_(const int*, const int*, const int*, c64*, const int*, c64*, const int*, float*,
                   const float*, int*, c64*, const int*, float*, int*);
void scipy_zgelss_(const int*, const int*, const int*, c128*, const int*, c128*, const int*,
                   double*, const double*, int*, c128*, const int*, double*, int*);

// Incremental condition estimation (?gelsy's rank decision).
void scipy_slaic1_(const int*, const int*, const float*, const float*, const float*, const float*,
                   float*, float*, float*);
void scipy_dlaic1_(const int*, const int*, const double*, const double*, const double*,
                   const double*, double*, double*, double*);

// General eigendecomposition.
void scipy_sgeev_(const char*, const char*, const int*, float*, const int*, float*, float*, float*,
                  const int*, float*, const int*, float*, const int*, int*, FLen, FLen);
void scipy_dgeev_(const char*, const char*, const int*, double*, const int*, double*, double*,
                  double*, const int*, double*, const int*, double*, const int*, int*, FLen, FLen);
void scipy_cgeev_(const char*, const char*, const int*, c64*, const int*, c64*, c64*, const int*,
                  c64*, const int*, c64*, const int*, float*, int*, FLen, FLen);
void scipy_zgeev_(const char*, const char*, const int*, c128*, const int*, c128*, c128*, const int*,
                  c128*, const int*, c128*, const int*, double*, int*, FLen, FLen);
}

namespace ember {
namespace native {
namespace lapack {

// The four element types LAPACK serves (dispatch_dtype set).
constexpr uint32_t kLapackTypes = kFloat32 | kFloat64 | kComplex64 | kComplex128;

// Sizes reach LAPACK as 32-bit ints: checked once per op so a huge matrix fails clearly.
int to_int(int64_t v, const char* op);

// A workspace query's answer (returned in work[0]) as a size.
template <typename T>
int query_size(T w) {
  return std::max(1, static_cast<int>(std::real(w)));
}

// A LAPACK workspace of `count` elements for one call. Small ones (the common case: batches of
// small matrices) reuse a per-thread buffer, so a batch allocates once per thread rather than
// once per matrix; large ones are allocated for the call and freed after it, so that one huge
// matrix does not leave its workspace behind in every thread. `slot` tells apart the buffers
// one call needs at once.
template <typename T>
class Workspace {
 public:
  Workspace(int slot, int64_t count) {
    constexpr int64_t kCachedBytes = int64_t(1) << 20;
    count = std::max<int64_t>(count, 1);
    if (count * static_cast<int64_t>(sizeof(T)) <= kCachedBytes) {
      thread_local std::vector<T> cached[4];
      std::vector<T>& buf = cached[slot];
      if (static_cast<int64_t>(buf.size()) < count) buf.resize(count);
      ptr_ = buf.data();
    } else {
      own_.resize(count);
      ptr_ = own_.data();
    }
  }
  T* get() const { return ptr_; }

 private:
  std::vector<T> own_;
  T* ptr_ = nullptr;
};

// ---- overloads on the element type (real kernels ignore rwork) --------------------------

#define EMBER_LAPACK_HEEVD(T, R, fn, ...)                                                   \
  inline void heevd(char jobz, char uplo, int n, T* a, int lda, R* w, T* work, int lwork,   \
                    R* rwork, int lrwork, int* iwork, int liwork, int* info) {              \
    fn(&jobz, &uplo, &n, a, &lda, w, work, &lwork, __VA_ARGS__ iwork, &liwork, info, 1, 1); \
  }
EMBER_LAPACK_HEEVD(float, float, scipy_ssyevd_, )
EMBER_LAPACK_HEEVD(double, double, scipy_dsyevd_, )
EMBER_LAPACK_HEEVD(c64, float, scipy_cheevd_, rwork, &lrwork, )
EMBER_LAPACK_HEEVD(c128, double, scipy_zheevd_, rwork, &lrwork, )
#undef EMBER_LAPACK_HEEVD

#define EMBER_LAPACK_GESDD(T, R, fn, ...)                                                         \
  inline void gesdd(char jobz, int m, int n, T* a, int lda, R* s, T* u, int ldu, T* vt, int ldvt, \
                    T* work, int lwork, R* rwork, int* iwork, int* info) {                        \
    fn(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, __VA_ARGS__ iwork, info, 1);  \
  }
EMBER_LAPACK_GESDD(float, float, scipy_sgesdd_, )
EMBER_LAPACK_GESDD(double, double, scipy_dgesdd_, )
EMBER_LAPACK_GESDD(c64, float, scipy_cgesdd_, rwork, )
EMBER_LAPACK_GESDD(c128, double, scipy_zgesdd_, rwork, )
#undef EMBER_LAPACK_GESDD

#define EMBER_LAPACK_QR(T, geqrf_fn, orgqr_fn)                                            \
  inline void geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info) { \
    geqrf_fn(&m, &n, a, &lda, tau, work, &lwork, info);                                   \
  }                                                                                       \
  inline void orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork, \
                    int* info) {                                                          \
    orgqr_fn(&m, &n, &k, a, &lda, tau, work, &lwork, info);                               \
  }
EMBER_LAPACK_QR(float, scipy_sgeqrf_, scipy_sorgqr_)
EMBER_LAPACK_QR(double, scipy_dgeqrf_, scipy_dorgqr_)
EMBER_LAPACK_QR(c64, scipy_cgeqrf_, scipy_cungqr_)
EMBER_LAPACK_QR(c128, scipy_zgeqrf_, scipy_zungqr_)
#undef EMBER_LAPACK_QR

#define EMBER_LAPACK_LSTSQ(T, R, gels_fn, gelsy_fn, gelsd_fn, gelss_fn, ...)                       \
  inline void gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* work, int lwork,       \
                   int* info) {                                                                    \
    const char trans = 'N';                                                                        \
    gels_fn(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);                       \
  }                                                                                                \
  inline void gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, int* jpvt, R rcond,      \
                    int* rank, T* work, int lwork, R* rwork, int* info) {                          \
    gelsy_fn(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, __VA_ARGS__ info); \
  }                                                                                                \
  inline void gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, R* s, R rcond,           \
                    int* rank, T* work, int lwork, R* rwork, int* iwork, int* info) {              \
    gelsd_fn(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, __VA_ARGS__ iwork,    \
             info);                                                                                \
  }                                                                                                \
  inline void gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, R* s, R rcond,           \
                    int* rank, T* work, int lwork, R* rwork, int* info) {                          \
    gelss_fn(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, __VA_ARGS__ info);    \
  }
EMBER_LAPACK_LSTSQ(float, float, scipy_sgels_, scipy_sgelsy_, scipy_sgelsd_, scipy_sgelss_, )
EMBER_LAPACK_LSTSQ(double, double, scipy_dgels_, scipy_dgelsy_, scipy_dgelsd_, scipy_dgelss_, )
EMBER_LAPACK_LSTSQ(c64, float, scipy_cgels_, scipy_cgelsy_, scipy_cgelsd_, scipy_cgelss_, rwork, )
EMBER_LAPACK_LSTSQ(c128, double, scipy_zgels_, scipy_zgelsy_, scipy_zgelsd_, scipy_zgelss_, rwork, )
#undef EMBER_LAPACK_LSTSQ

// laic1 (real only): job 1 estimates the largest singular value, job 2 the smallest.
inline void laic1(int job, int j, const float* x, float sest, const float* w, float gamma,
                  float* sestpr, float* s, float* c) {
  scipy_slaic1_(&job, &j, x, &sest, w, &gamma, sestpr, s, c);
}
inline void laic1(int job, int j, const double* x, double sest, const double* w, double gamma,
                  double* sestpr, double* s, double* c) {
  scipy_dlaic1_(&job, &j, x, &sest, w, &gamma, sestpr, s, c);
}

// geev: real routines return the eigenvalues as (wr, wi) pairs, complex ones as w.
inline void geev(char jobvl, char jobvr, int n, float* a, int lda, float* wr, float* wi, float* vl,
                 int ldvl, float* vr, int ldvr, float* work, int lwork, int* info) {
  scipy_sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void geev(char jobvl, char jobvr, int n, double* a, int lda, double* wr, double* wi,
                 double* vl, int ldvl, double* vr, int ldvr, double* work, int lwork, int* info) {
  scipy_dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void geev(char jobvl, char jobvr, int n, c64* a, int lda, c64* w, c64* vl, int ldvl, c64* vr,
                 int ldvr, c64* work, int lwork, float* rwork, int* info) {
  scipy_cgeev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1,
               1);
}
inline void geev(char jobvl, char jobvr, int n, c128* a, int lda, c128* w, c128* vl, int ldvl,
                 c128* vr, int ldvr, c128* work, int lwork, double* rwork, int* info) {
  scipy_zgeev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1,
               1);
}

// ---- threads ------------------------------------------------------------------------------

// Holds OpenBLAS at Ember's thread count for one large matrix on the calling thread, or at one
// thread otherwise (see Note [LAPACK threads]). Not copyable; one per op call.
class ThreadScope {
 public:
  explicit ThreadScope(bool parallel_inside);
  // A shared scope for callers that have another engine to fall back on (float64 GEMM): never
  // waits. held() says whether OpenBLAS may be called on this thread now; threads() is
  // OpenBLAS's thread count meanwhile (more than 1 only when this thread is nested in its own
  // exclusive scope).
  struct TryOnly {};
  explicit ThreadScope(TryOnly);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

  bool held() const { return held_; }
  int threads() const;

 private:
  bool exclusive_ = false;
  bool nested_ = false;
  bool held_ = true;
};

// Runs fn(b) for each matrix of a batch. A batch of several spreads the matrices over Ember's
// threads (each LAPACK call then single-threaded); a single matrix with more than
// kParallelWork flops runs on the calling thread with LAPACK parallel inside.
constexpr int64_t kParallelWork = int64_t(1) << 21;
template <typename F>
void for_each_matrix(int64_t batch, int64_t work_per_matrix, const F& fn) {
  if (batch == 1) {
    ThreadScope scope(work_per_matrix >= kParallelWork);
    fn(0);
    return;
  }
  ThreadScope scope(false);
  linalg::for_each_matrix(batch, work_per_matrix, fn);
}

}  // namespace lapack
}  // namespace native
}  // namespace ember
