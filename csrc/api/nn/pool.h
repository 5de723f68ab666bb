// Public pooling ops: the 2-D ops and their backward ops record their node when an input
// requires grad; the 1-D ops are composites of them over a height-1 view (api/nn/pool.cpp).
#pragma once
#include <optional>
#include <tuple>

#include "ops/nn/pool.h"

namespace ember {

// kernel_size, stride, padding, dilation: one or two values each (one for the 1-D forms); an
// empty stride means stride = kernel_size (PyTorch's default).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode);
// The values only (indices are computed only when autograd needs them).
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode);
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);

// The gradient of a max pooling (windowed or adaptive) with respect to its input (see
// ops/nn/pool.h).
Tensor max_pool_backward(const Tensor& grad_output, IntArrayRef input_sizes, const Tensor& indices,
                         const char* name);

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override);
Tensor avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes,
                           IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad);

// output_size: one value per pooled dim (two for 2-D).
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes);
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size);

}  // namespace ember
