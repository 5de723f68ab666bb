// Derivatives of native_dropout: grad * mask * scale, by native_dropout_backward, which is linear
// in grad and so its own derivative.
#include "autograd/derivatives/nn/dropout.h"

#include "api/nn/dropout.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {
double dropout_scale(double p, std::optional<bool> train) {
  if (train.has_value() && !*train) return 1.0;
  return p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
}
}  // namespace

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const Tensor& out, Generator* gen) {
  const double scale = dropout_scale(p, train);
  auto node = autograd::new_node(
      "NativeDropoutBackward0", {input}, [scale](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::native_dropout_backward(g[0], n.saved(0), scale)};
      });
  if (node->has_forward()) {
    // Linear: the tangent masked and scaled as the input (the mask output has none).
    node->set_jvp([scale](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return variable_list(2);
      return {ember::native_dropout_backward(t[0], n.saved(0), scale), Tensor()};
    });
  }
  if (out.defined()) {  // dropout_: one output, the input rewritten
    Tensor mask;
    Tensor r = autograd::record(node, {input}, out, "dropout_", [&] {
      auto result = native::native_dropout(input, p, train, out, gen);
      mask = std::get<1>(result);
      return std::get<0>(result);
    });
    node->save(mask);
    return {r, mask};
  }
  Tensor output, mask;
  {
    autograd::NoGradGuard no_grad;
    std::tie(output, mask) = native::native_dropout(input, p, train, Tensor(), gen);
  }
  node->save(mask);
  autograd::set_history_all(node, {output, mask});
  return {output, mask};
}

Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  auto node = autograd::new_node(
      "NativeDropoutBackwardBackward0", {grad}, [scale](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::native_dropout_backward(g[0], n.saved(0), scale)};
      });
  node->save(mask);
  if (node->has_forward()) {
    node->set_jvp([scale](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::native_dropout_backward(t[0], n.saved(0), scale)};
    });
  }
  return autograd::record(node, {grad}, Tensor(), "native_dropout_backward",
                          [&] { return native::native_dropout_backward(grad, mask, scale); });
}

}  // namespace derivatives
}  // namespace ember
