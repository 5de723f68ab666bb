// Derivatives of nll_loss and cross_entropy. See Note [Fused backward, composite double
// backward] in nn_norm.cpp: the composite path writes the same gradients with public ops
// (softmax, scatter, ...), so cross_entropy's gradient is differentiable again.
#include <memory>

#include "api/compare.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/nn/loss.h"
#include "api/nn/softmax.h"
#include "api/range_factories.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/derivatives/nn/loss.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

constexpr int64_t kMean = static_cast<int64_t>(LossReduction::Mean);
constexpr int64_t kNone = static_cast<int64_t>(LossReduction::None);

struct ClassLayout {
  int64_t dim;  // the class dim: 0 for a 1-D input, else 1
  int64_t C;
  DimVector shape;  // (C) or (1, C, 1, ...): broadcasts a class vector against the input
};

ClassLayout class_layout(const Tensor& input) {
  ClassLayout l;
  l.dim = input.dim() == 1 ? 0 : 1;
  l.C = input.size(l.dim);
  l.shape = DimVector(input.dim());
  for (int64_t d = 0; d < input.dim(); ++d) l.shape[d] = d == l.dim ? l.C : 1;
  return l;
}

// The gradient of the reduced loss spread over the samples, with the class dim kept (size 1).
Tensor sample_grad(const Tensor& g, int64_t reduction, double denom, const ClassLayout& l,
                   const Tensor& input) {
  if (reduction == kNone) return input.dim() == 1 ? g : ember::unsqueeze(g, l.dim);
  return reduction == kMean ? ember::div(g, num(denom)) : g;
}

// Class-index targets: the target with ignored entries replaced by 0, the mask of the others (in
// the input's dtype) and the per-sample weight w[target] (or undefined), all of the target's
// shape (0-d for a 1-D input).
struct IndexTargets {
  Tensor safe, valid, w_t;
};

IndexTargets index_targets(const Tensor& target, const Tensor& weight, int64_t ignore_index,
                           const Tensor& input) {
  Tensor t = input.dim() == 1 ? ember::reshape(target, {}) : target;
  t = ember::to_dtype(t, ScalarType::Int64);
  IndexTargets r;
  const Tensor ignore = scalar_tensor(Scalar(ignore_index), ScalarType::Int64);
  const Tensor valid = ember::ne(t, ignore);
  r.safe = ember::where(valid, t, scalar_tensor(Scalar(int64_t(0)), ScalarType::Int64));
  r.valid = ember::to_dtype(valid, input.dtype());
  if (weight.defined()) r.w_t = ember::reshape(ember::take(weight, r.safe), r.safe.sizes());
  return r;
}

// nll_loss's gradient with public ops: -w[t] * g at (n, t, ...), zero elsewhere.
Tensor nll_grad_composite(const Tensor& g, const Tensor& input, const Tensor& target,
                          const Tensor& weight, int64_t reduction, int64_t ignore_index,
                          double total_weight) {
  const ClassLayout l = class_layout(input);
  const IndexTargets it = index_targets(target, weight, ignore_index, input);
  Tensor vals = ember::neg(it.w_t.defined() ? ember::mul(it.w_t, it.valid) : it.valid);
  vals = ember::mul(vals, reduction == kMean ? ember::div(g, num(total_weight)) : g);
  vals = ember::unsqueeze(vals, l.dim);
  const Tensor index = ember::unsqueeze(it.safe, l.dim);
  const Tensor zeros = zeros_for(input.sizes(), input);
  return ember::scatter(zeros, l.dim, index, ember::expand(vals, index.sizes()));
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  refuse_grad(weight, "nll_loss", "weight");
  auto total_weight = std::make_shared<double>(0.0);
  auto node = autograd::new_node(
      "NllLossBackward0", {input},
      [reduction, ignore_index, total_weight](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list(1);
        const Tensor x = n.saved(0), t = n.saved(1), w = n.saved(2);
        if (!autograd::GradMode::is_enabled()) {
          return variable_list{
              nll_loss_backward(g[0], x, t, w, reduction, ignore_index, *total_weight)};
        }
        return variable_list{
            nll_grad_composite(g[0], x, t, w, reduction, ignore_index, *total_weight)};
      });
  node->save(input);
  node->save(target);
  node->save(weight);
  if (node->has_forward()) {
    // Linear in input (the mean's total weight depends on target and weight only).
    node->set_jvp([reduction, ignore_index](FunctionNode& n, const variable_list& t) {
      if (!t[0].defined()) return variable_list{Tensor()};
      return variable_list{ember::nll_loss(t[0], n.saved(1), n.saved(2), reduction, ignore_index)};
    });
  }
  return autograd::record(node, {input}, Tensor(), "nll_loss", [&] {
    NllResult r = nll_loss_forward(input, target, weight, reduction, ignore_index);
    *total_weight = r.total_weight;
    return r.loss;
  });
}

