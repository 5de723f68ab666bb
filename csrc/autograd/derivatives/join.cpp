// Derivatives of cat/stack and the reordering copies: flip, roll, rot90, repeat and
// repeat_interleave with a repeats tensor. Each formula is the op's own adjoint, written with the
// public ops (a flip of the gradient, a roll back, slices of the gradient, ...).
#include "autograd/derivatives/join.h"
#include "api/creation.h"
#include "api/indexing.h"
#include "api/join.h"
#include "api/reduce.h"
#include "api/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// A dim given relative to a result of rank `nd` (negative values count from the end).
int64_t wrap_for(int64_t dim, int64_t nd) {
  return dim < 0 ? dim + nd : dim;
}

std::vector<DimVector> sizes_of(const std::vector<Tensor>& tensors) {
  std::vector<DimVector> s;
  s.reserve(tensors.size());
  for (const Tensor& t : tensors) s.emplace_back(t.sizes());
  return s;
}

// Forward AD of an op that is linear in each of its inputs and takes them as a list (cat,
// stack): the op on the tangents, a zero tangent materialised where an input has none.
template <typename Op>
void set_list_jvp(FunctionNode& node, const std::vector<Tensor>& tensors, Op op) {
  if (!node.has_forward()) return;
  std::vector<std::pair<DimVector, ScalarType>> like;
  like.reserve(tensors.size());
  for (const Tensor& t : tensors) like.emplace_back(DimVector(t.sizes()), t.dtype());
  node.set_jvp([like, op](FunctionNode&, const variable_list& t) -> variable_list {
    std::vector<Tensor> parts(t.begin(), t.end());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].defined()) parts[i] = zeros(like[i].first, TensorOptions(like[i].second));
    }
    return {op(parts)};
  });
}

// Forward AD of a one-input linear op: the op on the tangent.
template <typename Op>
void set_linear_jvp(FunctionNode& node, Op op) {
  if (!node.has_forward()) return;
  node.set_jvp([op](FunctionNode&, const variable_list& t) -> variable_list {
    return {t[0].defined() ? op(t[0]) : Tensor()};
  });
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out, const char* op,
           const Forward& forward) {
  // out= is refused before the in-place rules could see an input passed as out.
  if (out.defined()) autograd::check_out_arg(out, tensors, op);
  auto formula = [sizes = sizes_of(tensors), dim](FunctionNode& n, const variable_list& g) {
    variable_list r(sizes.size());
    const int64_t d = wrap_for(dim, g[0].dim());
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      // A 1-D tensor of shape (0,) joins any cat without taking part (the legacy rule).
      if (sizes[i].size() == 1 && sizes[i][0] == 0) {
        if (n.should_compute_output(i)) r[i] = zeros({0}, TensorOptions(g[0].dtype()));
        continue;
      }
      const int64_t len = sizes[i][d];
      if (n.should_compute_output(i)) r[i] = ember::narrow(g[0], d, offset, len);
      offset += len;
    }
    return r;
  };
  auto node = autograd::new_node("CatBackward0", tensors, formula);
  set_list_jvp(*node, tensors, [dim](const std::vector<Tensor>& t) { return ember::cat(t, dim); });
  return autograd::record(node, tensors, Tensor(), op, forward);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out,
             const Forward& forward) {
  if (out.defined()) autograd::check_out_arg(out, tensors, "stack");
  auto formula = [count = tensors.size(), dim](FunctionNode& n, const variable_list& g) {
    variable_list r(count);
    const int64_t d = wrap_for(dim, g[0].dim());
    for (size_t i = 0; i < count; ++i) {
      if (n.should_compute_output(i)) r[i] = ember::select(g[0], d, static_cast<int64_t>(i));
    }
    return r;
  };
  auto node = autograd::new_node("StackBackward0", tensors, formula);
  set_list_jvp(*node, tensors,
               [dim](const std::vector<Tensor>& t) { return ember::stack(t, dim); });
  return autograd::record(node, tensors, Tensor(), "stack", forward);
}

Tensor flip(const Tensor& t, IntArrayRef dims) {
  auto formula = [dims = DimVector(dims)](FunctionNode&, const variable_list& g) {
    return variable_list{ember::flip(g[0], dims)};
  };
  auto node = autograd::new_node("FlipBackward0", {t}, formula);
  set_linear_jvp(*node, [dims = DimVector(dims)](const Tensor& x) { return ember::flip(x, dims); });
  return autograd::record(node, {t}, Tensor(), "flip", [&] { return native::flip(t, dims); });
}

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  DimVector back;
  for (int64_t s : shifts) back.push_back(-s);
  auto node = autograd::new_node(
      "RollBackward0", {t}, [back, dims = DimVector(dims)](FunctionNode&, const variable_list& g) {
        return variable_list{ember::roll(g[0], back, dims)};
      });
  set_linear_jvp(*node, [shifts = DimVector(shifts), dims = DimVector(dims)](const Tensor& x) {
    return ember::roll(x, shifts, dims);
  });
  return autograd::record(node, {t}, Tensor(), "roll",
                          [&] { return native::roll(t, shifts, dims); });
}

Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims) {
  auto node = autograd::new_node(
      "Rot90Backward0", {t}, [k, dims = DimVector(dims)](FunctionNode&, const variable_list& g) {
        return variable_list{ember::rot90(g[0], -k, dims)};
      });
  set_linear_jvp(*node,
                 [k, dims = DimVector(dims)](const Tensor& x) { return ember::rot90(x, k, dims); });
  return autograd::record(node, {t}, Tensor(), "rot90", [&] { return native::rot90(t, k, dims); });
}

Tensor repeat(const Tensor& t, IntArrayRef repeats) {
  // The result viewed as (r0, p0, r1, p1, ...) holds t (padded to p) at every r index: the
  // gradient sums over the r dims.
  const DimVector in_sizes(t.sizes());
  const int64_t n = static_cast<int64_t>(repeats.size());
  DimVector split;
  std::vector<int64_t> repeat_dims;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i - (n - t.dim());
    split.push_back(repeats[i]);
    split.push_back(k >= 0 ? t.size(k) : 1);
    repeat_dims.push_back(2 * i);
  }
  auto formula = [in_sizes, split, repeat_dims](FunctionNode&, const variable_list& g) {
    Tensor s = ember::sum(ember::reshape(g[0], split), repeat_dims);
    return variable_list{ember::reshape(s, in_sizes)};
  };
  auto node = autograd::new_node("RepeatBackward0", {t}, formula);
  set_linear_jvp(*node, [r = DimVector(repeats)](const Tensor& x) { return ember::repeat(x, r); });
  return autograd::record(node, {t}, Tensor(), "repeat",
                          [&] { return native::repeat(t, repeats); });
}

Tensor index_select_slices(const Tensor& t, int64_t dim, const Tensor& index,
                           const Forward& forward) {
  const DimVector in_sizes(t.sizes());
  auto formula = [in_sizes, dim, index](FunctionNode&, const variable_list& g) {
    Tensor z = zeros(in_sizes, TensorOptions(g[0].dtype()));
    return variable_list{ember::index_add(z, dim, index, g[0])};
  };
  auto node = autograd::new_node("IndexSelectBackward0", {t}, formula);
  set_linear_jvp(*node,
                 [dim, index](const Tensor& x) { return ember::index_select(x, dim, index); });
  return autograd::record(node, {t}, Tensor(), "repeat_interleave", forward);
}

}  // namespace derivatives
}  // namespace ember
