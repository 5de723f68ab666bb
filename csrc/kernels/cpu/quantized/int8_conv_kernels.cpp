// The direct int8 convolutions (kernels/quantized_stubs.h): depthwise, and grouped with small
// groups, on channels-last quint8 inputs with the requantization fused. Compiled once per CPU
// capability level; the vector operations of each level are kernels/cpu/quantized/int8_isa.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/error.h"
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

// ---- Depthwise ------------------------------------------------------------------------------

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

// ---- Grouped convolutions with small groups, and stems -------------------------------------

constexpr int kGroupedPixels = 4;  // output pixels sharing each weight load
constexpr int kMaxGroupedTaps = 64;

// The input's last pixels, copied with room after them: a four-byte load of a pixel with fewer
// channels than it reads (a stem's 3) reaches into the next pixels, and past the input's end
// for the last few.
struct InputTail {
  const uint8_t* start = nullptr;  // the first input pixel read through the copy
  std::vector<uint8_t> copy;

  explicit InputTail(const GroupedConvArgs& p) {
    const int64_t pixels = p.n * p.h * p.w;
    const int64_t tail_pixels = std::min<int64_t>(pixels, 16 / p.c_in + 1);  // 16: 4 dwords
    start = p.x + (pixels - tail_pixels) * p.c_in;
    copy.assign(static_cast<size_t>(tail_pixels * p.c_in + 64), 0);
    std::copy(start, start + tail_pixels * p.c_in, copy.begin());
  }
  const uint8_t* map(const uint8_t* pixel) const {
    return pixel >= start ? copy.data() + (pixel - start) : pixel;
  }
};

// The input pixel each tap of output pixel (n, oh, ow) reads (channels-last), through the tail
// copy for the last ones, or `zp_row` (x_zero_point bytes: (x - x_zp) * w = 0) for a tap in
// the padding.
inline void grouped_tap_rows(const GroupedConvArgs& p, int64_t n, int64_t oh, int64_t ow,
                             const uint8_t* zp_row, const InputTail* tail, const uint8_t** rows) {
  for (int64_t i = 0, t = 0; i < p.kernel[0]; ++i) {
    const int64_t ih = oh * p.stride[0] - p.padding[0] + i * p.dilation[0];
    for (int64_t j = 0; j < p.kernel[1]; ++j, ++t) {
      const int64_t iw = ow * p.stride[1] - p.padding[1] + j * p.dilation[1];
      if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) {
        rows[t] = zp_row;
      } else {
        const uint8_t* pixel = p.x + ((n * p.h + ih) * p.w + iw) * p.c_in;
        rows[t] = tail ? tail->map(pixel) : pixel;
      }
    }
  }
}

// Output channels [c0, c0 + C kLanes) of P output pixels whose tap rows are `rows[q]`. Each dot
// product takes four input bytes per lane. kSpread (groups of equal inputs and outputs, at most
// kLanes; C == 1): the bytes come from the kLanes input channels at c0, spread to their groups'
// lanes. Otherwise the C vectors lie inside one group and every lane takes the same four bytes,
// loaded once for the C vectors (stems: without VNNI the product is the bottleneck, and the
// repeated loads and broadcasts were a third of it).
// Where tap t of pixel q reads: its own list of tap rows (pixels near the border, whose padding
// taps read a zero-point row), or for interior pixels their first input byte plus the tap's
// fixed offset (one offset load per tap for all the pixels, instead of a pointer per pixel).
struct TapRows {
  const uint8_t* const* const* rows;
  const uint8_t* at(int q, int64_t t) const { return rows[q][t]; }
};
struct InteriorRows {
  const uint8_t* const* bases;
  const int64_t* offsets;
  const uint8_t* at(int q, int64_t t) const { return bases[q] + offsets[t]; }
};

