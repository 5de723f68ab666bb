// float64 GEMM through OpenBLAS's dgemm (scipy-openblas32, linked for LAPACK already). Measured
// against Eigen's GEMM on one thread (us per product, m x k x n; docs/design/linalg.md):
// 8^3 0.27 vs 0.90, 32^3 3.8 vs 7.9, 64^3 42 vs 66, 512^3 21.8 vs 36.2 ms, 1000x64x64 214 vs
// 794; Eigen wins only below about 8x8x8 (4^3: 0.20 vs 0.27), where the call costs more than
// the product. Complex GEMM stays on Eigen.
//
// Threads: dgemm always runs single-threaded, under a try-only ThreadScope (Note [LAPACK
// threads] in lapack_runtime.cpp). Batches are spread over Ember's threads, one dgemm per
// matrix; one large product with several threads, or any product while OpenBLAS is busy
// elsewhere in an exclusive scope, goes to Eigen's GEMM instead of waiting.
#include <algorithm>

#include "core/cpu_capability.h"
#include "core/deterministic.h"
#include "core/parallel.h"
#include "kernels/cpu/gemm_cpu.h"
#include "kernels/cpu/lapack.h"

extern "C" {
void scipy_dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                  const double* alpha, const double* a, const int* lda, const double* b,
                  const int* ldb, const double* beta, double* c, const int* ldc, FLen, FLen);
void scipy_sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                  const float* alpha, const float* a, const int* lda, const float* b,
                  const int* ldb, const float* beta, float* c, const int* ldc, FLen, FLen);
}

