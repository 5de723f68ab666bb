// Public pooling ops: the recording of the 2-D ops and their backward ops, and the 1-D ops as
// composites of them over a height-1 view.
#include "api/nn/pool.h"

#include "api/views.h"
#include "autograd/derivatives/nn/pool.h"
#include "autograd/variable.h"

namespace ember {

// ---- max pooling ------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  if (autograd::should_record(input)) {
    return derivatives::max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                                ceil_mode);
  }
  return native::max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  if (autograd::should_record(input)) {
    // The node needs the indices.
    return std::get<0>(derivatives::max_pool2d_with_indices(input, kernel_size, stride, padding,
                                                            dilation, ceil_mode));
  }
  return native::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool1d";
  native::check_pool1d_input(input, op);
  const DimVector k = native::pool1d_param(kernel_size, 1, "kernel_size", op);
  const DimVector s = stride.empty() ? k : native::pool1d_param(stride, 1, "stride", op);
  auto [out, idx] = ember::max_pool2d_with_indices(
      ember::unsqueeze(input, -2), k, s, native::pool1d_param(padding, 0, "padding", op),
      native::pool1d_param(dilation, 1, "dilation", op), ceil_mode);
  return {ember::squeeze(out, {-2}), ember::squeeze(idx, {-2})};
}

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool1d";
  native::check_pool1d_input(input, op);
  const DimVector k = native::pool1d_param(kernel_size, 1, "kernel_size", op);
  const DimVector s = stride.empty() ? k : native::pool1d_param(stride, 1, "stride", op);
  Tensor out = ember::max_pool2d(ember::unsqueeze(input, -2), k, s,
                                 native::pool1d_param(padding, 0, "padding", op),
                                 native::pool1d_param(dilation, 1, "dilation", op), ceil_mode);
  return ember::squeeze(out, {-2});
}

Tensor max_pool_backward(const Tensor& grad_output, IntArrayRef input_sizes, const Tensor& indices,
                         const char* name) {
  if (autograd::should_record(grad_output)) {
    return derivatives::max_pool_backward(grad_output, input_sizes, indices, name);
  }
  return native::max_pool_backward(grad_output, input_sizes, indices, name);
}

// ---- average pooling --------------------------------------------------------------------------

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  if (autograd::should_record(input)) {
    return derivatives::avg_pool2d(input, kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override);
  }
  return native::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override);
}

Tensor avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes,
                           IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  if (autograd::should_record(grad_output)) {
    return derivatives::avg_pool2d_backward(grad_output, input_sizes, kernel_size, stride, padding,
                                            ceil_mode, count_include_pad, divisor_override);
  }
  return native::avg_pool2d_backward(grad_output, input_sizes, kernel_size, stride, padding,
                                     ceil_mode, count_include_pad, divisor_override);
}

Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  const char* op = "avg_pool1d";
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "[", op, "] Expected 2 to 3 dimensions, but ",
              "got ", input.dim(), "-dimensional tensor for argument #1 'self' (while checking ",
              "arguments for avg_pool1d)");
  const DimVector k = native::pool1d_param(kernel_size, 1, "kernel_size", op);
  const DimVector s = stride.empty() ? k : native::pool1d_param(stride, 1, "stride", op);
  Tensor out = ember::avg_pool2d(ember::unsqueeze(input, -2), k, s,
                                 native::pool1d_param(padding, 0, "padding", op), ceil_mode,
                                 count_include_pad, std::nullopt);
  return ember::squeeze(out, {-2});
}

// ---- adaptive pooling -------------------------------------------------------------------------

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  if (autograd::should_record(input)) return derivatives::adaptive_avg_pool2d(input, output_size);
  return native::adaptive_avg_pool2d(input, output_size);
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes) {
  if (autograd::should_record(grad_output)) {
    return derivatives::adaptive_avg_pool2d_backward(grad_output, input_sizes);
  }
  return native::adaptive_avg_pool2d_backward(grad_output, input_sizes);
}

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool1d";
  native::check_adaptive_pool1d_args(input, output_size, op);
  Tensor out = ember::adaptive_avg_pool2d(ember::unsqueeze(input, -2), {1, output_size[0]});
  return ember::squeeze(out, {-2});
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  if (autograd::should_record(input)) return derivatives::adaptive_max_pool2d(input, output_size);
  return native::adaptive_max_pool2d(input, output_size);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool1d";
  native::check_adaptive_pool1d_args(input, output_size, op);
  auto [out, idx] = ember::adaptive_max_pool2d(ember::unsqueeze(input, -2), {1, output_size[0]});
  return {ember::squeeze(out, {-2}), ember::squeeze(idx, {-2})};
}

}  // namespace ember
