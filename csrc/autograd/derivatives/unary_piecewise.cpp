// Derivatives of where, clamp and the piecewise unary ops (ops/unary.cpp,
// ops/compare.cpp): sign / floor / ceil / round / trunc (zero gradients), sgn, frac, logit,
// nan_to_num, polygamma. Boundary and tie conventions are PyTorch's.
#include <limits>
#include <vector>

#include "api/binary.h"
#include "api/complex.h"
#include "api/elementwise.h"
#include "api/unary.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/derivatives/elementwise_helpers.h"
#include "autograd/derivatives/jvp.h"
#include "ops/compare.h"
#include "ops/unary.h"

namespace ember {
namespace derivatives {

using namespace detail;  // NOLINT(build/namespaces): num, original, keep_where, ...

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const Tensor& out) {
  // The condition is not differentiable: it is saved, not an input of the node.
  auto node =
      autograd::new_node("WhereBackward0", {x, y}, [](FunctionNode& n, const variable_list& g) {
        const Tensor c = n.saved(0);
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = keep_where(c, g[0]);
        if (n.should_compute_output(1)) r[1] = zero_where(c, g[0]);
        return r;
      });
  node->save(cond.dtype() == ScalarType::Bool ? cond : ember::to_dtype(cond, ScalarType::Bool));
  if (node->has_forward()) {
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!jvp::any_defined(t)) return {Tensor()};
      const Tensor c = n.saved(0);
      if (t[0].defined() && t[1].defined()) return {ember::where(c, t[0], t[1])};
      return {t[0].defined() ? keep_where(c, t[0]) : zero_where(c, t[1])};
    });
  }
  return autograd::record(node, {x, y}, out, "where",
                          [&] { return native::where(cond, x, y, out); });
}

Tensor clamp(const char* name, const Tensor& a, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max, const Tensor& out) {
  // Python-number bounds: the gradient passes strictly inside (min, max) only (a value at a
  // bound gets none, nor does NaN).
  auto node = autograd::new_node(name, {a}, [min, max](FunctionNode& n, const variable_list& g) {
    const Tensor x = n.saved(0);
    Tensor inside;
    if (min) inside = ember::gt(x, wrap_scalar(*min));
    if (max) {
      const Tensor below = ember::lt(x, wrap_scalar(*max));
      inside = inside.defined() ? ember::logical_and(inside, below) : below;
    }
    return variable_list{keep_where(inside, g[0])};
  });
  node->save(original(a, out));
  return autograd::record(node, {a}, out, "clamp", [&] { return native::clamp(a, min, max, out); });
}

namespace {

// Tensor bounds, both given. Every input that equals the result at an ordinary boundary tie
// gets half the gradient; min > max selects max; a NaN input passes the gradient to self.
variable_list clamp_both_grads(FunctionNode& n, const Tensor& g) {
  const Tensor x = n.saved(0), lo = n.saved(1), hi = n.saved(2);
  const Tensor below = ember::lt(x, lo), above = ember::gt(x, hi);
  const Tensor at_lo = ember::eq(x, lo), at_hi = ember::eq(x, hi);
  const Tensor ordered = ember::lt(lo, hi), crossed = ember::gt(lo, hi);
  const Tensor not_crossed = ember::le(lo, hi);  // false for a NaN bound
  const Tensor half = ember::mul(g, num(0.5));
  variable_list r(3);
  if (n.should_compute_output(0)) {
    const Tensor passes = ember::logical_or(
        ember::isnan(x),
        ember::logical_not(ember::logical_or(ember::logical_or(below, above), crossed)));
    const Tensor tie = ember::logical_and(ember::logical_or(at_lo, at_hi), ordered);
    r[0] = keep_where(passes, ember::where(tie, half, g));
  }
  if (n.should_compute_output(1)) {
    r[1] = ember::where(ember::logical_and(below, not_crossed), g,
                        keep_where(ember::logical_and(at_lo, ordered), half));
  }
  if (n.should_compute_output(2)) {
    const Tensor selected = ember::logical_or(ember::logical_and(above, not_crossed), crossed);
    r[2] = ember::where(selected, g, keep_where(ember::logical_and(at_hi, ordered), half));
  }
  return r;
}

// One tensor bound: maximum's (min) or minimum's (max) rule, ties split.
variable_list clamp_one_grads(FunctionNode& n, const Tensor& g, bool is_min) {
  const Tensor x = n.saved(0), b = n.saved(1);
  const Tensor split = ember::where(ember::eq(x, b), ember::mul(g, num(0.5)), g);
  variable_list r(2);
  if (n.should_compute_output(0))
    r[0] = zero_where(is_min ? ember::lt(x, b) : ember::gt(x, b), split);
  if (n.should_compute_output(1))
    r[1] = zero_where(is_min ? ember::gt(x, b) : ember::lt(x, b), split);
  return r;
}

}  // namespace

