// Derivatives of the view ops that need more than a reshape or a permutation of the gradient:
// alias, select, slice, diagonal, unfold, t, the conjugating views (H / mH / adjoint) and the
// multi-output views (split, split_with_sizes, unbind).
//
// Note [Gradient of a strided view]
// The gradient of a view that picks elements of its input without overlap (select, slice,
// diagonal, the split pieces) is zero except where the view looks: a zero tensor of the input's
// shape with the gradient copied into the same view of it. copy_ and the view ops are public and
// recorded, so with create_graph=True the copy gives the zero tensor a CopySlices history and the
// result is differentiable again. Overlapping views (unfold, as_strided) add instead (index_add).
#include "api/conversion.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/range_factories.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/derivatives/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor embed_into_zeros(IntArrayRef sizes, const Tensor& g,
                        const std::function<Tensor(const Tensor&)>& view_of,
                        IntArrayRef dense_strides) {
  const TensorOptions opts(g.dtype(), g.device());
  Tensor z;
  if (dense_strides.empty()) {
    z = zeros(sizes, opts);
  } else {
    z = empty_strided(sizes, dense_strides, opts);
    zero_fresh(z);
  }
  Tensor dst = view_of(z);
  ember::copy_(dst, g);
  return z;
}

DimVector dense_strides_of(const Tensor& t) {
  if (t.is_contiguous() || t.numel() == 0 || !is_non_overlapping_and_dense(t)) return {};
  return DimVector(t.strides());
}

void propagate_view_creation(const Tensor& input, const Tensor& view) {
  const autograd::AutogradMeta* m = autograd::meta_of(input);
  if (!m || !m->multi_output_view) return;
  autograd::AutogradMeta* vm = autograd::meta_of(view);
  if (vm && view.impl()->view_base()) vm->multi_output_view = true;
}

namespace {}  // namespace

Tensor alias(const Tensor& t, const Tensor& result) {
  auto node = autograd::new_node("AliasBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};
  });
  return record_view_result(node, t, result);
}

// select and slice: when t is a permuted view (q = qkv.view(B, T, 3, H, D).permute(2, 0, 3, 1,
// 4)[0] in attention), the gradient takes t's layout, so that undoing the permutation gives a
// contiguous gradient and the view's backward a view instead of a copy.
Tensor select(const Tensor& t, int64_t dim, int64_t index, const Tensor& result) {
  const DimVector in_sizes(t.sizes()), in_strides = dense_strides_of(t);
  auto node = autograd::new_node(
      "SelectBackward0", {t},
      [in_sizes, in_strides, dim, index](FunctionNode&, const variable_list& g) {
        return variable_list{embed_into_zeros(
            in_sizes, g[0], [&](const Tensor& z) { return ember::select(z, dim, index); },
            in_strides)};
      });
  return record_view_result(node, t, result);
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t step, const Tensor& result) {
  const DimVector in_sizes(t.sizes()), in_strides = dense_strides_of(t);
  const int64_t length = result.size(dim);
  auto node = autograd::new_node(
      "SliceBackward0", {t},
      [in_sizes, in_strides, dim, start, step, length](FunctionNode&, const variable_list& g) {
        return variable_list{embed_into_zeros(
            in_sizes, g[0],
            [&](const Tensor& z) {
              const int64_t end = length == 0 ? start : start + (length - 1) * step + 1;
              return ember::slice(z, dim, start, end, step);
            },
            in_strides)};
      });
  return record_view_result(node, t, result);
}

Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length, const Tensor& out) {
  const DimVector in_sizes(t.sizes());
  auto node = autograd::new_node(
      "NarrowCopyBackward0", {t},
      [in_sizes, dim, start, length](FunctionNode&, const variable_list& g) {
        return variable_list{embed_into_zeros(
            in_sizes, g[0], [&](const Tensor& z) { return ember::narrow(z, dim, start, length); })};
      });
  return autograd::record(node, {t}, out, "narrow_copy",
                          [&] { return native::narrow_copy(t, dim, start, length, out); });
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2, const Tensor& result) {
  const DimVector in_sizes(t.sizes());
  auto node = autograd::new_node(
      "DiagonalBackward0", {t},
      [in_sizes, offset, dim1, dim2](FunctionNode&, const variable_list& g) {
        return variable_list{embed_into_zeros(in_sizes, g[0], [&](const Tensor& z) {
          return ember::diagonal(z, offset, dim1, dim2);
        })};
      });
  return record_view_result(node, t, result);
}

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step, const Tensor& result) {
  // result[..., i, ..., j] = t[..., i * step + j, ...] (i along `dim`, j the new last dim):
  // windows may overlap, so every window element is added back with index_add.
  const DimVector in_sizes(t.sizes());
  auto node = autograd::new_node(
      "UnfoldBackward0", {t}, [in_sizes, dim, size, step](FunctionNode&, const variable_list& g) {
        const Tensor& grad = g[0];
        if (in_sizes.empty()) return variable_list{ember::sum(grad)};  // 0-d: one window
        const int64_t windows = grad.size(dim);
        // Put each window's elements next to its position along dim, then merge the two.
        Tensor moved = ember::movedim(grad, {grad.dim() - 1}, {dim + 1});
        DimVector merged(in_sizes);
        merged[dim] = windows * size;
        Tensor source = ember::reshape(moved, merged);
        const TensorOptions long_opts(ScalarType::Int64, grad.device());
        Tensor starts = ember::mul(arange(0, windows, 1, long_opts),
                                   scalar_tensor(Scalar(step), ScalarType::Int64));
        Tensor idx = ember::add(ember::unsqueeze(starts, 1), arange(0, size, 1, long_opts));
        Tensor z = zeros(in_sizes, TensorOptions(grad.dtype(), grad.device()));
        return variable_list{ember::index_add(z, dim, ember::reshape(idx, {-1}), source)};
      });
  return record_view_result(node, t, result);
}

