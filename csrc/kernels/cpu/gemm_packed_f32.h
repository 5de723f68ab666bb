// A register-blocked AVX-512 float32 GEMM for the shapes where oneDNN's brgemm leaves speed on
// an Intel core (Note [A packed float32 GEMM for wide products] in gemm_packed_kernels.cpp).
// Only for translation units compiled at an AVX-512 level; everything here is in the level's
// namespace (kernels/cpu/cpu_level.h).
//
// C (m x n, row-major, ldc) = A (m x k, row-major) @ B (k x n, row- or column-major), the
// operands given by element strides. The work is cut into
//   - k blocks of kc (the whole k up to 1024, so C is written once);
//   - n blocks of nc columns: B's block, packed into panels of kNr columns (kc x kNr each, k
//     major), stays in L2 while every row panel of A passes over it;
//   - row panels of kMr rows of A, packed k major (kc x kMr), which stay in L1 while the
//     micro-kernel walks the B block's panels.
// The micro-kernel keeps a kMr x kNr tile of C in 28 zmm registers: per k, two loads of B and
// kMr broadcasts of A feed 2 * kMr FMAs. Each C element is summed in the same order whatever
// the thread count (blocks of k in order, k in order within a block), so results do not depend
// on the number of threads.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/cpu_level.h"

#if EMBER_CPU_LEVEL < 2
#error "gemm_packed_f32.h needs an AVX-512 level"
#endif

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace packed_f32 {

constexpr int kMr = 14;  // rows of the C tile: 28 accumulators + 2 B vectors + 1 broadcast
constexpr int kNr = 32;  // columns of the C tile: two zmm
// How far ahead (in k steps) the micro-kernel prefetches its B panel into L1; measured best
// among 0, 8 and 16 on the Cascade Lake core.
constexpr int kPrefetchSteps = 16;
// How many k steps before the end the last line of the C tile is prefetched for writing.
constexpr int kCPrefetchLead = 32;

// One operand: element (r, c) at data[r * row_stride + c * col_stride].
struct Operand {
  const float* data;
  int64_t row_stride, col_stride;
};

inline __mmask16 lanes_mask(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << std::max<int64_t>(count, 0)) - 1u);
}

// In-register transpose of 16 vectors of 16 floats: afterwards r[j] lane i is the old r[i]
// lane j.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
      t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
  }
}

// dst[kk * dst_stride + v] = src[v * src_stride + kk] for v < vectors (<= 16, the rest of the
// 16 lanes zero), kk < kc; `store_mask` selects the lanes written (the panel's width).
inline void pack_transposed(const float* src, int64_t src_stride, int64_t vectors, int64_t kc,
                            float* dst, int64_t dst_stride, __mmask16 store_mask) {
  for (int64_t k0 = 0; k0 < kc; k0 += 16) {
    const int64_t kn = std::min<int64_t>(16, kc - k0);
    const __mmask16 load_mask = lanes_mask(kn);
    __m512 r[16];
    for (int v = 0; v < 16; ++v) {
      r[v] = v < vectors ? _mm512_maskz_loadu_ps(load_mask, src + v * src_stride + k0)
                         : _mm512_setzero_ps();
    }
    transpose16(r);
    for (int64_t kk = 0; kk < kn; ++kk)
      _mm512_mask_storeu_ps(dst + (k0 + kk) * dst_stride, store_mask, r[kk]);
  }
}

// Rows [i0, i0 + rows) (rows <= kMr) and k in [p0, p0 + kc) of a row-major A (column stride 1)
// into a kc x kMr panel: a transpose.
inline void pack_a_panel(const Operand& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc,
                         float* dst) {
  pack_transposed(a.data + i0 * a.row_stride + p0, a.row_stride, rows, kc, dst, kMr,
                  lanes_mask(kMr));
}

