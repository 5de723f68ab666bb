// The register tiles and packing of the fused attention kernels (attention_kernels.cpp): small
// GEMMs on explicit vectors (vec::Vec) whose operands are packed into zero-padded contiguous
// tiles of whole vectors, the micro-kernels keeping a tile of accumulators in registers (sized
// per ISA level: see kTileRows and kDotRows). Only for attention_kernels.cpp, which is compiled
// once per CPU level; everything here is in the level's namespace (kernels/cpu/cpu_level.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_shuffle.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace attention_tiles {

inline int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// Register tiles. A 512-bit level has 32 vector registers: the score and the value products
// each keep 24 accumulators (6 rows x 4 vectors), plus the loaded operands. The value products
// stream their B operand (V, a key block of it is 256 KiB) from L2, so taller tiles load less of it
// per FMA: 6 rows instead of 4 made the forward 8% faster on a Cascade Lake Xeon (151 to 139 ms at
// L = 2048, one core). Narrower levels have 16 registers: 6 rows x 2 vectors is 12 accumulators, 2
// B vectors and one broadcast, enough independent FMAs to cover the FMA latency on two pipes (4 x 2
// left them waiting).
template <typename T>
constexpr bool kWideRegisters = vec::Vec<T>::size * sizeof(T) >= 64;
template <typename T>
constexpr int kTileRows = kWideRegisters<T> ? 8 : 6;  // the value products' narrow strips
constexpr int kWideStripRows = 6;  // the value products' 4-vector strips (512-bit levels)

// The value products prefetch the B row this many steps ahead. Each step needs a whole row of
// B (4 cache lines at a 64-wide head), which the L1 prefetchers of Intel cores did not bring in
// time: prefetching 4-8 rows ahead took the Xeon's forward from 139 to 128 ms (2.5% at avx2);
// 16 rows ahead gained less, 32 lost it again.
constexpr int64_t kValuePrefetchRows = 6;

// The score products' tiles are kDotRows x kPanelVectors; at the 512-bit levels 4 x 4 beat 8 x 2
// (half the broadcasts per FMA), and 6 x 4 beat 4 x 4 by 1.5-3% once the tiles took the
// softmax's exp and the backward's dS in their epilogue (Note [Stale reference]). A panel is
// kPanelVectors vectors of columns: B operands of the score products are packed panel by panel,
// each panel's rows (depth of them) contiguous, so a tile walks its B sequentially.
template <typename T>
constexpr int kPanelVectors = kWideRegisters<T> ? 4 : 2;
template <typename T>
constexpr int kDotRows = 6;
template <typename T>
constexpr int64_t kPanel = kPanelVectors<T>* vec::Vec<T>::size;

// The tallest tile of the value products (accumulate): a causal block's row i is read by
// tiles that start at most this many rows before it.
template <typename T>
constexpr int64_t kMaxTileRows = std::max(kTileRows<T>, kWideStripRows);

// Causal masking inside a block (see Note [Causal blocks]): `diag` = q0 - k0, the query block's
// first row minus the key block's first column, so that row i sees columns j <= diag + i. Blocks
// without masking pass kUnmasked, large enough that every column is seen, small enough that
// adding a row index cannot overflow.
constexpr int64_t kUnmasked = int64_t{1} << 40;

// Note [Causal blocks]
// A causal block on the diagonal has its upper right triangle masked. The products skip it at
// the granularity of their tiles: a score tile of rows [i, i + h) is computed only for panels
// that start before column diag + i + h (past it every score of the tile is masked), and a value
// tile sums only over the columns its rows see. At L = 256 (a language model's training
// sequence), where every block is on the diagonal, this took a third of the products away.
// Masked scores are still -inf (finish_scores fills them whether computed or not), and the
// softmax and the backward's element-wise passes stop at visible_end, the last column any tile
// holding the row reads.
inline int64_t tile_end(int64_t diag, int64_t i, int64_t h, int64_t cols) {
  return std::clamp<int64_t>(diag + i + h, 0, cols);
}
template <typename T>
int64_t visible_end(int64_t diag, int64_t i, int64_t cols_padded, int64_t multiple) {
  return std::clamp<int64_t>(round_up(diag + i + kMaxTileRows<T>, multiple), 0, cols_padded);
}

