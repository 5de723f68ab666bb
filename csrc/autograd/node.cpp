#include "autograd/node.h"

#include "core/error.h"

namespace ember {
namespace autograd {

uint64_t next_sequence_nr() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

uint64_t next_hook_id() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

// Note [Iterative Graph Deletion]
// A chain of n ops is a linked list of nodes (each holds the next through an edge, or through a
// saved tensor whose grad_fn is the previous node). Dropping the head with plain shared_ptr
// destructors would recurse n deep and overflow the stack for long chains. Every place that
// drops a node reference (Node's edges, a tensor's grad_fn) goes through release_node: the
// outermost call drains a thread-local list, and nested calls only append to it.
void release_node(std::shared_ptr<Node>&& node) {
  if (!node) return;
  if (node.use_count() > 1) {  // not the last reference: nothing can cascade from here
    node.reset();
    return;
  }
  thread_local std::vector<std::shared_ptr<Node>> pending;
  thread_local bool draining = false;
  pending.push_back(std::move(node));
  if (draining) return;
  draining = true;
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    n.reset();  // may append more nodes to `pending`
  }
  draining = false;
}

Node::Node(edge_list next_edges) : sequence_nr_(next_sequence_nr()) {
  set_next_edges(std::move(next_edges));
}

Node::~Node() {
  for (Edge& e : next_edges_) release_node(std::move(e.function));
}

std::string Node::name() const {
  return "Node";
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  InputMetadata m;
  m.shape = DimVector(t.sizes());
  m.dtype = t.dtype();
  m.device = t.device();
  input_metadata_.push_back(std::move(m));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

uint32_t Node::add_input_metadata_undefined() {
  InputMetadata m;
  m.defined = false;
  input_metadata_.push_back(std::move(m));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

void Node::update_topological_nr(const Edge& e) {
  if (!e.is_valid()) return;
  EMBER_CHECK(!has_parent_, "[autograd] cannot add an edge to a node that is already in a graph");
  Node* next = e.function.get();
  topological_nr_ = std::max(topological_nr_, next->topological_nr_ + 1);
  next->has_parent_ = true;
}

void Node::set_next_edges(edge_list edges) {
  next_edges_ = std::move(edges);
  for (const Edge& e : next_edges_) update_topological_nr(e);
}

void Node::add_next_edge(Edge e) {
  update_topological_nr(e);
  next_edges_.push_back(std::move(e));
}

uint64_t Node::add_pre_hook(FunctionPreHook h) {
  const uint64_t id = next_hook_id();
  pre_hooks_.hooks.emplace(id, std::move(h));
  return id;
}

uint64_t Node::add_post_hook(FunctionPostHook h) {
  const uint64_t id = next_hook_id();
  post_hooks_.hooks.emplace(id, std::move(h));
  return id;
}

uint64_t Node::add_tensor_pre_hook(uint32_t input_nr, TensorHook h) {
  const uint64_t id = next_hook_id();
  tensor_pre_hooks_[input_nr].hooks.emplace(id, std::move(h));
  return id;
}

void Node::set_retains_grad_hook(uint32_t input_nr, TensorHook h) {
  retains_grad_hooks_[input_nr] = std::move(h);
}

void Node::clear_retains_grad_hook(uint32_t input_nr) {
  retains_grad_hooks_.erase(input_nr);
}

bool Node::remove_hook(uint64_t id) {
  if (pre_hooks_.hooks.erase(id)) return true;
  if (post_hooks_.hooks.erase(id)) return true;
  for (auto& [nr, list] : tensor_pre_hooks_) {
    if (list.hooks.erase(id)) return true;
  }
  return false;
}

void Node::run_tensor_pre_hooks(variable_list& grads) const {
  for (const auto& [nr, list] : tensor_pre_hooks_) {
    if (nr >= grads.size()) continue;
    for (const auto& [id, hook] : list.hooks) {
      if (!grads[nr].defined()) break;
      std::optional<Tensor> r = hook(grads[nr]);
      if (r && r->defined()) grads[nr] = std::move(*r);
    }
  }
  for (const auto& [nr, hook] : retains_grad_hooks_) {
    if (nr < grads.size() && grads[nr].defined()) hook(grads[nr]);
  }
}

}  // namespace autograd
}  // namespace ember
