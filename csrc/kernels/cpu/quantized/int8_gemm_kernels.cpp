// int8 GEMM with the dequantizing epilogue fused, weight packing, the dynamic quantization of
// float activations and the requantizing elementwise add / mul (kernels/quantized_stubs.h). The
// direct convolutions are int8_conv_kernels.cpp.
// Compiled once per CPU capability level; the vector operations of each level are
// kernels/cpu/quantized/int8_isa.h.
//
// Work is split into (panel of columns, block of rows) units, panel-major, so a thread's
// consecutive units reuse one weight panel from cache. A register tile is R rows x one panel
// (two vectors of int32 lanes); each step broadcasts four activation bytes of a row and
// multiplies them with four k of every column of the panel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/quantized/int8_isa.h"
#include "kernels/quantized_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

using int8_isa::Isa;
using I = Isa::I;
using F = Isa::F;
constexpr int64_t kLanes = Isa::kLanes;
constexpr int64_t kPanel = 2 * kLanes;
constexpr int64_t kRowBlock = 64;  // rows of one work unit

void pack_weights(const int8_t* w, int64_t n, int64_t k, int64_t ldw, PackedInt8Weights& out) {
  int8_pack_weights_reference(w, n, k, ldw, kPanel, out);
  out.level = EMBER_CPU_LEVEL;
}

// What the epilogue needs per column, precomputed once per call over the padded columns.
struct ColumnTerms {
  std::vector<int32_t> offset;  // a_zp colsum[n] - K a_zp w_zp[n]
  std::vector<int32_t> w_zp;    // w_zp[n] (empty when all are 0)
  std::vector<float> scale;     // a_scale w_scale[n]
  std::vector<float> bias;      // bias[n] or 0
};

ColumnTerms column_terms(const Int8GemmArgs& p) {
  const PackedInt8Weights& w = *p.w;
  ColumnTerms t;
  t.offset.assign(w.n_padded, 0);
  t.scale.assign(w.n_padded, 0.f);
  t.bias.assign(w.n_padded, 0.f);
  if (p.w_zero_points) t.w_zp.assign(w.n_padded, 0);
  for (int64_t j = 0; j < w.n; ++j) {
    const int32_t zw = p.w_zero_points ? p.w_zero_points[j] : 0;
    t.offset[j] =
        p.a_zero_point * w.column_sums[j] - static_cast<int32_t>(w.k) * p.a_zero_point * zw;
    if (p.w_zero_points) t.w_zp[j] = zw;
    t.scale[j] = p.a_scale * p.w_scales[j];
    if (p.bias) t.bias[j] = p.bias[j];
  }
  return t;
}

// out[r][0 .. kHalves * kLanes) for R rows (rows `ldo` apart) from the tile's sums c, columns
// j0...: floats, or when kRequant bytes (out points at uint8_t then), requantized two vectors
// at a time (a row's two halves, or two rows' one).
template <int R, int kHalves, bool kRequant>
inline void finish_tile(I (&c)[R][2], const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0,
                        int64_t j0, void* out, int64_t ldo) {
  const F zero = Isa::set1f(0.f);
  const F inv = Isa::set1f(p.out_inv_scale);
  F x[R][2];  // kRequant: y / out_scale
  for (int h = 0; h < kHalves; ++h) {
    const int64_t j = j0 + h * kLanes;
    const I offset = Isa::load(t.offset.data() + j);
    const F scale = Isa::loadf(t.scale.data() + j), bias = Isa::loadf(t.bias.data() + j);
    const I w_zp = t.w_zp.empty() ? Isa::zero() : Isa::load(t.w_zp.data() + j);
    for (int r = 0; r < R; ++r) {
      I v = Isa::sub(c[r][h], offset);
      if (!t.w_zp.empty()) v = Isa::sub(v, Isa::mullo(w_zp, Isa::set1(p.a_row_sums[i0 + r])));
      F y = Isa::addf(Isa::mulf(Isa::to_float(v), scale), bias);
      if constexpr (kRequant) {
        x[r][h] = Isa::mulf(y, inv);  // ReLU: the requantization's floor
      } else {
        if (p.relu) y = Isa::maxf(y, zero);
        Isa::storef(static_cast<float*>(out) + r * ldo + h * kLanes, y);
      }
    }
  }
  if constexpr (kRequant) {
    uint8_t* o = static_cast<uint8_t*>(out);
    if constexpr (kHalves == 2) {
      for (int r = 0; r < R; ++r) {
        Isa::store_u8_pair(o + r * ldo, o + r * ldo + kLanes, x[r][0], x[r][1], p.out_zero_point,
                           p.relu);
      }
    } else {
      for (int r = 0; r + 1 < R; r += 2) {
        Isa::store_u8_pair(o + r * ldo, o + (r + 1) * ldo, x[r][0], x[r + 1][0], p.out_zero_point,
                           p.relu);
      }
      if constexpr (R % 2 == 1) {
        const F zp = Isa::set1f(float(p.out_zero_point)), qmax = Isa::set1f(255.f);
        const F last = x[R - 1][0];
        Isa::store_u8(o + (R - 1) * ldo, p.relu ? Isa::maxf(last, zero) : last, zp, qmax);
      }
    }
  }
}