template <int P, int C, int H, bool kSevenBit, bool kSpread, typename Rows>
inline void grouped_vector(const GroupedConvArgs& p, const Rows& rows, const I* spread_index,
                           int64_t c0, uint8_t* const* out) {
  static_assert(!kSpread || C == 1, "spread vectors take their own input channels");
  const int64_t taps = p.kernel[0] * p.kernel[1];
  const int64_t in_start = c0 / p.out_group * p.in_group;
  const I neg_zp = Isa::set1(-p.x_zero_point);
  I acc[P][C];
#pragma GCC unroll 2
  for (int c = 0; c < C; ++c) {
    const I offset = Isa::mullo(Isa::load(p.weight_sums + c0 + c * kLanes), neg_zp);
    for (int q = 0; q < P; ++q) acc[q][c] = offset;
  }
  for (int64_t t = 0; t < taps; ++t) {
    I w[H][C];
#pragma GCC unroll 4
    for (int h = 0; h < H; ++h) {
#pragma GCC unroll 2
      for (int c = 0; c < C; ++c) {
        w[h][c] = Isa::load(p.packed + (t * H + h) * p.c_out + c0 + c * kLanes);
      }
    }
#pragma GCC unroll 4
    for (int q = 0; q < P; ++q) {
      const uint8_t* row = rows.at(q, t);
      const I window = kSpread ? Isa::window(row + c0) : Isa::zero();
#pragma GCC unroll 4
      for (int h = 0; h < H; ++h) {
        const I x = kSpread ? Isa::spread(window, spread_index[h])
                            : Isa::broadcast4(row + in_start + 4 * h);
#pragma GCC unroll 2
        for (int c = 0; c < C; ++c) {
          acc[q][c] =
              kSevenBit ? Isa::dot7(acc[q][c], x, w[h][c]) : Isa::dot8(acc[q][c], x, w[h][c]);
        }
      }
    }
  }
  const F inv = Isa::set1f(p.out_inv_scale);
  F x[P][C];  // y / out_scale, y = sum * scale + bias
#pragma GCC unroll 2
  for (int c = 0; c < C; ++c) {
    const F scale = Isa::loadf(p.scales + c0 + c * kLanes),
            bias = Isa::loadf(p.bias + c0 + c * kLanes);
#pragma GCC unroll 4
    for (int q = 0; q < P; ++q) {
      x[q][c] = Isa::mulf(Isa::addf(Isa::mulf(Isa::to_float(acc[q][c]), scale), bias), inv);
    }
  }
  // Requantized two vectors at a time: a pixel's two, or two pixels' one.
  if constexpr (C == 2) {
#pragma GCC unroll 4
    for (int q = 0; q < P; ++q) {
      Isa::store_u8_pair(out[q] + c0, out[q] + c0 + kLanes, x[q][0], x[q][1], p.out_zero_point,
                         p.relu);
    }
  } else if constexpr (P % 2 == 0) {
#pragma GCC unroll 4
    for (int q = 0; q < P; q += 2) {
      Isa::store_u8_pair(out[q] + c0, out[q + 1] + c0, x[q][0], x[q + 1][0], p.out_zero_point,
                         p.relu);
    }
  } else {
    const F zp = Isa::set1f(float(p.out_zero_point)), qmax = Isa::set1f(255.f),
            zero = Isa::set1f(0.f);
    for (int q = 0; q < P; ++q) {
      for (int c = 0; c < C; ++c) {
        Isa::store_u8(out[q] + c0 + c * kLanes, p.relu ? Isa::maxf(x[q][c], zero) : x[q][c], zp,
                      qmax);
      }
    }
  }
}

// Output channels [c_begin, c_end) of one output pixel one lane at a time: the same integer sums.
void grouped_scalar_channels(const GroupedConvArgs& p, const uint8_t* const* rows, int64_t c_begin,
                             int64_t c_end, uint8_t* out) {
  const int64_t taps = p.kernel[0] * p.kernel[1];
  for (int64_t oc = c_begin; oc < c_end; ++oc) {
    const int64_t in_start = oc / p.out_group * p.in_group;
    int32_t acc = -p.x_zero_point * p.weight_sums[oc];
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t ci = 0; ci < p.in_group; ++ci) {
        acc += int32_t(rows[t][in_start + ci]) * p.weights[(oc * p.in_group + ci) * taps + t];
      }
    }
    float y = static_cast<float>(acc) * p.scales[oc] + p.bias[oc];
    if (p.relu) y = std::max(y, 0.f);
    const float q = std::nearbyint(y * p.out_inv_scale) + float(p.out_zero_point);
    out[oc] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
  }
}

