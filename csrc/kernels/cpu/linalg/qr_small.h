// Householder QR for small real matrices, kept in L1: the algorithms of LAPACK's unblocked
// ?geqr2, ?org2r and ?laqp2 (which ?geqrf, ?orgqr and ?geqp3 run whole for matrices under their
// crossover of 128 columns), written for the compiler to vectorise (`omp simd` dot products and
// updates, four columns at a time) instead of one level-2 BLAS call per column. Same reflector
// conventions as LAPACK (?larfg: beta = -sign(alpha) * norm, tau = (beta - alpha) / beta, v(1) =
// 1), so the results equal LAPACK's up to rounding. See docs/design/linalg.md ("Small matrices").
//
// The kernels work on one column-major matrix with leading dimension m. The factorizations
// return false, leaving `a` partly overwritten, where LAPACK's scaling matters: a column norm
// whose square could under- or overflow (|x| outside about 2^-450..2^450 for double), or a
// non-finite value met on the way. Callers then run LAPACK on an untouched copy.
#pragma once
#include <cstdint>

namespace ember {
namespace native {
namespace linalg_small {

// The largest matrix (m * n elements) the callers send here: 64 x 64 doubles = 32 KiB, L1.
constexpr int64_t kMaxElements = 64 * 64;

// ?geqr2: A = Q R with R in the upper triangle and the reflectors below it, tau (min(m, n)).
template <typename T>
bool geqr2(int m, int n, T* a, T* tau);

// ?org2r: overwrites a (m x n, the first k columns holding reflectors) with the first n columns
// of H(1) ... H(k). Needs m >= n >= k.
template <typename T>
void org2r(int m, int n, int k, T* a, const T* tau);

// ?laqp2 from column 0 with every column free: QR with column pivoting. jpvt (n) receives the
// 1-based permutation as LAPACK's; work needs 2 * n elements.
template <typename T>
bool geqp2(int m, int n, T* a, int* jpvt, T* tau, T* work);

// b (m x nrhs, leading dimension ldb) = Q^T b for the k reflectors of a (?orm2r 'L', 'T').
template <typename T>
void apply_qt(int m, int nrhs, int k, const T* a, const T* tau, T* b, int ldb);

// b (n x nrhs, leading dimension ldb) = R^-1 b for the upper triangle R of a (leading
// dimension lda): ?trsm 'L', 'U', 'N', 'N'.
template <typename T>
void solve_upper(int n, int nrhs, const T* a, int lda, T* b, int ldb);

// True if every one of the count values is finite.
template <typename T>
bool all_finite(const T* x, int64_t count);

}  // namespace linalg_small
}  // namespace native
}  // namespace ember
