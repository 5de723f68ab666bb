// QR of one large real matrix with the blocked algorithm's trailing updates spread over Ember's
// threads (linalg_qr_parallel.cpp). Call inside a lapack::ThreadScope(false) (OpenBLAS then runs
// single-threaded inside each thread's call), outside any parallel region.
#pragma once
#include <cstdint>

namespace ember {
namespace native {
namespace lapack {

// Below this many columns (and rows) the panels are most of the work and LAPACK's own
// routines are used.
constexpr int64_t kParallelQrMin = 192;

// One matrix (batch of one), large enough, with more than one thread and outside a parallel
// region.
bool qr_parallel_eligible(int64_t batch, int64_t m, int64_t n);

// ?geqrf: a (m x n, column-major, leading dimension lda) overwritten with R and the reflectors.
template <typename T>
void geqrf_parallel(int m, int n, T* a, int lda, T* tau);

// ?orgqr: m >= n >= k, the first k columns of a holding reflectors.
template <typename T>
void orgqr_parallel(int m, int n, int k, T* a, int lda, const T* tau);

}  // namespace lapack
}  // namespace native
}  // namespace ember