namespace {

// cross_entropy's gradients with public ops (create_graph=True).
variable_list cross_entropy_composite(FunctionNode& n, const Tensor& g, const Tensor& input,
                                      const Tensor& target, const Tensor& weight, int64_t reduction,
                                      int64_t ignore_index, double ls, double total_weight) {
  variable_list r(2);
  const ClassLayout l = class_layout(input);
  const bool prob = is_probability_target(input, target);
  const double samples = l.C > 0 ? static_cast<double>(input.numel() / l.C) : 0.0;
  const Tensor gs = sample_grad(g, reduction, prob ? samples : total_weight, l, input);
  const Tensor wv = weight.defined() ? ember::reshape(weight, l.shape) : Tensor();
  const std::vector<int64_t> cdim{l.dim};
  const Tensor p = ember::softmax(input, l.dim);
  if (prob) {
    const Tensor tt = ember::add(ember::mul(target, num(1.0 - ls)), num(ls / l.C));
    const Tensor wt = wv.defined() ? ember::mul(tt, wv) : tt;
    if (n.should_compute_output(0)) {
      r[0] = ember::mul(gs, ember::sub(ember::mul(p, ember::sum(wt, cdim, true)), wt));
    }
    if (n.should_compute_output(1)) {
      Tensor lsm = ember::log_softmax(input, l.dim);
      if (wv.defined()) lsm = ember::mul(lsm, wv);
      r[1] = ember::mul(ember::mul(gs, num(-(1.0 - ls))), lsm);
    }
    return r;
  }
  if (!n.should_compute_output(0)) return r;
  const IndexTargets it = index_targets(target, weight, ignore_index, input);
  const Tensor classes = ember::reshape(
      arange(Scalar(int64_t(0)), Scalar(l.C), Scalar(int64_t(1)), TensorOptions(ScalarType::Int64)),
      l.shape);
  const Tensor safe = input.dim() == 1 ? it.safe : ember::unsqueeze(it.safe, l.dim);
  const Tensor onehot = ember::to_dtype(ember::eq(safe, classes), input.dtype());
  const Tensor w_t = it.w_t.defined() ? it.w_t : num(1.0);
  const double w_sum = weight.defined() ? 0.0 : static_cast<double>(l.C);
  const Tensor w_total = weight.defined() ? ember::sum(weight) : num(w_sum);
  // A = ((1 - ls) w_t + ls / C sum(w)) valid,  B = ((1 - ls) w_t onehot + ls / C w_c) valid.
  // Without a weight the factors are numbers: folded in double (a product of two wrapped
  // numbers would be computed in float32).
  Tensor a = weight.defined() ? ember::mul(ember::add(ember::mul(w_t, num(1.0 - ls)),
                                                      ember::mul(w_total, num(ls / l.C))),
                                           it.valid)
                              : ember::mul(num((1.0 - ls) + w_sum * ls / l.C), it.valid);
  Tensor keep = weight.defined() ? ember::mul(ember::mul(w_t, num(1.0 - ls)), it.valid)
                                 : ember::mul(num(1.0 - ls), it.valid);
  if (input.dim() > 1) {
    a = ember::unsqueeze(a, l.dim);
    keep = ember::unsqueeze(keep, l.dim);
  }
  const Tensor valid = input.dim() > 1 ? ember::unsqueeze(it.valid, l.dim) : it.valid;
  Tensor b = ember::mul(onehot, keep);
  if (ls > 0) {
    const Tensor smooth = wv.defined() ? ember::mul(wv, num(ls / l.C)) : num(ls / l.C);
    b = ember::add(b, ember::mul(smooth, valid));
  }
  r[0] = ember::mul(gs, ember::sub(ember::mul(p, a), b));
  return r;
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t reduction, int64_t ignore_index, double label_smoothing) {
  refuse_grad(weight, "cross_entropy", "weight");
  auto total_weight = std::make_shared<double>(0.0);
  auto node =
      autograd::new_node("CrossEntropyLossBackward0", {input, target},
                         [reduction, ignore_index, label_smoothing, total_weight](
                             FunctionNode& n, const variable_list& g) {
                           if (!g[0].defined()) return variable_list(2);
                           const Tensor x = n.saved(0), t = n.saved(1), w = n.saved(2);
                           if (!autograd::GradMode::is_enabled()) {
                             CrossEntropyResult saved;
                             saved.lse = n.saved(3);
                             saved.target_rows = n.saved(4);
                             saved.weight = n.saved(5);
                             saved.total_weight = *total_weight;
                             auto [gi, gt] = cross_entropy_backward(
                                 g[0], x, t, saved, reduction, ignore_index, label_smoothing,
                                 n.should_compute_output(0), n.should_compute_output(1));
                             return variable_list{gi, gt};
                           }
                           return cross_entropy_composite(n, g[0], x, t, w, reduction, ignore_index,
                                                          label_smoothing, *total_weight);
                         });
  node->save(input);
  node->save(target);
  node->save(weight);
  if (node->has_forward()) {
    // Each loss element depends on one sample's row only, so the backward at grad = 1 holds the
    // derivatives of every element: the JVP sums them against the tangents over the classes.
    node->set_jvp([reduction, ignore_index, label_smoothing, total_weight](
                      FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!jvp::any_defined(tan)) return {Tensor()};
      const autograd::InputMetadata& md = n.input_metadata(0);
      const Tensor one = ember::ones(md.shape, TensorOptions(md.dtype));
      const Tensor x = n.saved(0);
      const variable_list d = cross_entropy_composite(n, one, x, n.saved(1), n.saved(2), reduction,
                                                      ignore_index, label_smoothing, *total_weight);
      Tensor r;
      for (size_t i = 0; i < 2; ++i) {
        if (tan[i].defined() && d[i].defined()) r = jvp::add(r, ember::mul(d[i], tan[i]));
      }
      if (!r.defined()) return {Tensor()};
      if (reduction == kNone && x.dim() > 1) return {ember::sum(r, std::vector<int64_t>{1})};
      return {ember::sum(r)};
    });
  }
  CrossEntropyResult res;
  Tensor out = autograd::record(node, {input, target}, Tensor(), "cross_entropy", [&] {
    res = cross_entropy_forward(input, target, weight, reduction, ignore_index, label_smoothing);
    *total_weight = res.total_weight;
    return res.loss;
  });
  node->save(res.lse);
  node->save(res.target_rows);
  node->save(res.weight);
  return out;
}

}  // namespace derivatives
}  // namespace ember
