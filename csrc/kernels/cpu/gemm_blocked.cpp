// Cache-blocked GEMM loops for the dtypes no library covers: integers (exact; they wrap modulo
// 2^bits like PyTorch's, computed in the unsigned type of the same width so overflow is defined)
// and float16 when oneDNN has no native kernel (computed in float32).
//
// B is packed once per batch into a row-major buffer of the compute type; each task then owns
// kRows rows of C and walks B in column panels of kCols, so the accumulators (kRows x kCols)
// stay in L1 and the innermost loop over a panel row vectorises.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/gemm_cpu.h"
#include "kernels/cpu/wrap_acc.h"

namespace ember {
namespace native {
namespace {

template <typename T>
using compute_t = wrap_acc_t<T>;

template <typename T>
void blocked_gemm_t(const GemmParams& p) {
  using A = compute_t<T>;
  constexpr int64_t kRows = 8, kCols = 256;
  const int64_t m = p.m, n = p.n, k = p.k;
  A alpha, beta;
  if constexpr (std::is_integral_v<T>) {
    alpha = static_cast<A>(p.alpha.to<T>());
    beta = static_cast<A>(p.beta.to<T>());
  } else {
    alpha = p.alpha.to<A>();
    beta = p.beta.to<A>();
  }
  const bool zero_beta = p.beta.to_complex() == std::complex<double>(0, 0);
  const T* abase = static_cast<const T*>(p.a.data);
  const T* bbase = static_cast<const T*>(p.b.data);
  T* cbase = static_cast<T*>(p.c.data);
  std::vector<A> packed(static_cast<size_t>(k * n));
  const int64_t row_blocks = (m + kRows - 1) / kRows;
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    const T* a = abase + bi * p.a.batch_stride;
    const T* b = bbase + bi * p.b.batch_stride;
    T* c = cbase + bi * p.c.batch_stride;
    if (bi == 0 || p.b.batch_stride != 0) {
      for (int64_t r = 0; r < k; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          packed[r * n + j] = static_cast<A>(b[r * p.b.row_stride + j * p.b.col_stride]);
        }
      }
    }
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * k / 8, 1));
    parallel_for(0, row_blocks, grain, [&](int64_t rb0, int64_t rb1) {
      A acc[kRows][kCols];
      for (int64_t rb = rb0; rb < rb1; ++rb) {
        const int64_t i0 = rb * kRows, rows = std::min(kRows, m - i0);
        for (int64_t j0 = 0; j0 < n; j0 += kCols) {
          const int64_t cols = std::min(kCols, n - j0);
          for (int64_t ii = 0; ii < rows; ++ii) std::fill(acc[ii], acc[ii] + cols, A(0));
          for (int64_t r = 0; r < k; ++r) {
            const A* brow = packed.data() + r * n + j0;
            for (int64_t ii = 0; ii < rows; ++ii) {
              const A av = static_cast<A>(a[(i0 + ii) * p.a.row_stride + r * p.a.col_stride]);
              A* out = acc[ii];
              for (int64_t j = 0; j < cols; ++j) out[j] += av * brow[j];
            }
          }
          for (int64_t ii = 0; ii < rows; ++ii) {
            T* crow = c + (i0 + ii) * p.c.row_stride + j0;
            for (int64_t j = 0; j < cols; ++j) {
              A v = alpha * acc[ii][j];
              if (!zero_beta) v += beta * static_cast<A>(crow[j]);
              crow[j] = static_cast<T>(v);
            }
          }
        }
      }
    });
  }
}

}  // namespace

void blocked_gemm(const GemmParams& p) {
  dispatch_dtype<kIntegralTypes | kFloat16 | kBFloat16 | kFloat32>(
      p.dtype, "matmul", [&](auto tag) {
        using T = typename decltype(tag)::type;
        blocked_gemm_t<T>(p);
      });
}

}  // namespace native
}  // namespace ember
