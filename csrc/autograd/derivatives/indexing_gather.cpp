// Derivatives of gather, take, take_along_dim and the scatter family (scatter, scatter_add,
// scatter_reduce), as PyTorch's derivatives.yaml / FunctionsManual.cpp define them.
//
// Two deliberate differences from PyTorch, both where PyTorch has no usable gradient:
// - src larger than index (allowed by scatter): only src's index-shaped corner is read, so its
//   gradient is the gathered gradient padded with zeros (PyTorch returns an index-shaped
//   gradient and the engine rejects it).
// - scatter(..., reduce="add" | "multiply"): PyTorch records a NotImplemented node; here they
//   get the gradients of scatter_reduce("sum" | "prod", include_self=True), which they equal.
#include "api/binary.h"
#include "api/compare.h"
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/indexing.h"
#include "autograd/derivatives/views.h"
#include "autograd/record.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// t restricted to the leading index-shaped block (the part scatter reads of src).
Tensor leading_block(const Tensor& t, IntArrayRef shape) {
  Tensor r = t;
  for (int64_t k = 0; k < t.dim(); ++k) {
    if (r.size(k) != shape[k]) r = ember::narrow(r, k, 0, shape[k]);
  }
  return r;
}

// g.gather(dim, index) as the gradient of a src of `src_sizes` (zero outside index's block).
Tensor gathered_for_src(const Tensor& g, int64_t dim, const Tensor& index, IntArrayRef src_sizes) {
  Tensor picked = ember::gather(g, dim, index);
  if (picked.sizes().equals(src_sizes)) return picked;
  const DimVector block(index.sizes());
  return embed_into_zeros(src_sizes, picked,
                          [&](const Tensor& z) { return leading_block(z, block); });
}

// Negative indices (take, take_along_dim) wrapped into [0, size).
Tensor wrapped(const Tensor& index, int64_t size) {
  if (size <= 0) return index;
  return remainder(index, scalar_tensor(Scalar(size), ScalarType::Int64));
}

bool any_true(const Tensor& t) {
  Tensor a = ember::any(t);
  return *ember::contiguous(a).data<bool>();
}

// A gradient that is fine to use but must not be differentiated again (PyTorch's DelayedError).
Tensor delayed_error(const Tensor& grad, const char* msg) {
  const std::string message(msg);
  auto node = autograd::new_node(
      "DelayedError", {grad},
      [message](FunctionNode&, const variable_list&) -> variable_list { throw Error(message); });
  return autograd::record(node, {grad}, Tensor(), "scatter_reduce",
                          [&] { return autograd::detach(grad); });
}

struct ScatterGrads {
  Tensor self, src;
};

// PyTorch's scatter_reduce_backward. `src` is the full source (its gradient has its shape);
// `result` the op's output.
ScatterGrads scatter_reduce_grads(const Tensor& grad, const Tensor& self, int64_t dim,
                                  const Tensor& index, const Tensor& src_full,
                                  const std::string& reduce, bool include_self,
                                  const Tensor& result) {
  ScatterGrads r;
  const ScalarType dt = grad.dtype();
  const DimVector src_sizes(src_full.sizes());
  const Tensor src = leading_block(src_full, index.sizes());
  Tensor grad_src;
  if (reduce == "sum") {
    r.self = grad;
    grad_src = ember::gather(grad, dim, index);
  } else if (reduce == "prod") {
    // Exclusive products, computed explicitly where self or src hold zeros.
    Tensor masked_self = ember::masked_fill(self, eq(self, num(0)), Scalar(int64_t(1)));
    Tensor masked_self_result =
        ember::scatter_reduce(masked_self, dim, index, src, reduce, include_self);
    // (Complex inputs reach here only through scatter(reduce="multiply"): the derivative
    // factors are conjugated, as for any holomorphic function.)
    r.self = ember::mul(grad, conj(ember::div(masked_self_result, masked_self)));
    Tensor src_zero = eq(src, num(0));
    Tensor src_num_zeros = ember::gather(
        ember::scatter_add(zeros_for(self.sizes(), grad), dim, index, to_dtype(src_zero, dt)), dim,
        index);
    Tensor src_single_zero = bitwise_and(src_zero, eq(src_num_zeros, num(1)));
    Tensor masked_src = ember::masked_fill(src, src_single_zero, Scalar(int64_t(1)));
    Tensor masked_src_result =
        ember::scatter_reduce(self, dim, index, masked_src, reduce, include_self);
    grad_src =
        where(src_single_zero, ember::gather(ember::mul(grad, conj(masked_src_result)), dim, index),
              ember::div(ember::gather(ember::mul(grad, conj(result)), dim, index),
                         conj(ember::masked_fill(src, src_zero, Scalar(int64_t(1))))));
    if (autograd::GradMode::is_enabled() && any_true(gt(src_num_zeros, num(1)))) {
      grad_src = delayed_error(grad_src,
                               "scatter_reduce(): Double backward is unsupported for src when >1 "
                               "zeros in src are scattered to the same position in self");
    }
  } else if (reduce == "mean") {
    Tensor n = include_self ? ones(grad.sizes(), TensorOptions(dt, grad.device()))
                            : zeros_for(grad.sizes(), grad);
    n = ember::scatter_add(n, dim, index, ones(index.sizes(), TensorOptions(dt, grad.device())));
    n = ember::masked_fill(n, eq(n, num(0)), Scalar(int64_t(1)));
    r.self = ember::div(grad, n);
    grad_src = ember::div(ember::gather(grad, dim, index), ember::gather(n, dim, index));
  } else {  // amax / amin: the gradient is shared evenly between the tied extremes
    Tensor value = ember::gather(result, dim, index);
    Tensor self_is_result = to_dtype(eq(self, result), dt);
    Tensor src_is_result = to_dtype(eq(src, value), dt);
    Tensor count = ember::scatter_add(self_is_result, dim, index, src_is_result);
    Tensor distributed = ember::div(grad, count);
    r.self = ember::mul(self_is_result, distributed);
    grad_src = ember::mul(src_is_result, ember::gather(distributed, dim, index));
  }
  if (!include_self) r.self = ember::scatter(r.self, dim, index, Scalar(int64_t(0)));
  if (!grad_src.sizes().equals(src_sizes)) {
    const DimVector block(index.sizes());
    grad_src = embed_into_zeros(src_sizes, grad_src,
                                [&](const Tensor& z) { return leading_block(z, block); });
  }
  r.src = grad_src;
  return r;
}

