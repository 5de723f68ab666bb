// Derivatives of cross and cdist.
//
// cdist follows PyTorch's _cdist_backward case by case (p = 0, 1, < 2, 2, > 2, inf), including
// its rule that a zero distance (or, for p < 1, a zero coordinate difference) contributes no
// gradient. p = 2 needs no pairwise tensor: with w = grad / dist,
//   grad_x1 = x1 * rowsum(w) - w @ x2,   grad_x2 = x2 * colsum(w) - w^T @ x1.
// Other p need the (.., P, R, M) coordinate differences; they are formed for a block of x1's
// rows at a time so memory stays bounded. Everything is public ops, so double backward works;
// when no graph is being built (the usual backward), one fused kernel pass (cdist_backward)
// replaces them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "api/compare.h"
#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/matmul.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/matmul.h"
#include "autograd/record.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim, const Tensor& out) {
  refuse_out(out, a, b, "cross");
  auto node = autograd::new_node("LinalgCrossBackward0", {a, b},
                                 [dim](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   if (n.should_compute_output(0)) {
                                     r[0] = ember::cross(ember::conj(n.saved(1)), g[0], dim);
                                   }
                                   if (n.should_compute_output(1)) {
                                     r[1] = ember::cross(g[0], ember::conj(n.saved(0)), dim);
                                   }
                                   return r;
                                 });
  node->save(node->should_compute_output(1) ? a : Tensor());
  node->save(node->should_compute_output(0) ? b : Tensor());
  return autograd::record(node, {a, b}, Tensor(), "cross",
                          [&] { return native::cross(a, b, dim); });
}

