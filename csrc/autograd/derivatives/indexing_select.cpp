// Derivatives of index_select, index_add, index_copy, index_fill and the masked ops
// (masked_fill, masked_select, masked_scatter), as PyTorch's derivatives.yaml defines them.
// Index and mask tensors are saved (SavedVariable), so modifying one in place after the forward
// is caught at backward time.
#include "api/binary.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/reduce.h"
#include "api/sort.h"
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

Tensor times_conj(const Tensor& t, const Scalar& alpha) {
  if (alpha.is_complex()) return ember::mul(t, wrap_scalar(Scalar(std::conj(alpha.to_complex()))));
  if (alpha.is_floating()) {
    return alpha.to_double() == 1.0 ? t : ember::mul(t, wrap_scalar(alpha));
  }
  return alpha.to_int64() == 1 ? t : ember::mul(t, wrap_scalar(alpha));
}

// The gradient of a 0-d `source` comes back shaped like the gathered slice; reduce it to 0-d.
Tensor shaped_like_source(const Tensor& g, bool source_is_scalar) {
  return source_is_scalar ? ember::reshape(g, IntArrayRef()) : g;
}

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const DimVector in_sizes(self.sizes());
  auto node = autograd::new_node(
      "IndexSelectBackward0", {self}, [in_sizes, dim](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::index_add(zeros_for(in_sizes, g[0]), dim, n.saved(0), g[0])};
      });
  node->save(index);
  if (node->has_forward()) {
    node->set_jvp([dim](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      return {ember::index_select(t[0], dim, n.saved(0))};
    });
  }
  return autograd::record(node, {self}, out, "index_select",
                          [&] { return native::index_select(self, dim, index, out); });
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha, const Tensor& out) {
  const bool scalar_source = source.dim() == 0;
  auto node =
      autograd::new_node("IndexAddBackward0", {self, source},
                         [dim, alpha, scalar_source](FunctionNode& n, const variable_list& g) {
                           variable_list r(2);
                           if (n.should_compute_output(0)) r[0] = g[0];
                           if (n.should_compute_output(1)) {
                             Tensor picked = ember::index_select(g[0], dim, n.saved(0));
                             r[1] = times_conj(shaped_like_source(picked, scalar_source), alpha);
                           }
                           return r;
                         });
  node->save(index);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self, source}, out, "index_add", [&] {
    if (!inplace) return native::index_add(self, dim, index, source, alpha, out);
    Tensor s = self;
    return native::index_add_(s, dim, index, source, alpha);
  });
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                  const Tensor& out) {
  const bool scalar_source = source.dim() == 0;
  auto node = autograd::new_node("IndexCopyBackward0", {self, source},
                                 [dim, scalar_source](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   const Tensor idx = n.saved(0);
                                   if (n.should_compute_output(0)) {
                                     r[0] = ember::index_fill(g[0], dim, idx, Scalar(int64_t(0)));
                                   }
                                   if (n.should_compute_output(1)) {
                                     r[1] = shaped_like_source(ember::index_select(g[0], dim, idx),
                                                               scalar_source);
                                   }
                                   return r;
                                 });
  node->save(index);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self, source}, out, "index_copy", [&] {
    if (!inplace) return native::index_copy(self, dim, index, source, out);
    Tensor s = self;
    return native::index_copy_(s, dim, index, source);
  });
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                  const Tensor& out) {
  auto node = autograd::new_node(
      "IndexFillBackward0", {self}, [dim](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::index_fill(g[0], dim, n.saved(0), Scalar(int64_t(0)))};
      });
  node->save(index);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self}, out, "index_fill", [&] {
    if (!inplace) return native::index_fill(self, dim, index, value);
    Tensor s = self;
    return native::index_fill_(s, dim, index, value);
  });
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value,
                  const Tensor& out) {
  // The value lands once in each distinct filled slice: its gradient sums those slices of g
  // (negative indices wrapped, duplicates counted once).
  const int64_t d = wrap_dim(dim, self.dim(), "index_fill");
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  auto node = autograd::new_node(
      "IndexFillBackward1", {self, value}, [dim, size](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const Tensor idx = n.saved(0);
        if (n.should_compute_output(0)) {
          r[0] = ember::index_fill(g[0], dim, idx, Scalar(int64_t(0)));
        }
        if (n.should_compute_output(1)) {
          Tensor wrapped =
              size > 0 ? remainder(idx, scalar_tensor(Scalar(size), ScalarType::Int64)) : idx;
          Tensor distinct = std::get<0>(unique(ember::reshape(wrapped, {-1}), /*sorted=*/false));
          r[1] = ember::sum(ember::index_select(g[0], dim, distinct));
        }
        return r;
      });
  node->save(index);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self, value}, out, "index_fill", [&] {
    if (!inplace) return native::index_fill(self, dim, index, value);
    Tensor s = self;
    return native::index_fill_(s, dim, index, value);
  });
}

