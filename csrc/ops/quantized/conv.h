// Statically quantized convolution (PyTorch's quantized::conv2d / conv1d and their prepack): a
// quint8 input, qint8 weights packed once per module, a quint8 output requantized in the int8
// GEMM's epilogue. The input's integers are unfolded (im2col) in channels-last order, padding
// taps holding the input's zero point (the quantized zero), and each group is one int8 GEMM.
// The output comes back channels-last in memory with the (N, C, H, W) shape, as PyTorch's.
// See docs/design/quantization.md.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/quantized/linear_dynamic.h"

namespace ember {
namespace native {

struct PackedConvWeight {
  Tensor weight;  // qint8 (C_out, C_in / groups, *kernel): what unpack() returns
  Tensor bias;    // float32 (C_out,) or undefined
  int64_t spatial_dims = 2;
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  // How this geometry is computed, chosen once at packing from thresholds measured on the
  // int8 kernels against float (docs/design/quantization.md, "Never slower than float").
  enum class Kernel { kGemm, kDepthwise, kGrouped, kFloat };
  Kernel kernel_kind = Kernel::kGemm;
  std::string reason;  // why, for ember.ao.quantization.int8_report
  // kGemm: one GEMM weight per group: (C_out / groups, kh * kw * C_in / groups), columns in
  // (kh, kw, c) order, the order of the channels-last unfolded input.
  std::vector<std::shared_ptr<PackedLinearWeight>> group_weights;
  // kDepthwise (one input channel a group): (w - w_zp) tap-major (taps x C_out), and the
  // per-output-channel scales.
  std::vector<int32_t> depthwise_taps;
  // The taps as floats, their sums over each kernel row (kh x C_out), and whether float sums of
  // tap products stay exact (below 2^24) for every channel.
  std::vector<float> depthwise_taps_f, depthwise_row_sums_f;
  bool depthwise_float_exact = false;
  std::vector<float> channel_scales;
  // kGrouped (C_in / groups == C_out / groups in 2, 4, 8, 16): w - w_zp as (C_out, group,
  // taps), packed four input channels a dword (GroupedConvArgs), and each channel's sum.
  std::vector<int8_t> grouped_weights;
  std::vector<int32_t> grouped_packed, grouped_sums;
  // kFloat: the dequantized weight, for the float convolution.
  Tensor float_weight;
};

// A per-spatial-dim argument (1 value, or one per dim) as two entries: a 1-D convolution is a
// 2-D one of height 1, whose first entry is `fill`. ValueError naming `op` otherwise.
std::array<int64_t, 2> spatial_pair(IntArrayRef v, int64_t dims, int64_t fill, const char* op,
                                    const char* name);

// The integers of a per-tensor quantized (N, C, H, W) input as (N, H, W, C) contiguous uint8:
// no copy when it is channels-last already, else one transpose (the generic strided copy is
// several times slower on bytes).
Tensor channels_last_ints(const Tensor& x4);

// Packs a qint8 weight (per tensor, or per channel along axis 0) with its bias and geometry;
// stride, padding and dilation hold one value per spatial dim (1 or 2 of them). `kernel`:
// "auto" (the measured choice), or "int8" / "float" to force one (benchmarks, experiments).
std::shared_ptr<PackedConvWeight> pack_conv_weight(const Tensor& qweight, const Tensor& bias,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, int64_t groups,
                                                   const std::string& kernel = "auto");

// quint8 (N, C_out, *out) = requant(conv(dequant(x), dequant(w)) + bias), ReLU first when
// `relu`; x quint8 per tensor (N, C_in, *in) or unbatched (C_in, *in).
Tensor conv_quantized(const Tensor& q_input, const PackedConvWeight& w, double out_scale,
                      int64_t out_zero_point, bool relu);

}  // namespace native
}  // namespace ember
