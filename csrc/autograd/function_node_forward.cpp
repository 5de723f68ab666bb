// FunctionNode's forward-mode half: capturing the inputs' tangents and computing the outputs'
// (Note [Forward AD through the nodes] in forward_ad.h).
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/engine.h"
#include "autograd/forward_ad.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "core/error.h"

namespace ember {
namespace autograd {

void FunctionNode::capture_tangents(const std::vector<Tensor>& inputs) {
  for (uint64_t level : forward_ad::visible_levels()) {
    ForwardLevel fl;
    fl.level = level;
    fl.grad_enabled = GradMode::is_enabled();
    fl.input_tangents.resize(inputs.size());
    bool any = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined() || !may_carry_tangent(inputs[i])) continue;
      fl.input_tangents[i] = forward_ad::tangent(inputs[i], level);
      if (fl.input_tangents[i].defined()) {
        any = true;
        if (forward_needed_.size() < inputs.size()) forward_needed_.resize(inputs.size(), false);
        forward_needed_[i] = true;
      }
    }
    if (any) forward_.push_back(std::move(fl));
  }
  has_forward_ = !forward_.empty();
}

void FunctionNode::add_forward_level(uint64_t level, variable_list input_tangents) {
  ForwardLevel fl;
  fl.level = level;
  fl.grad_enabled = GradMode::is_enabled();
  fl.input_tangents = std::move(input_tangents);
  forward_.push_back(std::move(fl));
  has_forward_ = true;
}

std::vector<uint64_t> FunctionNode::forward_levels() const {
  std::vector<uint64_t> out;
  out.reserve(forward_.size());
  for (const ForwardLevel& fl : forward_) out.push_back(fl.level);
  return out;
}

variable_list FunctionNode::forward_tangents(uint64_t level) {
  std::lock_guard<std::recursive_mutex> lock(forward_mutex_);
  for (ForwardLevel& fl : forward_) {
    if (fl.level != level) continue;
    if (!fl.computed) {
      forward_ad::HideLevelsGuard hide(level);
      if (jvp_) {
        AutoGradMode mode(fl.grad_enabled);
        fl.output_tangents = jvp_(*this, fl.input_tangents);
      } else {
        fl.output_tangents = jvp_by_double_backward(fl.input_tangents, fl.grad_enabled);
      }
      fl.output_tangents.resize(num_inputs());
      // A tangent has its primal's dtype (a formula over a real input of a complex op may give
      // a real one).
      for (size_t k = 0; k < fl.output_tangents.size(); ++k) {
        Tensor& t = fl.output_tangents[k];
        const InputMetadata& md = input_metadata(k);
        if (!t.defined() || !md.defined) continue;
        if (!t.sizes().equals(md.shape)) t = expand(t, md.shape);
        if (t.dtype() != md.dtype) {
          if (t.is_complex() && !ember::is_complex(md.dtype)) t = real(t);
          t = to_dtype(t, md.dtype);
        }
      }
      fl.input_tangents.clear();
      fl.computed = true;
    }
    return fl.output_tangents;
  }
  return variable_list(num_inputs());
}

// The backward formula is linear in the output gradients g, vjp(g) = J^H g. Differentiating the
// real scalar s(g) = sum_i Re<vjp_i(g), t_i> with respect to g gives J t, the JVP, with the
// gradient convention of the engine (for complex g it is the conjugate Wirtinger derivative
// times two, which is exactly the vector w with s = Re<w, g>).
variable_list FunctionNode::jvp_by_double_backward(const variable_list& tangents,
                                                   bool create_graph) {
  const size_t n_out = num_inputs();
  variable_list gs(n_out);
  edge_list g_edges;
  std::vector<size_t> g_index;
  for (size_t k = 0; k < n_out; ++k) {
    const InputMetadata& md = input_metadata(k);
    if (!md.defined) continue;
    // Any point will do, the formula being linear in g; ones rather than zeros, since some
    // formulas evaluate functions of g that are singular at 0 (logcumsumexp takes log |g|).
    gs[k] = ones(md.shape, TensorOptions(md.dtype, md.device));
    set_requires_grad(gs[k], true);
    g_edges.push_back(gradient_edge(gs[k]));
    g_index.push_back(k);
  }
  variable_list out(n_out);
  if (g_edges.empty()) return out;
  Tensor s;
  {
    AutoGradMode on(true);
    variable_list grads = formula_(*this, gs);
    for (size_t i = 0; i < tangents.size() && i < grads.size(); ++i) {
      const Tensor& t = tangents[i];
      Tensor g = grads[i];
      if (!t.defined() || !g.defined()) continue;
      if (!g.sizes().equals(t.sizes())) g = sum_to(g, t.sizes());
      Tensor term =
          (g.is_complex() || t.is_complex()) ? sum(real(mul(conj(g), t))) : sum(mul(g, t));
      s = s.defined() ? add(s, term) : term;
    }
  }
  if (!s.defined() || !requires_grad(s)) return out;
  variable_list captured = Engine::get().execute(
      {gradient_edge(s)}, {ones(s.sizes(), TensorOptions(s.dtype(), s.device()))},
      /*keep_graph=*/create_graph, create_graph, /*accumulate_grad=*/false, g_edges);
  for (size_t j = 0; j < g_index.size() && j < captured.size(); ++j) {
    out[g_index[j]] = captured[j];
  }
  return out;
}

}  // namespace autograd
}  // namespace ember