// k in [p0, p0 + kc) and columns [j0, j0 + cols) of B into panels of kNr columns, kc x kNr
// each (zero beyond `cols`).
inline void pack_b_block(const Operand& b, int64_t p0, int64_t kc, int64_t j0, int64_t cols,
                         float* dst) {
  for (int64_t jp = 0; jp < cols; jp += kNr) {
    float* panel = dst + jp * kc;
    const int64_t width = std::min<int64_t>(kNr, cols - jp);
    const float* base = b.data + p0 * b.row_stride + (j0 + jp) * b.col_stride;
    if (b.row_stride == 1) {  // B = W^T with W row-major (a Linear's weight): transpose
      for (int h = 0; h < 2; ++h) {
        const int64_t vectors = std::clamp<int64_t>(width - 16 * h, 0, 16);
        pack_transposed(base + 16 * h * b.col_stride, b.col_stride, vectors, kc, panel + 16 * h,
                        kNr, lanes_mask(16));
      }
      continue;
    }
    const __mmask16 m0 = lanes_mask(width), m1 = lanes_mask(width - 16);
    for (int64_t kk = 0; kk < kc; ++kk) {
      const float* row = base + kk * b.row_stride;
      _mm512_store_ps(panel + kk * kNr, _mm512_maskz_loadu_ps(m0, row));
      _mm512_store_ps(panel + kk * kNr + 16, _mm512_maskz_loadu_ps(m1, row + 16));
    }
  }
}

