// Pooling: max_pool2d (with indices), avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d. Each
// takes a batched (N, C, H, W) or unbatched (C, H, W) input. The api layer records one node per
// op whose gradient is one backward op; the backward ops are recorded too (their derivative is a
// gather for max pooling, the forward op for average pooling), so double backward works. The
// 1-D ops are the 2-D ones over a height-1 view, composites in api/nn/pool.cpp.
#pragma once
#include <optional>
#include <tuple>

#include "core/tensor.h"

namespace ember {
namespace native {

// kernel_size, stride, padding, dilation: one or two values each; an empty stride means
// stride = kernel_size (PyTorch's default).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode);
// The values only (indices are computed only when the gradient needs them).
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);

// The gradient of a max pooling (windowed or adaptive) with respect to its input: grad_output
// summed into the positions `indices` (flat indices into each input plane) name. `name`: the
// pooling op (for messages and node names).
Tensor max_pool_backward(const Tensor& grad_output, IntArrayRef input_sizes, const Tensor& indices,
                         const char* name);

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override);
Tensor avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes,
                           IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);

// output_size: one value per pooled dim (two for 2-D).
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);

// ---- argument checks of the 1-D forms (api/nn/pool.cpp) ------------------------------------
// A 1-D pooling argument as the 2-D one over a height-1 view: {height_value, v[0]}.
DimVector pool1d_param(IntArrayRef v, int64_t height_value, const char* what, const char* op);
// max_pool1d's input: 2-D or 3-D with non-empty non-batch dims.
void check_pool1d_input(const Tensor& input, const char* op);
// adaptive_*_pool1d: a 2-D or 3-D input and one output size.
void check_adaptive_pool1d_args(const Tensor& input, IntArrayRef output_size, const char* op);

}  // namespace native
}  // namespace ember
