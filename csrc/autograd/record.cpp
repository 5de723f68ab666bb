#include "autograd/record.h"

#include "autograd/anomaly.h"
#include "core/error.h"

namespace ember {
namespace autograd {

std::shared_ptr<FunctionNode> new_node(std::string name, const std::vector<Tensor>& inputs,
                                       FunctionNode::Formula formula) {
  auto node = std::make_shared<FunctionNode>(std::move(name), std::move(formula));
  node->set_next_edges(collect_next_edges(inputs));
  bool reverse = false;
  if (GradMode::is_enabled()) {
    for (const Tensor& t : inputs) reverse = reverse || (t.defined() && requires_grad(t));
  }
  node->set_records_history(reverse);
  if (forward_ad::any_level_active()) node->capture_tangents(inputs);
  return node;
}

bool is_inplace(const Tensor& out, const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) {
    if (t.defined() && t.is_same(out)) return true;
  }
  return false;
}

void check_out_arg(const Tensor& out, const std::vector<Tensor>& inputs, const char* op) {
  (void)out;
  for (const Tensor& t : inputs) {
    EMBER_CHECK(!t.defined() || !requires_grad(t), "[", op,
                "] functions with out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad.");
  }
}

void attach_trace(Node& node) {
  if (AnomalyMode::is_enabled()) node.set_forward_trace(AnomalyMode::current_stack());
}

void set_history_all(const std::shared_ptr<Node>& node, const std::vector<Tensor>& outputs) {
  attach_trace(*node);
  for (const Tensor& t : outputs) {
    if (t.defined() && (is_floating(t.dtype()) || ember::is_complex(t.dtype()))) {
      set_history(t, node);
    } else {
      node->add_input_metadata_undefined();
    }
  }
}

}  // namespace autograd
}  // namespace ember
