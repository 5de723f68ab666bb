// Public padding, resampling and pixel-shuffle ops: their recording, and F.pad (its argument
// checks, then constant_pad_nd or index_pad).
#include "api/nn/sampling.h"

#include "api/autocast.h"
#include "autograd/derivatives/nn/sampling.h"
#include "autograd/variable.h"

namespace ember {

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  if (autograd::should_record(input)) return derivatives::constant_pad_nd(input, pad, value);
  return native::constant_pad_nd(input, pad, value);
}

Tensor index_pad(const Tensor& input, IntArrayRef pad, PadMode mode) {
  // Autocast: float32 for PyTorch's reflection_pad1d / 2d and replication_pad1d / 2d / 3d (not
  // for 3-D reflection or circular padding, which are not on its list).
  if (autocast::active() &&
      (mode == PadMode::kReplicate || (mode == PadMode::kReflect && pad.size() <= 4))) {
    const Tensor x = autocast::to_fp32(input);
    autocast::ExcludeGuard no_autocast;
    return ember::index_pad(x, pad, mode);
  }
  if (autograd::should_record(input)) return derivatives::index_pad(input, pad, mode);
  return native::index_pad(input, pad, mode);
}

Tensor index_pad_backward(const Tensor& grad_output, IntArrayRef input_sizes, IntArrayRef pad,
                          PadMode mode) {
  if (autograd::should_record(grad_output)) {
    return derivatives::index_pad_backward(grad_output, input_sizes, pad, mode);
  }
  return native::index_pad_backward(grad_output, input_sizes, pad, mode);
}

Tensor pad(const Tensor& input, IntArrayRef pad, const std::string& mode,
           std::optional<double> value) {
  const char* op = "pad";
  if (mode == "constant") {
    EMBER_CHECK(pad.size() % 2 == 0, "[", op, "] Padding length must be divisible by 2");
    EMBER_CHECK(static_cast<int64_t>(pad.size()) <= 2 * input.dim(), "[", op,
                "] Padding length should be less than or equal to two times the input "
                "dimension but got padding length ",
                pad.size(), " and input of dimension ", input.dim());
    return ember::constant_pad_nd(input, pad, value ? Scalar(*value) : Scalar(int64_t(0)));
  }
  PadMode m;
  if (mode == "reflect") {
    m = PadMode::kReflect;
  } else if (mode == "replicate") {
    m = PadMode::kReplicate;
  } else if (mode == "circular") {
    m = PadMode::kCircular;
  } else {
    EMBER_THROW(NotImplementedError, "[", op, "] Unrecognised padding mode ", mode);
  }
  EMBER_CHECK(!value || *value == 0.0, "[", op, "] Padding mode \"", mode,
              "\" doesn't take in value argument");
  EMBER_CHECK(pad.size() % 2 == 0, "[", op, "] Padding length must be divisible by 2");
  EMBER_CHECK(static_cast<int64_t>(pad.size()) <= 2 * input.dim(), "[", op,
              "] Padding length should be less than or equal to two times the input "
              "dimension but got padding length ",
              pad.size(), " and input of dimension ", input.dim());
  const int64_t n = static_cast<int64_t>(pad.size()) / 2, dim = input.dim();
  const bool supported = n >= 1 && n <= 3 && (dim == n + 1 || dim == n + 2);
  EMBER_CHECK_T(NotImplementedError, supported, "[", op, "] Padding size ", pad.size(),
                " is not supported for ", dim,
                "D input tensor.\nSupported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)");
  return ember::index_pad(input, pad, m);
}

Tensor upsample(const Tensor& input, IntArrayRef output_size, UpsampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales) {
  if (autograd::should_record(input)) {
    return derivatives::upsample(input, output_size, mode, align_corners, scales);
  }
  return native::upsample(input, output_size, mode, align_corners, scales);
}

Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales) {
  if (autograd::should_record(grad_output)) {
    return derivatives::upsample_backward(grad_output, input_size, output_size, mode, align_corners,
                                          scales);
  }
  return native::upsample_backward(grad_output, input_size, output_size, mode, align_corners,
                                   scales);
}

Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor) {
  if (autograd::should_record(input)) return derivatives::pixel_shuffle(input, upscale_factor);
  return native::pixel_shuffle(input, upscale_factor);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor) {
  if (autograd::should_record(input)) return derivatives::pixel_unshuffle(input, downscale_factor);
  return native::pixel_unshuffle(input, downscale_factor);
}

}  // namespace ember