// R rows x one panel: rows i0.. of a against the panel starting at column j0. kHalves == 1 when
// the panel holds at most kLanes real columns (a narrow last panel, or a GEMM of <= kLanes
// columns, as thin convolutions have): the empty half is neither multiplied nor stored.
template <int R, bool kSevenBit, int kHalves = 2>
__attribute__((noinline)) void tile(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0,
                                    int64_t j0) {
  const PackedInt8Weights& w = *p.w;
  const int8_t* panel = w.data.data() + j0 * w.k_padded;
  const uint8_t* a = p.a + i0 * p.lda;
  const int64_t groups = w.k_padded / 4;
  I c[R][2];
  for (auto& row : c) row[0] = row[1] = Isa::zero();
  for (int64_t g = 0; g < groups; ++g) {
    const I b0 = Isa::load(panel + g * 4 * kPanel);
    const I b1 = kHalves == 2 ? Isa::load(panel + g * 4 * kPanel + 4 * kLanes) : b0;
    for (int r = 0; r < R; ++r) {
      const I x = Isa::broadcast4(a + r * p.lda + 4 * g);
      if constexpr (kSevenBit) {
        c[r][0] = Isa::dot7(c[r][0], x, b0);
        if constexpr (kHalves == 2) c[r][1] = Isa::dot7(c[r][1], x, b1);
      } else {
        c[r][0] = Isa::dot8(c[r][0], x, b0);
        if constexpr (kHalves == 2) c[r][1] = Isa::dot8(c[r][1], x, b1);
      }
    }
  }
  constexpr int64_t kWidth = kHalves * kLanes;
  const int64_t cols = std::min<int64_t>(kWidth, w.n - j0);
  if (p.raw) {
    int32_t buf[R][kPanel];
    for (int r = 0; r < R; ++r) {
      Isa::store(buf[r], c[r][0]);
      if constexpr (kHalves == 2) Isa::store(buf[r] + kLanes, c[r][1]);
      std::memcpy(p.raw + (i0 + r) * p.ldo + j0, buf[r], sizeof(int32_t) * cols);
    }
    return;
  }
  if (p.out_u8) {
    if (cols == kWidth) {
      finish_tile<R, kHalves, true>(c, p, t, i0, j0, p.out_u8 + i0 * p.ldo + j0, p.ldo);
    } else {
      uint8_t buf[R][kWidth];
      finish_tile<R, kHalves, true>(c, p, t, i0, j0, buf[0], kWidth);
      for (int r = 0; r < R; ++r) std::memcpy(p.out_u8 + (i0 + r) * p.ldo + j0, buf[r], cols);
    }
  } else if (cols == kWidth) {
    finish_tile<R, kHalves, false>(c, p, t, i0, j0, p.out + i0 * p.ldo + j0, p.ldo);
  } else {  // the last panel: through a buffer, keeping the columns past n unwritten
    float buf[R][kWidth];
    finish_tile<R, kHalves, false>(c, p, t, i0, j0, buf[0], kWidth);
    for (int r = 0; r < R; ++r)
      std::memcpy(p.out + (i0 + r) * p.ldo + j0, buf[r], sizeof(float) * cols);
  }
}

// Rows [i0, i1) of one panel, in tiles of Isa::kRows and one tile of the remainder's height.
template <bool kSevenBit, int kHalves, int H = Isa::kRows - 1>
inline void remainder_tile(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i, int64_t left,
                           int64_t j0) {
  if constexpr (H > 0) {
    if (left == H) {
      tile<H, kSevenBit, kHalves>(p, t, i, j0);
    } else {
      remainder_tile<kSevenBit, kHalves, H - 1>(p, t, i, left, j0);
    }
  }
}

