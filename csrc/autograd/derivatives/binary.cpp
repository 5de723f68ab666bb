// Derivatives of the binary elementwise ops (ops/binary.cpp): pow, atan2, minimum /
// maximum / fmin / fmax, hypot, logaddexp(2), xlogy, copysign, remainder, fmod, div with a
// rounding mode, lerp. Formulas as PyTorch's derivatives.yaml; complex inputs get
// grad * conj(df/dz). Broadcasting and dtype are undone by the engine (validate_outputs).
#include <complex>

#include "api/binary.h"
#include "api/complex.h"
#include "api/elementwise.h"
#include "api/unary.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/derivatives/elementwise_helpers.h"
#include "autograd/derivatives/jvp.h"
#include "ops/binary.h"

namespace ember {
namespace derivatives {

using namespace detail;  // NOLINT(build/namespaces): num, original, keep_where, ...

namespace {

Tensor exponent_minus_one(const Scalar& e) {
  if (e.is_complex()) return wrap_scalar(Scalar(e.to_complex() - 1.0));
  if (e.is_floating()) return wrap_scalar(Scalar(e.to_double() - 1.0));
  return wrap_scalar(Scalar(e.to_int64() - 1));
}

// d(a ** b)/db = a ** b * log(a), 0 where a == 0 and b >= 0 (real part >= 0 with no imaginary
// part for complex b), as PyTorch's pow_backward_exponent.
Tensor pow_exponent_factor(const Tensor& base, const Tensor& exponent, const Tensor& result) {
  Tensor non_negative = exponent.is_complex()
                            ? ember::logical_and(ember::eq(ember::imag(exponent), num(0.0)),
                                                 ember::ge(ember::real(exponent), num(0.0)))
                            : ember::ge(exponent, num(0.0));
  Tensor zero_base = ember::logical_and(ember::eq(base, num(0.0)), non_negative);
  // The logarithm in the result's dtype (a real base with a complex exponent has a complex
  // logarithm; a Python-number base is taken at full precision).
  const Tensor b = base.dtype() != result.dtype() ? ember::to_dtype(base, result.dtype()) : base;
  return zero_where(zero_base, ember::mul(result, ember::log(b)));
}

Tensor pow_exponent_grad(const Tensor& g, const Tensor& base, const Tensor& exponent,
                         const Tensor& result) {
  return ember::mul(g, ember::conj(pow_exponent_factor(base, exponent, result)));
}

// d(a ** b)/da = b * a ** (b - 1), 0 where b == 0 (as the backward).
Tensor pow_base_factor(const Tensor& base, const Tensor& exponent) {
  const Tensor d = ember::mul(exponent, ember::pow(base, ember::sub(exponent, num(1.0))));
  return zero_where(ember::eq(exponent, num(0.0)), d);
}

// maximum / minimum / fmax / fmin: ties split the gradient; `zero_self` / `zero_other` mark
// where the input was not selected.
variable_list split_select(FunctionNode& n, const Tensor& g, const Tensor& zero_self,
                           const Tensor& zero_other) {
  const Tensor a = n.saved(0), b = n.saved(1);
  const Tensor split = ember::where(ember::eq(a, b), ember::mul(g, num(0.5)), g);
  variable_list r(2);
  if (n.should_compute_output(0)) r[0] = zero_where(zero_self, split);
  if (n.should_compute_output(1)) r[1] = zero_where(zero_other, split);
  return r;
}

enum class Pick { Max, Min, FMax, FMin };

// (zero_self, zero_other): where each input was not selected (ties select both).
std::pair<Tensor, Tensor> select_masks(Pick pick, const Tensor& x, const Tensor& y) {
  switch (pick) {
    case Pick::Max:
      return {ember::lt(x, y), ember::gt(x, y)};
    case Pick::Min:
      return {ember::gt(x, y), ember::lt(x, y)};
    case Pick::FMax: {
      // fmax ignores a NaN: a NaN `other` passes the gradient to self.
      const Tensor y_nan = ember::isnan(y);
      return {ember::logical_not(ember::logical_or(ember::ge(x, y), y_nan)),
              ember::logical_or(ember::gt(x, y), y_nan)};
    }
    default: {
      const Tensor y_nan = ember::isnan(y);
      return {ember::logical_not(ember::logical_or(ember::le(x, y), y_nan)),
              ember::logical_or(ember::lt(x, y), y_nan)};
    }
  }
}

Tensor record_select(const char* name, const char* op, Pick pick, const Tensor& a, const Tensor& b,
                     const Tensor& out,
                     Tensor (*forward)(const Tensor&, const Tensor&, const Tensor&)) {
  auto node = autograd::new_node(name, {a, b}, [pick](FunctionNode& n, const variable_list& g) {
    const auto [zero_self, zero_other] = select_masks(pick, n.saved(0), n.saved(1));
    return split_select(n, g[0], zero_self, zero_other);
  });
  if (node->has_forward()) {
    // The selected input's tangent; the mean of both at a tie (as the backward splits it).
    node->set_jvp([pick](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!jvp::any_defined(t)) return {Tensor()};
      const Tensor x = n.saved(0), y = n.saved(1);
      const auto [zero_self, zero_other] = select_masks(pick, x, y);
      const Tensor tie = ember::eq(x, y);
      auto part = [&](const Tensor& ti, const Tensor& zero) -> Tensor {
        if (!ti.defined()) return Tensor();
        return zero_where(zero, ember::where(tie, ember::mul(ti, num(0.5)), ti));
      };
      return {jvp::add(part(t[0], zero_self), part(t[1], zero_other))};
    });
  }
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  return autograd::record(node, {a, b}, out, op, [&] { return forward(a, b, out); });
}

}  // namespace

Tensor pow(const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool number_base = is_number(a);
  auto node = autograd::new_node(
      number_base ? "PowBackward2" : "PowBackward1", {a, b},
      [](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0), e = n.saved(1);
        variable_list r(2);
        if (n.should_compute_output(0)) {
          Tensor d = ember::mul(e, ember::pow(x, ember::sub(e, num(1.0))));
          r[0] = zero_where(ember::eq(e, num(0.0)), ember::mul(g[0], ember::conj(d)));
        }
        if (n.should_compute_output(1)) r[1] = pow_exponent_grad(g[0], x, e, n.saved(2));
        return r;
      });
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  if (node->has_forward()) {
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      const Tensor x = n.saved(0), e = n.saved(1);
      Tensor r;
      if (t[0].defined()) r = ember::mul(t[0], pow_base_factor(x, e));
      if (t[1].defined()) r = jvp::add(r, ember::mul(t[1], pow_exponent_factor(x, e, n.saved(2))));
      return {r};
    });
  }
  Tensor result =
      autograd::record(node, {a, b}, out, "pow", [&] { return native::pow(a, b, out); });
  node->save(result, /*is_output=*/true);
  return result;
}

