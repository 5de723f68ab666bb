// The engine's own nodes (AccumulateGrad, GraphRoot, CopySlices, the regenerated view node) and
// FunctionNode, the node every derivative formula is built on.
#pragma once
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "autograd/node.h"
#include "autograd/saved_variable.h"
#include "core/small_vector.h"

namespace ember {
namespace autograd {

// Adds incoming gradients into .grad of a leaf, after running the leaf's tensor hooks.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  bool is_accumulate_grad() const override { return true; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
  std::mutex accumulate_mutex_;  // serialises create_graph accumulations (see apply)
};

// The root of a backward call: hands the given gradients to the roots' nodes.
class GraphRoot : public Node {
 public:
  GraphRoot(edge_list roots, variable_list grads);
  variable_list apply(variable_list&&) override { return grads_; }
  std::string name() const override { return "GraphRoot"; }

 private:
  variable_list grads_;
};

// A node whose backward is a formula over saved tensors (a lambda). The derivative table
// (autograd/derivatives/*.cpp) builds one per recorded op.
class FunctionNode : public Node {
 public:
  using Formula = std::function<variable_list(FunctionNode& self, const variable_list& grads)>;
  // Forward mode: the tangents of the outputs from those of the inputs (one per input, undefined
  // for an input without one; an undefined result is a zero tangent).
  using JvpFormula =
      std::function<variable_list(FunctionNode& self, const variable_list& input_tangents)>;
  FunctionNode(std::string name, Formula formula)
      : name_(std::move(name)), formula_(std::move(formula)) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  void release_variables() override;

  size_t save(const Tensor& t, bool is_output = false);
  Tensor saved(size_t i);
  // Non-tensor state set after the forward ran (e.g. result shapes); formulas read it.
  std::vector<DimVector> shapes;

  // Forward-mode AD (Note [Forward AD through the nodes] in forward_ad.h).
  void set_jvp(JvpFormula jvp) { jvp_ = std::move(jvp); }
  bool has_jvp_formula() const { return static_cast<bool>(jvp_); }
  // Records the inputs' tangents at every visible level (called by new_node).
  void capture_tangents(const std::vector<Tensor>& inputs);
  // Makes the node compute tangents at `level` from these input tangents (nodes that forward
  // AD builds itself).
  void add_forward_level(uint64_t level, variable_list input_tangents);
  // The levels this node computes tangents at.
  std::vector<uint64_t> forward_levels() const;
  // The outputs' tangents at `level`, computed on first call.
  variable_list forward_tangents(uint64_t level);

 private:
  struct ForwardLevel {
    uint64_t level = 0;
    bool grad_enabled = false;  // grad mode when the op ran: the tangents' graph follows it
    bool computed = false;
    variable_list input_tangents, output_tangents;
  };
  // The JVP derived from the backward formula: J t = d/dg <vjp(g), t>.
  variable_list jvp_by_double_backward(const variable_list& tangents, bool create_graph);

  std::string name_;
  Formula formula_;
  JvpFormula jvp_;
  std::vector<SavedVariable> saved_;
  // Guards forward_. Recursive: the JVP of one level can read this node's own outputs' tangents
  // at a lower level (forward over forward), which resolves them through this node again.
  std::recursive_mutex forward_mutex_;
  std::vector<ForwardLevel> forward_;
};

// Geometry of a strided view relative to its base's storage.
struct ViewGeometry {
  DimVector sizes, strides;
  int64_t offset = 0;
};

// In-place op on a view: the base's new history. Runs `fn` (the in-place op's node) on the
// slice of the base's gradient that the view covers. Edge 0 is the base's previous history,
// edges 1.. are fn's other inputs.
class CopySlices : public Node {
 public:
  CopySlices(const Tensor& base, ViewGeometry view, std::shared_ptr<Node> fn);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "CopySlices"; }
  void release_variables() override;

 private:
  ViewGeometry base_, view_;
  std::shared_ptr<Node> fn_;
};

// The grad_fn of a view regenerated from its base after the base's history changed: scatters
// the view's gradient into a zero gradient of the base's shape.
class AsStridedBackward : public Node {
 public:
  AsStridedBackward(ViewGeometry base, ViewGeometry view) : base_(base), view_(view) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AsStridedBackward0"; }

 private:
  ViewGeometry base_, view_;
};

// Sums `grad` down to `shape` (undoes broadcasting).
Tensor sum_to(const Tensor& grad, IntArrayRef shape);
// Whether `shape` broadcasts to `target`.
bool is_expandable_to(IntArrayRef shape, IntArrayRef target);

}  // namespace autograd
}  // namespace ember