// Without VNNI the exact 8-bit product costs about twice the 7-bit one, so 8-bit activations
// are checked tile by tile: a tile whose rows are all <= 127 (usually most of them: values past
// 127 are the calibration's outliers under reduce_range) takes the 7-bit product.
constexpr bool kCheckTiles = EMBER_CPU_LEVEL < 3;

// Whether each tile of rows [i0, i1) (kRows per tile, the last one shorter) holds only values
// <= 127, into fits[tile].
void tiles_fit_7bit(const Int8GemmArgs& p, int64_t i0, int64_t i1, bool* fits) {
  for (int64_t i = i0, n_tile = 0; i < i1; i += Isa::kRows, ++n_tile) {
    uint8_t largest = 0;
    for (int64_t r = i; r < std::min(i1, i + Isa::kRows); ++r) {
      const uint8_t* __restrict row = p.a + r * p.lda;
      for (int64_t e = 0; e < p.w->k; ++e) largest = row[e] > largest ? row[e] : largest;
    }
    fits[n_tile] = largest <= 127;
  }
}

constexpr int64_t kMaxTiles = (kRowBlock + Isa::kRows - 1) / Isa::kRows;

// Rows [i0, i1) (at most kRowBlock) of one panel. For 8-bit activations, `fits` (from
// tiles_fit_7bit, or null to compute here) picks the product tile by tile.
template <bool kSevenBit, int kHalves>
void row_block_of(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0, int64_t i1, int64_t j0,
                  const bool* fits) {
  constexpr int R = Isa::kRows;
  bool local[kMaxTiles];
  if (!kSevenBit && kCheckTiles && !fits) {
    tiles_fit_7bit(p, i0, i1, local);
    fits = local;
  }
  int64_t i = i0, n_tile = 0;
  for (; i + R <= i1; i += R, ++n_tile) {
    if (!kSevenBit && kCheckTiles && fits[n_tile]) {
      tile<R, true, kHalves>(p, t, i, j0);
    } else {
      tile<R, kSevenBit, kHalves>(p, t, i, j0);
    }
  }
  if (!kSevenBit && kCheckTiles && i < i1 && fits[n_tile]) {
    remainder_tile<true, kHalves>(p, t, i, i1 - i, j0);
  } else {
    remainder_tile<kSevenBit, kHalves>(p, t, i, i1 - i, j0);
  }
}

template <bool kSevenBit>
void row_block(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0, int64_t i1, int64_t j0,
               const bool* fits = nullptr) {
  if (p.w->n - j0 <= kLanes) {
    row_block_of<kSevenBit, 1>(p, t, i0, i1, j0, fits);
  } else {
    row_block_of<kSevenBit, 2>(p, t, i0, i1, j0, fits);
  }
}