// The C tile (MR x kNr, columns masked by m0 / m1) += or = a_panel @ b_panel over kc. `init`:
// 0 starts from zero, 1 from C's values, 2 from `bias` (kNr values, masked like C).
template <int MR>
inline void micro_kernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                         __mmask16 m0, __mmask16 m1, int init, const float* bias,
                         const float* a_next, int64_t a_next_lines) {
  __m512 acc0[MR], acc1[MR];
  if (init == 1) {
    for (int i = 0; i < MR; ++i) {
      acc0[i] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
      acc1[i] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
    }
  } else {
    const __m512 b0 = init == 2 ? _mm512_maskz_loadu_ps(m0, bias) : _mm512_setzero_ps();
    const __m512 b1 = init == 2 ? _mm512_maskz_loadu_ps(m1, bias + 16) : _mm512_setzero_ps();
    for (int i = 0; i < MR; ++i) {
      acc0[i] = b0;
      acc1[i] = b1;
    }
  }
  // A tile that C's old values do not start is still read from memory by its stores (for
  // ownership); its 2 * MR lines are prefetched for writing, one per k step, shortly before the
  // end, so that the stores find them in cache.
  const int64_t c_first = init == 1 ? kc : std::max<int64_t>(0, kc - 2 * MR - kCPrefetchLead);
  for (int64_t kk = 0; kk < kc; ++kk) {
    if (kk >= c_first && kk < c_first + 2 * MR) {
      const int64_t line = kk - c_first;
      __builtin_prefetch(c + (line >> 1) * ldc + (line & 1) * 16, 1, 3);
    }
    _mm_prefetch(reinterpret_cast<const char*>(bp + (kk + kPrefetchSteps) * kNr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(bp + (kk + kPrefetchSteps) * kNr + 16), _MM_HINT_T0);
    if (kk < a_next_lines)
      _mm_prefetch(reinterpret_cast<const char*>(a_next + kk * 16), _MM_HINT_T1);
    const __m512 w0 = _mm512_load_ps(bp + kk * kNr), w1 = _mm512_load_ps(bp + kk * kNr + 16);
#pragma GCC unroll 14
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(ap[kk * kMr + i]);
      acc0[i] = _mm512_fmadd_ps(av, w0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, w1, acc1[i]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
}

template <int... R>
struct MicroTable {
  using Fn = void (*)(int64_t, const float*, const float*, float*, int64_t, __mmask16, __mmask16,
                      int, const float*, const float*, int64_t);
  static constexpr Fn fns[sizeof...(R)] = {&micro_kernel<R + 1>...};
};

// micro_kernel<rows> for rows in [1, kMr].
inline void micro_kernel_rows(int64_t rows, int64_t kc, const float* ap, const float* bp, float* c,
                              int64_t ldc, __mmask16 m0, __mmask16 m1, int init, const float* bias,
                              const float* a_next, int64_t a_next_lines) {
  using Table = MicroTable<0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13>;
  static_assert(sizeof(Table::fns) / sizeof(Table::fns[0]) == kMr);
  Table::fns[rows - 1](kc, ap, bp, c, ldc, m0, m1, init, bias, a_next, a_next_lines);
}

// The blocking of one product: k blocks (kc), n blocks (nc) and row blocks (mc, so that the
// packed A of a row block stays within a few MB).
struct Blocking {
  int64_t kc, nc, mc;
};

inline Blocking choose_blocking(int64_t m, int64_t k) {
  Blocking b;
  const int64_t k_blocks = k <= 1024 ? 1 : (k + 767) / 768;
  b.kc = (k + k_blocks - 1) / k_blocks;
  if (k_blocks > 1) b.kc = (b.kc + 15) / 16 * 16;
  // B's block, kc x nc floats, within 384 KB of the 1 MB L2.
  b.nc = std::clamp<int64_t>((384 * 1024 / 4) / b.kc / kNr * kNr, 64, 512);
  // A's packed row block, mc x kc floats, within 4 MB.
  b.mc = std::max<int64_t>(kMr, (1024 * 1024) / b.kc / kMr * kMr);
  b.mc = std::min(b.mc, (m + kMr - 1) / kMr * kMr);
  return b;
}

// Scratch for one thread's packed panels: A's row block (mc x kc) and B's block (kc x nc).
inline size_t a_pack_floats(const Blocking& b) {
  return static_cast<size_t>((b.mc * b.kc + 15) / 16 * 16);  // B's panels start 64-byte aligned
}
inline size_t scratch_floats(const Blocking& b) {
  const size_t a = a_pack_floats(b);
  const size_t bp = static_cast<size_t>(b.kc * ((b.nc + kNr - 1) / kNr * kNr));
  return a + bp;  // (the micro-kernel's prefetches past B's end are harmless: they never fault)
}

// C rows [i_begin, i_end) x columns [j_begin, j_end) = A @ B (+ bias, or + C's own values when
// `accumulate`), with the blocking b;
// `scratch` holds scratch_floats(b) floats, 64-byte aligned. `finish(row, col, rows, cols)` is
// called for every finished C tile (after the last k block), for an epilogue.
template <typename Finish>
void gemm_range(const Operand& a, const Operand& b, float* c, int64_t ldc, int64_t k,
                const float* bias, bool accumulate, const Blocking& blk, int64_t i_begin,
                int64_t i_end, int64_t j_begin, int64_t j_end, float* scratch,
                const Finish& finish) {
  float* a_pack = scratch;
  float* b_pack = scratch + a_pack_floats(blk);
  for (int64_t ic = i_begin; ic < i_end; ic += blk.mc) {
    const int64_t mc = std::min(blk.mc, i_end - ic);
    for (int64_t pc = 0; pc < k; pc += blk.kc) {
      const int64_t kc = std::min(blk.kc, k - pc);
      const bool first = pc == 0, last = pc + kc >= k;
      const int init = first && !accumulate ? (bias ? 2 : 0) : 1;
      for (int64_t ir = 0; ir < mc; ir += kMr)
        pack_a_panel(a, ic + ir, std::min<int64_t>(kMr, mc - ir), pc, kc, a_pack + ir * kc);
      for (int64_t jc = j_begin; jc < j_end; jc += blk.nc) {
        const int64_t nc = std::min(blk.nc, j_end - jc);
        pack_b_block(b, pc, kc, jc, nc, b_pack);
        // The next row panel's packed A comes in from L3 while this one runs: a line per k
        // step, spread over this panel's micro-kernels (10% faster on a Cascade Lake core).
        const int64_t panel_lines = (kc * kMr + 15) / 16;
        const int64_t kernels = (nc + kNr - 1) / kNr;
        const int64_t lines_each = (panel_lines + kernels - 1) / kernels;
        for (int64_t ir = 0; ir < mc; ir += kMr) {
          const int64_t rows = std::min<int64_t>(kMr, mc - ir);
          const float* a_panel = a_pack + ir * kc;
          const bool has_next = ir + kMr < mc;
          for (int64_t jr = 0; jr < nc; jr += kNr) {
            const int64_t cols = std::min<int64_t>(kNr, nc - jr);
            float* tile = c + (ic + ir) * ldc + jc + jr;
            const int64_t first_line = jr / kNr * lines_each;
            const int64_t lines =
                has_next ? std::clamp<int64_t>(panel_lines - first_line, 0, lines_each) : 0;
            micro_kernel_rows(rows, kc, a_panel, b_pack + jr * kc, tile, ldc, lanes_mask(cols),
                              lanes_mask(cols - 16), init, bias ? bias + jc + jr : nullptr,
                              a_panel + kc * kMr + first_line * 16, std::min(lines, kc));
          }
          if (last) finish(ic + ir, jc, rows, nc);
        }
      }
    }
  }
}

}  // namespace packed_f32
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