namespace ember {
namespace native {
namespace {

// Below this many multiply-adds (8x8x8) the call overhead outweighs dgemm's faster kernel.
constexpr int64_t kMinWork = 512;
// Batches of products smaller than this are spread over threads, one dgemm per matrix (the
// same rule as eigen_gemm), whatever the batch size.
constexpr int64_t kBatchParallelWork = int64_t(1) << 21;

bool fits_int(int64_t v) {
  return v >= 0 && v <= 0x7fffffff;
}

// One operand as dgemm sees it in the transposed problem C^T = B^T A^T (column-major C^T is
// Ember's row-major C): a row-major r x c matrix is a column-major c x r one ('N'), a
// column-major one needs 'T'. Returns false when its leading dimension is out of range.
bool as_transposed(const GemmMatrix& g, int64_t r, int64_t c, char* trans, int* ld) {
  int64_t lead;
  if (g.col_stride == 1) {
    *trans = 'N';
    lead = r == 1 ? std::max<int64_t>(c, 1) : g.row_stride;
    if (lead < std::max<int64_t>(c, 1)) return false;
  } else {
    *trans = 'T';
    lead = c == 1 ? std::max<int64_t>(r, 1) : g.col_stride;
    if (g.row_stride != 1 || lead < std::max<int64_t>(r, 1)) return false;
  }
  if (!fits_int(lead)) return false;
  *ld = static_cast<int>(lead);
  return true;
}

// Note [float32 weight gradients through OpenBLAS]
// (The Note's name is from its first case; the second, input gradients, follows below it.)
// A linear layer's weight gradient is G^T X: A (the output gradient, tokens x out) is read
// transposed, and the reduction runs over the tokens. On an Intel core oneDNN's AVX-512 brgemm
// kernel runs many of these products well below its usual speed, while OpenBLAS's SkylakeX sgemm
// does not. Measured on a Cascade Lake core (Intel Xeon @ 2.50GHz) in one process, the two
// engines alternating call by call (medians of 9; m x n, k; OpenBLAS's time over oneDNN's, one
// thread / two threads):
//   768 x 3072, k 1024 or 4096 (a BERT feed-forward weight): 0.32 / 0.44-0.45 (38-42 GFLOP/s
//     against 118-121 on one thread)
//   2304 x 768, k 1024 (BERT's packed qkv): 0.71 / 0.75;  3072 x 768, k 1024-4096: 0.71-0.95 /
//     0.75-0.78;  768 x 768, k 1024-4096: 0.74-0.82 / 0.79-0.91;  4096 x 256, k 1024: 0.90 / 0.82
//   8192 x 256, k 4096 (an LM head): 0.88 / 0.88;  768 x 256 and 1024 x 256, k 4096: 0.82-0.87 /
//     0.93-0.98;  1024 x 1024, k 2048: 0.96 / 1.00
// and it lost elsewhere: short reductions (2048 x 512 at k 512: 1.04 / 1.02), m of 512 or less
// (256 x 1024 at k 4096: 1.08; 512 x 256 at k 1024: 1.16 / 1.31; 512 x 1024: 1.01 / 1.05), and
// small outputs at moderate k (768 x 256 at k 2048: 1.12 / 1.25). So the rule is: float32, A
// transposed, B and C row-major, m >= 768, n >= 256, and either an output of at least 512 K
// elements with k >= 1024 or k >= 4096; on Intel cores at an AVX-512 level (the avx2 level has
// its own, narrower rule: Note [OpenBLAS at the avx2 level]). With several threads each thread runs
// one single-threaded sgemm on a slice of C's longer side. Zen 4 was not measured and keeps oneDNN.
// Not under deterministic algorithms: which engine runs would depend on the thread count.
constexpr int64_t kSgemmMinRows = 768, kSgemmMinCols = 256, kSgemmMinDepth = 1024;
constexpr int64_t kSgemmMinOutput = int64_t(1) << 19, kSgemmLongDepth = 4096;
// Both operands row-major (an input gradient G W, W as the layer stores it): OpenBLAS won where
// the reduction is long against a narrow B, k >= 2048 and k >= 3n with n <= 768 (medians, one
// thread / two): 4096 x 256 at k 2048: 0.62 / 0.74; an LM head's G W, 4096 x 256 at k 8192:
// 0.84-0.93 / 0.88-0.92 (against oneDNN with B's rows padded, Note [Padded B rows]);
// 2048 x 512 and 8192 x 512 at k 2048: 0.85-0.87 / 0.85-0.87; BERT's 1024 x 768 at k 2304 and
// 3072: 0.81-0.88 / 0.84-1.01; 4096 x 768 at k 3072: 1.00-1.05 / 1.00. Elsewhere oneDNN was as
// fast or faster (4096 x 1024 at k 256: 1.08 / 1.04; 512^3: 1.07 / 1.11; 2048^3: 1.04 / 0.99),
// or the two traded places from run to run (4096 x 256 at k 768 and 1024: 0.89-1.25). With B
// transposed (a forward Linear, X W^T) oneDNN was as fast or faster at every measured shape
// (0.95-1.12 / 0.98-1.38), so that layout, and A and B both transposed, keep to oneDNN.
constexpr int64_t kSgemmMinRowsAB = 256, kSgemmMinColsAB = 128, kSgemmMaxColsAB = 768;
constexpr int64_t kSgemmMinDepthAB = 2048;
// Note [OpenBLAS at the avx2 level]
// At the avx2 level (an AVX2-only Intel core, where OpenBLAS picks its AVX2 "Haswell" kernels
// itself), oneDNN's AVX2 kernel is slow on one kind of weight gradient: A transposed and B about
// 256 columns wide (a d_model of 256). Measured on the Cascade Lake core forced to avx2
// (EMBER_CPU_CAPABILITY=avx2 with OPENBLAS_CORETYPE=Haswell, so that OpenBLAS ran those kernels
// as on such a core; without it, a forced level leaves OpenBLAS on the CPU's own kernels), the
// engines alternating call by call (OpenBLAS's time over oneDNN's, one thread / two threads;
// m x n, k):
//   8192 x 256, k 4096 (an LM head): 0.64 / 0.63 (oneDNN at 23-64 GFLOP/s, varying run to run,
//     against OpenBLAS's 60-62 and MKL's 65-69);  1024 x 256, k 4096: 0.80 / 0.80;
//   768 x 256, k 2048-4096: 0.88-0.91 / 0.88
// and level elsewhere: n of 128, 384, 512, 768 or 3072 (0.99-1.05), m of 512, and the input
// gradients (both row-major: 0.93-1.03), which keep oneDNN. So at this level the rule is: A
// transposed, m >= 768, 192 <= n <= 320, k >= 2048.
constexpr int64_t kSgemmAvx2MinDepth = 2048, kSgemmAvx2MinCols = 192, kSgemmAvx2MaxCols = 320;

// Whether OpenBLAS's sgemm takes p (see the Note above); A's and B's layouts come from
// as_transposed, which also checks their leading dimensions.
bool sgemm_applies(const GemmParams& p, bool a_transposed, bool b_transposed) {
  if (p.dtype != ScalarType::Float32 || p.batch != 1 || deterministic_algorithms()) return false;
  if (!cpu_is_intel() || cpu_capability() < CpuCapability::Avx2) return false;
  if (!fits_int(p.m) || !fits_int(p.n) || !fits_int(p.k)) return false;
  if (p.alpha.to<double>() == 0.0) return false;   // BLAS would skip A B (see openblas_gemm)
  if (cpu_capability() < CpuCapability::Avx512) {  // see Note [OpenBLAS at the avx2 level]
    return a_transposed && !b_transposed && p.m >= kSgemmMinRows && p.n >= kSgemmAvx2MinCols &&
           p.n <= kSgemmAvx2MaxCols && p.k >= kSgemmAvx2MinDepth;
  }
  if (a_transposed && !b_transposed) {
    if (p.m < kSgemmMinRows || p.n < kSgemmMinCols || p.k < kSgemmMinDepth) return false;
    return p.m * p.n >= kSgemmMinOutput || p.k >= kSgemmLongDepth;
  }
  if (!a_transposed && !b_transposed) {  // an input gradient G W, or a plain A @ B
    return p.m >= kSgemmMinRowsAB && p.n >= kSgemmMinColsAB && p.n <= kSgemmMaxColsAB &&
           p.k >= kSgemmMinDepthAB && p.k >= 3 * p.n;
  }
  return false;
}

}  // namespace

bool openblas_sgemm(const GemmParams& p) {
  if (p.dtype != ScalarType::Float32 || p.batch != 1) return false;
  char ta, tb;
  int lda, ldb;
  // Column-major, C^T (n x m) = op(B^T) (n x k) op(A^T) (k x m), as in openblas_gemm.
  if (!as_transposed(p.b, p.k, p.n, &tb, &ldb) || !as_transposed(p.a, p.m, p.k, &ta, &lda)) {
    return false;
  }
  if (p.c.col_stride != 1 || p.c.row_stride < p.n || !fits_int(p.c.row_stride)) return false;
  if (!sgemm_applies(p, ta == 'T', tb == 'T')) return false;
  lapack::ThreadScope scope(lapack::ThreadScope::TryOnly{});
  if (!scope.held() || scope.threads() != 1) return false;
  const float alpha = static_cast<float>(p.alpha.to<double>());
  const float beta = static_cast<float>(p.beta.to<double>());
  const float* a = static_cast<const float*>(p.a.data);
  const float* b = static_cast<const float*>(p.b.data);
  float* c = static_cast<float*>(p.c.data);
  const int ldc = static_cast<int>(p.c.row_stride);
  // C rows i0..i1 and columns j0..j1: A's rows from i0, B's columns from j0.
  auto block = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    const int m = static_cast<int>(i1 - i0), n = static_cast<int>(j1 - j0),
              k = static_cast<int>(p.k);
    scipy_sgemm_(&tb, &ta, &n, &m, &k, &alpha, b + j0 * p.b.col_stride, &ldb,
                 a + i0 * p.a.row_stride, &lda, &beta, c + i0 * p.c.row_stride + j0, &ldc, 1, 1);
  };
  const int threads = in_parallel_region() ? 1 : get_num_threads();
  if (threads == 1) {
    block(0, p.m, 0, p.n);
    return true;
  }
  // One single-threaded sgemm per thread, over a slice of C's longer side (whole 16-element
  // steps, so that each slice starts on a cache line when C does).
  const bool split_rows = p.m >= p.n;
  const int64_t side = split_rows ? p.m : p.n;
  const int64_t step = ((side + threads - 1) / threads + 15) / 16 * 16;
  parallel_for(0, (side + step - 1) / step, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t lo = s * step, hi = std::min(side, lo + step);
      if (split_rows) {
        block(lo, hi, 0, p.n);
      } else {
        block(0, p.m, lo, hi);
      }
    }
  });
  return true;
}