void gemm(const Int8GemmArgs& p) {
  const PackedInt8Weights& w = *p.w;
  EMBER_CHECK(w.level == EMBER_CPU_LEVEL && w.panel == kPanel,
              "[int8_gemm] weights packed for CPU level ", w.level, " (panel ", w.panel,
              "), run at level ", EMBER_CPU_LEVEL, ": pack them again");
  if (p.m == 0 || w.n == 0) return;
  const ColumnTerms t = p.raw ? ColumnTerms{} : column_terms(p);
  const int64_t row_blocks = (p.m + kRowBlock - 1) / kRowBlock;
  const int64_t panels = w.n_padded / kPanel;
  if (p.fill_a) {  // row-block-major: each block of a is made once, then meets every panel
    const int64_t block_cost = std::min(p.m, kRowBlock) * w.n_padded * w.k_padded;
    parallel_for(0, row_blocks, std::max<int64_t>(1, kGrainSize * 4 / block_cost),
                 [&](int64_t b0, int64_t b1) {
                   std::vector<uint8_t> a(static_cast<size_t>(kRowBlock * p.lda));
                   std::vector<int32_t> sums(p.w_zero_points ? kRowBlock : 0);
                   for (int64_t rb = b0; rb < b1; ++rb) {
                     const int64_t i0 = rb * kRowBlock, i1 = std::min(p.m, i0 + kRowBlock);
                     p.fill_a(p.fill_a_context, i0, i1, a.data(), p.lda);
                     Int8GemmArgs block = p;
                     block.a = a.data();
                     block.m = i1 - i0;
                     if (p.out) block.out = p.out + i0 * p.ldo;
                     if (p.out_u8) block.out_u8 = p.out_u8 + i0 * p.ldo;
                     if (p.raw) block.raw = p.raw + i0 * p.ldo;
                     if (p.w_zero_points) {
                       for (int64_t r = 0; r < block.m; ++r) {
                         int32_t s = 0;
                         for (int64_t e = 0; e < w.k; ++e) s += a[r * p.lda + e];
                         sums[r] = s;
                       }
                       block.a_row_sums = sums.data();
                     }
                     bool fits[kMaxTiles];
                     if (!p.a_7bit && kCheckTiles) tiles_fit_7bit(block, 0, block.m, fits);
                     for (int64_t j0 = 0; j0 < w.n_padded; j0 += kPanel) {
                       if (p.a_7bit) {
                         row_block<true>(block, t, 0, block.m, j0);
                       } else {
                         row_block<false>(block, t, 0, block.m, j0, fits);
                       }
                     }
                   }
                 });
    return;
  }
  // Which tiles of rows take the 7-bit product: found once for every panel.
  constexpr int64_t kTilesPerBlock = kRowBlock / Isa::kRows;
  static_assert(kRowBlock % Isa::kRows == 0, "row blocks of whole tiles");
  std::vector<uint8_t> fits;
  if (!p.a_7bit && kCheckTiles && panels > 1) {
    fits.resize(static_cast<size_t>(row_blocks * kTilesPerBlock));
    parallel_for(0, row_blocks, std::max<int64_t>(1, kGrainSize / (kRowBlock * w.k + 1)),
                 [&](int64_t b0, int64_t b1) {
                   bool block_fits[kMaxTiles] = {};  // a short last block fills fewer
                   for (int64_t rb = b0; rb < b1; ++rb) {
                     const int64_t i0 = rb * kRowBlock, i1 = std::min(p.m, i0 + kRowBlock);
                     tiles_fit_7bit(p, i0, i1, block_fits);
                     std::copy(block_fits, block_fits + kTilesPerBlock,
                               fits.begin() + rb * kTilesPerBlock);
                   }
                 });
  }
  const int64_t unit_cost = std::min(p.m, kRowBlock) * kPanel * w.k_padded;
  parallel_for(0, panels * row_blocks, std::max<int64_t>(1, kGrainSize * 4 / unit_cost),
               [&](int64_t u0, int64_t u1) {
                 for (int64_t u = u0; u < u1; ++u) {
                   const int64_t j0 = (u / row_blocks) * kPanel, rb = u % row_blocks;
                   const int64_t i0 = rb * kRowBlock, i1 = std::min(p.m, i0 + kRowBlock);
                   if (p.a_7bit) {
                     row_block<true>(p, t, i0, i1, j0);
                   } else if (fits.empty()) {
                     row_block<false>(p, t, i0, i1, j0);
                   } else {
                     bool block_fits[kMaxTiles] = {};  // a short last block fills fewer
                     std::copy(fits.begin() + rb * kTilesPerBlock,
                               fits.begin() + (rb + 1) * kTilesPerBlock, block_fits);
                     row_block<false>(p, t, i0, i1, j0, block_fits);
                   }
                 }
               });
}

void quantize_rows(const QuantizeRowsArgs& q) {
  parallel_for(0, q.m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(q.k, 1)),
               [&](int64_t r0, int64_t r1) {
                 const F inv = Isa::set1f(q.inv_scale), zp = Isa::set1f(float(q.zero_point)),
                         qmax = Isa::set1f(float(q.qmax));
                 for (int64_t r = r0; r < r1; ++r) {
                   const float* x = q.x + r * q.ldx;
                   uint8_t* a = q.a + r * q.lda;
                   int64_t e = 0;
                   for (; e + kLanes <= q.k; e += kLanes) {
                     Isa::store_u8(a + e, Isa::mulf(Isa::loadf(x + e), inv), zp, qmax);
                   }
                   if (e < q.k) {  // the tail through a buffer, so no load or store passes k
                     float xb[kLanes] = {};
                     uint8_t ab[kLanes];
                     std::memcpy(xb, x + e, sizeof(float) * (q.k - e));
                     Isa::store_u8(ab, Isa::mulf(Isa::loadf(xb), inv), zp, qmax);
                     std::memcpy(a + e, ab, q.k - e);
                   }
                   std::memset(a + q.k, 0, q.lda - q.k);
                 }
               });
}

