// Recording an op in the graph: the helpers the public ops (api/) and their derivative wrappers
// (derivatives/*.cpp) use. The public op decides whether to record; when it does, it builds the
// node, runs the native op once through record() and saves what the formula reads:
//
//   Tensor exp(const Tensor& a, const Tensor& out) {  // ember::exp (api/unary.cpp, simplified)
//     if (!should_record(a)) return native::exp(a, out);
//     auto node = new_node("ExpBackward0", {a}, [](FunctionNode& n, const variable_list& g) {
//       return variable_list{mul(g[0], conj(n.saved(0)))};
//     });
//     Tensor r = record(node, {a}, out, "exp", [&] { return native::exp(a, out); });
//     node->save(r, /*is_output=*/true);
//     return r;
//   }
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"

namespace ember {
namespace autograd {

// A node for an op with these inputs (its next edges are their gradient edges, taken now,
// before an in-place forward changes them).
std::shared_ptr<FunctionNode> new_node(std::string name, const std::vector<Tensor>& inputs,
                                       FunctionNode::Formula formula);

// Checks the out / in-place rules, runs `forward` with recording off and attaches `node` as the
// history of its result. `out`: undefined (functional), one of `inputs` (in-place), or another
// tensor (out=: refused, as PyTorch, since the result would not be differentiable).
template <typename Forward>
Tensor record(const std::shared_ptr<FunctionNode>& node, const std::vector<Tensor>& inputs,
              const Tensor& out, const char* op, Forward&& forward);

// For ops with several outputs: attaches node to each defined, differentiable output.
void set_history_all(const std::shared_ptr<Node>& node, const std::vector<Tensor>& outputs);

// in-place: whether `out` aliases an input (same TensorImpl).
bool is_inplace(const Tensor& out, const std::vector<Tensor>& inputs);
void check_out_arg(const Tensor& out, const std::vector<Tensor>& inputs, const char* op);
void attach_trace(Node& node);

template <typename Forward>
Tensor record(const std::shared_ptr<FunctionNode>& node, const std::vector<Tensor>& inputs,
              const Tensor& out, const char* op, Forward&& forward) {
  const bool inplace = out.defined() && is_inplace(out, inputs);
  if (out.defined() && !inplace) check_out_arg(out, inputs, op);
  if (inplace) check_inplace(out);
  Tensor result;
  {
    NoGradGuard no_grad;
    result = forward();
  }
  attach_trace(*node);
  if (inplace) {
    rebase_history(result, node);
  } else if (is_floating(result.dtype()) || ember::is_complex(result.dtype())) {
    set_history(result, node);
  }
  return result;
}

}  // namespace autograd
}  // namespace ember