// Calls tile(i, std::integral_constant<int, H>) over `rows` in blocks of H = R rows, then once
// for the remainder with H = its exact height, so a partial block is still one tile.
template <int H, typename Tile>
inline void remainder_tile(int64_t i, int64_t left, Tile& tile) {
  if constexpr (H > 0) {
    if (left == H) {
      tile(i, std::integral_constant<int, H>{});
    } else {
      remainder_tile<H - 1>(i, left, tile);
    }
  }
}

template <int R, typename Tile>
inline void for_row_tiles(int64_t rows, Tile&& tile) {
  int64_t i = 0;
  for (; i + R <= rows; i += R) tile(i, std::integral_constant<int, R>{});
  remainder_tile<R - 1>(i, rows - i, tile);
}

// The register tiles stay out of line: inlined into the long forward loop, GCC kept their
// accumulator arrays in memory and stored every accumulator on every step (1.3x slower at avx2).

// R rows x C vectors of a (rows `lda` apart) @ one B panel (depth x kPanel), handed row by row
// to epilogue.row(c, row, j) while still in registers: the tile holds rows [i, i + R) and
// columns [j, j + kPanel) of the block. The epilogue stores them, or first turns them into the
// softmax's probabilities or the scores' gradients (see the epilogue structs below), so that
// those element passes need no trip of their own through the score block.
template <typename T, int R, typename Epilogue>
__attribute__((noinline)) void dot_tile(const T* a, int64_t lda, const T* panel, int64_t depth,
                                        int64_t i, int64_t j, const Epilogue& epilogue) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  constexpr int C = kPanelVectors<T>;
  // The first step multiplies instead of adding to zeros: zero-initialised, GCC built the
  // accumulator array on the stack and loaded it back on every call (depth is only E).
  V c[R][C];
  if (depth == 0) {  // empty heads: every product is 0
    for (int r = 0; r < R; ++r) {
      for (int k = 0; k < C; ++k) c[r][k] = V(T(0));
    }
  } else {
    V b[C];
    for (int k = 0; k < C; ++k) b[k] = V::load(panel + k * W);
    for (int r = 0; r < R; ++r) {
      const V x(a[r * lda]);
      for (int k = 0; k < C; ++k) c[r][k] = x * b[k];
    }
  }
  for (int64_t e = 1; e < depth; ++e) {
    V b[C];
    for (int k = 0; k < C; ++k) b[k] = V::load(panel + (e * C + k) * W);
    for (int r = 0; r < R; ++r) {
      const V x(a[r * lda + e]);
      for (int k = 0; k < C; ++k) c[r][k] = vec::fma(x, b[k], c[r][k]);
    }
  }
  for (int r = 0; r < R; ++r) epilogue.row(c[r], i + r, j);
}

// The plain epilogue: the products themselves, into rows `ldo` apart.
template <typename T>
struct StoreProducts {
  T* out;
  int64_t ldo;
  template <int C>
  void row(vec::Vec<T> (&c)[C], int64_t i, int64_t j) const {
    constexpr int64_t W = vec::Vec<T>::size;
    for (int k = 0; k < C; ++k) c[k].store(out + i * ldo + j + k * W);
  }
};

// The products, and each row's lane-wise running max in row_max (W lanes a row), taken while
// they are still in registers: the stored softmax pass then skips its own max.
template <typename T>
struct StoreProductsAndMax {
  T* out;
  int64_t ldo;
  T* row_max;
  template <int C>
  void row(vec::Vec<T> (&c)[C], int64_t i, int64_t j) const {
    using V = vec::Vec<T>;
    constexpr int64_t W = V::size;
    V mx = c[0];
    for (int k = 0; k < C; ++k) {
      c[k].store(out + i * ldo + j + k * W);
      mx = vec::max_with(mx, c[k]);
    }
    vec::max_with(V::load(row_max + i * W), mx).store(row_max + i * W);
  }
};

