// Derivatives of reductions.
#include <algorithm>

#include "autograd/derivatives/reductions.h"
#include "autograd/record.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/views.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// The reduced dims of a `sizes`-shaped input, wrapped and sorted (all dims when `dims` is
// nullopt or empty).
std::vector<int64_t> reduced_dims(IntArrayRef sizes, const DimList& dims) {
  std::vector<int64_t> r;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < nd; ++d) r.push_back(d);
    return r;
  }
  for (int64_t d : *dims) r.push_back(d < 0 ? d + std::max<int64_t>(nd, 1) : d);
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

// Broadcasts the gradient of a reduction back over the input's shape.
Tensor expand_reduced(const Tensor& g, IntArrayRef in_sizes, const std::vector<int64_t>& rdims,
                      bool keepdim) {
  Tensor r = g;
  if (!keepdim && !in_sizes.empty()) {
    for (int64_t d : rdims) r = ember::unsqueeze(r, d);
  }
  return ember::expand(r, in_sizes);
}

int64_t reduced_count(IntArrayRef sizes, const std::vector<int64_t>& rdims) {
  int64_t n = 1;
  for (int64_t d : rdims) n *= sizes.empty() ? 1 : sizes[d];
  return n;
}

}  // namespace

Tensor sum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
           const Tensor& out) {
  const DimVector in_sizes(t.sizes());
  const std::vector<int64_t> rdims = reduced_dims(t.sizes(), dims);
  auto node =
      autograd::new_node("SumBackward" + std::string(dims ? "1" : "0"), {t},
                         [in_sizes, rdims, keepdim](FunctionNode&, const variable_list& g) {
                           return variable_list{expand_reduced(g[0], in_sizes, rdims, keepdim)};
                         });
  return autograd::record(node, {t}, out, "sum",
                          [&] { return ember::sum(t, dims, keepdim, dtype, out); });
}

Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const DimVector in_sizes(t.sizes());
  const std::vector<int64_t> rdims = reduced_dims(t.sizes(), dims);
  const int64_t count = reduced_count(t.sizes(), rdims);
  auto node = autograd::new_node(
      "MeanBackward" + std::string(dims ? "1" : "0"), {t},
      [in_sizes, rdims, keepdim, count](FunctionNode&, const variable_list& g) {
        const Tensor scaled = ember::div(g[0], wrap_scalar(Scalar(static_cast<double>(count))));
        return variable_list{expand_reduced(scaled, in_sizes, rdims, keepdim)};
      });
  return autograd::record(node, {t}, out, "mean",
                          [&] { return ember::mean(t, dims, keepdim, dtype, out); });
}

}  // namespace derivatives
}  // namespace ember