template <int H, bool kSevenBit, bool kSpread>
void grouped_conv_parts(const GroupedConvArgs& p) {
  const std::vector<uint8_t> zp_row(static_cast<size_t>(p.c_in + 64),
                                    static_cast<uint8_t>(p.x_zero_point));
  const InputTail tail(p);
  // kSpread: lane l of part h takes dword (l / group * group) / 4 + h of the kLanes input bytes.
  I spread_index[H];
  for (int h = 0; h < H; ++h) {
    int32_t index[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      index[l] = kSpread ? static_cast<int32_t>(l / p.in_group * p.in_group / 4 + h) : 0;
    }
    spread_index[h] = Isa::load(index);
  }
  // Each tap's offset from the input pixel under tap (0, 0), and whether an output pixel's taps
  // all lie inside the input (then its tap rows are those offsets, no checks).
  const int64_t taps = p.kernel[0] * p.kernel[1];
  int64_t tap_offset[kMaxGroupedTaps];
  for (int64_t i = 0, t = 0; i < p.kernel[0]; ++i) {
    for (int64_t j = 0; j < p.kernel[1]; ++j, ++t) {
      tap_offset[t] = (i * p.dilation[0] * p.w + j * p.dilation[1]) * p.c_in;
    }
  }
  const auto inside = [&](int64_t o, int d, int64_t size) {
    const int64_t first = o * p.stride[d] - p.padding[d];
    return first >= 0 && first + (p.kernel[d] - 1) * p.dilation[d] < size;
  };
  const uint8_t* rows[kGroupedPixels][kMaxGroupedTaps];
  const uint8_t* const* row_sets[kGroupedPixels];
  uint8_t* out[kGroupedPixels];
  const int64_t vec_end = p.c_out / kLanes * kLanes;
  // Pairs of vectors need both inside one group: groups of whole pairs.
  const bool paired = !kSpread && H == 1 && p.out_group % (2 * kLanes) == 0;
  int64_t ow = p.r0 % p.ow - 1, oh = (p.r0 / p.ow) % p.oh, n = p.r0 / (p.ow * p.oh);
  const uint8_t* bases[kGroupedPixels];
  bool has_rows[kGroupedPixels];
  // The vector channels of a batch of pixels, P at a time, with either tap source.
  const auto run = [&](const auto& source, uint8_t* const* outs, auto pixel_count) {
    constexpr int P = decltype(pixel_count)::value;
    int64_t c0 = 0;
    if (paired) {  // two vectors of one group at a time
      for (; c0 + 2 * kLanes <= vec_end; c0 += 2 * kLanes) {
        grouped_vector<P, 2, H, kSevenBit, false>(p, source, spread_index, c0, outs);
      }
    }
    for (; c0 < vec_end; c0 += kLanes) {
      grouped_vector<P, 1, H, kSevenBit, kSpread>(p, source, spread_index, c0, outs);
    }
  };
  for (int64_t r = p.r0; r < p.r1; r += kGroupedPixels) {
    const int64_t pixels = std::min<int64_t>(kGroupedPixels, p.r1 - r);
    bool interior = pixels == kGroupedPixels;
    for (int64_t q = 0; q < pixels; ++q) {
      if (++ow == p.ow) {  // (n, oh, ow) stepped along, no division
        ow = 0;
        if (++oh == p.oh) {
          oh = 0;
          ++n;
        }
      }
      const uint8_t* base = p.x + ((n * p.h + oh * p.stride[0] - p.padding[0]) * p.w +
                                   ow * p.stride[1] - p.padding[1]) *
                                      p.c_in;
      // The last tap has the largest offset: if it is before the tail, so are the others.
      bases[q] = base;
      has_rows[q] = false;
      if (!(inside(oh, 0, p.h) && inside(ow, 1, p.w) && base + tap_offset[taps - 1] < tail.start)) {
        grouped_tap_rows(p, n, oh, ow, zp_row.data(), &tail, rows[q]);
        has_rows[q] = true;
        interior = false;
      }
      out[q] = p.out + (r + q) * p.ldo;
    }
    if (!interior || vec_end < p.c_out) {  // tap rows wanted: fill the interior pixels' too
      for (int64_t q = 0; q < pixels; ++q) {
        if (!has_rows[q]) {
          for (int64_t t = 0; t < taps; ++t) rows[q][t] = bases[q] + tap_offset[t];
        }
        row_sets[q] = rows[q];
      }
    }
    if (interior) {
      run(InteriorRows{bases, tap_offset}, out, std::integral_constant<int, kGroupedPixels>());
    } else if (pixels == kGroupedPixels) {
      run(TapRows{row_sets}, out, std::integral_constant<int, kGroupedPixels>());
    } else {
      for (int64_t q = 0; q < pixels; ++q) {
        run(TapRows{row_sets + q}, out + q, std::integral_constant<int, 1>());
      }
    }
    if (vec_end < p.c_out) {
      for (int64_t q = 0; q < pixels; ++q) {
        grouped_scalar_channels(p, rows[q], vec_end, p.c_out, out[q]);
      }
    }
  }
}