template <QuantizedBinaryOp kOp>
void binary_range(const QuantizedBinaryArgs& p, int64_t b, int64_t e) {
  const F a_zp = Isa::set1f(float(p.a_zero_point)), b_zp = Isa::set1f(float(p.b_zero_point));
  const F a_scale = Isa::set1f(p.a_scale), b_scale = Isa::set1f(p.b_scale);
  const F inv = Isa::set1f(p.out_inv_scale), zp = Isa::set1f(float(p.out_zero_point));
  const F qmax = Isa::set1f(255.f), zero = Isa::set1f(0.f);
  auto one = [&](const uint8_t* a, const uint8_t* bb, uint8_t* out) {
    const F x = Isa::mulf(Isa::subf(Isa::load_u8f(a), a_zp), a_scale);
    const F y = Isa::mulf(Isa::subf(Isa::load_u8f(bb), b_zp), b_scale);
    F r = kOp == QuantizedBinaryOp::kAdd ? Isa::addf(x, y) : Isa::mulf(x, y);
    if (p.relu) r = Isa::maxf(r, zero);
    Isa::store_u8(out, Isa::mulf(r, inv), zp, qmax);
  };
  int64_t i = b;
  for (; i + kLanes <= e; i += kLanes) one(p.a + i, p.b + i, p.out + i);
  if (i < e) {  // the tail through buffers: no load or store past the end
    uint8_t ab[kLanes] = {}, bb[kLanes] = {}, ob[kLanes];
    std::memcpy(ab, p.a + i, e - i);
    std::memcpy(bb, p.b + i, e - i);
    one(ab, bb, ob);
    std::memcpy(p.out + i, ob, e - i);
  }
}

void quantized_binary(const QuantizedBinaryArgs& p) {
  parallel_for(0, p.n, kGrainSize, [&](int64_t b, int64_t e) {
    if (p.op == QuantizedBinaryOp::kAdd) {
      binary_range<QuantizedBinaryOp::kAdd>(p, b, e);
    } else {
      binary_range<QuantizedBinaryOp::kMul>(p, b, e);
    }
  });
}

void embedding_row(const uint8_t* q, int bits, int64_t dim, float scale, float bias, float* acc,
                   bool max) {
  const F s = Isa::set1f(scale), b = Isa::set1f(bias);
  int64_t d = 0;
  for (; d + kLanes <= dim; d += kLanes) {
    const F values = bits == 4 ? Isa::load_u4f(q + d / 2) : Isa::load_u8f(q + d);
    const F v = Isa::addf(Isa::mulf(values, s), b);
    const F a = Isa::loadf(acc + d);
    Isa::storef(acc + d, max ? Isa::maxf(a, v) : Isa::addf(a, v));
  }
  for (; d < dim; ++d) {  // the tail: the same operations, one value
    const int value = bits == 4 ? (q[d / 2] >> (4 * (d % 2))) & 0xF : q[d];
    const float v = static_cast<float>(value) * scale + bias;
    acc[d] = max ? std::max(acc[d], v) : acc[d] + v;
  }
}

// A row's scale and bias (the per-sample weight folded in), and its lookup's prefetch.
inline void row_terms(const EmbeddingBagArgs& p, const uint8_t* row, int64_t i, float* scale,
                      float* bias) {
  std::memcpy(scale, row, sizeof(float));
  std::memcpy(bias, row + sizeof(float), sizeof(float));
  if (p.per_sample_weights) {
    *scale *= p.per_sample_weights[i];
    *bias *= p.per_sample_weights[i];
  }
}

inline void prefetch_lookup(const EmbeddingBagArgs& p, int64_t i) {
  const uint8_t* row = p.table + p.idx[i] * p.row_stride;
  for (int64_t line = 0; line < p.row_stride; line += 64) __builtin_prefetch(row + line);
  __builtin_prefetch(row + p.row_stride - 1);  // a row may straddle one more line
}

constexpr int64_t kBagAhead = 8;  // lookups whose rows are in flight