Tensor pow(const Tensor& a, const Scalar& exponent, const Tensor& out) {
  auto node =
      autograd::new_node("PowBackward0", {a}, [exponent](FunctionNode& n, const variable_list& g) {
        const Tensor x = n.saved(0);
        if (!exponent.is_complex() && exponent.to_double() == 0.0) {
          return variable_list{zeros_like_grad(g[0])};
        }
        Tensor d = ember::mul(ember::pow(x, exponent_minus_one(exponent)), wrap_scalar(exponent));
        return variable_list{ember::mul(g[0], ember::conj(d))};
      });
  node->save(original(a, out));
  if (node->has_forward()) {
    node->set_jvp([exponent](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      if (!exponent.is_complex() && exponent.to_double() == 0.0) {
        return {ember::zeros(t[0].sizes(), TensorOptions(t[0].dtype()))};
      }
      const Tensor x = n.saved(0);
      const Tensor d =
          ember::mul(ember::pow(x, exponent_minus_one(exponent)), wrap_scalar(exponent));
      return {ember::mul(t[0], d)};
    });
  }
  return autograd::record(node, {a}, out, "pow", [&] { return native::pow(a, exponent, out); });
}

Tensor atan2(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto node =
      autograd::new_node("Atan2Backward0", {a, b}, [](FunctionNode& n, const variable_list& g) {
        const Tensor y = n.saved(0), x = n.saved(1);
        const Tensor denom = ember::add(ember::mul(y, y), ember::mul(x, x));
        // At the origin both partial derivatives are taken as 0 (PyTorch's atan2_backward).
        const Tensor recip = zero_where(ember::eq(denom, num(0.0)), ember::reciprocal(denom));
        const Tensor scaled = ember::mul(g[0], recip);
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = ember::mul(scaled, x);
        if (n.should_compute_output(1)) r[1] = ember::mul(scaled, ember::neg(y));
        return r;
      });
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  return autograd::record(node, {a, b}, out, "atan2", [&] { return native::atan2(a, b, out); });
}

Tensor maximum(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_select(
      "MaximumBackward0", "maximum", Pick::Max, a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::maximum(x, y, o); });
}

Tensor minimum(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_select(
      "MinimumBackward0", "minimum", Pick::Min, a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::minimum(x, y, o); });
}