// Every output pixel one lane at a time: geometries no vector form covers at this level.
void grouped_conv_scalar(const GroupedConvArgs& p) {
  const std::vector<uint8_t> zp_row(static_cast<size_t>(p.c_in + 64),
                                    static_cast<uint8_t>(p.x_zero_point));
  const uint8_t* rows[kMaxGroupedTaps];
  for (int64_t r = p.r0; r < p.r1; ++r) {
    grouped_tap_rows(p, r / (p.ow * p.oh), (r / p.ow) % p.oh, r % p.ow, zp_row.data(), nullptr,
                     rows);
    grouped_scalar_channels(p, rows, 0, p.c_out, p.out + r * p.ldo);
  }
}

// Whether every input byte the output rows [r0, r1) read, and the zero point, are <= 127.
bool grouped_input_is_7bit(const GroupedConvArgs& p) {
  if (p.x_zero_point > 127) return false;
  const int64_t first = p.r0 / p.ow, last = (p.r1 - 1) / p.ow;  // output rows n * oh + oh
  const int64_t extent = (p.kernel[0] - 1) * p.dilation[0] + 1;
  for (int64_t n = first / p.oh; n <= last / p.oh; ++n) {  // each image's input rows once
    const int64_t oh0 = n == first / p.oh ? first % p.oh : 0;
    const int64_t oh1 = n == last / p.oh ? last % p.oh : p.oh - 1;
    const int64_t ih0 = std::max<int64_t>(0, oh0 * p.stride[0] - p.padding[0]);
    const int64_t ih1 = std::min(p.h, oh1 * p.stride[0] - p.padding[0] + extent);
    if (ih0 >= ih1) continue;
    const uint8_t* x = p.x + (n * p.h + ih0) * p.w * p.c_in;
    const int64_t bytes = (ih1 - ih0) * p.w * p.c_in;
    __m128i largest = _mm_setzero_si128();
    int64_t e = 0;
    for (; e + 16 <= bytes; e += 16) {
      largest = _mm_max_epu8(largest, _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + e)));
    }
    if (_mm_movemask_epi8(largest) != 0) return false;  // a byte > 127 has its top bit set
    for (; e < bytes; ++e) {
      if (x[e] > 127) return false;
    }
  }
  return true;
}

template <int H>
void grouped_conv_dispatch(const GroupedConvArgs& p, bool seven_bit, bool spread) {
  if (spread) {
    return seven_bit ? grouped_conv_parts<H, true, true>(p) : grouped_conv_parts<H, false, true>(p);
  }
  return seven_bit ? grouped_conv_parts<H, true, false>(p) : grouped_conv_parts<H, false, false>(p);
}