Tensor clamp(const char* name, const Tensor& a, const Tensor& min, const Tensor& max,
             const Tensor& out) {
  std::shared_ptr<FunctionNode> node;
  std::vector<Tensor> inputs;
  if (min.defined() && max.defined()) {
    inputs = {a, min, max};
    node = autograd::new_node(name, inputs, [](FunctionNode& n, const variable_list& g) {
      return clamp_both_grads(n, g[0]);
    });
  } else {
    const bool is_min = min.defined();
    inputs = {a, is_min ? min : max};
    node = autograd::new_node(name, inputs, [is_min](FunctionNode& n, const variable_list& g) {
      return clamp_one_grads(n, g[0], is_min);
    });
  }
  for (const Tensor& t : inputs) node->save(original(t, out));
  return autograd::record(node, inputs, out, "clamp",
                          [&] { return native::clamp(a, min, max, out); });
}

Tensor zero_gradient(const char* name, const char* op, const Tensor& a, const Tensor& out,
                     Tensor (*forward)(const Tensor&, const Tensor&)) {
  auto node = autograd::new_node(name, {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{zeros_like_grad(g[0])};
  });
  return autograd::record(node, {a}, out, op, [&] { return forward(a, out); });
}

Tensor round(const Tensor& a, int64_t decimals, const Tensor& out) {
  auto node = autograd::new_node("RoundBackward1", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{zeros_like_grad(g[0])};
  });
  return autograd::record(node, {a}, out, "round", [&] { return native::round(a, decimals, out); });
}

Tensor sgn(const Tensor& a, const Tensor& out) {
  if (!a.is_complex()) {
    return zero_gradient("SgnBackward0", "sgn", a, out,
                         [](const Tensor& t, const Tensor& o) { return native::sgn(t, o); });
  }
  // z / |z| is not holomorphic: (g - sgn * Re(conj(sgn) * g)) / |z|, and 0 at z == 0.
  auto node = autograd::new_node("SgnBackward0", {a}, [](FunctionNode& n, const variable_list& g) {
    const Tensor z = n.saved(0), s = n.saved(1);
    const Tensor magnitude = ember::abs(z);
    const Tensor radial = ember::mul(s, ember::real(ember::mul(ember::conj(s), g[0])));
    const Tensor d = ember::div(ember::sub(g[0], radial), magnitude);
    return variable_list{zero_where(ember::eq(magnitude, num(0.0)), d)};
  });
  node->save(original(a, out));
  Tensor r = autograd::record(node, {a}, out, "sgn", [&] { return native::sgn(a, out); });
  node->save(r, /*is_output=*/true);
  return r;
}

Tensor frac(const Tensor& a, const Tensor& out) {
  auto node = autograd::new_node("FracBackward0", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};
  });
  return autograd::record(node, {a}, out, "frac", [&] { return native::frac(a, out); });
}

Tensor logit(const Tensor& a, std::optional<double> eps, const Tensor& out) {
  // 1 / (x (1 - x)) on [eps, 1 - eps] and 0 outside (the clamped part is constant); without
  // eps, NaN outside [0, 1]. A NaN input gets a NaN gradient.
  auto node =
      autograd::new_node("LogitBackward0", {a}, [eps](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        const double lo = eps ? *eps : 0.0, hi = eps ? 1.0 - *eps : 1.0;
        const Tensor outside = ember::logical_or(ember::lt(x, num(lo)), ember::gt(x, num(hi)));
        const Tensor d = ember::div(g[0], ember::mul(x, ember::sub(num(1.0), x)));
        const double outside_value = eps ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        return variable_list{ember::where(outside, num(outside_value), d)};
      });
  node->save(original(a, out));
  return autograd::record(node, {a}, out, "logit", [&] { return native::logit(a, eps, out); });
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out) {
  auto node =
      autograd::new_node("NanToNumBackward0", {a}, [](FunctionNode& n, const variable_list& g) {
        return variable_list{ember::mul(g[0], ember::isfinite(n.saved(0)))};
      });
  node->save(original(a, out));
  return autograd::record(node, {a}, out, "nan_to_num",
                          [&] { return native::nan_to_num(a, nan, posinf, neginf, out); });
}

Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out) {
  const bool inplace = out.defined() && out.is_same(a);
  auto node = autograd::new_node(inplace ? "PolygammaBackward1" : "PolygammaBackward0", {a},
                                 [n](FunctionNode& node, const variable_list& g) {
                                   const Tensor d = ember::polygamma(n + 1, node.saved(0));
                                   return variable_list{ember::mul(g[0], d)};
                                 });
  node->save(original(a, out));
  return autograd::record(node, {a}, out, "polygamma",
                          [&] { return native::polygamma(n, a, out); });
}

}  // namespace derivatives
}  // namespace ember
