// Statically quantized transposed convolution (PyTorch's quantized::conv_transpose1d / 2d and
// their prepack): a quint8 input, a qint8 weight (C_in, C_out / groups, *kernel) quantized per
// tensor, a quint8 output, channels-last in memory with the (N, C, H, W) shape.
//
// Computed as the int8 GEMM of the channels-last input rows (C_in / groups wide) with the weight
// viewed as (C_in / groups) x (kh * kw * C_out / groups), giving each input pixel's exact
// contributions to kh * kw output pixels, then scattered into int-exact sums (col2im) and
// requantized once. See docs/design/quantization.md.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "ops/quantized/linear_dynamic.h"

namespace ember {
namespace native {

struct PackedConvTransposeWeight {
  Tensor weight;  // qint8 (C_in, C_out / groups, *kernel): what unpack() returns
  Tensor bias;    // float32 (C_out,) or undefined
  int64_t spatial_dims = 2;
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0}, output_padding{0, 0},
      dilation{1, 1};
  int64_t groups = 1;
  int64_t out_channels = 0;
  double weight_scale = 1.0;
  // One GEMM weight per group: rows (kh, kw, C_out / groups) in that order, C_in / groups
  // columns, packed with scale 1 so the GEMM returns the exact integer sums.
  std::vector<std::shared_ptr<PackedLinearWeight>> group_weights;
};

// stride, padding, output_padding and dilation hold one value per spatial dim (1 or 2).
std::shared_ptr<PackedConvTransposeWeight> pack_conv_transpose_weight(
    const Tensor& qweight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
    IntArrayRef output_padding, IntArrayRef dilation, int64_t groups);

// quint8 y = requant(conv_transpose(dequant(x), dequant(w)) + bias, out_scale, out_zero_point).
Tensor conv_transpose_quantized(const Tensor& q_input, const PackedConvTransposeWeight& w,
                                double out_scale, int64_t out_zero_point);

}  // namespace native
}  // namespace ember
