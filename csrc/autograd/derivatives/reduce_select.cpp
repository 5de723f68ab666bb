// Derivatives of the reductions that select elements: amax, amin, max, min, aminmax, median,
// nanmedian, mode. As PyTorch:
// - amax / amin / aminmax split the gradient evenly among the tied extremes of each slice
//   (scale_grad_by_count);
// - max() / min() / median() / nanmedian() over all elements split it evenly among the elements
//   equal to the result (evenly_distribute_backward);
// - the (values, indices) forms send it to the returned index (value_selecting_reduction_backward).
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/views.h"
#include "autograd/derivatives/reduce.h"
#include "autograd/derivatives/reduce_common.h"

namespace ember {
namespace derivatives {

using namespace reduction;  // NOLINT(build/namespaces)

namespace {

using DimForward = TensorPair (*)(const Tensor&, int64_t, bool, const Tensor&, const Tensor&);
using AllForward = Tensor (*)(const Tensor&, const Tensor&);

// amax / amin: ties share the gradient of their slice.
Tensor extremum_over_dims(const char* node_name, const char* op, bool is_max, const Tensor& t,
                          const DimList& dims, bool keepdim, const Tensor& out) {
  const DimVector in_sizes(t.sizes());
  const std::vector<int64_t> rdims = reduced_dims(t.sizes(), dims);
  auto node = autograd::new_node(
      node_name, {t}, [in_sizes, rdims, keepdim](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        const Tensor result = restore_reduced(n.saved(1), in_sizes, rdims, keepdim);
        const Tensor mask = ember::eq(result, x);
        return variable_list{
            scale_grad_by_count(restore_reduced(g[0], in_sizes, rdims, keepdim), mask, rdims)};
      });
  node->save(t);
  if (node->has_forward()) {
    // The mean of the tied extremes' tangents in each slice (as the backward splits it).
    node->set_jvp([in_sizes, rdims, keepdim](FunctionNode& n, const variable_list& tan) {
      if (!tan[0].defined()) return variable_list{Tensor()};
      const Tensor x = n.saved(0);
      const Tensor result = restore_reduced(n.saved(1), in_sizes, rdims, keepdim);
      const Tensor mask = ember::eq(result, x);
      const DimList d = as_dim_list(rdims);
      return variable_list{ember::div(ember::sum(ember::mul(tan[0], mask), d, keepdim),
                                      ember::sum(mask, d, keepdim))};
    });
  }
  Tensor r = autograd::record(node, {t}, out, op, [&] {
    return is_max ? native::amax(t, dims, keepdim, out) : native::amin(t, dims, keepdim, out);
  });
  node->save(r, /*is_output=*/true);
  return r;
}

// max() / min() / median() / nanmedian(): all elements equal to the result share its gradient.
Tensor selection_over_all(const char* node_name, const char* op, AllForward forward,
                          const Tensor& t, const Tensor& out) {
  auto node = autograd::new_node(node_name, {t}, [](FunctionNode& n, const variable_list& g) {
    return variable_list{evenly_distribute(g[0], n.saved(0), n.saved(1))};
  });
  node->save(t);
  if (node->has_forward()) {
    node->set_jvp([](FunctionNode& n, const variable_list& tan) {
      if (!tan[0].defined()) return variable_list{Tensor()};
      const Tensor result = n.saved(1);
      const Tensor one = ember::ones(result.sizes(), TensorOptions(result.dtype()));
      return variable_list{
          ember::sum(ember::mul(evenly_distribute(one, n.saved(0), result), tan[0]))};
    });
  }
  Tensor r = autograd::record(node, {t}, out, op, [&] { return forward(t, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

// (values, indices) along dim: the gradient of each value goes to its index.
TensorPair selection_along_dim(const char* node_name, const char* op, DimForward forward,
                               const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                               const Tensor& indices) {
  const DimVector in_sizes(t.sizes());
  const int64_t d = single_dim(t.sizes(), dim);
  auto node = autograd::new_node(
      node_name, {t}, [in_sizes, d, keepdim](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        return variable_list{value_selecting_backward(g[0], n.saved(0), in_sizes, d, keepdim)};
      });
  TensorPair r = record_pair(node, {t}, values, indices, op,
                             [&] { return forward(t, dim, keepdim, values, indices); });
  node->save(r.second);  // the indices: not differentiable, saved as a plain input
  if (node->has_forward()) {
    // The tangent at each selected index (set after the forward: it reads the indices).
    node->set_jvp([d, keepdim](FunctionNode& n, const variable_list& tan) {
      if (!tan[0].defined()) return variable_list(2);
      const Tensor t0 = tan[0];
      if (t0.dim() == 0) return variable_list{t0, Tensor()};
      const Tensor idx = n.saved(0);
      const Tensor picked = ember::gather(t0, d, keepdim ? idx : ember::unsqueeze(idx, d));
      return variable_list{keepdim ? picked : ember::squeeze(picked, {d}), Tensor()};
    });
  }
  return r;
}

TensorPair max_dim_forward(const Tensor& t, int64_t dim, bool keepdim, const Tensor& v,
                           const Tensor& i) {
  return native::max(t, dim, keepdim, v, i);
}
TensorPair min_dim_forward(const Tensor& t, int64_t dim, bool keepdim, const Tensor& v,
                           const Tensor& i) {
  return native::min(t, dim, keepdim, v, i);
}
TensorPair median_dim_forward(const Tensor& t, int64_t dim, bool keepdim, const Tensor& v,
                              const Tensor& i) {
  return native::median(t, dim, keepdim, v, i);
}
TensorPair nanmedian_dim_forward(const Tensor& t, int64_t dim, bool keepdim, const Tensor& v,
                                 const Tensor& i) {
  return native::nanmedian(t, dim, keepdim, v, i);
}
TensorPair mode_forward(const Tensor& t, int64_t dim, bool keepdim, const Tensor& v,
                        const Tensor& i) {
  return native::mode(t, dim, keepdim, v, i);
}

Tensor max_all_forward(const Tensor& t, const Tensor& out) {
  return native::max(t, out);
}
Tensor min_all_forward(const Tensor& t, const Tensor& out) {
  return native::min(t, out);
}
Tensor median_all_forward(const Tensor& t, const Tensor& out) {
  return native::median(t, out);
}
Tensor nanmedian_all_forward(const Tensor& t, const Tensor& out) {
  return native::nanmedian(t, out);
}

}  // namespace

Tensor amax(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  return extremum_over_dims("AmaxBackward0", "amax", true, t, dims, keepdim, out);
}

Tensor amin(const Tensor& t, const DimList& dims, bool keepdim, const Tensor& out) {
  return extremum_over_dims("AminBackward0", "amin", false, t, dims, keepdim, out);
}

Tensor max(const Tensor& t, const Tensor& out) {
  return selection_over_all("MaxBackward1", "max", &max_all_forward, t, out);
}

Tensor min(const Tensor& t, const Tensor& out) {
  return selection_over_all("MinBackward1", "min", &min_all_forward, t, out);
}

Tensor median(const Tensor& t, const Tensor& out) {
  return selection_over_all("MedianBackward0", "median", &median_all_forward, t, out);
}

Tensor nanmedian(const Tensor& t, const Tensor& out) {
  return selection_over_all("NanmedianBackward0", "nanmedian", &nanmedian_all_forward, t, out);
}

TensorPair max(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices) {
  return selection_along_dim("MaxBackward0", "max", &max_dim_forward, t, dim, keepdim, values,
                             indices);
}

TensorPair min(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
               const Tensor& indices) {
  return selection_along_dim("MinBackward0", "min", &min_dim_forward, t, dim, keepdim, values,
                             indices);
}

TensorPair median(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                  const Tensor& indices) {
  return selection_along_dim("MedianBackward1", "median", &median_dim_forward, t, dim, keepdim,
                             values, indices);
}

TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                     const Tensor& indices) {
  return selection_along_dim("NanmedianBackward1", "nanmedian", &nanmedian_dim_forward, t, dim,
                             keepdim, values, indices);
}

TensorPair mode(const Tensor& t, int64_t dim, bool keepdim, const Tensor& values,
                const Tensor& indices) {
  return selection_along_dim("ModeBackward0", "mode", &mode_forward, t, dim, keepdim, values,
                             indices);
}

TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const Tensor& min_out,
                   const Tensor& max_out) {
  const DimVector in_sizes(t.sizes());
  const std::vector<int64_t> rdims =
      dim ? std::vector<int64_t>{single_dim(t.sizes(), *dim)} : reduced_dims(t.sizes(), {});
  auto node = autograd::new_node(
      "AminmaxBackward0", {t}, [in_sizes, rdims, keepdim](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        Tensor grad;
        for (size_t k = 0; k < 2; ++k) {
          if (!g[k].defined()) continue;
          const Tensor result = restore_reduced(n.saved(1 + k), in_sizes, rdims, keepdim);
          const Tensor part = scale_grad_by_count(restore_reduced(g[k], in_sizes, rdims, keepdim),
                                                  ember::eq(result, x), rdims);
          grad = grad.defined() ? ember::add(grad, part) : part;
        }
        return variable_list{grad};
      });
  node->save(t);
  TensorPair r = record_pair(node, {t}, min_out, max_out, "aminmax",
                             [&] { return native::aminmax(t, dim, keepdim, min_out, max_out); });
  node->save(r.first, /*is_output=*/true);
  node->save(r.second, /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
