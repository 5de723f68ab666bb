// Autograd state of a tensor (AutogradMeta) and the functions the engine, the derivative
// formulas and the bindings use on it: requires_grad, grad_fn, gradient_edge, set_history,
// rebase_history (in-place ops, CopySlices for views), detach.
#pragma once
#include <memory>
#include <mutex>

#include "autograd/forward_ad.h"
#include "autograd/node.h"
#include "core/tensor.h"

namespace ember {
namespace autograd {

// .grad of a tensor. Shared so that retain_grad's hook can hold it weakly (no reference cycle
// through create_graph gradients).
struct GradSlot {
  Tensor grad;
};

struct AutogradMeta : AutogradMetaInterface {
  AutogradMeta();
  ~AutogradMeta() override;

  std::shared_ptr<Node> grad_fn;         // null for leaves
  std::weak_ptr<Node> grad_accumulator;  // leaves that require grad: their AccumulateGrad
  std::shared_ptr<GradSlot> grad_slot;   // never null
  bool requires_grad = false;            // meaningful for leaves only
  bool retains_grad = false;
  uint32_t output_nr = 0;  // which output of grad_fn this tensor is
  // Views: the version of the storage when grad_fn was last set; if the version moved on (an
  // in-place write through some alias), grad_fn is regenerated from the base.
  uint32_t attr_version = 0;
  // A view returned by an op with several view outputs (split, chunk, unbind) while recording,
  // or a view of one: modifying it in place raises, as PyTorch's CreationMeta::MULTI_OUTPUT_NODE.
  bool multi_output_view = false;
  // Leaf hooks (run by AccumulateGrad before accumulating) and post-accumulate hooks.
  HookList<TensorHook> leaf_hooks;
  HookList<std::function<void(const Tensor&)>> post_accumulate_hooks;
  std::mutex mutex;  // guards grad_accumulator creation and forward_grads
  // Forward-mode AD: the tensor's tangent at each level it has one (forward_ad.h).
  ForwardGrads forward_grads;
};

// The meta of `t`, or null when it never took part in autograd.
inline AutogradMeta* meta_of(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.impl()->autograd_meta());
}
AutogradMeta& materialize_meta(const Tensor& t);

// grad_fn of `t`, regenerated for a view whose base changed under it.
std::shared_ptr<Node> grad_fn(const Tensor& t);
inline bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_of(t);
  return m && (m->requires_grad || m->grad_fn);
}
bool is_leaf(const Tensor& t);
uint32_t output_nr(const Tensor& t);
// requires_grad_(flag) on a leaf: floating or complex dtype only; not on inference tensors.
void set_requires_grad(const Tensor& t, bool flag, const char* op = "requires_grad_");

Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& g);

// The edge a gradient of `t` travels along: (grad_fn, output_nr) or (its accumulator, 0).
Edge gradient_edge(const Tensor& t);
std::shared_ptr<Node> grad_accumulator(const Tensor& t);
edge_list collect_next_edges(const std::vector<Tensor>& inputs);

// Makes `fn` the history of `t` (a new output of fn).
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn);
// After an in-place op on `t` whose backward is `fn`: `t` (or, for a view, its base through
// CopySlices) gets the new history.
void rebase_history(const Tensor& t, const std::shared_ptr<Node>& fn);
// Raises if `t` may not be modified in place while recording (a leaf that requires grad, or a
// view of one).
void check_inplace(const Tensor& t);

// A tensor sharing storage and version counter with `t` but outside every graph.
Tensor detach(const Tensor& t);
void detach_(const Tensor& t);

// Tensor.retain_grad(): .grad is kept for a non-leaf.
void retain_grad(const Tensor& t);

// A quick filter before forward_ad::has_tangent: a tensor with no autograd metadata has no
// tangent of its own, but a view may take one from its base (forward_ad.cpp, current_cell).
inline bool may_carry_tangent(const Tensor& t) {
  return meta_of(t) != nullptr || t.impl()->view_base();
}

// True when recording is on and some input takes part in autograd.
inline bool any_requires_grad(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t && t->defined() && requires_grad(*t)) return true;
  }
  return false;
}
// Whether an op on these inputs builds a node: for reverse mode (recording is on and an input
// takes part in autograd) or for forward mode (an input carries a tangent at an open level,
// whatever the grad mode: Note [Forward AD through the nodes]).
template <typename... Ts>
inline bool should_record(const Ts&... ts) {
  if (grad_state::flags().grad_enabled &&
      (... || (ts.defined() && meta_of(ts) != nullptr && requires_grad(ts)))) {
    return true;
  }
  return forward_ad::any_level_active() &&
         (... || (ts.defined() && may_carry_tangent(ts) && forward_ad::has_tangent(ts)));
}
inline bool should_record_list(const std::vector<Tensor>& ts) {
  if (grad_state::flags().grad_enabled) {
    for (const Tensor& t : ts) {
      if (t.defined() && requires_grad(t)) return true;
    }
  }
  if (!forward_ad::any_level_active()) return false;
  for (const Tensor& t : ts) {
    if (t.defined() && may_carry_tangent(t) && forward_ad::has_tangent(t)) return true;
  }
  return false;
}

}  // namespace autograd
}  // namespace ember
