// Derivatives of advanced indexing: index (t[idx], t[mask]) and index_put / index_put_
// (t[idx] = v). Each is the other's derivative, so both are differentiable any number of times:
//   index:      self grad   = zeros.index_put(indices, grad, accumulate=True)
//   index_put:  self grad   = accumulate ? grad : grad.index_put(indices, 0)
//               values grad = grad[indices], summed to values' shape
#include "api/creation.h"
#include "api/indexing.h"
#include "api/views.h"
#include "autograd/derivatives/indexing.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// The index tensors are saved (a later in-place change to one is caught); undefined entries
// (':') stay undefined.
void save_indices(FunctionNode& node, const std::vector<Tensor>& indices) {
  for (const Tensor& t : indices) node.save(t);
}

std::vector<Tensor> saved_indices(FunctionNode& node, size_t first, size_t count) {
  std::vector<Tensor> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(node.saved(first + i));
  return out;
}

// A single bool mask covering the whole of a `sizes`-shaped tensor (x[mask]).
bool is_full_mask(const std::vector<Tensor>& indices, IntArrayRef sizes) {
  return indices.size() == 1 && indices[0].defined() && indices[0].dtype() == ScalarType::Bool &&
         indices[0].dim() > 0 && indices[0].sizes().equals(sizes);
}

// values' shape without the leading size-1 dims index_put drops beyond the result's rank.
DimVector stripped_shape(IntArrayRef values, int64_t result_dim) {
  size_t drop = 0;
  while (static_cast<int64_t>(values.size() - drop) > result_dim && values[drop] == 1) ++drop;
  return DimVector(IntArrayRef(values.data() + drop, values.size() - drop));
}

}  // namespace

Tensor index_recorded(const Tensor& self, const std::vector<Tensor>& indices, Tensor result) {
  const DimVector in_sizes(self.sizes());
  const size_t count = indices.size();
  auto node = autograd::new_node(
      "IndexBackward0", {self}, [in_sizes, count](FunctionNode& n, const variable_list& g) {
        const std::vector<Tensor> idx = saved_indices(n, 0, count);
        Tensor z = zeros(in_sizes, TensorOptions(g[0].dtype(), g[0].device()));
        // x[mask]: masked_scatter skips materialising the mask's coordinates.
        if (is_full_mask(idx, in_sizes))
          return variable_list{ember::masked_scatter(z, idx[0], g[0])};
        return variable_list{ember::index_put(z, idx, g[0], /*accumulate=*/true)};
      });
  save_indices(*node, indices);
  autograd::attach_trace(*node);
  if (is_floating(result.dtype()) || ember::is_complex(result.dtype())) {
    autograd::set_history(result, node);
  }
  return result;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate, const Tensor& out) {
  const DimVector values_sizes(values.sizes());
  const size_t count = indices.size();
  auto node = autograd::new_node(
      "IndexPutBackward0", {self, values},
      [values_sizes, count, accumulate](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const std::vector<Tensor> idx = saved_indices(n, 0, count);
        if (n.should_compute_output(0)) {
          r[0] = accumulate ? g[0]
                            : ember::index_put(g[0], idx, scalar_tensor(Scalar(0.0), g[0].dtype()),
                                               /*accumulate=*/false);
        }
        if (n.should_compute_output(1)) {
          Tensor picked = ember::index(g[0], idx);
          if (!picked.sizes().equals(values_sizes)) {
            picked = autograd::sum_to(picked, stripped_shape(values_sizes, picked.dim()));
            picked = ember::reshape(picked, values_sizes);
          }
          r[1] = picked;
        }
        return r;
      });
  save_indices(*node, indices);
  const bool inplace = out.defined() && out.is_same(self);
  return autograd::record(node, {self, values}, out, "index_put_", [&] {
    if (!inplace) return native::index_put(self, indices, values, accumulate);
    Tensor s = self;
    return native::index_put_(s, indices, values, accumulate);
  });
}

}  // namespace derivatives
}  // namespace ember