Tensor matrix_t(const Tensor& t, const Tensor& result) {
  auto node = autograd::new_node("TBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::matrix_t(g[0])};
  });
  return record_view_result(node, t, result);
}

Tensor& matrix_t_(Tensor& t) {
  autograd::check_inplace(t);
  const auto transpose_in_place = [&t]() -> Tensor { return native::matrix_t_(t); };
  if (t.impl()->view_base()) {
    // An in-place change of a view's geometry: its grad_fn is regenerated from its base (with
    // the new geometry) the next time it is read, as after any in-place change to a view.
    transpose_in_place();
    autograd::AutogradMeta* m = autograd::meta_of(t);
    if (m && m->grad_fn) m->attr_version = t.impl()->version() - 1;
    return t;
  }
  auto node = autograd::new_node("TBackward1", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::matrix_t(g[0])};
  });
  autograd::record(node, {t}, t, "t_", transpose_in_place);
  return t;
}

Tensor conj_copy(const Tensor& t, const std::function<Tensor(const Tensor&)>& conj_fn) {
  // d conj(z) under the conjugate Wirtinger convention: grad -> conj(grad).
  auto node = autograd::new_node(
      "ConjBackward0", {t},
      [conj_fn](FunctionNode&, const variable_list& g) { return variable_list{conj_fn(g[0])}; });
  return autograd::record(node, {t}, Tensor(), "conj", [&] { return native::conj_copy(t); });
}

namespace {

// The history of the pieces of a multi-output view op: one node, output i its i-th piece, and
// each piece marked so that an in-place change to it raises (as in PyTorch).
std::vector<Tensor> finish_multi(const std::shared_ptr<FunctionNode>& node, const Tensor& input,
                                 std::vector<Tensor> pieces) {
  autograd::set_history_all(node, pieces);
  const bool differentiable = is_floating(input.dtype()) || ember::is_complex(input.dtype());
  for (const Tensor& p : pieces) {
    if (!differentiable) break;
    autograd::AutogradMeta* m = autograd::meta_of(p);
    if (m) m->multi_output_view = true;
  }
  return pieces;
}

}  // namespace

std::vector<Tensor> split_views(const char* name, const Tensor& t, int64_t dim,
                                std::vector<Tensor> pieces) {
  const DimVector in_sizes(t.sizes());
  std::vector<int64_t> starts, lengths;
  int64_t start = 0;
  for (const Tensor& p : pieces) {
    starts.push_back(start);
    lengths.push_back(p.size(dim));
    start += p.size(dim);
  }
  auto node = autograd::new_node(
      name, {t}, [in_sizes, dim, starts, lengths](FunctionNode&, const variable_list& g) {
        // Zeros of the input's shape with each piece's gradient copied into its place (pieces
        // whose output was unused get no gradient: they stay zero).
        Tensor z;
        for (size_t i = 0; i < g.size(); ++i) {
          if (!g[i].defined()) continue;
          if (!z.defined()) z = zeros(in_sizes, TensorOptions(g[i].dtype(), g[i].device()));
          Tensor dst = ember::slice(z, dim, starts[i], starts[i] + lengths[i], 1);
          ember::copy_(dst, g[i]);
        }
        return variable_list{z};
      });
  return finish_multi(node, t, std::move(pieces));
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim, std::vector<Tensor> pieces) {
  const DimVector in_sizes(t.sizes());
  auto node = autograd::new_node(
      "UnbindBackward0", {t}, [in_sizes, dim](FunctionNode&, const variable_list& g) {
        Tensor z;
        for (size_t i = 0; i < g.size(); ++i) {
          if (!g[i].defined()) continue;
          if (!z.defined()) z = zeros(in_sizes, TensorOptions(g[i].dtype(), g[i].device()));
          Tensor dst = ember::select(z, dim, static_cast<int64_t>(i));
          ember::copy_(dst, g[i]);
        }
        return variable_list{z};
      });
  return finish_multi(node, t, std::move(pieces));
}

}  // namespace derivatives
}  // namespace ember
