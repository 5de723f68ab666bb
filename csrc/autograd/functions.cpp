#include "autograd/functions.h"

#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/range_factories.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "dispatch/copy.h"

namespace ember {
namespace autograd {

// ---- AccumulateGrad -------------------------------------------------------------------------

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

namespace {

// A gradient the accumulator may keep as .grad without copying: nobody else can see it.
bool can_steal(const Tensor& g) {
  return g.impl_ptr().use_count() == 1 && !g.impl()->view_base() && g.is_contiguous() &&
         g.storage().use_count() == 1;
}

}  // namespace

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  AutogradMeta& m = materialize_meta(variable_);
  for (const auto& [id, hook] : m.leaf_hooks.hooks) {
    std::optional<Tensor> r = hook(g);
    if (r && r->defined()) g = std::move(*r);
  }
  if (GradMode::is_enabled()) {
    // create_graph: the new .grad is recorded (clone or add), and recording takes the grad
    // accumulator of every input, under that input's meta lock. g may be this very variable
    // (x.backward(x, create_graph=True)), so the op must run outside m.mutex, or the thread
    // locks it twice and hangs. accumulate_mutex_ keeps the read, compute and write of this
    // leaf's .grad one step.
    std::lock_guard<std::mutex> serial(accumulate_mutex_);
    Tensor old;
    {
      std::lock_guard<std::mutex> lock(m.mutex);
      old = m.grad_slot->grad;
    }
    Tensor updated = old.defined() ? add(old, g) : clone(g);
    std::lock_guard<std::mutex> lock(m.mutex);
    m.grad_slot->grad = std::move(updated);
  } else {
    std::lock_guard<std::mutex> lock(m.mutex);
    Tensor& old = m.grad_slot->grad;
    if (!old.defined()) {
      old = can_steal(g) ? std::move(g) : clone(g);
    } else {
      add(old, g, 1, old);  // in place, as PyTorch: whoever holds .grad sees the sum
    }
  }
  for (const auto& [id, hook] : m.post_accumulate_hooks.hooks) hook(variable_);
  return {};
}

// ---- GraphRoot / FunctionNode ---------------------------------------------------------------

GraphRoot::GraphRoot(edge_list roots, variable_list grads)
    : Node(std::move(roots)), grads_(std::move(grads)) {
  for (const Tensor& g : grads_) {
    if (g.defined()) {
      add_input_metadata(g);
    } else {
      add_input_metadata_undefined();
    }
  }
}

variable_list FunctionNode::apply(variable_list&& grads) {
  return formula_(*this, grads);
}

void FunctionNode::release_variables() {
  for (SavedVariable& s : saved_) s.reset_data();
}

size_t FunctionNode::save(const Tensor& t, bool is_output) {
  saved_.emplace_back(t, is_output);
  return saved_.size() - 1;
}

Tensor FunctionNode::saved(size_t i) {
  return saved_.at(i).unpack(shared_from_this());
}

// ---- views ----------------------------------------------------------------------------------

namespace {

// The storage positions (relative to the base's offset) of every element of `view`, in the
// view's shape, as int64.
Tensor storage_indices(const ViewGeometry& view, int64_t base_offset) {
  Tensor idx = scalar_tensor(Scalar(view.offset - base_offset), ScalarType::Int64);
  for (size_t d = 0; d < view.sizes.size(); ++d) {
    Tensor steps = arange(0, view.sizes[d], 1, TensorOptions(ScalarType::Int64));
    steps = mul(steps, scalar_tensor(Scalar(view.strides[d]), ScalarType::Int64));
    idx = add(unsqueeze(idx, -1), steps);
  }
  return idx;
}

int64_t storage_extent(const ViewGeometry& g) {
  int64_t n = 1;
  for (size_t d = 0; d < g.sizes.size(); ++d) {
    if (g.sizes[d] == 0) return 0;
    n += (g.sizes[d] - 1) * g.strides[d];
  }
  return n;
}

}  // namespace

CopySlices::CopySlices(const Tensor& base, ViewGeometry view, std::shared_ptr<Node> fn)
    : view_(std::move(view)), fn_(std::move(fn)) {
  base_.sizes = DimVector(base.sizes());
  base_.strides = DimVector(base.strides());
  base_.offset = base.storage_offset();
  add_input_metadata(base);
  edge_list edges;
  edges.push_back(gradient_edge(base));
  for (size_t i = 1; i < fn_->num_outputs(); ++i) edges.push_back(fn_->next_edge(i));
  set_next_edges(std::move(edges));
}

variable_list CopySlices::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  const Tensor& grad = grads.at(0);
  if (!grad.defined()) return out;
  EMBER_CHECK(fn_,
              "Trying to backward through the graph a second time (CopySlices was freed); "
              "specify retain_graph=True");
  // The base's gradient laid out like the base, so the view's geometry addresses it.
  Tensor flat = zeros({storage_extent(base_)}, TensorOptions(grad.dtype()));
  Tensor result = as_strided(flat, base_.sizes, base_.strides, 0);
  copy_(result, grad);
  Tensor slice = as_strided(flat, view_.sizes, view_.strides, view_.offset - base_.offset);
  variable_list res = fn_->apply({clone(slice)});
  for (size_t i = 0; i < res.size() && i < out.size(); ++i) {
    if (i == 0) {
      if (res[0].defined()) {
        copy_(slice, res[0]);
      } else {
        zero_(slice);
      }
      out[0] = result;
    } else {
      out[i] = std::move(res[i]);
    }
  }
  return out;
}

void CopySlices::release_variables() {
  if (fn_) fn_->release_variables();
}

variable_list AsStridedBackward::apply(variable_list&& grads) {
  const Tensor& grad = grads.at(0);
  if (!grad.defined()) return {Tensor()};
  // index_add handles views whose elements overlap in storage (expand, unfold).
  Tensor flat = zeros({storage_extent(base_)}, TensorOptions(grad.dtype()));
  Tensor idx = reshape(storage_indices(view_, base_.offset), {-1});
  flat = index_add(flat, 0, idx, reshape(grad, {-1}));
  return {as_strided(flat, base_.sizes, base_.strides, 0)};
}

// ---- shape helpers --------------------------------------------------------------------------

bool is_expandable_to(IntArrayRef shape, IntArrayRef target) {
  if (shape.size() > target.size()) return false;
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1 && shape[i] != target[lead + i]) return false;
  }
  return true;
}

Tensor sum_to(const Tensor& grad, IntArrayRef shape) {
  if (grad.sizes().equals(shape)) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && grad.size(lead + static_cast<int64_t>(i)) != 1) {
      dims.push_back(lead + static_cast<int64_t>(i));
    }
  }
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  if (lead > 0 || !r.sizes().equals(shape)) r = reshape(r, shape);
  return r;
}

}  // namespace autograd
}  // namespace ember
