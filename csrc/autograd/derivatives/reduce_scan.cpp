// Derivatives of the scans: cumsum, cumprod, cummax, cummin, logcumsumexp (PyTorch's
// cumsum_backward, cumprod_backward, cummaxmin_backward, logcumsumexp_backward).
#include <algorithm>
#include <limits>

#include "api/compare.h"
#include "api/complex.h"
#include "api/conversion.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/indexing.h"
#include "api/join.h"
#include "api/range_factories.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/reduce.h"
#include "autograd/derivatives/reduce_common.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

using namespace reduction;  // NOLINT(build/namespaces)

namespace {

// sum_{j >= k} w[j] along dim.
Tensor reversed_cumsum(const Tensor& w, int64_t dim) {
  return ember::flip(ember::cumsum(ember::flip(w, {dim}), dim), {dim});
}

Tensor cumsum_backward(const Tensor& g, int64_t dim) {
  if (g.numel() <= 1 || g.size(dim) == 1) return g;
  return reversed_cumsum(g, dim);
}

// d y_j / d x_k = prod_{i <= j, i != k} x_i for j >= k, so
//   grad_k = sum_{j >= k} grad_j * conj(prod_{i <= j, i != k} x_i).
// Without zeros this is reversed_cumsum(conj(y) * grad) / conj(x). With zeros, let z be the
// first zero of a line: before z the same formula holds (the terms j >= z vanish in both); at z
// it is sum_{j >= z} grad_j * conj(y'_j), y' the cumprod with x_z replaced by 1; after z every
// product holds x_z = 0. That O(n) form is exact in value but not in its own derivative, so with
// create_graph the exact O(n^2) sum is built instead (as PyTorch does).
Tensor cumprod_with_zeros(const Tensor& g, const Tensor& x_conj, const Tensor& w,
                          const Tensor& is_zero, int64_t dim) {
  const Tensor zeros_so_far = ember::cumsum(is_zero, dim);
  const Tensor before = ember::eq(zeros_so_far, num(0));
  const Tensor first = ember::logical_and(ember::eq(zeros_so_far, num(1)), is_zero);
  const Tensor safe_x = ember::where(before, x_conj, num(1));
  const Tensor part_before =
      ember::where(before, ember::div(reversed_cumsum(w, dim), safe_x), num(0));
  const Tensor y_skip_first = ember::cumprod(ember::where(first, num(1), x_conj), dim);
  const Tensor part_first =
      ember::where(first, reversed_cumsum(ember::mul(y_skip_first, g), dim), num(0));
  return ember::add(part_before, part_first);
}

// The exact sum over j >= k of grad_j * prod_{i <= j, i != k} conj(x_i), for a block of k at a
// time (bounded memory): row k of the block is the cumprod of x with x_k replaced by 1.
Tensor cumprod_exact(const Tensor& g, const Tensor& x_conj, int64_t dim) {
  const Tensor xt = ember::movedim(x_conj, {dim}, {-1});
  const Tensor gt = ember::unsqueeze(ember::movedim(g, {dim}, {-1}), -2);
  const int64_t n = xt.size(xt.dim() - 1);
  const int64_t lines = n == 0 ? 0 : xt.numel() / n;
  const int64_t budget = int64_t(1) << 22;  // elements per block
  const int64_t block = std::max<int64_t>(1, budget / std::max<int64_t>(1, lines * n));
  const TensorOptions idx(ScalarType::Int64);
  const Tensor j = ember::reshape(arange(0, n, 1, idx), {1, n});
  const Tensor x_rows = ember::unsqueeze(xt, -2);
  std::vector<Tensor> parts;
  for (int64_t k0 = 0; k0 < n; k0 += block) {
    const int64_t k1 = std::min(n, k0 + block);
    const Tensor k = ember::reshape(arange(k0, k1, 1, idx), {k1 - k0, 1});
    const Tensor prods = ember::cumprod(ember::where(ember::eq(k, j), num(1), x_rows), -1);
    const Tensor terms = ember::mul(ember::mul(prods, gt), ember::ge(j, k));
    parts.push_back(ember::sum(terms, DimList(std::vector<int64_t>{-1})));
  }
  const Tensor grad_t = parts.size() == 1 ? parts[0] : ember::cat(parts, -1);
  return ember::movedim(grad_t, {-1}, {dim});
}

Tensor cumprod_backward(const Tensor& g, const Tensor& input, int64_t dim, const Tensor& output) {
  if (input.numel() <= 1 || input.size(dim) == 1) return g;
  const Tensor x_conj = conj(input);
  const Tensor w = ember::mul(conj(output), g);
  const Tensor is_zero = ember::eq(input, num(0));
  if (!item(ember::any(is_zero)).to_bool()) return ember::div(reversed_cumsum(w, dim), x_conj);
  if (!autograd::GradMode::is_enabled()) return cumprod_with_zeros(g, x_conj, w, is_zero, dim);
  return cumprod_exact(g, x_conj, dim);
}

// The most negative finite value of a floating dtype: log(0) stand-in of logcumsumexp_backward.
double lowest_of(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return -65504.0;
    case ScalarType::BFloat16:
      return -3.3895313892515355e38;
    case ScalarType::Float32:
      return static_cast<double>(std::numeric_limits<float>::lowest());
    default:
      return std::numeric_limits<double>::lowest();
  }
}

