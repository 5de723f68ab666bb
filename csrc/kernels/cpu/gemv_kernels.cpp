// gemv_f32_stub (kernels/gemm_stubs.h): float32 matrix-vector products, one copy per CPU level.
// Four rows at a time, each summed in two vectors of partial sums, so that every loaded vector of
// x meets four rows and eight independent FMA chains hide the FMA latency; the sums are reduced
// across lanes once per row. The explicit vectors (GCC vector extensions, the level's width)
// keep the speed independent of the compiler's loop vectoriser.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/gemm_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

#if EMBER_CPU_LEVEL >= 2
constexpr int kLanes = 16;
#elif EMBER_CPU_LEVEL == 1
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
constexpr int kRows = 4;

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(Vec));
  return v;
}

inline float lane_sum(Vec v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof(Vec));
  // Pairwise, as a tree: the same order at every call.
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

inline void store(const GemvArgs& p, int64_t i, float dot) {
  float& y = p.y[i * p.incy];
  y = p.beta == 0.f ? p.alpha * dot : p.alpha * dot + p.beta * y;
}

// Rows [r, r + R) of a.
template <int R>
inline void rows_block(const GemvArgs& p, int64_t r) {
  const float* a[R];
  for (int q = 0; q < R; ++q) a[q] = p.a + (r + q) * p.lda;
  Vec acc[R][2];
  for (int q = 0; q < R; ++q) acc[q][0] = acc[q][1] = Vec{};
  int64_t e = 0;
  for (; e + 2 * kLanes <= p.k; e += 2 * kLanes) {
    const Vec x0 = load(p.x + e), x1 = load(p.x + e + kLanes);
    for (int q = 0; q < R; ++q) {
      acc[q][0] += load(a[q] + e) * x0;
      acc[q][1] += load(a[q] + e + kLanes) * x1;
    }
  }
  if (e + kLanes <= p.k) {
    const Vec x0 = load(p.x + e);
    for (int q = 0; q < R; ++q) acc[q][0] += load(a[q] + e) * x0;
    e += kLanes;
  }
  for (int q = 0; q < R; ++q) {
    float dot = lane_sum(acc[q][0] + acc[q][1]);
    for (int64_t t = e; t < p.k; ++t) dot += a[q][t] * p.x[t];
    store(p, r + q, dot);
  }
}

void gemv_f32(const GemvArgs& p) {
  if (p.rows <= 0) return;
  const int64_t blocks = (p.rows + kRows - 1) / kRows;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(kRows * p.k, 1));
  parallel_for(0, blocks, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r = b * kRows;
      if (r + kRows <= p.rows) {
        rows_block<kRows>(p, r);
      } else {
        for (int64_t q = r; q < p.rows; ++q) rows_block<1>(p, q);
      }
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(gemv_f32_stub, CPU, gemv_f32);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
