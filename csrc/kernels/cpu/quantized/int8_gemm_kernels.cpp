// int8 GEMM with the dequantizing epilogue fused, weight packing, the dynamic quantization of
// float activations and the requantizing elementwise add / mul (kernels/quantized_stubs.h).
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

// out[r][0 .. kPanel) for R rows (rows `ldo` apart) from the tile's sums c, columns j0...:
// floats, or when kRequant bytes (out points at uint8_t then).
template <int R, bool kRequant>
inline void finish_tile(I (&c)[R][2], const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0,
                        int64_t j0, void* out, int64_t ldo) {
  const F zero = Isa::set1f(0.f);
  const F inv = Isa::set1f(p.out_inv_scale), zp = Isa::set1f(float(p.out_zero_point)),
          qmax = Isa::set1f(255.f);
  for (int h = 0; h < 2; ++h) {
    const int64_t j = j0 + h * kLanes;
    const I offset = Isa::load(t.offset.data() + j);
    const F scale = Isa::loadf(t.scale.data() + j), bias = Isa::loadf(t.bias.data() + j);
    const I w_zp = t.w_zp.empty() ? Isa::zero() : Isa::load(t.w_zp.data() + j);
    for (int r = 0; r < R; ++r) {
      I v = Isa::sub(c[r][h], offset);
      if (!t.w_zp.empty()) v = Isa::sub(v, Isa::mullo(w_zp, Isa::set1(p.a_row_sums[i0 + r])));
      F y = Isa::addf(Isa::mulf(Isa::to_float(v), scale), bias);
      if (p.relu) y = Isa::maxf(y, zero);
      if constexpr (kRequant) {
        Isa::store_u8(static_cast<uint8_t*>(out) + r * ldo + h * kLanes, Isa::mulf(y, inv), zp,
                      qmax);
      } else {
        Isa::storef(static_cast<float*>(out) + r * ldo + h * kLanes, y);
      }
    }
  }
}

// R rows x one panel: rows i0.. of a against the panel starting at column j0.
template <int R, bool kSevenBit>
__attribute__((noinline)) void tile(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0,
                                    int64_t j0) {
  const PackedInt8Weights& w = *p.w;
  const int8_t* panel = w.data.data() + j0 * w.k_padded;
  const uint8_t* a = p.a + i0 * p.lda;
  const int64_t groups = w.k_padded / 4;
  I c[R][2];
  for (auto& row : c) row[0] = row[1] = Isa::zero();
  for (int64_t g = 0; g < groups; ++g) {
    const I b0 = Isa::load(panel + g * 4 * kPanel),
            b1 = Isa::load(panel + g * 4 * kPanel + 4 * kLanes);
    for (int r = 0; r < R; ++r) {
      const I x = Isa::broadcast4(a + r * p.lda + 4 * g);
      if constexpr (kSevenBit) {
        c[r][0] = Isa::dot7(c[r][0], x, b0);
        c[r][1] = Isa::dot7(c[r][1], x, b1);
      } else {
        c[r][0] = Isa::dot8(c[r][0], x, b0);
        c[r][1] = Isa::dot8(c[r][1], x, b1);
      }
    }
  }
  const int64_t cols = std::min<int64_t>(kPanel, w.n - j0);
  if (p.raw) {
    int32_t buf[R][kPanel];
    for (int r = 0; r < R; ++r) {
      Isa::store(buf[r], c[r][0]);
      Isa::store(buf[r] + kLanes, c[r][1]);
      std::memcpy(p.raw + (i0 + r) * p.ldo + j0, buf[r], sizeof(int32_t) * cols);
    }
    return;
  }
  if (p.out_u8) {
    if (cols == kPanel) {
      finish_tile<R, true>(c, p, t, i0, j0, p.out_u8 + i0 * p.ldo + j0, p.ldo);
    } else {
      uint8_t buf[R][kPanel];
      finish_tile<R, true>(c, p, t, i0, j0, buf[0], kPanel);
      for (int r = 0; r < R; ++r) std::memcpy(p.out_u8 + (i0 + r) * p.ldo + j0, buf[r], cols);
    }
  } else if (cols == kPanel) {
    finish_tile<R, false>(c, p, t, i0, j0, p.out + i0 * p.ldo + j0, p.ldo);
  } else {  // the last panel: through a buffer, keeping the columns past n unwritten
    float buf[R][kPanel];
    finish_tile<R, false>(c, p, t, i0, j0, buf[0], kPanel);
    for (int r = 0; r < R; ++r)
      std::memcpy(p.out + (i0 + r) * p.ldo + j0, buf[r], sizeof(float) * cols);
  }
}

