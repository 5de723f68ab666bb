// Lane shuffles of vec::Vec at this file's CPU capability level: GCC's __builtin_shuffle with
// constant index vectors, one permute instruction each where the level has them. The FFT moves
// complex data between layouts with them; the FFT and the attention kernels transpose W x W
// blocks with transpose_square, so a pass whose lanes run along one axis can store whole vectors
// along the other.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include "kernels/cpu/vec/vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace vec {

// Kept inline at every call: as calls, the transposes took their W vectors through memory.
#define EMBER_SHUFFLE_INLINE inline __attribute__((always_inline))

// Lane c of the result: a[idx(c)] for idx(c) < W, else b[idx(c) - W].
template <typename T, typename F>
EMBER_SHUFFLE_INLINE Vec<T> shuffle2(Vec<T> a, Vec<T> b, F idx) {
  constexpr int W = Vec<T>::size;
  typename Vec<T>::Mask m{};
  for (int c = 0; c < W; ++c) m[c] = idx(c);
  return __builtin_shuffle(a.v, b.v, m);
}

// One stage of the W x W transpose: rows i and i + H (i & H == 0) swap their off-diagonal
// H x H blocks. Stages H = W / 2, ..., 1 make the full transpose (each stage transposes the
// blocks the previous one moved).
template <typename T, int H>
EMBER_SHUFFLE_INLINE void transpose_stage(Vec<T>* v) {
  if constexpr (H >= 1) {
    constexpr int W = Vec<T>::size;
    for (int i = 0; i < W; ++i) {
      if (i & H) continue;
      const Vec<T> a = v[i], b = v[i + H];
      v[i] = shuffle2<T>(a, b, [](int c) { return (c & H) ? c - H + W : c; });
      v[i + H] = shuffle2<T>(a, b, [](int c) { return (c & H) ? c + W : c + H; });
    }
    transpose_stage<T, H / 2>(v);
  }
}

// v[i][j] <-> v[j][i] for the W vectors v[0 .. W).
template <typename T>
EMBER_SHUFFLE_INLINE void transpose_square(Vec<T>* v) {
  transpose_stage<T, Vec<T>::size / 2>(v);
}

}  // namespace vec
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
