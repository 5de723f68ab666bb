// Public padding, resampling and pixel-shuffle ops: each records its node when its input
// requires grad, and F.pad chooses between the two padding ops (api/nn/sampling.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ops/nn/sampling.h"

namespace ember {

using native::pad_mode_name;
using native::PadMode;
using native::UpsampleMode;

// pad: (left, right) pairs starting from the last dim; negative values crop.
Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value = 0);
// reflect / replicate / circular padding of the last pad.size() / 2 dims (1 to 3).
Tensor index_pad(const Tensor& input, IntArrayRef pad, PadMode mode);
Tensor index_pad_backward(const Tensor& grad_output, IntArrayRef input_sizes, IntArrayRef pad,
                          PadMode mode);
// F.pad: mode "constant" (value, default 0), "reflect", "replicate" or "circular".
Tensor pad(const Tensor& input, IntArrayRef pad, const std::string& mode,
           std::optional<double> value);

// See ops/nn/sampling.h.
Tensor upsample(const Tensor& input, IntArrayRef output_size, UpsampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales);
Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales);

// (*, C * r * r, H, W) -> (*, C, H * r, W * r) and back.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

}  // namespace ember