bool openblas_gemm(const GemmParams& p) {
  if (p.dtype != ScalarType::Float64) return false;
  // Note [Deterministic Algorithms]: which engine runs a product depends on the thread count
  // (and on whether another thread holds OpenBLAS), and the two round differently; Eigen alone
  // gives the same bits for every thread count.
  if (deterministic_algorithms()) return false;
  const int64_t work = p.m * p.n * p.k;
  if (work < kMinWork || !fits_int(p.m) || !fits_int(p.n) || !fits_int(p.k)) return false;
  char ta, tb;
  int lda, ldb;
  // C^T (n x m) = op(B^T) (n x k) op(A^T) (k x m).
  if (!as_transposed(p.b, p.k, p.n, &tb, &ldb) || !as_transposed(p.a, p.m, p.k, &ta, &lda)) {
    return false;
  }
  const int64_t ldc64 = p.m == 1 ? std::max<int64_t>(p.n, 1) : p.c.row_stride;
  if (p.c.col_stride != 1 && p.n > 1) return false;
  if (ldc64 < std::max<int64_t>(p.n, 1) || !fits_int(ldc64)) return false;
  const int ldc = static_cast<int>(ldc64);

  // A batch is spread over the threads (one single-threaded dgemm per matrix) when its
  // products are small, or when there are enough of them to keep every thread busy.
  const int threads = get_num_threads();
  const bool spread_batch = p.batch > 1 && threads > 1 && !in_parallel_region() &&
                            (work < kBatchParallelWork || p.batch >= 2 * threads);
  // One large product with several threads stays on Eigen's parallel GEMM: OpenBLAS's own split
  // (an exclusive ThreadScope) measured no faster on this 2-core machine, and slower for
  // 1000x64x64 (see docs/design/linalg.md).
  if (!spread_batch && 2 * work >= lapack::kParallelWork && threads > 1 && !in_parallel_region()) {
    return false;
  }
  lapack::ThreadScope scope(lapack::ThreadScope::TryOnly{});
  if (!scope.held()) return false;
  // OpenBLAS raised to several threads (this thread holds an exclusive scope): a product from
  // here would split; leave it to Eigen.
  if (scope.threads() != 1) return false;

  const double alpha = p.alpha.to<double>(), beta = p.beta.to<double>();
  // BLAS skips A B when alpha is 0, so NaN / inf in A or B would not reach C; Ember's other
  // GEMM paths compute 0 * (A B) (NaN where A B has NaN or inf): keep one behaviour.
  if (alpha == 0.0) return false;
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const double* a = static_cast<const double*>(p.a.data);
  const double* b = static_cast<const double*>(p.b.data);
  double* c = static_cast<double*>(p.c.data);
  auto one = [&](int64_t i) {
    scipy_dgemm_(&tb, &ta, &n, &m, &k, &alpha, b + i * p.b.batch_stride, &ldb,
                 a + i * p.a.batch_stride, &lda, &beta, c + i * p.c.batch_stride, &ldc, 1, 1);
  };
  if (spread_batch) {
    parallel_for(0, p.batch, std::max<int64_t>(1, (int64_t(1) << 18) / work),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t i = b0; i < b1; ++i) one(i);
                 });
  } else {
    for (int64_t i = 0; i < p.batch; ++i) one(i);
  }
  return true;
}

}  // namespace native
}  // namespace ember
