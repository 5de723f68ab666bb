// Derivatives of sums and products (sum, mean, nansum, prod) and the helpers every reduction
// derivative shares (reductions_common.h).
#include <algorithm>

#include "api/compare.h"
#include "api/complex.h"
#include "api/conversion.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/join.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/reduce.h"
#include "autograd/derivatives/reduce_common.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

namespace reduction {

std::vector<int64_t> reduced_dims(IntArrayRef sizes, const DimList& dims) {
  std::vector<int64_t> r;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < nd; ++d) r.push_back(d);
    if (nd == 0) r.push_back(0);
    return r;
  }
  const int64_t span = std::max<int64_t>(nd, 1);
  for (int64_t d : *dims) {
    const int64_t w = d < 0 ? d + span : d;
    // An invalid dim makes the forward raise before the node is used; skip it here.
    if (w >= 0 && w < span) r.push_back(w);
  }
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

int64_t single_dim(IntArrayRef sizes, int64_t dim) {
  const std::vector<int64_t> r = reduced_dims(sizes, DimList(std::vector<int64_t>{dim}));
  return r.empty() ? 0 : r.front();
}

Tensor restore_reduced(const Tensor& g, IntArrayRef in_sizes, const std::vector<int64_t>& rdims,
                       bool keepdim) {
  Tensor r = g;
  if (!keepdim && !in_sizes.empty()) {
    for (int64_t d : rdims) r = ember::unsqueeze(r, d);
  }
  return r;
}

Tensor expand_reduced(const Tensor& g, IntArrayRef in_sizes, const std::vector<int64_t>& rdims,
                      bool keepdim) {
  return ember::expand(restore_reduced(g, in_sizes, rdims, keepdim), in_sizes);
}

int64_t reduced_count(IntArrayRef sizes, const std::vector<int64_t>& rdims) {
  int64_t n = 1;
  for (int64_t d : rdims) n *= sizes.empty() ? 1 : sizes[d];
  return n;
}

DimList as_dim_list(const std::vector<int64_t>& rdims) {
  return DimList(rdims);
}

Tensor scale_grad_by_count(const Tensor& g, const Tensor& mask, const std::vector<int64_t>& rdims) {
  const Tensor count = ember::sum(mask, as_dim_list(rdims), /*keepdim=*/true);
  return ember::mul(ember::div(g, count), mask);
}

Tensor evenly_distribute(const Tensor& g, const Tensor& input, const Tensor& value) {
  const bool value_is_nan =
      (value.is_floating_point() || value.is_complex()) && item(ember::isnan(value)).to_bool();
  const Tensor mask = value_is_nan ? ember::isnan(input) : ember::eq(input, value);
  return ember::mul(mask, ember::div(g, ember::sum(mask)));
}

Tensor value_selecting_backward(const Tensor& g, const Tensor& indices, IntArrayRef in_sizes,
                                int64_t dim, bool keepdim) {
  if (in_sizes.empty()) return ember::reshape(g, {});  // one element, index 0
  const Tensor zeros = ember::zeros(in_sizes, TensorOptions(g.dtype()));
  if (keepdim) return ember::scatter(zeros, dim, indices, g);
  return ember::scatter(zeros, dim, ember::unsqueeze(indices, dim), ember::unsqueeze(g, dim));
}

}  // namespace reduction

using namespace reduction;  // NOLINT(build/namespaces): the helpers above

