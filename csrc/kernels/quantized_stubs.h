// Kernel stubs of the int8 GEMM under the quantized linear ops (ops/quantized/*; the kernels are
// kernels/cpu/quantized/int8_gemm_kernels.cpp, compiled once per CPU capability level, and the
// scalar reference twin is ops/quantized/int8_gemm_reference.cpp).
//
//   acc[m][n] = sum_k a[m][k] * w[n][k]          a unsigned 8-bit, w signed 8-bit, acc int32
//
// then, in the same pass over the output (FBGEMM's design: no int32 matrix in memory),
//
//   out[m][n] = act((acc - a_zp colsum_w[n] - w_zp[n] rowsum_a[m] + K a_zp w_zp[n])
//                   * a_scale * w_scale[n] + bias[n])
//
// which is sum_k (a - a_zp)(w - w_zp) scaled: the dequantized product, from row and column
// offsets (docs/design/quantization.md); optionally requantized to uint8 in the same pass.
//
// Activations are 8-bit (0..255) or, when `a_7bit`, 7-bit (0..127, PyTorch's reduce_range). The
// AVX2 and AVX-512BW kernels multiply with vpmaddubsw, which adds pairs of u8 x s8 products into
// a saturating int16: 255 * -128 * 2 does not fit, 127 * -128 * 2 does. With 8-bit activations
// they split each one into a 7-bit high part and its low bit, both exact; with VNNI (vpdpbusd,
// no intermediate saturation) both cases are one instruction. Every level gives the reference's
// int32 sums exactly.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "dispatch/stub.h"