Tensor reversed_logcumsumexp(const Tensor& x, int64_t dim) {
  return ember::flip(ember::logcumsumexp(ember::flip(x, {dim}), dim), {dim});
}

// grad_k = sum_{j >= k} grad_j exp(x_k - y_j), computed in log space: positive and negative
// gradients separately for real inputs, directly for complex ones.
Tensor logcumsumexp_backward(const Tensor& g, const Tensor& x, const Tensor& result, int64_t dim) {
  if (g.dim() == 0 || g.numel() == 0) return g;
  if (g.is_complex()) {
    const Tensor log_grad = ember::log(conj(g));
    return conj(
        ember::exp(ember::add(reversed_logcumsumexp(ember::sub(log_grad, result), dim), x)));
  }
  const Tensor grad_min = scalar_tensor(Scalar(lowest_of(g.dtype())), g.dtype());
  const Tensor log_abs_grad = ember::log(ember::abs(g));
  const Tensor log_pos = ember::where(ember::gt(g, num(0)), log_abs_grad, grad_min);
  const Tensor log_neg = ember::where(ember::lt(g, num(0)), log_abs_grad, grad_min);
  const Tensor out_pos =
      ember::exp(ember::add(reversed_logcumsumexp(ember::sub(log_pos, result), dim), x));
  const Tensor out_neg =
      ember::exp(ember::add(reversed_logcumsumexp(ember::sub(log_neg, result), dim), x));
  return ember::sub(out_pos, out_neg);
}

// A scan's dim wrapped for the input (0-d inputs scan dim 0 / -1).
int64_t scan_dim(const Tensor& t, int64_t dim) {
  return single_dim(t.sizes(), dim);
}

TensorPair cum_extremum(const char* node_name, const char* op, bool is_max, const Tensor& t,
                        int64_t dim, const Tensor& values, const Tensor& indices) {
  const DimVector in_sizes(t.sizes());
  const int64_t d = scan_dim(t, dim);
  auto node =
      autograd::new_node(node_name, {t}, [in_sizes, d](FunctionNode& n, const variable_list& g) {
        if (!g[0].defined()) return variable_list{Tensor()};
        if (in_sizes.empty()) return variable_list{g[0]};  // one element, index 0
        const Tensor zeros = ember::zeros(in_sizes, TensorOptions(g[0].dtype()));
        if (zeros.numel() == 0) return variable_list{zeros};
        // Several outputs can share an index: their gradients add up.
        return variable_list{ember::scatter_add(zeros, d, n.saved(0), g[0])};
      });
  TensorPair r = record_pair(node, {t}, values, indices, op, [&] {
    return is_max ? native::cummax(t, dim, values, indices)
                  : native::cummin(t, dim, values, indices);
  });
  node->save(r.second);
  return r;
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out) {
  const int64_t d = scan_dim(t, dim);
  const ScalarType in_dtype = t.dtype();
  auto node = autograd::new_node(
      "CumsumBackward0", {t}, [d, in_dtype](FunctionNode&, const variable_list& g) {
        return variable_list{cumsum_backward(ember::to_dtype(g[0], in_dtype), d)};
      });
  return autograd::record(node, {t}, out, "cumsum",
                          [&] { return native::cumsum(t, dim, dtype, out); });
}

Tensor cumprod(const Tensor& t, int64_t dim, ScalarType dtype, const Tensor& out) {
  const int64_t d = scan_dim(t, dim);
  const ScalarType in_dtype = t.dtype();
  auto node = autograd::new_node(
      "CumprodBackward0", {t}, [d, in_dtype](FunctionNode& n, const variable_list& g) {
        const Tensor grad = ember::to_dtype(g[0], in_dtype);
        return variable_list{cumprod_backward(grad, n.saved(0), d, n.saved(1))};
      });
  // In place (cumprod_), the input is overwritten: keep a copy.
  node->save(out.defined() && out.is_same(t) ? ember::clone(t) : t);
  Tensor r = autograd::record(node, {t}, out, "cumprod",
                              [&] { return native::cumprod(t, dim, dtype, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

TensorPair cummax(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices) {
  return cum_extremum("CummaxBackward0", "cummax", true, t, dim, values, indices);
}

TensorPair cummin(const Tensor& t, int64_t dim, const Tensor& values, const Tensor& indices) {
  return cum_extremum("CumminBackward0", "cummin", false, t, dim, values, indices);
}

Tensor logcumsumexp(const Tensor& t, int64_t dim, const Tensor& out) {
  const int64_t d = scan_dim(t, dim);
  auto node = autograd::new_node(
      "LogcumsumexpBackward0", {t}, [d](FunctionNode& n, const variable_list& g) {
        return variable_list{logcumsumexp_backward(g[0], n.saved(0), n.saved(1), d)};
      });
  node->save(t);
  Tensor r = autograd::record(node, {t}, out, "logcumsumexp",
                              [&] { return native::logcumsumexp(t, dim, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
