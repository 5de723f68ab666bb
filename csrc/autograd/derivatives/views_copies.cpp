// Derivatives of views, copies and dtype conversion.
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/range_factories.h"
#include "api/views.h"
#include "autograd/derivatives/views.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// Forward AD: the tangent of a view is the same view of the input's tangent, taken by geometry
// (the tangent is laid out as its primal: forward_ad::make_dual), so no formula per view op.
void set_view_jvp(FunctionNode& node, const Tensor& input, const Tensor& result) {
  if (!node.has_forward() || node.has_jvp_formula()) return;
  const int64_t rel_offset = result.storage_offset() - input.storage_offset();
  if (result.storage().get() != input.storage().get() || rel_offset < 0) return;  // a copy
  const DimVector in_sizes(input.sizes()), in_strides(input.strides());
  const DimVector sizes(result.sizes()), strides(result.strides());
  const ScalarType dtype = input.dtype();
  node.set_jvp([=](FunctionNode&, const variable_list& tangents) -> variable_list {
    Tensor t = tangents.at(0);
    if (!t.defined()) return {Tensor()};
    if (!t.strides().equals(in_strides)) {
      Tensor laid_out = empty_strided(in_sizes, in_strides, TensorOptions(dtype, t.device()));
      ember::copy_(laid_out, t);
      t = laid_out;
    }
    return {ember::as_strided(t, sizes, strides, t.storage_offset() + rel_offset)};
  });
}

// Forward AD of a copy (clone, contiguous, to): a copy of the tangent, so that the result's
// tangent does not alias the input's. The machinery casts it to the result's dtype.
// `dtype`: the result's, when it may differ from the input's (the cast copies already).
void set_copy_jvp(FunctionNode& node, ScalarType dtype = ScalarType::Undefined) {
  if (!node.has_forward()) return;
  node.set_jvp([dtype](FunctionNode&, const variable_list& tangents) -> variable_list {
    const Tensor& t = tangents.at(0);
    if (!t.defined()) return {Tensor()};
    if (dtype != ScalarType::Undefined && t.dtype() != dtype) return {t};
    return {ember::clone(t)};
  });
}

}  // namespace

Tensor record_view_result(const std::shared_ptr<FunctionNode>& node, const Tensor& input,
                          const Tensor& result) {
  set_view_jvp(*node, input, result);
  autograd::attach_trace(*node);
  autograd::set_history(result, node);
  propagate_view_creation(input, result);
  return result;
}

Tensor view_like_reshape(const char* name, const Tensor& t, const Tensor& result) {
  const DimVector in_sizes(t.sizes());
  auto node = autograd::new_node(name, {t}, [in_sizes](FunctionNode&, const variable_list& g) {
    return variable_list{ember::reshape(g[0], in_sizes)};
  });
  return record_view_result(node, t, result);
}

Tensor view_permuted(const char* name, const Tensor& t, const Tensor& result,
                     const std::vector<int64_t>& perm) {
  // result dim i is input dim perm[i]; the gradient goes back through the inverse permutation.
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  auto node = autograd::new_node(name, {t}, [inverse](FunctionNode&, const variable_list& g) {
    return variable_list{ember::permute(g[0], inverse)};
  });
  return record_view_result(node, t, result);
}

Tensor view_expanded(const Tensor& t, const Tensor& result) {
  // The engine sums the expanded gradient back to the input's shape.
  auto node = autograd::new_node("ExpandBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};
  });
  return record_view_result(node, t, result);
}

Tensor view_generic(const char* name, const Tensor& t, const Tensor& result) {
  // Any strided view: scatter-add the gradient into a zero gradient laid out like the input
  // (index_add handles views whose elements overlap).
  const DimVector in_sizes(t.sizes()), in_strides(t.strides());
  const DimVector v_sizes(result.sizes()), v_strides(result.strides());
  const int64_t rel = result.storage_offset() - t.storage_offset();
  auto node = autograd::new_node(
      name, {t},
      [in_sizes, in_strides, v_sizes, v_strides, rel](FunctionNode&, const variable_list& g) {
        int64_t extent = 1;
        for (size_t d = 0; d < in_sizes.size(); ++d) {
          if (in_sizes[d] == 0) extent = 0;
          if (extent) extent += (in_sizes[d] - 1) * in_strides[d];
        }
        Tensor flat = ember::zeros({extent}, TensorOptions(g[0].dtype()));
        Tensor idx = scalar_tensor(Scalar(rel), ScalarType::Int64);
        for (size_t d = 0; d < v_sizes.size(); ++d) {
          Tensor steps = arange(0, v_sizes[d], 1, TensorOptions(ScalarType::Int64));
          steps = ember::mul(steps, scalar_tensor(Scalar(v_strides[d]), ScalarType::Int64));
          idx = ember::add(ember::unsqueeze(idx, -1), steps);
        }
        flat = ember::index_add(flat, 0, ember::reshape(idx, {-1}), ember::reshape(g[0], {-1}));
        return variable_list{ember::as_strided(flat, in_sizes, in_strides, 0)};
      });
  return record_view_result(node, t, result);
}

Tensor clone(const Tensor& t) {
  auto node = autograd::new_node("CloneBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};
  });
  set_copy_jvp(*node);
  return autograd::record(node, {t}, Tensor(), "clone", [&] { return native::clone(t); });
}

Tensor contiguous(const Tensor& t) {
  auto node = autograd::new_node("CloneBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};
  });
  set_copy_jvp(*node);
  return autograd::record(node, {t}, Tensor(), "contiguous", [&] { return native::contiguous(t); });
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  auto node = autograd::new_node("ToCopyBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};  // the engine casts it back to the input's dtype
  });
  set_copy_jvp(*node, dtype);
  return autograd::record(node, {t}, Tensor(), "to",
                          [&] { return native::to_dtype(t, dtype, copy); });
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  auto node =
      autograd::new_node("CopyBackwards", {dst, src}, [](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (n.should_compute_output(0))
          r[0] = ember::zeros(g[0].sizes(), TensorOptions(g[0].dtype()));
        if (n.should_compute_output(1)) r[1] = g[0];
        return r;
      });
  if (node->has_forward()) {
    // dst takes src's values: its tangent is src's (broadcast and cast to dst).
    node->set_jvp([](FunctionNode&, const variable_list& t) -> variable_list {
      return {t[1].defined() ? ember::clone(t[1]) : Tensor()};
    });
  }
  autograd::record(node, {dst, src}, dst, "copy_",
                   [&]() -> Tensor { return native::copy_(dst, src); });
  return dst;
}

}  // namespace derivatives
}  // namespace ember

namespace ember {
namespace derivatives {

Tensor& fill_(Tensor& t, const Scalar& value) {
  // The old values are overwritten: no gradient flows to them.
  auto node = autograd::new_node("FillBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::zeros(g[0].sizes(), TensorOptions(g[0].dtype()))};
  });
  autograd::record(node, {t}, t, "fill_", [&]() -> Tensor { return native::fill_(t, value); });
  return t;
}

Tensor& zero_(Tensor& t) {
  auto node = autograd::new_node("ZeroBackward0", {t}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::zeros(g[0].sizes(), TensorOptions(g[0].dtype()))};
  });
  autograd::record(node, {t}, t, "zero_", [&]() -> Tensor { return native::zero_(t); });
  return t;
}

}  // namespace derivatives
}  // namespace ember
