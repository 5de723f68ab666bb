#include "autograd/variable.h"

#include "api/elementwise.h"
#include "api/views.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "core/error.h"

namespace ember {
namespace autograd {

AutogradMeta::AutogradMeta() : grad_slot(std::make_shared<GradSlot>()) {}

AutogradMeta::~AutogradMeta() {
  release_node(std::move(grad_fn));
}

AutogradMeta& materialize_meta(const Tensor& t) {
  EMBER_CHECK(t.defined(), "[autograd] undefined tensor");
  if (!t.impl()->autograd_meta()) t.impl()->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *meta_of(t);
}

namespace {

ViewGeometry geometry_of(const TensorImpl& t) {
  ViewGeometry g;
  g.sizes = DimVector(t.sizes());
  g.strides = DimVector(t.strides());
  g.offset = t.storage_offset();
  return g;
}

// A view whose base now has a (different) history: its grad_fn goes through the base.
bool view_needs_regeneration(const Tensor& t, const AutogradMeta& m) {
  const auto& base = t.impl()->view_base();
  if (!base || m.attr_version == t.impl()->version()) return false;
  const Tensor b(base);
  const AutogradMeta* bm = meta_of(b);
  return bm && bm->grad_fn;
}

// retain_grad's hook: stores the gradient into .grad (the slot is held weakly).
TensorHook retain_grad_hook(const AutogradMeta& m) {
  std::weak_ptr<GradSlot> slot = m.grad_slot;
  return [slot](const Tensor& g) -> std::optional<Tensor> {
    if (auto s = slot.lock()) {
      if (!s->grad.defined()) {
        s->grad = clone(g);
      } else {
        s->grad = add(s->grad, g);
      }
    }
    return std::nullopt;
  };
}

}  // namespace

std::shared_ptr<Node> grad_fn(const Tensor& t) {
  AutogradMeta* m = meta_of(t);
  if (!m) return nullptr;
  if (m->grad_fn && view_needs_regeneration(t, *m)) {
    const Tensor base(t.impl()->view_base());
    auto fn =
        std::make_shared<AsStridedBackward>(geometry_of(*base.impl()), geometry_of(*t.impl()));
    fn->set_next_edges({gradient_edge(base)});
    fn->add_input_metadata(t);
    release_node(std::move(m->grad_fn));
    m->grad_fn = std::move(fn);
    m->output_nr = 0;
    m->attr_version = t.impl()->version();
  }
  return m->grad_fn;
}

bool is_leaf(const Tensor& t) {
  const AutogradMeta* m = meta_of(t);
  return !m || !m->grad_fn;
}

uint32_t output_nr(const Tensor& t) {
  const AutogradMeta* m = meta_of(t);
  return m ? m->output_nr : 0;
}

void set_requires_grad(const Tensor& t, bool flag, const char* op) {
  if (!flag) {
    AutogradMeta* m = meta_of(t);
    EMBER_CHECK(!m || !m->grad_fn, "[", op,
                "] you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().");
    if (m) m->requires_grad = false;
    return;
  }
  EMBER_CHECK(is_floating(t.dtype()) || ember::is_complex(t.dtype()), "[", op,
              "] only Tensors of floating point and complex dtype can require gradients (got ",
              dtype_name(t.dtype()), ")");
  EMBER_CHECK(!t.impl()->is_inference() || InferenceMode::is_enabled(), "[", op,
              "] Setting requires_grad=True on inference tensor outside InferenceMode is not "
              "allowed.");
  AutogradMeta& m = materialize_meta(t);
  if (m.grad_fn) return;  // a non-leaf already requires grad
  m.requires_grad = true;
}

Tensor grad(const Tensor& t) {
  const AutogradMeta* m = meta_of(t);
  return m ? m->grad_slot->grad : Tensor();
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    EMBER_CHECK(g.dtype() == t.dtype(), "assigned grad has data of a different type (",
                dtype_name(g.dtype()), " vs ", dtype_name(t.dtype()), ")");
    EMBER_CHECK(g.sizes().equals(t.sizes()), "assigned grad has data of a different size");
    EMBER_CHECK(g.device() == t.device(), "assigned grad has data located on a different device");
  }
  AutogradMeta& m = materialize_meta(t);
  std::lock_guard<std::mutex> lock(m.mutex);
  m.grad_slot->grad = g;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMeta* m = meta_of(t);
  if (!m || !m->requires_grad || m->grad_fn) return nullptr;
  std::lock_guard<std::mutex> lock(m->mutex);
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (acc) return acc;
  acc = std::make_shared<AccumulateGrad>(t);
  m->grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return Edge();
  std::shared_ptr<Node> fn = grad_fn(t);
  if (fn) return Edge(std::move(fn), output_nr(t));
  return Edge(grad_accumulator(t), 0);
}

edge_list collect_next_edges(const std::vector<Tensor>& inputs) {
  edge_list edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
  return edges;
}

namespace {

// The output of a node that computes tangents gets a pending tangent at each of its levels.
void attach_forward(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  if (fn->has_forward()) {
    forward_ad::attach_pending(t, std::static_pointer_cast<FunctionNode>(fn), output_nr);
  }
}

}  // namespace

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn) {
  EMBER_CHECK(!t.impl()->is_inference(),
              "Inference tensors cannot be saved for backward. To work around you can make a "
              "clone to get a normal tensor and use it in autograd.");
  if (!fn->records_history()) {  // built for forward-mode AD only: no grad_fn
    attach_forward(t, fn, fn->add_input_metadata(t));
    return;
  }
  AutogradMeta& m = materialize_meta(t);
  // An in-place op gives t a new grad_fn: retain_grad's hook moves with it.
  if (m.retains_grad && m.grad_fn) m.grad_fn->clear_retains_grad_hook(m.output_nr);
  m.output_nr = fn->add_input_metadata(t);
  release_node(std::move(m.grad_fn));
  m.grad_fn = fn;
  if (m.retains_grad) fn->set_retains_grad_hook(m.output_nr, retain_grad_hook(m));
  m.requires_grad = false;
  m.attr_version = t.impl()->version();
  attach_forward(t, fn, m.output_nr);
}

