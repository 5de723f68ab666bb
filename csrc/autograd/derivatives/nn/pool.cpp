// Derivatives of the pooling ops (see nn_pool.h).
#include "autograd/derivatives/nn/pool.h"

#include <string>

#include "api/indexing.h"
#include "api/nn/conv_util.h"
#include "api/nn/pool.h"
#include "api/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// PyTorch's node names: MaxPool2DWithIndicesBackward0, AdaptiveMaxPool2DBackward0.
std::string max_node_name(const std::string& name) {
  return name == "max_pool2d" ? "MaxPool2DWithIndicesBackward" : "AdaptiveMaxPool2DBackward";
}

// A (values, indices) op: the node gets the values, the indices are saved for the formula.
template <typename Forward>
std::tuple<Tensor, Tensor> record_max(const std::shared_ptr<FunctionNode>& node,
                                      Forward&& forward) {
  Tensor values, indices;
  {
    autograd::NoGradGuard no_grad;
    std::tie(values, indices) = forward();
  }
  autograd::attach_trace(*node);
  node->save(indices);
  autograd::set_history_all(node, {values, indices});
  return {values, indices};
}

// The max-pool node of `input`: gradient = max_pool_backward of the saved indices.
std::shared_ptr<FunctionNode> max_node(const Tensor& input, const char* name) {
  DimVector sizes(input.sizes());
  return autograd::new_node(
      max_node_name(name) + "0", {input},
      [sizes, name](FunctionNode& n, const variable_list& g) -> variable_list {
        return {ember::max_pool_backward(g[0], sizes, n.saved(0), name)};
      });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return record_max(max_node(input, "max_pool2d"), [&] {
    return native::max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode);
  });
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return record_max(max_node(input, "adaptive_max_pool2d"),
                    [&] { return native::adaptive_max_pool2d(input, output_size); });
}

Tensor max_pool_backward(const Tensor& grad_output, IntArrayRef input_sizes, const Tensor& indices,
                         const char* name) {
  // d(scatter of g into the argmax positions)/dg: gather the incoming gradient there.
  auto node = autograd::new_node(max_node_name(name) + "Backward0", {grad_output},
                                 [](FunctionNode& n, const variable_list& g) -> variable_list {
                                   Tensor idx = n.saved(0);
                                   Tensor flat = ember::flatten(g[0], -2, -1);
                                   Tensor picked =
                                       ember::gather(flat, -1, ember::flatten(idx, -2, -1));
                                   return {ember::view(picked, idx.sizes())};
                                 });
  node->save(indices);
  return autograd::record(node, {grad_output}, Tensor(), "max_pool_backward", [&] {
    return native::max_pool_backward(grad_output, input_sizes, indices, name);
  });
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  DimVector sizes(input.sizes()), k(kernel_size), s(stride), p(padding);
  auto node = autograd::new_node(
      "AvgPool2DBackward0", {input}, [=](FunctionNode&, const variable_list& g) -> variable_list {
        return {ember::avg_pool2d_backward(g[0], sizes, k, s, p, ceil_mode, count_include_pad,
                                           divisor_override)};
      });
  return autograd::record(node, {input}, Tensor(), "avg_pool2d", [&] {
    return native::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override);
  });
}

Tensor avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes,
                           IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  DimVector k(kernel_size), s(stride), p(padding);
  auto node = autograd::new_node(
      "AvgPool2DBackwardBackward0", {grad_output},
      [=](FunctionNode&, const variable_list& g) -> variable_list {
        return {ember::avg_pool2d(g[0], k, s, p, ceil_mode, count_include_pad, divisor_override)};
      });
  return autograd::record(node, {grad_output}, Tensor(), "avg_pool2d_backward", [&] {
    return native::avg_pool2d_backward(grad_output, input_sizes, kernel_size, stride, padding,
                                       ceil_mode, count_include_pad, divisor_override);
  });
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  DimVector sizes(input.sizes());
  auto node = autograd::new_node("AdaptiveAvgPool2DBackward0", {input},
                                 [sizes](FunctionNode&, const variable_list& g) -> variable_list {
                                   return {ember::adaptive_avg_pool2d_backward(g[0], sizes)};
                                 });
  return autograd::record(node, {input}, Tensor(), "adaptive_avg_pool2d",
                          [&] { return native::adaptive_avg_pool2d(input, output_size); });
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, IntArrayRef input_sizes) {
  // The forward rejects a grad_output of fewer than 3 dims.
  DimVector out = grad_output.dim() >= 2 ? dims_slice(grad_output.sizes(), -2) : DimVector();
  auto node = autograd::new_node("AdaptiveAvgPool2DBackwardBackward0", {grad_output},
                                 [out](FunctionNode&, const variable_list& g) -> variable_list {
                                   return {ember::adaptive_avg_pool2d(g[0], out)};
                                 });
  return autograd::record(node, {grad_output}, Tensor(), "adaptive_avg_pool2d_backward", [&] {
    return native::adaptive_avg_pool2d_backward(grad_output, input_sizes);
  });
}

}  // namespace derivatives
}  // namespace ember
