// Padding, resampling and pixel shuffles: F.pad's ops, F.interpolate's kernels (upsample_*),
// pixel_shuffle / pixel_unshuffle. The api layer records one node per op; each backward is itself
// a recorded op whose derivative is the forward again (all of these ops are linear in their
// input). F.pad (a choice between the two padding ops) is in api/nn/sampling.cpp.
#pragma once
#include <optional>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace native {

// ---- padding (nn_pad.cpp) ----------------------------------------------------------------
// pad: (left, right) pairs starting from the last dim; negative values crop.
Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value = 0);

enum class PadMode { kReflect, kReplicate, kCircular };
const char* pad_mode_name(PadMode mode);
// reflect / replicate / circular padding of the last pad.size() / 2 dims (1 to 3); the input
// has one or two dims more (batch, channels).
Tensor index_pad(const Tensor& input, IntArrayRef pad, PadMode mode);
// The gradient of index_pad: each output element's gradient summed into its source.
Tensor index_pad_backward(const Tensor& grad_output, IntArrayRef input_sizes, IntArrayRef pad,
                          PadMode mode);

// ---- resampling (nn_upsample.cpp) --------------------------------------------------------
enum class UpsampleMode { kNearest, kNearestExact, kLinear, kCubic };
// input (N, C, *spatial) with 1 to 3 spatial dims (cubic: 2) -> (N, C, *output_size). scales
// (one per spatial dim, or empty) are the scale factors F.interpolate passes through when it
// does not recompute them; they change where output pixels sample the input, as in PyTorch.
// align_corners applies to linear and cubic only.
Tensor upsample(const Tensor& input, IntArrayRef output_size, UpsampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales);
Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales);

// ---- pixel shuffles (nn_pixel_shuffle.cpp) ------------------------------------------------
// (*, C * r * r, H, W) -> (*, C, H * r, W * r) and back.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

}  // namespace native
}  // namespace ember
