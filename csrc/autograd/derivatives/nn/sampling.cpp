// Derivatives of the padding, resampling and pixel-shuffle ops (see nn_sampling.h).
#include "autograd/derivatives/nn/sampling.h"

#include <string>

#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

std::string pad_node_name(PadMode mode, size_t pad_len, bool backward) {
  const char* base = mode == PadMode::kReflect     ? "ReflectionPad"
                     : mode == PadMode::kReplicate ? "ReplicationPad"
                                                   : "CircularPad";
  return std::string(base) + std::to_string(pad_len / 2) + "DBackward" +
         (backward ? "Backward0" : "0");
}

std::string upsample_node_name(UpsampleMode mode, size_t nd, bool backward) {
  std::string s;
  switch (mode) {
    case UpsampleMode::kNearest:
      s = "UpsampleNearest";
      break;
    case UpsampleMode::kNearestExact:
      s = "UpsampleNearestExact";
      break;
    case UpsampleMode::kLinear:
      s = nd == 1 ? "UpsampleLinear" : nd == 2 ? "UpsampleBilinear" : "UpsampleTrilinear";
      break;
    default:
      s = "UpsampleBicubic";
  }
  return s + std::to_string(nd) + "DBackward" + (backward ? "Backward0" : "0");
}

}  // namespace

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  DimVector neg;
  for (int64_t p : pad) neg.push_back(-p);
  auto node = autograd::new_node("ConstantPadNdBackward0", {input},
                                 [neg](FunctionNode&, const variable_list& g) -> variable_list {
                                   return {ember::constant_pad_nd(g[0], neg, 0)};
                                 });
  return autograd::record(node, {input}, Tensor(), "constant_pad_nd",
                          [&] { return native::constant_pad_nd(input, pad, value); });
}

Tensor index_pad(const Tensor& input, IntArrayRef pad, PadMode mode) {
  DimVector p(pad), sizes(input.sizes());
  auto node =
      autograd::new_node(pad_node_name(mode, pad.size(), false), {input},
                         [p, sizes, mode](FunctionNode&, const variable_list& g) -> variable_list {
                           return {ember::index_pad_backward(g[0], sizes, p, mode)};
                         });
  return autograd::record(node, {input}, Tensor(), "pad",
                          [&] { return native::index_pad(input, pad, mode); });
}

Tensor index_pad_backward(const Tensor& grad_output, IntArrayRef input_sizes, IntArrayRef pad,
                          PadMode mode) {
  DimVector p(pad);
  auto node = autograd::new_node(pad_node_name(mode, pad.size(), true), {grad_output},
                                 [p, mode](FunctionNode&, const variable_list& g) -> variable_list {
                                   return {ember::index_pad(g[0], p, mode)};
                                 });
  return autograd::record(node, {grad_output}, Tensor(), "pad_backward", [&] {
    return native::index_pad_backward(grad_output, input_sizes, pad, mode);
  });
}

Tensor upsample(const Tensor& input, IntArrayRef output_size, UpsampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales) {
  DimVector in(input.sizes()), out(output_size);
  auto node = autograd::new_node(
      upsample_node_name(mode, out.size(), false), {input},
      [in, out, mode, align_corners, scales](FunctionNode&,
                                             const variable_list& g) -> variable_list {
        return {ember::upsample_backward(g[0], in, out, mode, align_corners, scales)};
      });
  return autograd::record(node, {input}, Tensor(), "upsample", [&] {
    return native::upsample(input, output_size, mode, align_corners, scales);
  });
}

Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales) {
  DimVector out(output_size);
  auto node = autograd::new_node(
      upsample_node_name(mode, out.size(), true), {grad_output},
      [out, mode, align_corners, scales](FunctionNode&, const variable_list& g) -> variable_list {
        return {ember::upsample(g[0], out, mode, align_corners, scales)};
      });
  return autograd::record(node, {grad_output}, Tensor(), "upsample_backward", [&] {
    return native::upsample_backward(grad_output, input_size, output_size, mode, align_corners,
                                     scales);
  });
}

Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor) {
  auto node =
      autograd::new_node("PixelShuffleBackward0", {input},
                         [upscale_factor](FunctionNode&, const variable_list& g) -> variable_list {
                           return {ember::pixel_unshuffle(g[0], upscale_factor)};
                         });
  return autograd::record(node, {input}, Tensor(), "pixel_shuffle",
                          [&] { return native::pixel_shuffle(input, upscale_factor); });
}

Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor) {
  auto node = autograd::new_node(
      "PixelUnshuffleBackward0", {input},
      [downscale_factor](FunctionNode&, const variable_list& g) -> variable_list {
        return {ember::pixel_shuffle(g[0], downscale_factor)};
      });
  return autograd::record(node, {input}, Tensor(), "pixel_unshuffle",
                          [&] { return native::pixel_unshuffle(input, downscale_factor); });
}

}  // namespace derivatives
}  // namespace ember