// a @ B for the rows of a (rows `lda` apart) and the columns [0, cols) (a multiple of kPanel) of
// B, packed in panels (see pack_panels), tile by tile through `epilogue` (see dot_tile). With
// diag (Note [Causal blocks]), tiles whose every column is masked are skipped.
template <typename T, typename Epilogue>
void dot_block(const T* a, int64_t lda, int64_t rows, const T* panels, int64_t depth, int64_t cols,
               const Epilogue& epilogue, int64_t diag = kUnmasked) {
  constexpr int64_t P = kPanel<T>;
  for (int64_t j = 0; j < cols; j += P) {
    const T* panel = panels + j * depth;  // panel j / P starts (j / P) * depth * P in
    for_row_tiles<kDotRows<T>>(rows, [&](int64_t i, auto height) {
      constexpr int H = decltype(height)::value;
      if (j >= diag + i + H) return;  // every column of the tile is masked
      dot_tile<T, H>(a + i * lda, lda, panel, depth, i, j, epilogue);
    });
  }
}

// R rows x C vectors of acc += p (R x cols) @ x (cols x C vectors, rows `ldx` apart), where
// p's element (r, j) is p[r * pr + j * pj]: (ldp, 1) for P itself, (1, ldp) for its transpose.
template <typename T, int R, int C>
__attribute__((noinline)) void accumulate_tile(const T* p, int64_t pr, int64_t pj, int64_t cols,
                                               const T* x, int64_t ldx, T* acc, int64_t ldacc) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  V a[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) a[r][c] = V::load(acc + r * ldacc + c * W);
  }
  for (int64_t j = 0; j < cols; ++j) {
    V xv[C];
    for (int c = 0; c < C; ++c) xv[c] = V::load(x + j * ldx + c * W);
    // A prefetch never faults, so the last rows may reach past the operand; the address is
    // formed as an integer, because a pointer past the array's end would be undefined.
    const uintptr_t ahead =
        reinterpret_cast<uintptr_t>(x) + sizeof(T) * ((j + kValuePrefetchRows) * ldx);
    // One prefetch per cache line the strip reads (an avx2 strip of 2 vectors is one line).
    constexpr int kLines = std::max<int>(1, C * W * sizeof(T) / 64);
    for (int c = 0; c < kLines; ++c) {
      __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64 * c), 0, 3);
    }
    const T* pj_ptr = p + j * pj;
    for (int r = 0; r < R; ++r) {
      const V s(pj_ptr[r * pr]);
      for (int c = 0; c < C; ++c) a[r][c] = vec::fma(s, xv[c], a[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) a[r][c].store(acc + r * ldacc + c * W);
  }
}

// acc[i][:] += sum_{j < cols} p(i, j) * x[j][:] for i < rows, p(i, j) = p[i * pr + j * pj]; x
// is (cols x width) with rows `ldx` apart, acc's rows `ldacc` apart, width a multiple of the
// vector size. Column strips of 4 (512-bit levels), 2 and 1 vectors. range(i, h) gives the
// columns [begin, end) that a tile of rows [i, i + h) sums over (p is zero outside them: see
// Note [Causal blocks]).
template <typename T, typename Range>
void accumulate(const T* p, int64_t pr, int64_t pj, int64_t rows, int64_t cols, const T* x,
                int64_t ldx, int64_t width, T* acc, int64_t ldacc, Range range) {
  constexpr int64_t W = vec::Vec<T>::size;
  constexpr int R = kTileRows<T>;
  auto strip = [&](auto tile_rows, auto vectors, int64_t c0) {
    constexpr int C = decltype(vectors)::value;
    for_row_tiles<decltype(tile_rows)::value>(rows, [&](int64_t i, auto height) {
      constexpr int H = decltype(height)::value;
      const auto [begin, end] = range(i, int64_t{H});
      if (end <= begin) return;
      accumulate_tile<T, H, C>(p + i * pr + begin * pj, pr, pj, end - begin, x + begin * ldx + c0,
                               ldx, acc + i * ldacc + c0, ldacc);
    });
  };
  int64_t c0 = 0;
  if constexpr (kWideRegisters<T>) {
    for (; c0 + 4 * W <= width; c0 += 4 * W) {
      strip(std::integral_constant<int, kWideStripRows>{}, std::integral_constant<int, 4>{}, c0);
    }
  }
  for (; c0 + 2 * W <= width; c0 += 2 * W) {
    strip(std::integral_constant<int, R>{}, std::integral_constant<int, 2>{}, c0);
  }
  for (; c0 < width; c0 += W) {
    strip(std::integral_constant<int, R>{}, std::integral_constant<int, 1>{}, c0);
  }
}