namespace {

// Elements of the pairwise-difference block formed at once (about 32 MiB of float64).
constexpr int64_t kPairwiseBlock = int64_t(1) << 22;

Tensor as_mask(const Tensor& b, ScalarType dtype) {
  return ember::to_dtype(b, dtype);
}
Tensor zero_scalar() {
  return wrap_scalar(Scalar(0.0));
}

// d with its zeros replaced by ones (a safe divisor), and the mask of its non-zeros.
std::pair<Tensor, Tensor> safe_and_mask(const Tensor& d) {
  Tensor zero = as_mask(ember::eq(d, zero_scalar()), d.dtype());
  return {ember::add(d, zero), as_mask(ember::ne(d, zero_scalar()), d.dtype())};
}

// x^e for x > 0 (every caller passes a tensor whose zeros were replaced by ones), as
// exp(e log x): ops that record, so the formula has a double backward.
Tensor pow_positive(const Tensor& x, double e) {
  return ember::exp(ember::mul(ember::log(x), wrap_scalar(Scalar(e))));
}

// d(dist_ij)/d(x1_i) * grad_ij for a block: diff (.., c, R, M), g and d (.., c, R, 1).
Tensor pairwise_term(const Tensor& diff, const Tensor& g, const Tensor& d, double p) {
  const ScalarType dtype = diff.dtype();
  if (p == 1.0) return ember::mul(ember::sign(diff), g);
  if (std::isinf(p)) {
    // Every coordinate attaining the maximum gets the gradient.
    Tensor at_max = as_mask(ember::eq(ember::abs(diff), d), dtype);
    return ember::mul(ember::mul(ember::sign(diff), at_max), g);
  }
  auto [safe_d, nonzero_d] = safe_and_mask(d);
  // grad / dist^(p-1), zero where dist is zero.
  Tensor factor = ember::mul(ember::div(g, pow_positive(safe_d, p - 1)), nonzero_d);
  auto [safe_abs, nonzero_diff] = safe_and_mask(ember::abs(diff));
  Tensor t;
  if (p < 2.0) {
    // sign(diff) |diff|^(p-1); below p = 1 a zero difference contributes nothing (the power
    // would be infinite).
    t = ember::mul(ember::sign(diff), pow_positive(safe_abs, p - 1));
    if (p < 1.0) t = ember::mul(t, nonzero_diff);
  } else {
    // p > 2: diff |diff|^(p-2), zero (with a zero derivative) where diff is zero.
    t = ember::mul(ember::mul(diff, pow_positive(safe_abs, p - 2)), nonzero_diff);
  }
  return ember::mul(t, factor);
}

// Gradients of cdist for x1 (.., P, M) and x2 (.., R, M) given grad and dist (.., P, R).
variable_list cdist_backward(FunctionNode& n, const Tensor& g, const Tensor& x1, const Tensor& x2,
                             const Tensor& dist, double p) {
  variable_list r(2);
  const int64_t nd = dist.dim();
  const int64_t P = dist.size(nd - 2), R = dist.size(nd - 1), M = x1.size(x1.dim() - 1);
  if (p == 0.0 || dist.numel() == 0 || M == 0) {
    // The count of non-zero differences is piecewise constant.
    r[0] = zeros(x1.sizes(), TensorOptions(x1.dtype()));
    r[1] = zeros(x2.sizes(), TensorOptions(x2.dtype()));
    return r;
  }
  if (p == 2.0) {
    auto [safe_d, nonzero_d] = safe_and_mask(dist);
    Tensor w = ember::mul(ember::div(g, safe_d), nonzero_d);
    if (n.should_compute_output(0)) {
      r[0] = ember::sub(ember::mul(x1, ember::sum(w, std::vector<int64_t>{nd - 1}, true)),
                        ember::matmul(w, x2));
    }
    if (n.should_compute_output(1)) {
      Tensor col = ember::unsqueeze(ember::sum(w, std::vector<int64_t>{nd - 2}), -1);
      r[1] = ember::sub(ember::mul(x2, col), ember::matmul(ember::transpose(w, -2, -1), x1));
    }
    return r;
  }
  if (!autograd::GradMode::is_enabled()) {
    // No double backward is being built: one fused pass per input (PyTorch's _cdist_backward);
    // x2's gradient is x1's with the roles swapped (every case is odd in the difference).
    if (n.should_compute_output(0)) r[0] = ember::cdist_backward(g, x1, x2, p, dist);
    if (n.should_compute_output(1)) {
      r[1] = ember::cdist_backward(ember::transpose(g, -2, -1), x2, x1, p,
                                   ember::transpose(dist, -2, -1));
    }
    return r;
  }
  // x1, x2 broadcast to the result's batch dims; the engine sums the gradients back.
  DimVector s1(dist.sizes()), s2(dist.sizes());
  s1[nd - 1] = M;
  s2[nd - 2] = R;
  s2[nd - 1] = M;
  const Tensor x1e = ember::expand(x1, s1), x2e = ember::unsqueeze(ember::expand(x2, s2), nd - 2);
  int64_t per_row = M * R;
  for (int64_t k = 0; k + 2 < nd; ++k) per_row *= dist.size(k);
  const int64_t block = std::max<int64_t>(1, kPairwiseBlock / std::max<int64_t>(per_row, 1));
  std::vector<Tensor> rows1;
  Tensor grad2;
  for (int64_t start = 0; start < P; start += block) {
    const int64_t c = std::min(block, P - start);
    Tensor diff = ember::sub(ember::unsqueeze(ember::narrow(x1e, nd - 2, start, c), nd - 1), x2e);
    Tensor term = pairwise_term(diff, ember::unsqueeze(ember::narrow(g, nd - 2, start, c), nd),
                                ember::unsqueeze(ember::narrow(dist, nd - 2, start, c), nd), p);
    if (n.should_compute_output(0)) rows1.push_back(ember::sum(term, std::vector<int64_t>{nd - 1}));
    if (n.should_compute_output(1)) {
      Tensor part = ember::sum(term, std::vector<int64_t>{nd - 2});
      grad2 = grad2.defined() ? ember::add(grad2, part) : part;
    }
  }
  if (n.should_compute_output(0)) r[0] = rows1.size() == 1 ? rows1[0] : ember::cat(rows1, nd - 2);
  if (n.should_compute_output(1)) r[1] = ember::neg(grad2);
  return r;
}

}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p,
             const std::optional<std::string>& compute_mode) {
  auto node =
      autograd::new_node("CdistBackward0", {x1, x2}, [p](FunctionNode& n, const variable_list& g) {
        return cdist_backward(n, g[0], n.saved(0), n.saved(1), n.saved(2), p);
      });
  node->save(x1);
  node->save(x2);
  Tensor r = autograd::record(node, {x1, x2}, Tensor(), "cdist",
                              [&] { return native::cdist(x1, x2, p, compute_mode); });
  node->save(r, /*is_output=*/true);
  return r;
}

}  // namespace derivatives
}  // namespace ember