// Rows [i0, i1) of one panel, in tiles of Isa::kRows and one tile of the remainder's height.
template <bool kSevenBit, int H = Isa::kRows - 1>
inline void remainder_tile(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i, int64_t left,
                           int64_t j0) {
  if constexpr (H > 0) {
    if (left == H) {
      tile<H, kSevenBit>(p, t, i, j0);
    } else {
      remainder_tile<kSevenBit, H - 1>(p, t, i, left, j0);
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
template <bool kSevenBit>
void row_block(const Int8GemmArgs& p, const ColumnTerms& t, int64_t i0, int64_t i1, int64_t j0,
               const bool* fits = nullptr) {
  constexpr int R = Isa::kRows;
  bool local[kMaxTiles];
  if (!kSevenBit && kCheckTiles && !fits) {
    tiles_fit_7bit(p, i0, i1, local);
    fits = local;
  }
  int64_t i = i0, n_tile = 0;
  for (; i + R <= i1; i += R, ++n_tile) {
    if (!kSevenBit && kCheckTiles && fits[n_tile]) {
      tile<R, true>(p, t, i, j0);
    } else {
      tile<R, kSevenBit>(p, t, i, j0);
    }
  }
  if (!kSevenBit && kCheckTiles && i < i1 && fits[n_tile]) {
    remainder_tile<true>(p, t, i, i1 - i, j0);
  } else {
    remainder_tile<kSevenBit>(p, t, i, i1 - i, j0);
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
  const int64_t unit_cost = std::min(p.m, kRowBlock) * kPanel * w.k_padded;
  parallel_for(0, panels * row_blocks, std::max<int64_t>(1, kGrainSize * 4 / unit_cost),
               [&](int64_t u0, int64_t u1) {
                 for (int64_t u = u0; u < u1; ++u) {
                   const int64_t j0 = (u / row_blocks) * kPanel, rb = u % row_blocks;
                   const int64_t i0 = rb * kRowBlock, i1 = std::min(p.m, i0 + kRowBlock);
                   if (p.a_7bit) {
                     row_block<true>(p, t, i0, i1, j0);
                   } else {
                     row_block<false>(p, t, i0, i1, j0);
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

// NV vectors of channels [c0, c0 + NV * kLanes) of output pixel (n, oh, ow): accumulated in
// registers over the taps, then requantized.
template <int NV>
inline void depthwise_block(const DepthwiseArgs& p, int64_t n, int64_t oh, int64_t ow, int64_t c0,
                            uint8_t* out) {
  const I x_zp = Isa::set1(p.x_zero_point);
  I acc[NV];
  for (auto& a : acc) a = Isa::zero();
  for (int64_t i = 0; i < p.kernel[0]; ++i) {
    const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
    if (ih < 0 || ih >= p.h) continue;  // padding taps: x - x_zp = 0
    const uint8_t* line = p.x + (n * p.h + ih) * p.w * p.c + c0;
    const int32_t* taps = p.taps + i * p.kernel[1] * p.c + c0;
    for (int64_t j = 0; j < p.kernel[1]; ++j) {
      const int64_t iw = ow * p.stride[1] - p.padding[1] + j * p.dilation[1];
      if (iw < 0 || iw >= p.w) continue;
      const uint8_t* x = line + iw * p.c;
      const int32_t* w = taps + j * p.c;
      for (int v = 0; v < NV; ++v) {
        acc[v] = Isa::add(acc[v], Isa::mullo(Isa::sub(Isa::load_u8i(x + v * kLanes), x_zp),
                                             Isa::load(w + v * kLanes)));
      }
    }
  }
  const F zero = Isa::set1f(0.f), inv = Isa::set1f(p.out_inv_scale),
          zp = Isa::set1f(float(p.out_zero_point)), qmax = Isa::set1f(255.f);
  for (int v = 0; v < NV; ++v) {
    const int64_t c = c0 + v * kLanes;
    F y = Isa::addf(Isa::mulf(Isa::to_float(acc[v]), Isa::loadf(p.scales + c)),
                    Isa::loadf(p.bias + c));
    if (p.relu) y = Isa::maxf(y, zero);
    Isa::store_u8(out + c, Isa::mulf(y, inv), zp, qmax);
  }
}

// Channels [c_begin, c) of output pixel (n, oh, ow) one lane at a time: the channels past the
// last whole vector.
void depthwise_scalar_channels(const DepthwiseArgs& p, int64_t n, int64_t oh, int64_t ow,
                               int64_t c_begin, uint8_t* out) {
  for (int64_t c = c_begin; c < p.c; ++c) {
    int32_t acc = 0;
    for (int64_t i = 0; i < p.kernel[0]; ++i) {
      const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
      for (int64_t j = 0; j < p.kernel[1]; ++j) {
        const int64_t iw = ow * p.stride[1] - p.padding[1] + j * p.dilation[1];
        if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
        acc += (int32_t(p.x[((n * p.h + ih) * p.w + iw) * p.c + c]) - p.x_zero_point) *
               p.taps[(i * p.kernel[1] + j) * p.c + c];
      }
    }
    float y = static_cast<float>(acc) * p.scales[c] + p.bias[c];
    if (p.relu) y = std::max(y, 0.f);
    const float q = std::nearbyint(y * p.out_inv_scale) + float(p.out_zero_point);
    out[c] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
  }
}

// Any output pixel, any geometry: every tap checked against the borders.
void depthwise_pixel(const DepthwiseArgs& p, int64_t n, int64_t oh, int64_t ow, uint8_t* out) {
  constexpr int kBlock = 4;  // vectors of channels per register block
  const int64_t vec_end = p.c / kLanes * kLanes;
  int64_t c = 0;
  for (; c + kBlock * kLanes <= vec_end; c += kBlock * kLanes) {
    depthwise_block<kBlock>(p, n, oh, ow, c, out);
  }
  for (; c < vec_end; c += kLanes) depthwise_block<1>(p, n, oh, ow, c, out);
  depthwise_scalar_channels(p, n, oh, ow, c, out);
}

// y = acc * scale + bias (ReLU), requantized, for NV vectors of channels from c0.
template <int NV>
inline void depthwise_store(const DepthwiseArgs& p, const F* acc, int64_t c0, uint8_t* out) {
  const F zero = Isa::set1f(0.f), inv = Isa::set1f(p.out_inv_scale),
          zp = Isa::set1f(float(p.out_zero_point)), qmax = Isa::set1f(255.f);
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t c = c0 + v * kLanes;
    // Not fused, as depthwise_block: border and interior pixels round alike.
    F y = Isa::addf(Isa::mulf(acc[v], Isa::loadf(p.scales + c)), Isa::loadf(p.bias + c));
    if (p.relu) y = Isa::maxf(y, zero);
    Isa::store_u8(out + c, Isa::mulf(y, inv), zp, qmax);
  }
}

// P consecutive interior output pixels (every tap column inside the input) from `ow` of row
// (n, oh), channels [c0, c0 + NV vectors): float FMAs on exact integers. Each input column is
// loaded and widened once and meets every (pixel, tap) that reads it: with stride 1 and three
// taps a column serves three pixels. The accumulators start at -x_zp * (sum of the taps of the
// rows inside the input), so no zero point is subtracted per tap.
template <int KW, int S, int P, int NV>
inline void depthwise_interior(const DepthwiseArgs& p, int64_t n, int64_t oh, int64_t ow,
                               int64_t c0, const float* neg_offset, uint8_t* out) {
  F acc[P][NV];
#pragma GCC unroll 8
  for (int q = 0; q < P; ++q) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[q][v] = Isa::loadf(neg_offset + c0 + v * kLanes);
  }
  const int64_t c_n = p.c;
  for (int64_t i = 0; i < p.kernel[0]; ++i) {
    const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
    if (ih < 0 || ih >= p.h) continue;
    const uint8_t* x = p.x + ((n * p.h + ih) * p.w + ow * S - p.padding[1]) * c_n + c0;
    const float* w = p.taps_f + i * KW * c_n + c0;
#pragma GCC unroll 32
    for (int col = 0; col < (P - 1) * S + KW; ++col) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const F xv = Isa::load_u8f(x + col * c_n + v * kLanes);
#pragma GCC unroll 8
        for (int q = 0; q < P; ++q) {
          const int j = col - q * S;
          if (j >= 0 && j < KW) {
            acc[q][v] = Isa::fmaddf(xv, Isa::loadf(w + j * c_n + v * kLanes), acc[q][v]);
          }
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < P; ++q) depthwise_store<NV>(p, acc[q], c0, out + q * p.ldo);
}

// Accumulators of 4 pixels x NV vectors fit the registers of every level up to NV = 2 (16
// registers); AVX-512's 32 registers take NV = 4.
constexpr int kMaxInteriorVectors = kLanes >= 16 ? 4 : 2;

template <int KW, int S, int NV>
void depthwise_interior_range(const DepthwiseArgs& p, int64_t n, int64_t oh, int64_t ow0,
                              int64_t ow1, int64_t c0, const float* neg_offset, uint8_t* out) {
  constexpr int P = 4;
  int64_t ow = ow0;
  for (; ow + P <= ow1; ow += P) {
    depthwise_interior<KW, S, P, NV>(p, n, oh, ow, c0, neg_offset, out + (ow - ow0) * p.ldo);
  }
  for (; ow < ow1; ++ow) {
    depthwise_interior<KW, S, 1, NV>(p, n, oh, ow, c0, neg_offset, out + (ow - ow0) * p.ldo);
  }
}

// Output pixels [ow0, ow1) of row (n, oh), all interior, `out` at pixel ow0.
template <int KW, int S>
void depthwise_interior_row(const DepthwiseArgs& p, int64_t n, int64_t oh, int64_t ow0, int64_t ow1,
                            const float* neg_offset, uint8_t* out) {
  const int64_t vectors = p.c / kLanes;
  int64_t v = 0;
  for (; v + kMaxInteriorVectors <= vectors; v += kMaxInteriorVectors) {
    depthwise_interior_range<KW, S, kMaxInteriorVectors>(p, n, oh, ow0, ow1, v * kLanes, neg_offset,
                                                         out);
  }
  if (kMaxInteriorVectors > 2 && v + 2 <= vectors) {
    depthwise_interior_range<KW, S, 2>(p, n, oh, ow0, ow1, v * kLanes, neg_offset, out);
    v += 2;
  }
  if (v < vectors) {
    depthwise_interior_range<KW, S, 1>(p, n, oh, ow0, ow1, v * kLanes, neg_offset, out);
  }
  if (vectors * kLanes < p.c) {
    for (int64_t ow = ow0; ow < ow1; ++ow) {
      depthwise_scalar_channels(p, n, oh, ow, vectors * kLanes, out + (ow - ow0) * p.ldo);
    }
  }
}

using InteriorRowFn = void (*)(const DepthwiseArgs&, int64_t, int64_t, int64_t, int64_t,
                               const float*, uint8_t*);

// The interior kernel for this geometry, or null (other widths, strides or a width dilation:
// every pixel then takes depthwise_pixel).
InteriorRowFn interior_row_kernel(const DepthwiseArgs& p) {
  if (!p.float_exact || p.dilation[1] != 1) return nullptr;
  const int64_t kw = p.kernel[1], s = p.stride[1];
  if (kw == 3 && s == 1) return depthwise_interior_row<3, 1>;
  if (kw == 3 && s == 2) return depthwise_interior_row<3, 2>;
  if (kw == 5 && s == 1) return depthwise_interior_row<5, 1>;
  if (kw == 5 && s == 2) return depthwise_interior_row<5, 2>;
  return nullptr;
}

void depthwise(const DepthwiseArgs& p) {
  const InteriorRowFn interior = interior_row_kernel(p);
  // Output columns whose taps all lie inside the input: [ow_lo, ow_hi).
  const int64_t kw = p.kernel[1], s = p.stride[1], pad = p.padding[1];
  const int64_t ow_lo = std::min(p.ow, (pad + s - 1) / s);
  const int64_t ow_hi = p.w - kw + pad >= 0 ? std::min(p.ow, (p.w - kw + pad) / s + 1) : 0;
  std::vector<float> neg_offset(interior ? static_cast<size_t>(p.c) : 0);
  int64_t offset_row = -1;  // the (n * oh + oh) row neg_offset was computed for
  for (int64_t r = p.r0; r < p.r1;) {
    const int64_t n = r / (p.ow * p.oh), oh = (r / p.ow) % p.oh, ow0 = r % p.ow;
    const int64_t ow1 = std::min(p.ow, ow0 + (p.r1 - r));
    uint8_t* out = p.out + r * p.ldo;
    const int64_t lo = std::max(ow0, ow_lo), hi = std::min(ow1, ow_hi);
    if (!interior || lo >= hi) {
      for (int64_t ow = ow0; ow < ow1; ++ow)
        depthwise_pixel(p, n, oh, ow, out + (ow - ow0) * p.ldo);
    } else {
      for (int64_t ow = ow0; ow < lo; ++ow) depthwise_pixel(p, n, oh, ow, out + (ow - ow0) * p.ldo);
      if (offset_row != n * p.oh + oh) {
        offset_row = n * p.oh + oh;
        std::fill(neg_offset.begin(), neg_offset.end(), 0.f);
        const float zp = static_cast<float>(p.x_zero_point);
        for (int64_t i = 0; i < p.kernel[0]; ++i) {
          const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
          if (ih < 0 || ih >= p.h) continue;
          for (int64_t c = 0; c < p.c; ++c) neg_offset[c] -= zp * p.row_sums_f[i * p.c + c];
        }
      }
      interior(p, n, oh, lo, hi, neg_offset.data(), out + (lo - ow0) * p.ldo);
      for (int64_t ow = hi; ow < ow1; ++ow) depthwise_pixel(p, n, oh, ow, out + (ow - ow0) * p.ldo);
    }
    r += ow1 - ow0;
  }
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
EMBER_REGISTER_KERNEL(depthwise_u8_stub, CPU, depthwise);
EMBER_REGISTER_KERNEL(embedding_row_stub, CPU, embedding_row);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
