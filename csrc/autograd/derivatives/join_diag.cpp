// Derivatives of the triangular and diagonal ops: tril, triu (and their in-place forms), diag,
// diag_embed, trace; and the recorded diagonal view the formulas (and einsum) use.
#include <algorithm>

#include "api/creation.h"
#include "api/join.h"
#include "api/views.h"
#include "autograd/derivatives/join.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor diagonal_recorded(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor r = native::diagonal(t, offset, dim1, dim2);
  if (!autograd::should_record(t)) return r;
  auto node = autograd::new_node(
      "DiagonalBackward0", {t},
      [sizes = DimVector(t.sizes()), offset, dim1, dim2](FunctionNode&, const variable_list& g) {
        return variable_list{diagonal_backward(g[0], sizes, offset, dim1, dim2)};
      });
  autograd::attach_trace(*node);
  autograd::set_history(r, node);
  return r;
}

Tensor diagonal_backward(const Tensor& g, IntArrayRef sizes, int64_t offset, int64_t dim1,
                         int64_t dim2) {
  // Writing through the diagonal view records a CopySlices when g itself requires grad
  // (create_graph), so this stays differentiable.
  Tensor z = zeros(sizes, TensorOptions(g.dtype()));
  Tensor dv = diagonal_recorded(z, offset, dim1, dim2);
  if (dv.numel() > 0) ember::copy_(dv, g);
  return z;
}

namespace {

Tensor tri(const Tensor& t, int64_t diagonal, const Tensor& out, bool lower) {
  const char* name = lower ? "TrilBackward0" : "TriuBackward0";
  auto node =
      autograd::new_node(name, {t}, [diagonal, lower](FunctionNode&, const variable_list& g) {
        return variable_list{lower ? ember::tril(g[0], diagonal) : ember::triu(g[0], diagonal)};
      });
  return autograd::record(node, {t}, out, lower ? "tril" : "triu", [&] {
    return lower ? native::tril(t, diagonal, out) : native::triu(t, diagonal, out);
  });
}

}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal, const Tensor& out) {
  return tri(t, diagonal, out, true);
}

Tensor triu(const Tensor& t, int64_t diagonal, const Tensor& out) {
  return tri(t, diagonal, out, false);
}

Tensor diag(const Tensor& t, int64_t diagonal, const Tensor& out) {
  // 1-D: the result embeds t on a diagonal; 2-D: the result is a diagonal of t.
  const bool embed = t.dim() == 1;
  auto node = autograd::new_node(
      embed ? "DiagEmbedBackward0" : "DiagonalBackward0_copy", {t},
      [embed, diagonal, sizes = DimVector(t.sizes())](FunctionNode&, const variable_list& g) {
        if (embed) return variable_list{diagonal_recorded(g[0], diagonal, 0, 1)};
        return variable_list{diagonal_backward(g[0], sizes, diagonal, 0, 1)};
      });
  return autograd::record(node, {t}, out, "diag", [&] { return native::diag(t, diagonal, out); });
}

Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = t.dim() + 1;
  const int64_t d1 = dim1 < 0 ? dim1 + nd : dim1, d2 = dim2 < 0 ? dim2 + nd : dim2;
  const bool scalar = t.dim() == 0;
  auto formula = [offset, d1, d2, scalar](FunctionNode&, const variable_list& g) {
    Tensor r = diagonal_recorded(g[0], offset, d1, d2);
    return variable_list{scalar ? ember::reshape(r, {}) : r};
  };
  auto node = autograd::new_node("DiagEmbedBackward0", {t}, formula);
  return autograd::record(node, {t}, Tensor(), "diag_embed",
                          [&] { return native::diag_embed(t, offset, dim1, dim2); });
}

Tensor trace(const Tensor& t) {
  const DimVector sizes(t.sizes());
  auto formula = [sizes](FunctionNode&, const variable_list& g) {
    const int64_t n = std::min(sizes[0], sizes[1]);
    return variable_list{diagonal_backward(ember::expand(g[0], {n}), sizes, 0, 0, 1)};
  };
  auto node = autograd::new_node("TraceBackward0", {t}, formula);
  return autograd::record(node, {t}, Tensor(), "trace", [&] { return native::trace(t); });
}

}  // namespace derivatives
}  // namespace ember
