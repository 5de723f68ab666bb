// Public linear / convolution ops: the recording of convolution, linear, im2col and col2im, and
// the composites over them (conv1d/2d and conv_transpose1d/2d: unbatched inputs and the 'same' /
// 'valid' paddings around aten::convolution; F.linear's uncommon forms; F.bilinear).
#include "api/nn/conv.h"

#include "api/autocast.h"
#include "api/elementwise.h"
#include "api/matmul.h"
#include "api/nn/conv_util.h"
#include "api/nn/sampling.h"
#include "api/views.h"
#include "autograd/derivatives/nn/conv.h"
#include "autograd/variable.h"

namespace ember {

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  if (autograd::should_record(input, weight, bias)) {
    return derivatives::convolution(input, weight, bias, stride, padding, dilation, transposed,
                                    output_padding, groups);
  }
  return native::convolution(input, weight, bias, stride, padding, dilation, transposed,
                             output_padding, groups);
}

// ---- conv1d / conv2d / conv_transpose1d / conv_transpose2d ----------------------------------

namespace {

// The batched input, or the unbatched one with a batch dim of 1 (then squeezed again).
Tensor batched_input(const Tensor& input, int64_t nd, const char* op, bool* batched) {
  const int64_t dim = input.dim();
  EMBER_CHECK(dim == nd + 1 || dim == nd + 2, "[", op, "] Expected ", nd + 1, "D (unbatched) or ",
              nd + 2, "D (batched) input to ", op,
              ", but got input of size: ", sizes_list(input.sizes()));
  *batched = dim == nd + 2;
  return *batched ? input : ember::unsqueeze(input, 0);
}

Tensor unbatch(const Tensor& out, bool batched) {
  return batched ? out : ember::squeeze(out, {0});
}

Tensor conv_nd(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
               const ConvPadding& padding, IntArrayRef dilation, int64_t groups, int64_t nd,
               const char* op) {
  bool batched = true;
  Tensor x = batched_input(input, nd, op, &batched);
  const DimVector zeros_nd(static_cast<size_t>(nd), 0);
  if (padding.mode.empty()) {
    return unbatch(ember::convolution(x, weight, bias, stride, padding.values, dilation, false,
                                      zeros_nd, groups),
                   batched);
  }
  if (padding.mode == "valid") {
    return unbatch(
        ember::convolution(x, weight, bias, stride, zeros_nd, dilation, false, zeros_nd, groups),
        batched);
  }
  EMBER_CHECK(padding.mode == "same", "[", op, "] Invalid padding string: '", padding.mode, "'");
  // 'same': total padding dil * (k - 1) per dim, split evenly; an odd total puts the extra
  // element on the far side, which aten::convolution cannot express, so the input is padded
  // by one there first (as PyTorch does).
  const DimVector s = expand_conv_param(stride, nd, "stride", op);
  const DimVector d = expand_conv_param(dilation, nd, "dilation", op);
  for (int64_t v : s) {
    EMBER_CHECK(v == 1, "[", op, "] padding='same' is not supported for strided convolutions");
  }
  EMBER_CHECK(weight.dim() == nd + 2, "[", op, "] expected ", nd + 2,
              "-dimensional weight, but got weight of size ", sizes_list(weight.sizes()));
  DimVector left(static_cast<size_t>(nd)), extra(2 * static_cast<size_t>(nd), 0);
  bool asymmetric = false;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t total = d[i] * (weight.size(2 + i) - 1);
    left[i] = total / 2;
    const int64_t right = total - left[i];
    if (right != left[i]) {
      asymmetric = true;
      extra[2 * (nd - 1 - i) + 1] = right - left[i];  // F.pad order: last dim first
    }
  }
  if (asymmetric) x = ember::constant_pad_nd(x, extra, 0);
  return unbatch(ember::convolution(x, weight, bias, s, left, d, false, zeros_nd, groups), batched);
}

Tensor conv_transpose_nd(const Tensor& input, const Tensor& weight, const Tensor& bias,
                         IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                         int64_t groups, IntArrayRef dilation, int64_t nd, const char* op) {
  bool batched = true;
  Tensor x = batched_input(input, nd, op, &batched);
  return unbatch(
      ember::convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups),
      batched);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {  // autocast: lower precision
    const Tensor x = autocast::lower(input), w = autocast::lower(weight), b = autocast::lower(bias);
    autocast::ExcludeGuard no_autocast;
    return ember::conv1d(x, w, b, stride, padding, dilation, groups);
  }
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {  // autocast: lower precision
    const Tensor x = autocast::lower(input), w = autocast::lower(weight), b = autocast::lower(bias);
    autocast::ExcludeGuard no_autocast;
    return ember::conv2d(x, w, b, stride, padding, dilation, groups);
  }
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  if (autocast::active()) {  // autocast: lower precision
    const Tensor x = autocast::lower(input), w = autocast::lower(weight), b = autocast::lower(bias);
    autocast::ExcludeGuard no_autocast;
    return ember::conv_transpose1d(x, w, b, stride, padding, output_padding, groups, dilation);
  }
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           1, "conv_transpose1d");
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  if (autocast::active()) {  // autocast: lower precision
    const Tensor x = autocast::lower(input), w = autocast::lower(weight), b = autocast::lower(bias);
    autocast::ExcludeGuard no_autocast;
    return ember::conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation);
  }
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           2, "conv_transpose2d");
}

// ---- linear / bilinear ------------------------------------------------------------------------

// ---- im2col / col2im --------------------------------------------------------------------------

Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  if (autograd::should_record(input)) {
    return derivatives::im2col(input, kernel_size, dilation, padding, stride);
  }
  return native::im2col(input, kernel_size, dilation, padding, stride);
}

Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  if (autograd::should_record(input)) {
    return derivatives::col2im(input, output_size, kernel_size, dilation, padding, stride);
  }
  return native::col2im(input, output_size, kernel_size, dilation, padding, stride);
}

}  // namespace ember