// acc[i][:] += sum_{j < cols} p[i][j] * x[j][:] (acc += P X); with diag, row i sums only the
// columns it sees (Note [Causal blocks]).
template <typename T>
void accumulate_rows(const T* p, int64_t ldp, int64_t rows, int64_t cols, const T* x, int64_t ldx,
                     int64_t width, T* acc, int64_t ldacc, int64_t diag = kUnmasked) {
  accumulate(p, ldp, 1, rows, cols, x, ldx, width, acc, ldacc, [&](int64_t i, int64_t h) {
    return std::pair<int64_t, int64_t>{0, tile_end(diag, i, h, cols)};
  });
}

// acc[j][:] += sum_{i < rows} p[i][j] * x[i][:] for j < cols (acc += P^T X); with diag, column
// j takes only the rows that see it (i >= j - diag).
template <typename T>
void accumulate_transposed(const T* p, int64_t ldp, int64_t rows, int64_t cols, const T* x,
                           int64_t ldx, int64_t width, T* acc, int64_t ldacc,
                           int64_t diag = kUnmasked) {
  accumulate(p, 1, ldp, cols, rows, x, ldx, width, acc, ldacc, [&](int64_t j, int64_t) {
    return std::pair<int64_t, int64_t>{std::clamp<int64_t>(j - diag, 0, rows), rows};
  });
}

// Copies rows x width of src (rows `lds` apart), times `scale`, into dst (rows `ldd` apart),
// zero-padding each row to `ldd` and the rows from `rows` to `padded_rows`.
template <typename T>
void pack_rows(const T* src, int64_t lds, int64_t rows, int64_t width, T* dst, int64_t ldd,
               int64_t padded_rows, T scale = T(1)) {
  for (int64_t r = 0; r < rows; ++r) {
    if (scale == T(1)) {
      std::memcpy(dst + r * ldd, src + r * lds, sizeof(T) * width);
    } else {
      for (int64_t e = 0; e < width; ++e) dst[r * ldd + e] = src[r * lds + e] * scale;
    }
    std::fill(dst + r * ldd + width, dst + (r + 1) * ldd, T(0));
  }
  std::fill(dst + rows * ldd, dst + padded_rows * ldd, T(0));
}

// The transpose of src's rows x width block (rows `lds` apart) as the B operand of dot_block:
// `padded_rows` (a multiple of kPanel) columns in panels of kPanel, zero beyond `rows`.
// Whole W x W blocks are transposed in registers: element by element, this packing took 9% of
// a causal forward at L = 256.
template <typename T>
void pack_panels(const T* src, int64_t lds, int64_t rows, int64_t width, T* dst,
                 int64_t padded_rows) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  constexpr int64_t P = kPanel<T>;
  for (int64_t j0 = 0; j0 < padded_rows; j0 += P) {
    T* panel = dst + j0 * width;
    const int64_t n = std::clamp<int64_t>(rows - j0, 0, P);
    if (n < P) std::fill(panel, panel + width * P, T(0));
    int64_t c = 0;
    for (; c + W <= n; c += W) {
      const T* s = src + (j0 + c) * lds;
      int64_t e = 0;
      for (; e + W <= width; e += W) {
        V r[W];
        for (int64_t t = 0; t < W; ++t) r[t] = V::load(s + t * lds + e);
        vec::transpose_square<T>(r);
        for (int64_t t = 0; t < W; ++t) r[t].store(panel + (e + t) * P + c);
      }
      for (; e < width; ++e) {
        for (int64_t t = 0; t < W; ++t) panel[e * P + c + t] = s[t * lds + e];
      }
    }
    for (; c < n; ++c) {
      const T* s = src + (j0 + c) * lds;
      for (int64_t e = 0; e < width; ++e) panel[e * P + c] = s[e];
    }
  }
}

}  // namespace attention_tiles
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
