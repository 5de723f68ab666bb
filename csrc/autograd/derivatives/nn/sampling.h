// Derivatives of the padding, resampling and pixel-shuffle ops (ops/nn/sampling.h). All of
// these ops are linear in their input: each gradient is a recorded op (the backward op, or the
// forward op for a backward op), so gradients of every order are available.
#pragma once
#include <optional>
#include <vector>

#include "api/nn/sampling.h"
#include "core/scalar.h"

namespace ember {
namespace derivatives {

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value);
Tensor index_pad(const Tensor& input, IntArrayRef pad, PadMode mode);
Tensor index_pad_backward(const Tensor& grad_output, IntArrayRef input_sizes, IntArrayRef pad,
                          PadMode mode);
Tensor upsample(const Tensor& input, IntArrayRef output_size, UpsampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales);
Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales);
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

}  // namespace derivatives
}  // namespace ember