Tensor fmax(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_select(
      "FmaxBackward0", "fmax", Pick::FMax, a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::fmax(x, y, o); });
}

Tensor fmin(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_select(
      "FminBackward0", "fmin", Pick::FMin, a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::fmin(x, y, o); });
}

Tensor hypot(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto node =
      autograd::new_node("HypotBackward0", {a, b}, [](FunctionNode& n, const variable_list& g) {
        const Tensor scaled = ember::div(g[0], n.saved(2));
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = ember::mul(scaled, n.saved(0));
        if (n.should_compute_output(1)) r[1] = ember::mul(scaled, n.saved(1));
        return r;
      });
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  Tensor result =
      autograd::record(node, {a, b}, out, "hypot", [&] { return native::hypot(a, b, out); });
  node->save(result, /*is_output=*/true);
  return result;
}

namespace {
// logaddexp (base e) and logaddexp2: d/da = 1 / (1 + base ** (b - a)).
Tensor record_logaddexp(const char* name, const char* op, bool base2, const Tensor& a,
                        const Tensor& b, const Tensor& out,
                        Tensor (*forward)(const Tensor&, const Tensor&, const Tensor&)) {
  auto node = autograd::new_node(name, {a, b}, [base2](FunctionNode& n, const variable_list& g) {
    const Tensor x = n.saved(0), y = n.saved(1);
    auto share = [&](const Tensor& d) {
      const Tensor p = base2 ? ember::exp2(d) : ember::exp(d);
      return ember::div(g[0], ember::conj(ember::add(p, num(1.0))));
    };
    variable_list r(2);
    if (n.should_compute_output(0)) r[0] = share(ember::sub(y, x));
    if (n.should_compute_output(1)) r[1] = share(ember::sub(x, y));
    return r;
  });
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  return autograd::record(node, {a, b}, out, op, [&] { return forward(a, b, out); });
}
}  // namespace

Tensor logaddexp(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_logaddexp(
      "LogaddexpBackward0", "logaddexp", false, a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::logaddexp(x, y, o); });
}

Tensor logaddexp2(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_logaddexp("Logaddexp2Backward0", "logaddexp2", true, a, b, out,
                          [](const Tensor& x, const Tensor& y, const Tensor& o) {
                            return native::logaddexp2(x, y, o);
                          });
}

Tensor xlogy(const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* name = is_number(b)   ? "XlogyBackward2"
                     : is_number(a) ? "XlogyBackward1"
                                    : "XlogyBackward0";
  auto node = autograd::new_node(name, {a, b}, [](FunctionNode& n, const variable_list& g) {
    const Tensor x = n.saved(0), y = n.saved(1);
    variable_list r(2);
    if (n.should_compute_output(0)) {
      // xlogy(0, y) is 0 for every y: no gradient where x == 0 and log(y) is not finite.
      const Tensor flat = ember::logical_and(ember::eq(x, num(0.0)), ember::le(y, num(0.0)));
      r[0] = zero_where(flat, ember::xlogy(g[0], y));
    }
    if (n.should_compute_output(1)) r[1] = ember::div(ember::mul(g[0], x), y);
    return r;
  });
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  return autograd::record(node, {a, b}, out, "xlogy", [&] { return native::xlogy(a, b, out); });
}

Tensor copysign(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto node = autograd::new_node(is_number(b) ? "CopysignBackward1" : "CopysignBackward0", {a, b},
                                 [](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   if (n.should_compute_output(0)) {
                                     // +-1 where the sign flipped or not; 0 at a == 0 (either sign
                                     // of zero).
                                     const Tensor x = n.saved(0);
                                     const Tensor ratio = zero_where(ember::eq(x, num(0.0)),
                                                                     ember::div(n.saved(1), x));
                                     r[0] = ember::mul(g[0], ratio);
                                   }
                                   if (n.should_compute_output(1)) r[1] = zeros_like_grad(g[0]);
                                   return r;
                                 });
  node->save(saved_operand(a, b, out));
  Tensor result =
      autograd::record(node, {a, b}, out, "copysign", [&] { return native::copysign(a, b, out); });
  node->save(result, /*is_output=*/true);
  return result;
}