// ---- masks ----------------------------------------------------------------------------------

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value, const Tensor& out) {
  auto node = autograd::new_node(
      "MaskedFillBackward0", {self}, [](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::masked_fill(g[0], n.saved(0), Scalar(int64_t(0)))};
      });
  node->save(mask);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self}, out, "masked_fill", [&] {
    if (!inplace) return native::masked_fill(self, mask, value);
    Tensor s = self;
    return native::masked_fill_(s, mask, value);
  });
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out) {
  auto node = autograd::new_node("MaskedFillBackward1", {self, value},
                                 [](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   const Tensor m = n.saved(0);
                                   if (n.should_compute_output(0))
                                     r[0] = ember::masked_fill(g[0], m, Scalar(int64_t(0)));
                                   if (n.should_compute_output(1))
                                     r[1] = ember::sum(ember::masked_select(g[0], m));
                                   return r;
                                 });
  node->save(mask);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self, value}, out, "masked_fill", [&] {
    if (!inplace) return native::masked_fill(self, mask, value);
    Tensor s = self;
    return native::masked_fill_(s, mask, value);
  });
}

Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out) {
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  auto node = autograd::new_node(
      "MaskedSelectBackward0", {self}, [shape](FunctionNode& n, const variable_list& g) {
        // The engine sums the broadcast gradient back to self's shape.
        return variable_list{ember::masked_scatter(zeros_for(shape, g[0]), n.saved(0), g[0])};
      });
  node->save(mask);
  return autograd::record(node, {self}, out, "masked_select",
                          [&] { return native::masked_select(self, mask, out); });
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source,
                      const Tensor& out) {
  const DimVector source_sizes(source.sizes());
  auto node = autograd::new_node(
      "MaskedScatterBackward0", {self, source},
      [source_sizes](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const Tensor m = n.saved(0);
        if (n.should_compute_output(0)) r[0] = ember::masked_fill(g[0], m, Scalar(int64_t(0)));
        if (n.should_compute_output(1)) {
          // source's first count(mask) elements (in order) were used; the rest get zero.
          Tensor used = ember::masked_select(g[0], m);
          const int64_t numel = checked_numel(source_sizes, "masked_scatter");
          const int64_t k = used.numel();
          if (k < numel) {
            used = embed_into_zeros({numel}, used,
                                    [k](const Tensor& z) { return ember::narrow(z, 0, 0, k); });
          }
          r[1] = ember::reshape(used, source_sizes);
        }
        return r;
      });
  node->save(mask);
  const bool inplace = is_inplace_form(self, out);
  return autograd::record(node, {self, source}, out, "masked_scatter", [&] {
    if (!inplace) return native::masked_scatter(self, mask, source);
    Tensor s = self;
    return native::masked_scatter_(s, mask, source);
  });
}

}  // namespace derivatives
}  // namespace ember
