// Derivatives of the pooling ops (ops/nn/pool*.cpp). The backward ops are recorded too: max
// pooling's backward (a scatter into the argmax positions) has a gather as its derivative;
// average pooling's backward ops are linear, with the forward op as their derivative.
#pragma once
#include <optional>
#include <tuple>

#include "core/tensor.h"

namespace ember {
namespace derivatives {

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode);
Tensor max_pool_backward(const Tensor& grad_output, IntArrayRef input_sizes, const Tensor& indices,
                         const char* name);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override);
Tensor avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes,
                           IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace derivatives
}  // namespace ember