// For in-place forms, an input the formula needs is overwritten by the op: save a copy.
Tensor original(const Tensor& t, const Tensor& out) {
  return out.defined() && out.is_same(t) ? ember::clone(t) : t;
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const DimVector in_sizes(self.sizes());
  auto node = autograd::new_node(
      "GatherBackward0", {self}, [in_sizes, dim](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::scatter_add(zeros_for(in_sizes, g[0]), dim, n.saved(0), g[0])};
      });
  node->save(index);
  if (node->has_forward()) {
    node->set_jvp([dim](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::gather(t[0], dim, n.saved(0))};
    });
  }
  return autograd::record(node, {self}, out, "gather",
                          [&] { return native::gather(self, dim, index, out); });
}

Tensor take(const Tensor& self, const Tensor& index, const Tensor& out) {
  const DimVector in_sizes(self.sizes());
  const int64_t numel = self.numel();
  auto node = autograd::new_node(
      "TakeBackward0", {self}, [in_sizes, numel](FunctionNode& n, const variable_list& g) {
        Tensor flat = zeros_for({numel}, g[0]);
        Tensor idx = ember::reshape(wrapped(n.saved(0), numel), {-1});
        flat = ember::index_add(flat, 0, idx, ember::reshape(g[0], {-1}));
        return variable_list{ember::reshape(flat, in_sizes)};
      });
  node->save(index);
  if (node->has_forward()) {
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::take(t[0], n.saved(0))};
    });
  }
  return autograd::record(node, {self}, out, "take",
                          [&] { return native::take(self, index, out); });
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const Tensor& out) {
  // A gather over self broadcast against indices (PyTorch records GatherBackward0 too); the
  // engine sums the broadcast gradient back to self's shape.
  const DimVector in_sizes(self.sizes());
  const int64_t numel = self.numel();
  DimVector src_shape;
  int64_t d = 0;
  if (dim && self.dim() > 0 && self.dim() == indices.dim()) {
    // Invalid arguments are reported by the forward below, with its own checks and messages.
    try {
      d = wrap_dim(*dim, self.dim(), "take_along_dim");
      DimVector index_sizes(indices.sizes());
      index_sizes[d] = self.size(d);
      src_shape = broadcast_shapes(index_sizes, self.sizes(), "take_along_dim");
    } catch (const std::exception&) {
      src_shape.clear();
    }
  }
  const bool flat = !dim.has_value();
  auto node = autograd::new_node(
      "GatherBackward0", {self},
      [in_sizes, numel, src_shape, d, flat](FunctionNode& n, const variable_list& g) {
        const Tensor idx = n.saved(0);
        if (flat) {
          Tensor z = zeros_for({numel}, g[0]);
          z = ember::scatter_add(z, 0, ember::reshape(idx, {-1}), ember::reshape(g[0], {-1}));
          return variable_list{ember::reshape(z, in_sizes)};
        }
        Tensor expanded = ember::expand(wrapped(idx, src_shape[d]), g[0].sizes());
        return variable_list{ember::scatter_add(zeros_for(src_shape, g[0]), d, expanded, g[0])};
      });
  node->save(indices);
  if (node->has_forward()) {
    node->set_jvp([dim](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::take_along_dim(t[0], n.saved(0), dim)};
    });
  }
  return autograd::record(node, {self}, out, "take_along_dim",
                          [&] { return native::take_along_dim(self, indices, dim, out); });
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce, const Tensor& out) {
  const DimVector src_sizes(src.sizes());
  auto node = autograd::new_node(
      "ScatterBackward0", {self, src},
      [dim, reduce, src_sizes](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const Tensor idx = n.saved(0);
        if (reduce == "multiply") {
          ScatterGrads s = scatter_reduce_grads(g[0], n.saved(1), dim, idx, n.saved(2), "prod",
                                                /*include_self=*/true, n.saved(3));
          if (n.should_compute_output(0)) r[0] = s.self;
          if (n.should_compute_output(1)) r[1] = s.src;
          return r;
        }
        if (n.should_compute_output(0)) {
          r[0] = reduce == "add" ? g[0] : ember::scatter(g[0], dim, idx, Scalar(int64_t(0)));
        }
        if (n.should_compute_output(1)) r[1] = gathered_for_src(g[0], dim, idx, src_sizes);
        return r;
      });
  node->save(index);
  const bool multiply = reduce == "multiply";
  if (multiply && node->has_forward() && !autograd::forward_ad::has_tangent(src)) {
    // Linear in self: scatter the tangent with the same factors. (A tangent of src goes through
    // the backward-derived JVP, which the product over colliding indices needs.)
    node->set_jvp([dim](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::scatter(t[0], dim, n.saved(0), n.saved(2), "multiply")};
    });
  }
  node->save(multiply ? original(self, out) : Tensor());
  node->save(multiply ? src : Tensor());
  const bool inplace = is_inplace_form(self, out);
  Tensor r = autograd::record(node, {self, src}, out, "scatter", [&] {
    if (!inplace) return native::scatter(self, dim, index, src, reduce, out);
    Tensor s = self;
    return native::scatter_(s, dim, index, src, reduce);
  });
  node->save(multiply ? r : Tensor(), /*is_output=*/true);
  return r;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce, const Tensor& out) {
  // "multiply" scales each target by value^(number of hits): that factor, conjugated, is the
  // gradient's scale; "add" shifts, so the gradient passes through.
  auto node = autograd::new_node(
      "ScatterBackward1", {self}, [dim, reduce, value](FunctionNode& n, const variable_list& g) {
        const Tensor idx = n.saved(0);
        if (reduce == "add") return variable_list{g[0]};
        if (reduce == "multiply") {
          Scalar v = value.is_complex() ? Scalar(std::conj(value.to_complex())) : value;
          Tensor factor = ember::scatter(ones(g[0].sizes(), TensorOptions(g[0].dtype())), dim, idx,
                                         v, "multiply");
          return variable_list{ember::mul(g[0], factor)};
        }
        return variable_list{ember::scatter(g[0], dim, idx, Scalar(int64_t(0)))};
      });
  node->save(index);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self}, out, "scatter", [&] {
    if (!inplace) return native::scatter(self, dim, index, value, reduce, out);
    Tensor s = self;
    return native::scatter_(s, dim, index, value, reduce);
  });
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const Tensor& out) {
  const DimVector src_sizes(src.sizes());
  auto node = autograd::new_node("ScatterAddBackward0", {self, src},
                                 [dim, src_sizes](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   if (n.should_compute_output(0)) r[0] = g[0];
                                   if (n.should_compute_output(1))
                                     r[1] = gathered_for_src(g[0], dim, n.saved(0), src_sizes);
                                   return r;
                                 });
  node->save(index);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self, src}, out, "scatter_add", [&] {
    if (!inplace) return native::scatter_add(self, dim, index, src, out);
    Tensor s = self;
    return native::scatter_add_(s, dim, index, src);
  });
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self, const Tensor& out) {
  EMBER_CHECK_T(NotImplementedError, !self.is_complex() && !src.is_complex(),
                "scatter_reduce does not support automatic differentiation for outputs with "
                "complex dtype.");
  auto node = autograd::new_node(
      "ScatterReduceBackward0", {self, src},
      [dim, reduce, include_self](FunctionNode& n, const variable_list& g) {
        ScatterGrads s = scatter_reduce_grads(g[0], n.saved(1), dim, n.saved(0), n.saved(2), reduce,
                                              include_self, n.saved(3));
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = s.self;
        if (n.should_compute_output(1)) r[1] = s.src;
        return r;
      });
  node->save(index);
  const bool needs_values = reduce != "sum";
  node->save(needs_values ? original(self, out) : Tensor());
  node->save(src);
  const bool inplace = is_inplace_form(self, out);
  Tensor r = autograd::record(node, {self, src}, out, "scatter_reduce", [&] {
    if (!inplace) return native::scatter_reduce(self, dim, index, src, reduce, include_self, out);
    Tensor s = self;
    return native::scatter_reduce_(s, dim, index, src, reduce, include_self);
  });
  node->save(needs_values ? r : Tensor(), /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