void rebase_history(const Tensor& t, const std::shared_ptr<Node>& fn) {
  const auto& base_impl = t.impl()->view_base();
  if (!base_impl) {
    set_history(t, fn);
    return;
  }
  if (!fn->records_history()) {  // forward-mode AD only
    const uint32_t nr = fn->add_input_metadata(t);
    if (fn->has_forward()) {
      forward_ad::rebase_view_tangents(t, std::static_pointer_cast<FunctionNode>(fn), nr);
    }
    return;
  }
  if (fn->has_forward()) {
    forward_ad::rebase_view_tangents(t, std::static_pointer_cast<FunctionNode>(fn), 0);
  }
  // An in-place op on a view: the base's history gains a CopySlices that applies `fn` to the
  // slice the view covers; the view's own grad_fn is regenerated from the base on next use.
  const Tensor base(base_impl);
  fn->add_input_metadata(t);
  auto copy_slices = std::make_shared<CopySlices>(base, geometry_of(*t.impl()), fn);
  AutogradMeta& bm = materialize_meta(base);
  release_node(std::move(bm.grad_fn));
  bm.grad_fn = std::move(copy_slices);
  bm.output_nr = 0;
  bm.requires_grad = false;
  bm.attr_version = base.impl()->version();
  AutogradMeta& m = materialize_meta(t);
  // The in-place node stands in until grad_fn() regenerates the view's node from the base (the
  // stale version forces that on the next read).
  release_node(std::move(m.grad_fn));
  m.grad_fn = fn;
  m.output_nr = 0;
  m.attr_version = t.impl()->version() - 1;
}

void check_inplace(const Tensor& t) {
  if (!GradMode::is_enabled()) return;
  const AutogradMeta* m = meta_of(t);
  if (m && m->requires_grad && !m->grad_fn) {
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  }
  if (m && m->multi_output_view) {
    // PyTorch names the view's op without its "Backward<N>" suffix here ("Output 0 of Split").
    std::string op = m->grad_fn ? m->grad_fn->name() : std::string("a view op");
    const size_t cut = op.rfind("Backward");
    if (cut != std::string::npos && cut > 0) op.resize(cut);
    throw Error("Output " + std::to_string(m->output_nr) + " of " + op +
                " is a view and is being modified inplace. This view is the output of a function "
                "that returns multiple views. Such functions do not allow the output views to be "
                "modified inplace. You should replace the inplace operation by an out-of-place "
                "one.");
  }
  const auto& base = t.impl()->view_base();
  if (base) {
    const AutogradMeta* bm = static_cast<const AutogradMeta*>(base->autograd_meta());
    if (bm && bm->requires_grad && !bm->grad_fn) {
      throw Error(
          "a view of a leaf Variable that requires grad is being used in an in-place "
          "operation.");
    }
  }
}

Tensor detach(const Tensor& t) {
  auto impl = make_intrusive<TensorImpl>(t.storage(), t.dtype(), t.sizes(), t.strides(),
                                         t.storage_offset(), t.impl()->version_counter());
  impl->set_quantizer(t.impl()->quantizer());
  return Tensor(std::move(impl));
}

void detach_(const Tensor& t) {
  EMBER_CHECK(!t.impl()->view_base() || !requires_grad(Tensor(t.impl()->view_base())),
              "[detach_] Can't detach views in-place. Use detach() instead.");
  AutogradMeta* m = meta_of(t);
  if (!m) return;
  release_node(std::move(m->grad_fn));
  m->requires_grad = false;
  m->output_nr = 0;
}

void retain_grad(const Tensor& t) {
  EMBER_CHECK(requires_grad(t), "can't retain_grad on Tensor that has requires_grad=False");
  AutogradMeta& m = materialize_meta(t);
  if (!m.grad_fn || m.retains_grad) return;  // leaves keep .grad anyway
  grad_fn(t)->set_retains_grad_hook(m.output_nr, retain_grad_hook(m));
  m.retains_grad = true;
}

}  // namespace autograd
}  // namespace ember
