// Helpers shared by the CPU sampling kernels: walking reserved Philox blocks in parallel and
// turning random words into uniform and normal variates.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/generator.h"
#include "core/parallel.h"

namespace ember {
namespace native {

template <typename T>
using real_of_t = typename RealOf<T>::type;

// Calls f(first_value, count, block) for every block j of the op: values
// [j * per_block, min(nvalues, (j + 1) * per_block)) come from st.block(j). Chunks run in
// parallel; since each block depends only on its index, the thread count cannot change results.
template <typename F>
void for_each_block(int64_t nvalues, int per_block, const PhiloxState& st, const F& f) {
  const int64_t nblocks = (nvalues + per_block - 1) / per_block;
  // Philox costs ~10x a plain elementwise op per value, so chunks can be smaller.
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * per_block));
  parallel_for(0, nblocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      const int64_t first = j * per_block;
      const int count = static_cast<int>(std::min<int64_t>(per_block, nvalues - first));
      f(first, count, st.block(j));
    }
  });
}

// Uniform in [0, 1) with 53 random bits from two words.
inline double uniform_double(uint32_t lo, uint32_t hi) {
  const uint64_t bits = ((uint64_t(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

// Uniform in [0, 1) on the grid of R's mantissa (24 bits for float, 11 for float16, 8 for
// bfloat16), so that converting the result to R never rounds up to 1.
template <typename R>
inline float uniform_bits(uint32_t w) {
  constexpr int digits = std::is_same_v<R, Half> ? 11 : std::is_same_v<R, BFloat16> ? 8 : 24;
  return static_cast<float>(w >> (32 - digits)) * (1.0f / static_cast<float>(1u << digits));
}

// Box-Muller: two uniforms in [0, 1) -> two independent standard normals. sincos computes both
// trigonometric values in one call (a GNU extension of libm, present wherever Ember builds).
inline void box_muller(float u0, float u1, float* z) {
  const float radius = std::sqrt(-2.0f * std::log(1.0f - u0));  // 1 - u0 in (0, 1]: finite log
  float s, c;
  ::sincosf(static_cast<float>(2 * M_PI) * u1, &s, &c);
  z[0] = radius * c;
  z[1] = radius * s;
}
inline void box_muller(double u0, double u1, double* z) {
  const double radius = std::sqrt(-2.0 * std::log(1.0 - u0));
  double s, c;
  ::sincos(2 * M_PI * u1, &s, &c);
  z[0] = radius * c;
  z[1] = radius * s;
}

}  // namespace native
}  // namespace ember