namespace {

Tensor zero(const Tensor& t) {
  return ember::eq(t, num(0));
}

int64_t count_zeros(const Tensor& t) {
  return item(ember::sum(zero(t))).to_int64();
}

// PyTorch's prod_safe_zeros_backward: d prod / d x_k as the product of the exclusive prefix
// and suffix products along dim, exact when x holds zeros.
Tensor prod_safe_zeros_backward(const Tensor& g, const Tensor& inp, int64_t dim) {
  if (inp.numel() == 0) return ember::expand(g, inp.sizes());
  const int64_t n = inp.size(dim);
  DimVector ones_size(inp.sizes());
  ones_size[dim] = 1;
  const Tensor ones = ember::ones(ones_size, TensorOptions(g.dtype()));
  const Tensor exclusive_normal =
      ember::cumprod(ember::cat({ones, ember::narrow(inp, dim, 0, n - 1)}, dim), dim);
  const Tensor narrow_reverse = ember::flip(ember::narrow(inp, dim, 1, n - 1), {dim});
  const Tensor exclusive_reverse =
      ember::flip(ember::cumprod(ember::cat({ones, narrow_reverse}, dim), dim), {dim});
  return ember::mul(g, conj(ember::mul(exclusive_normal, exclusive_reverse)));
}

// prod over all elements: grad * conj(result / x) without zeros, the safe formula otherwise.
Tensor prod_backward_all(const Tensor& g, const Tensor& input, const Tensor& result) {
  const Tensor x = ember::to_dtype(input, g.dtype());
  if (x.dim() == 0) return g;
  const int64_t zeros = count_zeros(x);
  if (zeros == 0) return ember::mul(g, conj(ember::div(result, x)));
  // Two zeros or more: every partial product holds a zero (not so for their derivatives,
  // which create_graph needs).
  if (!autograd::GradMode::is_enabled() && zeros > 1) {
    return ember::zeros(x.sizes(), TensorOptions(g.dtype()));
  }
  const Tensor flat = ember::reshape(ember::contiguous(x), {-1});
  return ember::reshape(prod_safe_zeros_backward(g, flat, 0), x.sizes());
}

Tensor prod_backward_dim(Tensor g, const Tensor& input, Tensor result, int64_t dim, bool keepdim) {
  const Tensor x = ember::to_dtype(input, g.dtype());
  if (x.dim() == 0) return g;
  if (!keepdim) {
    g = ember::unsqueeze(g, dim);
    result = ember::unsqueeze(result, dim);
  }
  if (count_zeros(x) == 0) return ember::mul(g, conj(ember::div(result, x)));
  return prod_safe_zeros_backward(g, x, dim);
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
  if (node->has_forward()) {
    node->set_jvp([dims, keepdim](FunctionNode&, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      return {ember::sum(tan[0], dims, keepdim)};
    });
  }
  return autograd::record(node, {t}, out, "sum",
                          [&] { return native::sum(t, dims, keepdim, dtype, out); });
}

Tensor mean(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const DimVector in_sizes(t.sizes());
  const std::vector<int64_t> rdims = reduced_dims(t.sizes(), dims);
  const int64_t count = reduced_count(t.sizes(), rdims);
  auto node =
      autograd::new_node("MeanBackward" + std::string(dims ? "1" : "0"), {t},
                         [in_sizes, rdims, keepdim, count](FunctionNode&, const variable_list& g) {
                           const Tensor scaled = ember::div(g[0], num(static_cast<double>(count)));
                           return variable_list{expand_reduced(scaled, in_sizes, rdims, keepdim)};
                         });
  if (node->has_forward()) {
    node->set_jvp([dims, keepdim](FunctionNode&, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      return {ember::mean(tan[0], dims, keepdim)};
    });
  }
  return autograd::record(node, {t}, out, "mean",
                          [&] { return native::mean(t, dims, keepdim, dtype, out); });
}

Tensor nansum(const Tensor& t, const DimList& dims, bool keepdim, ScalarType dtype,
              const Tensor& out) {
  const DimVector in_sizes(t.sizes());
  const std::vector<int64_t> rdims = reduced_dims(t.sizes(), dims);
  auto node = autograd::new_node(
      "NansumBackward0", {t}, [in_sizes, rdims, keepdim](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        const Tensor spread =
            expand_reduced(ember::to_dtype(g[0], x.dtype()), in_sizes, rdims, keepdim);
        return variable_list{ember::mul(spread, ember::logical_not(ember::isnan(x)))};
      });
  node->save(t);
  if (node->has_forward()) {
    node->set_jvp([dims, keepdim](FunctionNode& n, const variable_list& tan) -> variable_list {
      if (!tan[0].defined()) return {Tensor()};
      return {ember::sum(formula::zero_where(ember::isnan(n.saved(0)), tan[0]), dims, keepdim)};
    });
  }
  return autograd::record(node, {t}, out, "nansum",
                          [&] { return native::nansum(t, dims, keepdim, dtype, out); });
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, ScalarType dtype,
            const Tensor& out) {
  const bool has_dim = dim.has_value();
  const int64_t d = has_dim ? single_dim(t.sizes(), *dim) : 0;
  auto node = autograd::new_node(
      has_dim ? "ProdBackward1" : "ProdBackward0", {t},
      [has_dim, d, keepdim](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0), result = n.saved(1);
        return variable_list{has_dim ? prod_backward_dim(g[0], x, result, d, keepdim)
                                     : prod_backward_all(g[0], x, result)};
      });
  node->save(t);
  if (node->has_forward()) {
    // prod is holomorphic: sum(f'(x) dx) with f'(x) the conjugate of the backward at grad = 1,
    // which is exact where x holds zeros.
    node->set_jvp(
        [has_dim, d, keepdim](FunctionNode& n, const variable_list& tan) -> variable_list {
          if (!tan[0].defined()) return {Tensor()};
          const Tensor x = n.saved(0), result = n.saved(1);
          const Tensor one = ember::ones(result.sizes(), TensorOptions(result.dtype()));
          const Tensor df = conj(has_dim ? prod_backward_dim(one, x, result, d, keepdim)
                                         : prod_backward_all(one, x, result));
          const Tensor dx = ember::mul(df, tan[0]);
          if (!has_dim) return {ember::sum(dx)};
          return {ember::sum(dx, std::vector<int64_t>{d}, keepdim)};
        });
  }
  Tensor r = autograd::record(node, {t}, out, "prod",
                              [&] { return native::prod(t, dim, keepdim, dtype, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