namespace {
// remainder (floor) / fmod (trunc): a - b * q with q = div(a, b, rounding) piecewise constant.
Tensor record_modulo(const char* name, const char* op, RoundingMode mode, const Tensor& a,
                     const Tensor& b, const Tensor& out,
                     Tensor (*forward)(const Tensor&, const Tensor&, const Tensor&)) {
  auto node = autograd::new_node(name, {a, b}, [mode](FunctionNode& n, const variable_list& g) {
    variable_list r(2);
    if (n.should_compute_output(0)) r[0] = g[0];
    if (n.should_compute_output(1)) {
      r[1] = ember::mul(ember::neg(g[0]), ember::div(n.saved(0), n.saved(1), mode));
    }
    return r;
  });
  const bool need_inputs = node->should_compute_output(1);
  node->save(need_inputs ? saved_operand(a, b, out) : Tensor());
  node->save(need_inputs ? saved_operand(b, a, out) : Tensor());
  return autograd::record(node, {a, b}, out, op, [&] { return forward(a, b, out); });
}
}  // namespace

Tensor remainder(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_modulo(
      is_number(b) ? "RemainderBackward0" : "RemainderBackward1", "remainder", RoundingMode::Floor,
      a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::remainder(x, y, o); });
}

Tensor fmod(const Tensor& a, const Tensor& b, const Tensor& out) {
  return record_modulo(
      is_number(b) ? "FmodBackward0" : "FmodBackward1", "fmod", RoundingMode::Trunc, a, b, out,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return native::fmod(x, y, o); });
}

Tensor div_rounding(const Tensor& a, const Tensor& b, bool trunc, const Tensor& out) {
  // A rounded quotient is piecewise constant: PyTorch gives zero gradients to both inputs.
  auto node =
      autograd::new_node("DivBackward2", {a, b}, [](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = zeros_like_grad(g[0]);
        if (n.should_compute_output(1)) r[1] = zeros_like_grad(g[0]);
        return r;
      });
  const RoundingMode mode = trunc ? RoundingMode::Trunc : RoundingMode::Floor;
  return autograd::record(node, {a, b}, out, "div", [&] { return native::div(a, b, mode, out); });
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out) {
  auto node = autograd::new_node(
      "LerpBackward1", {start, end, weight}, [](FunctionNode& n, const variable_list& g) {
        const Tensor w = n.saved(2);
        variable_list r(3);
        if (n.should_compute_output(0)) {
          r[0] = ember::mul(g[0], ember::conj(ember::sub(num(1.0), w)));
        }
        if (n.should_compute_output(1)) r[1] = ember::mul(g[0], ember::conj(w));
        if (n.should_compute_output(2)) {
          r[2] = ember::mul(g[0], ember::conj(ember::sub(n.saved(1), n.saved(0))));
        }
        return r;
      });
  const bool need_ends = node->should_compute_output(2);
  node->save(need_ends ? original(start, out) : Tensor());
  node->save(need_ends ? original(end, out) : Tensor());
  node->save(original(weight, out));
  if (node->has_forward()) {
    // d lerp = ds (1 - w) + de w + dw (e - s).
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!jvp::any_defined(t)) return {Tensor()};
      const Tensor w = n.saved(2);
      Tensor r = jvp::mul(t[0], ember::sub(num(1.0), w));
      r = jvp::add(r, jvp::mul(t[1], w));
      if (t[2].defined()) r = jvp::add(r, ember::mul(t[2], ember::sub(n.saved(1), n.saved(0))));
      return {r};
    });
  }
  return autograd::record(node, {start, end, weight}, out, "lerp",
                          [&] { return native::lerp(start, end, weight, out); });
}

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight, const Tensor& out) {
  // conj(1 - w) and conj(w) as Python numbers (exact, and they keep the gradient's dtype).
  const bool cplx = weight.is_complex();
  const Scalar w_conj = cplx ? Scalar(std::conj(weight.to_complex())) : Scalar(weight.to_double());
  const Scalar rest_conj =
      cplx ? Scalar(std::conj(1.0 - weight.to_complex())) : Scalar(1.0 - weight.to_double());
  auto node = autograd::new_node("LerpBackward0", {start, end},
                                 [w_conj, rest_conj](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   if (n.should_compute_output(0))
                                     r[0] = ember::mul(g[0], wrap_scalar(rest_conj));
                                   if (n.should_compute_output(1))
                                     r[1] = ember::mul(g[0], wrap_scalar(w_conj));
                                   return r;
                                 });
  if (node->has_forward()) {
    const Scalar rest = cplx ? Scalar(1.0 - weight.to_complex()) : Scalar(1.0 - weight.to_double());
    node->set_jvp([weight, rest](FunctionNode&, const variable_list& t) -> variable_list {
      return {jvp::add(jvp::scale(t[0], rest), jvp::scale(t[1], weight))};
    });
  }
  return autograd::record(node, {start, end}, out, "lerp",
                          [&] { return native::lerp(start, end, weight, out); });
}

}  // namespace derivatives
}  // namespace ember