void grouped_conv(const GroupedConvArgs& p) {
  EMBER_CHECK(p.kernel[0] * p.kernel[1] <= kMaxGroupedTaps && p.in_group >= 1 && p.in_group <= 16 &&
                  p.out_group >= 1,
              "[grouped_conv] unsupported geometry: ", p.kernel[0], "x", p.kernel[1],
              " kernel, groups of ", p.in_group, " inputs");
  if (p.r0 >= p.r1) return;
  const bool spread = p.in_group == p.out_group && p.in_group <= kLanes &&
                      kLanes % p.in_group == 0 && p.c_out == p.c_in;
  if (!spread && p.out_group % kLanes != 0) return grouped_conv_scalar(p);
  // Without VNNI, the 7-bit product is one multiply-add pair instead of two (PyTorch's x86
  // qconfig keeps activations within 7 bits: reduce_range).
  const bool seven_bit = EMBER_CPU_LEVEL < 3 && grouped_input_is_7bit(p);
  switch ((p.in_group + 3) / 4) {
    case 1:
      return grouped_conv_dispatch<1>(p, seven_bit, spread);
    case 2:
      return grouped_conv_dispatch<2>(p, seven_bit, spread);
    case 3:
      return grouped_conv_dispatch<3>(p, seven_bit, spread);
    default:
      return grouped_conv_dispatch<4>(p, seven_bit, spread);
  }
}

// ---- Transposed convolution: the gathered contributions of one output row ------------------

void tap_sums(const TapSumsArgs& p) {
  const F inv = Isa::set1f(p.inv_scale), zp = Isa::set1f(float(p.zero_point)),
          qmax = Isa::set1f(255.f), scale = Isa::set1f(p.scale);
  for (int64_t x = 0; x < p.pixels; ++x) {
    const float* const* taps = p.taps + p.tap_begin[x];
    const int64_t count = p.tap_begin[x + 1] - p.tap_begin[x];
    uint8_t* out = p.out + x * p.ldo;
    int64_t k = 0;
    for (; k + 2 * kLanes <= p.channels; k += 2 * kLanes) {  // two vectors: two add chains
      F s0 = Isa::set1f(0.f), s1 = Isa::set1f(0.f);
      for (int64_t e = 0; e < count; ++e) {
        s0 = Isa::addf(s0, Isa::loadf(taps[e] + p.offset + k));
        s1 = Isa::addf(s1, Isa::loadf(taps[e] + p.offset + k + kLanes));
      }
      const F b0 = p.bias ? Isa::loadf(p.bias + k) : Isa::set1f(0.f);
      const F b1 = p.bias ? Isa::loadf(p.bias + k + kLanes) : Isa::set1f(0.f);
      Isa::store_u8(out + k, Isa::mulf(Isa::addf(Isa::mulf(s0, scale), b0), inv), zp, qmax);
      Isa::store_u8(out + k + kLanes, Isa::mulf(Isa::addf(Isa::mulf(s1, scale), b1), inv), zp,
                    qmax);
    }
    for (; k + kLanes <= p.channels; k += kLanes) {
      F s0 = Isa::set1f(0.f);
      for (int64_t e = 0; e < count; ++e) s0 = Isa::addf(s0, Isa::loadf(taps[e] + p.offset + k));
      const F b0 = p.bias ? Isa::loadf(p.bias + k) : Isa::set1f(0.f);
      Isa::store_u8(out + k, Isa::mulf(Isa::addf(Isa::mulf(s0, scale), b0), inv), zp, qmax);
    }
    for (; k < p.channels; ++k) {  // the channels past the last whole vector
      float sum = 0.f;
      for (int64_t e = 0; e < count; ++e) sum += taps[e][p.offset + k];
      const float y = sum * p.scale + (p.bias ? p.bias[k] : 0.f);
      const float q = std::nearbyint(y * p.inv_scale) + float(p.zero_point);
      out[k] = static_cast<uint8_t>(q > 0.f ? std::min(q, 255.f) : 0.f);
    }
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(depthwise_u8_stub, CPU, depthwise);
EMBER_REGISTER_KERNEL(tap_sums_u8_stub, CPU, tap_sums);
EMBER_REGISTER_KERNEL(grouped_conv_u8_stub, CPU, grouped_conv);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