// dim == NV * kLanes: the bag's sums stay in NV registers; nothing but the rows is read.
template <int NV, int kBits, bool kMax>
int64_t bag_in_registers(const EmbeddingBagArgs& p) {
  F acc[NV];
  for (auto& a : acc) a = Isa::set1f(kMax ? -std::numeric_limits<float>::infinity() : 0.f);
  int64_t count = 0;
  for (int64_t i = p.begin; i < p.end; ++i) {
    if (i + kBagAhead < p.prefetch_end) prefetch_lookup(p, i + kBagAhead);
    if (p.padding_idx && p.idx[i] == *p.padding_idx) continue;
    ++count;
    const uint8_t* row = p.table + p.idx[i] * p.row_stride;
    float scale, bias;
    row_terms(p, row, i, &scale, &bias);
    const F s = Isa::set1f(scale), b = Isa::set1f(bias);
    const uint8_t* q = row + p.header;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const F values =
          kBits == 4 ? Isa::load_u4f(q + v * kLanes / 2) : Isa::load_u8f(q + v * kLanes);
      const F y = Isa::addf(Isa::mulf(values, s), b);
      acc[v] = kMax ? Isa::maxf(acc[v], y) : Isa::addf(acc[v], y);
    }
  }
  for (int v = 0; v < NV; ++v) Isa::storef(p.out + v * kLanes, acc[v]);
  return count;
}

template <int NV>
int64_t bag_in_registers(const EmbeddingBagArgs& p) {
  if (p.bits == 4) {
    return p.max ? bag_in_registers<NV, 4, true>(p) : bag_in_registers<NV, 4, false>(p);
  }
  return p.max ? bag_in_registers<NV, 8, true>(p) : bag_in_registers<NV, 8, false>(p);
}

int64_t embedding_bag_rows(const EmbeddingBagArgs& p) {
  if (p.dim % kLanes == 0) {
    switch (p.dim / kLanes) {
      case 1:
        return bag_in_registers<1>(p);
      case 2:
        return bag_in_registers<2>(p);
      case 3:
        return bag_in_registers<3>(p);
      case 4:
        return bag_in_registers<4>(p);
      case 6:
        return bag_in_registers<6>(p);
      case 8:
        return bag_in_registers<8>(p);
      default:
        break;
    }
  }
  // Other widths: the sums in `out`, row by row.
  std::fill(p.out, p.out + p.dim, p.max ? -std::numeric_limits<float>::infinity() : 0.f);
  int64_t count = 0;
  for (int64_t i = p.begin; i < p.end; ++i) {
    if (i + kBagAhead < p.prefetch_end) prefetch_lookup(p, i + kBagAhead);
    if (p.padding_idx && p.idx[i] == *p.padding_idx) continue;
    ++count;
    const uint8_t* row = p.table + p.idx[i] * p.row_stride;
    float scale, bias;
    row_terms(p, row, i, &scale, &bias);
    embedding_row(row + p.header, p.bits, p.dim, scale, bias, p.out, p.max);
  }
  return count;
}

void min_max_rows(const float* x, int64_t m, int64_t k, int64_t ldx, float* min_out,
                  float* max_out) {
  F lo = Isa::set1f(std::numeric_limits<float>::infinity());
  F hi = Isa::set1f(-std::numeric_limits<float>::infinity());
  bool nan = false;
  float slo = std::numeric_limits<float>::infinity(), shi = -slo;
  for (int64_t r = 0; r < m && !nan; ++r) {
    const float* row = x + r * ldx;
    int64_t e = 0;
    for (; e + kLanes <= k; e += kLanes) {
      const F v = Isa::loadf(row + e);
      nan |= Isa::any_nan(v);
      lo = Isa::minf(lo, v);
      hi = Isa::maxf(hi, v);
    }
    for (; e < k; ++e) {
      nan |= std::isnan(row[e]);
      slo = std::min(slo, row[e]);
      shi = std::max(shi, row[e]);
    }
  }
  if (nan) {
    *min_out = *max_out = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  float lanes_lo[kLanes], lanes_hi[kLanes];
  Isa::storef(lanes_lo, lo);
  Isa::storef(lanes_hi, hi);
  for (int64_t l = 0; l < kLanes; ++l) {
    slo = std::min(slo, lanes_lo[l]);
    shi = std::max(shi, lanes_hi[l]);
  }
  *min_out = slo;
  *max_out = shi;
}

}  // namespace

EMBER_REGISTER_KERNEL(int8_pack_weights_stub, CPU, pack_weights);
EMBER_REGISTER_KERNEL(int8_gemm_stub, CPU, gemm);
EMBER_REGISTER_KERNEL(quantize_rows_u8_stub, CPU, quantize_rows);
EMBER_REGISTER_KERNEL(min_max_rows_stub, CPU, min_max_rows);
EMBER_REGISTER_KERNEL(quantized_binary_u8_stub, CPU, quantized_binary);
EMBER_REGISTER_KERNEL(embedding_row_stub, CPU, embedding_row);
EMBER_REGISTER_KERNEL(embedding_bag_rows_stub, CPU, embedding_bag_rows);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
