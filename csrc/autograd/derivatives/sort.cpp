// Derivatives of the value-selecting ordering ops: sort, topk, kthvalue. The values output is
// differentiable, the indices are not; the gradient of each value goes back to the position its
// index names (ties: the position the op picked, as PyTorch).
#include "api/sort.h"
#include "api/creation.h"
#include "api/indexing.h"
#include "api/range_factories.h"
#include "api/views.h"
#include "autograd/derivatives/join.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// PyTorch's value_selecting_reduction_backward: zeros of the input's shape with the gradient
// written to the selected positions along dim. The write is an index_put over (indices along
// dim, aranges along the other dims), which records itself when g requires grad, so the formula
// has a double backward.
Tensor value_selecting_backward(const Tensor& g, int64_t dim, const Tensor& indices,
                                IntArrayRef sizes, bool keepdim) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) return g;  // a 0-d input selects itself
  const int64_t d = dim < 0 ? dim + nd : dim;
  Tensor grad = g, idx = indices;
  if (!keepdim) {
    grad = ember::unsqueeze(grad, d);
    idx = ember::unsqueeze(idx, d);
  }
  std::vector<TensorIndex> where;
  for (int64_t k = 0; k < nd; ++k) {
    if (k == d) {
      where.push_back(TensorIndex::tensor_index(idx));
      continue;
    }
    DimVector shape(nd, 1);
    shape[k] = sizes[k];
    Tensor steps = arange(0, sizes[k], 1, TensorOptions(ScalarType::Int64));
    where.push_back(TensorIndex::tensor_index(ember::view(steps, shape)));
  }
  Tensor z = zeros(sizes, TensorOptions(g.dtype()));
  if (grad.numel() > 0) setitem(z, where, grad);
  return z;
}

// Runs a (values, indices) op with recording off and attaches `node` to the values.
template <typename Forward>
std::tuple<Tensor, Tensor> record_pair(const std::shared_ptr<FunctionNode>& node, const Tensor& t,
                                       const Tensor& values_out, const Tensor& indices_out,
                                       const char* op, Forward&& forward) {
  if (values_out.defined() || indices_out.defined()) autograd::check_out_arg(values_out, {t}, op);
  Tensor values, indices;
  {
    autograd::NoGradGuard no_grad;
    std::tie(values, indices) = forward();
  }
  node->save(indices);
  autograd::set_history_all(node, {values, indices});
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool stable,
                                const Tensor& values_out, const Tensor& indices_out) {
  auto node = autograd::new_node(
      "SortBackward0", {t},
      [dim, sizes = DimVector(t.sizes())](FunctionNode& n, const variable_list& g) {
        return variable_list{value_selecting_backward(g[0], dim, n.saved(0), sizes, true)};
      });
  return record_pair(node, t, values_out, indices_out, "sort", [&] {
    return native::sort(t, dim, descending, stable, values_out, indices_out);
  });
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                bool largest, bool sorted, const Tensor& values_out,
                                const Tensor& indices_out) {
  const int64_t d = dim.value_or(-1);
  auto node = autograd::new_node(
      "TopkBackward0", {t},
      [d, sizes = DimVector(t.sizes())](FunctionNode& n, const variable_list& g) {
        return variable_list{value_selecting_backward(g[0], d, n.saved(0), sizes, true)};
      });
  return record_pair(node, t, values_out, indices_out, "topk", [&] {
    return native::topk(t, k, dim, largest, sorted, values_out, indices_out);
  });
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                    bool keepdim, const Tensor& values_out,
                                    const Tensor& indices_out) {
  const int64_t d = dim.value_or(-1);
  auto node = autograd::new_node(
      "KthvalueBackward0", {t},
      [d, keepdim, sizes = DimVector(t.sizes())](FunctionNode& n, const variable_list& g) {
        return variable_list{value_selecting_backward(g[0], d, n.saved(0), sizes, keepdim)};
      });
  return record_pair(node, t, values_out, indices_out, "kthvalue",
                     [&] { return native::kthvalue(t, k, dim, keepdim, values_out, indices_out); });
}

}  // namespace derivatives
}  // namespace ember