namespace ember {
namespace native {

// s8 weights (n x k) packed for one CPU level's kernel: columns in panels of `panel` (two
// vectors of int32 lanes), each panel k_padded / 4 groups of panel x 4 bytes (four consecutive
// k of one column together, what vpdpbusd / vpmaddubsw multiply), zero beyond n and k.
struct PackedInt8Weights {
  int64_t n = 0, k = 0;
  int64_t n_padded = 0, k_padded = 0;  // multiples of panel and of 4
  int64_t panel = 0;                   // columns per panel, chosen by the packing level
  int level = -1;                      // the CPU capability level that packed it
  std::vector<int8_t> data;            // n_padded * k_padded bytes
  std::vector<int32_t> column_sums;    // sum_k w[n][k], n values
};

// Rounds k up to what the GEMM reads per row of a: rows of a are zero-padded to this.
inline int64_t int8_gemm_padded_k(int64_t k) {
  return (k + 3) / 4 * 4;
}

struct Int8GemmArgs {
  const uint8_t* a = nullptr;  // m rows, `lda` apart (lda >= k_padded), zero beyond k
  int64_t m = 0, lda = 0;
  bool a_7bit = false;  // every a value is <= 127
  float a_scale = 1.f;
  int32_t a_zero_point = 0;
  const int32_t* a_row_sums = nullptr;  // sum_k a[m][k]; needed when w_zero_points is set
  const PackedInt8Weights* w = nullptr;
  const float* w_scales = nullptr;         // n values (a per-tensor scale repeated)
  const int32_t* w_zero_points = nullptr;  // n values, or null when all are 0
  const float* bias = nullptr;             // n values, or null
  bool relu = false;
  float* out = nullptr;  // m x n floats, rows `ldo` apart
  int64_t ldo = 0;
  // Requantized output instead of float (the statically quantized ops): when set, out is not
  // written and each value y above lands here as clamp(nearbyint(y * out_inv_scale) +
  // out_zero_point, 0, 255), what quantize_per_tensor gives for quint8 (NaN -> 0).
  uint8_t* out_u8 = nullptr;
  float out_inv_scale = 1.f;
  int32_t out_zero_point = 0;
  // Activations made on the fly (im2col fused into the GEMM): when set, `a` and `a_row_sums` are
  // ignored and the kernel asks for rows [i0, i1) of a, one block at a time, written `lda`
  // apart (zero-padded to lda) into a buffer of its own, which it then multiplies with every
  // panel while the block is in cache.
  void (*fill_a)(const void* context, int64_t i0, int64_t i1, uint8_t* a, int64_t lda) = nullptr;
  const void* fill_a_context = nullptr;
  // Tests only: when set, out is ignored and the raw sums acc (m x n, rows `ldo` apart) are
  // written here, so every level can be compared exactly with the reference.
  int32_t* raw = nullptr;
};

using Int8PackWeightsFn = void (*)(const int8_t* w, int64_t n, int64_t k, int64_t ldw,
                                   PackedInt8Weights& out);
EMBER_DECLARE_STUB(int8_pack_weights_stub, Int8PackWeightsFn);

using Int8GemmFn = void (*)(const Int8GemmArgs& args);
EMBER_DECLARE_STUB(int8_gemm_stub, Int8GemmFn);

// Dynamic quantization of float activations: x (m x k, rows `ldx` apart) -> a (m rows, `lda`
// apart, zero-padded to lda), q = clamp(nearbyint(x * inv_scale) + zero_point, 0, qmax).
struct QuantizeRowsArgs {
  const float* x = nullptr;
  int64_t m = 0, k = 0, ldx = 0;
  float inv_scale = 1.f;
  int32_t zero_point = 0, qmax = 255;
  uint8_t* a = nullptr;
  int64_t lda = 0;
};
using QuantizeRowsFn = void (*)(const QuantizeRowsArgs& args);
EMBER_DECLARE_STUB(quantize_rows_u8_stub, QuantizeRowsFn);

// min and max of x (m x k, rows `ldx` apart; m * k > 0). NaN propagates into both.
using MinMaxRowsFn = void (*)(const float* x, int64_t m, int64_t k, int64_t ldx, float* min_out,
                              float* max_out);
EMBER_DECLARE_STUB(min_max_rows_stub, MinMaxRowsFn);

// Elementwise add or mul of two uint8 quantized operands requantized to uint8 (quantized::add,
// add_relu, mul): y = op((a - a_zp) a_scale, (b - b_zp) b_scale), ReLU when `relu`, then
// clamp(nearbyint(y * out_inv_scale) + out_zero_point, 0, 255), all in float.
enum class QuantizedBinaryOp { kAdd, kMul };
struct QuantizedBinaryArgs {
  const uint8_t* a = nullptr;
  const uint8_t* b = nullptr;
  uint8_t* out = nullptr;
  int64_t n = 0;
  QuantizedBinaryOp op = QuantizedBinaryOp::kAdd;
  float a_scale = 1.f, b_scale = 1.f, out_inv_scale = 1.f;
  int32_t a_zero_point = 0, b_zero_point = 0, out_zero_point = 0;
  bool relu = false;
};
using QuantizedBinaryFn = void (*)(const QuantizedBinaryArgs& args);
EMBER_DECLARE_STUB(quantized_binary_u8_stub, QuantizedBinaryFn);

// Depthwise convolution (one input channel a group, channel multiplier 1) on a channels-last
// uint8 input, output rows [r0, r1) of (n, oh, ow): out[c] = requant(sum over in-range taps of
// (x[c] - x_zp) * w[tap][c] * scale[c] + bias[c]), ReLU first when `relu`. The sums are exact
// int32; the epilogue is quantize_per_tensor's.
struct DepthwiseArgs {
  const uint8_t* x = nullptr;  // (n, h, w, c)
  int64_t h = 0, w = 0, c = 0, oh = 0, ow = 0;
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int32_t x_zero_point = 0;
  const int32_t* taps = nullptr;  // (kh * kw, c): w - w_zp
  // The same taps as floats, and their sums over each kernel row (kh, c). When `float_exact`
  // (every partial sum stays below 2^24, so float arithmetic on them is exact), interior pixels
  // are accumulated with float FMAs: twice the int32 multiply's throughput, the same result.
  const float* taps_f = nullptr;
  const float* row_sums_f = nullptr;
  bool float_exact = false;
  const float* scales = nullptr;  // c: x_scale * w_scale[c]
  const float* bias = nullptr;    // c (zeros when the module has none)
  bool relu = false;
  float out_inv_scale = 1.f;
  int32_t out_zero_point = 0;
  uint8_t* out = nullptr;  // rows `ldo` apart
  int64_t ldo = 0;
  int64_t r0 = 0, r1 = 0;
};
using DepthwiseFn = void (*)(const DepthwiseArgs& args);
EMBER_DECLARE_STUB(depthwise_u8_stub, DepthwiseFn);

// A grouped convolution with `in_group` (at most 16) input and `out_group` output channels a
// group, on a channels-last quint8 input, requantized like DepthwiseArgs: the narrow groups of
// ResNeXt-style blocks (in_group == out_group) and, with one group, the stems of image models
// (3 input channels). Each output lane takes four input bytes of its group at a time (u8 x s8
// dot products into int32, as the int8 GEMM), so no unfolded copy of the input is made.
struct GroupedConvArgs {
  const uint8_t* x = nullptr;  // (n, h, w, c_in)
  int64_t n = 0, h = 0, w = 0, c_in = 0, c_out = 0, oh = 0, ow = 0;
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t in_group = 4, out_group = 4;
  int32_t x_zero_point = 0;
  const int8_t* weights = nullptr;  // (c_out, in_group, kh * kw): w - w_zp, the reference's
  // (kh * kw, parts, c_out) dwords, parts = ceil(in_group / 4): byte s of dword (t, part, oc)
  // is the weight of input channel ws + 4 * part + s for tap t (0 outside oc's group), where ws
  // is oc's first input channel, rounded down to a multiple of 4 when in_group == out_group.
  const int32_t* packed = nullptr;
  const int32_t* weight_sums = nullptr;  // c_out: the sum of (w - w_zp) over taps and inputs
  const float* scales = nullptr;         // c_out: x_scale * w_scale[c]
  const float* bias = nullptr;           // c_out (zeros when the module has none)
  bool relu = false;
  float out_inv_scale = 1.f;
  int32_t out_zero_point = 0;
  uint8_t* out = nullptr;  // rows `ldo` apart
  int64_t ldo = 0;
  int64_t r0 = 0, r1 = 0;
};
using GroupedConvFn = void (*)(const GroupedConvArgs& args);
EMBER_DECLARE_STUB(grouped_conv_u8_stub, GroupedConvFn);

// A row of a quantized transposed convolution's output, one group's channels, from the GEMM
// contributions that reach each pixel (ops/quantized/conv_transpose.cpp): for pixel x,
// out[x * ldo + k] = requantize(scale * sum of taps[e][offset + k] over e in [tap_begin[x],
// tap_begin[x + 1]) + bias[k]) for k < channels, as quantize_rows_u8 requantizes.
struct TapSumsArgs {
  const float* const* taps = nullptr;
  const int64_t* tap_begin = nullptr;  // pixels + 1 entries
  int64_t pixels = 0, channels = 0, offset = 0;
  float scale = 1.f;
  const float* bias = nullptr;  // channels, or null
  float inv_scale = 1.f;
  int32_t zero_point = 0;
  uint8_t* out = nullptr;
  int64_t ldo = 0;
};
using TapSumsFn = void (*)(const TapSumsArgs& args);
EMBER_DECLARE_STUB(tap_sums_u8_stub, TapSumsFn);

// One row of a per-row quantized embedding table into an accumulator: acc[d] += q[d] * scale +
// bias (or acc[d] = max(acc[d], that) when `max`), q 8-bit values or 4-bit ones packed two a
// byte (the even element low). The scale and bias already carry any per-sample weight.
using EmbeddingRowFn = void (*)(const uint8_t* q, int bits, int64_t dim, float scale, float bias,
                                float* acc, bool max);
EMBER_DECLARE_STUB(embedding_row_stub, EmbeddingRowFn);

// One bag of lookups [begin, end) into a per-row quantized table whose rows are `row_stride`
// bytes apart, each a float scale and a float bias (`header` bytes) then its values (8-bit, or
// 4-bit two a byte): out[d] = the sum over the bag of (q[d] * scale + bias) * weight (the
// per-sample weight, or 1), or with `max` their maximum. Rows equal to padding_idx are skipped;
// returns how many rows were taken (the caller makes an empty bag zeros and a mean of the sum).
// Rows of lookups up to prefetch_end (later bags') are fetched ahead: the table is usually far
// larger than the caches.
struct EmbeddingBagArgs {
  const uint8_t* table = nullptr;
  int64_t row_stride = 0, header = 0, dim = 0;
  int bits = 8;
  const int64_t* idx = nullptr;
  int64_t begin = 0, end = 0, prefetch_end = 0;
  const float* per_sample_weights = nullptr;  // indexed like idx, or null
  bool max = false;
  std::optional<int64_t> padding_idx;
  float* out = nullptr;  // dim floats
};
using EmbeddingBagRowsFn = int64_t (*)(const EmbeddingBagArgs& args);
EMBER_DECLARE_STUB(embedding_bag_rows_stub, EmbeddingBagRowsFn);

// The scalar reference twins: plain loops, the tests' oracle for every level's kernel.
void int8_pack_weights_reference(const int8_t* w, int64_t n, int64_t k, int64_t ldw, int64_t panel,
                                 PackedInt8Weights& out);
void int8_gemm_reference(const Int8GemmArgs& args, const int8_t* w, int64_t ldw);
void quantize_rows_u8_reference(const QuantizeRowsArgs& args);
void quantized_binary_u8_reference(const QuantizedBinaryArgs& args);
void depthwise_u8_reference(const DepthwiseArgs& args);
void grouped_conv_u8_reference(const GroupedConvArgs& args);
int64_t embedding_bag_rows_reference(const EmbeddingBagArgs& args);
void tap_sums_u8_reference(const TapSumsArgs& args);
// GroupedConvArgs' packed dwords and weight sums from w - w_zp as (c_out, in_group, taps) int8.
void grouped_conv_pack(const int8_t* w, int64_t c_out, int64_t in_group, int64_t out_group,
                       int64_t taps, int32_t* packed, int32_t* sums);

}  // namespace native
}  // namespace ember
