// Node and Edge: the autograd graph (see docs/design/architecture.md, "Autograd
// engine", and docs/design/autograd.md). A Node is the backward of one forward op: it receives the
// gradients of that op's outputs and returns the gradients of its inputs, which flow along
// next_edges_.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/small_vector.h"
#include "core/tensor.h"

namespace ember {
namespace autograd {

using variable_list = std::vector<Tensor>;
class Node;

// Where a gradient goes: input `input_nr` of `function`. An invalid edge (null function) means
// that input needs no gradient.
struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> fn, uint32_t nr) : function(std::move(fn)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
};
using edge_list = std::vector<Edge>;

// What the gradient arriving at one input of a node must look like.
struct InputMetadata {
  DimVector shape;
  ScalarType dtype = ScalarType::Float32;
  Device device;
  bool defined = true;  // false: a placeholder for an output that has no gradient
};

// Hooks. Pre-hooks see (and may replace) the gradients arriving at a node; post-hooks see the
// gradients it produced and those it received, and may replace the former.
using FunctionPreHook = std::function<std::optional<variable_list>(const variable_list& grads)>;
using FunctionPostHook = std::function<std::optional<variable_list>(
    const variable_list& grad_inputs, const variable_list& grad_outputs)>;
// A tensor hook: the gradient of one tensor, or a replacement for it.
using TensorHook = std::function<std::optional<Tensor>(const Tensor& grad)>;

// A node's hooks are held in an ordered map keyed by a handle id, so that `remove()` works.
template <typename Hook>
struct HookList {
  std::map<uint64_t, Hook> hooks;
  bool empty() const { return hooks.empty(); }
};
uint64_t next_hook_id();

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(edge_list next_edges = {});
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  Node(Node&&) = delete;
  Node& operator=(Node&&) = delete;

  // The backward computation: gradients of the forward outputs in, of the inputs out.
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const;
  // Frees saved tensors once the graph has been used (backward without retain_graph).
  virtual void release_variables() {}
  // Accumulators are leaves: the engine runs them but they have no next edges.
  virtual bool is_accumulate_grad() const { return false; }

  // Forward outputs = backward inputs. Returns the index of the new input.
  uint32_t add_input_metadata(const Tensor& t);
  uint32_t add_input_metadata_undefined();
  size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }
  InputMetadata& mutable_input_metadata(size_t i) { return input_metadata_[i]; }

  // Forward inputs = backward outputs.
  const edge_list& next_edges() const { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }
  void set_next_edges(edge_list edges);
  void add_next_edge(Edge e);
  // Whether backward output i is wanted: its edge leads somewhere, or forward-mode AD derives
  // that input's JVP from this node's backward (Note [Forward AD through the nodes]).
  bool should_compute_output(size_t i) const {
    return (i < next_edges_.size() && next_edges_[i].is_valid()) ||
           (i < forward_needed_.size() && forward_needed_[i]);
  }
  // False for a node built only for forward-mode AD: its outputs get no grad_fn.
  bool records_history() const { return records_history_; }
  void set_records_history(bool on) { records_history_ = on; }
  // Whether the node computes tangents of its outputs (it is then a FunctionNode).
  bool has_forward() const { return has_forward_; }

  uint64_t sequence_nr() const { return sequence_nr_; }
  // Longest path to a leaf: if topo(x) < topo(y) there is no path from x to y.
  uint64_t topological_nr() const { return topological_nr_; }

  // Hooks: ids returned for removal.
  uint64_t add_pre_hook(FunctionPreHook h);
  uint64_t add_post_hook(FunctionPostHook h);
  uint64_t add_tensor_pre_hook(uint32_t input_nr, TensorHook h);
  // retain_grad's hook for one input: at most one, it runs after the other tensor hooks.
  void set_retains_grad_hook(uint32_t input_nr, TensorHook h);
  void clear_retains_grad_hook(uint32_t input_nr);
  bool remove_hook(uint64_t id);
  const HookList<FunctionPreHook>& pre_hooks() const { return pre_hooks_; }
  const HookList<FunctionPostHook>& post_hooks() const { return post_hooks_; }
  // Runs the tensor pre-hooks and retains-grad hooks on `grads` (in place).
  void run_tensor_pre_hooks(variable_list& grads) const;
  bool has_tensor_hooks() const {
    return !tensor_pre_hooks_.empty() || !retains_grad_hooks_.empty();
  }

  // Anomaly mode: the forward stack trace where this node was created (empty when off).
  const std::string& forward_trace() const { return forward_trace_; }
  void set_forward_trace(std::string t) { forward_trace_ = std::move(t); }

  // Python wrapper cache (the bindings keep the Python object for identity of grad_fn).
  void* py_object = nullptr;

 protected:
  edge_list next_edges_;
  std::vector<InputMetadata> input_metadata_;
  uint64_t sequence_nr_;
  uint64_t topological_nr_ = 0;
  bool has_parent_ = false;  // some node points to this one: topological_nr_ is frozen
  bool records_history_ = true;
  bool has_forward_ = false;
  std::vector<bool> forward_needed_;  // inputs that carry a tangent at some level

 private:
  void update_topological_nr(const Edge& e);
  HookList<FunctionPreHook> pre_hooks_;
  HookList<FunctionPostHook> post_hooks_;
  std::map<uint32_t, HookList<TensorHook>> tensor_pre_hooks_;
  std::map<uint32_t, TensorHook> retains_grad_hooks_;
  std::string forward_trace_;
};

// Releases a node reference without recursing through the graph: destroying the last reference
// to a long chain frees it iteratively (Note [Iterative Graph Deletion] in node.cpp).
void release_node(std::shared_ptr<Node>&& node);

// The global sequence counter (a node created later has a larger number and runs earlier).
uint64_t next_sequence_nr();

}  // namespace autograd
}  // namespace ember
