// Derivatives of unary elementwise ops. Complex inputs follow PyTorch's convention: the
// gradient is grad * conj(f'(z)).
#include <cmath>

#include "api/binary_ops.h"
#include "api/complex_ops.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/unary_ops.h"
#include "api/views.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/record.h"
#include "ops/unary_ops.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

Tensor num(double v) {
  return wrap_scalar(Scalar(v));
}
Tensor times(const Tensor& a, const Tensor& b) {
  return ember::mul(a, b);
}
Tensor over(const Tensor& a, const Tensor& b) {
  return ember::div(a, b);
}
Tensor plus(const Tensor& a, double v) {
  return ember::add(a, num(v));
}
Tensor sq(const Tensor& a) {
  return ember::mul(a, a);
}

// f'(x) given the input x and the result y; the gradient is g * conj(f'(x)).
using Deriv = Tensor (*)(const Tensor& x, const Tensor& y);

enum class Needs { Input, Result };

Tensor record_unary(const char* node_name, const char* op, const Tensor& a, const Tensor& out,
                    Needs needs, Deriv deriv, Tensor (*forward)(const Tensor&, const Tensor&)) {
  auto node =
      autograd::new_node(node_name, {a}, [deriv, needs](FunctionNode& n, const variable_list& g) {
        const Tensor s = n.saved(0);
        const Tensor d = needs == Needs::Input ? deriv(s, Tensor()) : deriv(Tensor(), s);
        return variable_list{times(g[0], ember::conj(d))};
      });
  if (needs == Needs::Input) {
    node->save(out.defined() && out.is_same(a) ? ember::clone(a) : a);
  }
  Tensor r = autograd::record(node, {a}, out, op, [&] { return forward(a, out); });
  if (needs == Needs::Result) node->save(r, /*is_output=*/true);
  return r;
}

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtPiOverTwo = 0.88622692545275801365;

}  // namespace

#define EMBER_UNARY_DERIVATIVE(name, Node, needs, expr)                       \
  Tensor name(const Tensor& a, const Tensor& out) {                           \
    return record_unary(                                                      \
        Node, #name, a, out, Needs::needs,                                    \
        [](const Tensor& x, const Tensor& y) -> Tensor {                      \
          (void)x;                                                            \
          (void)y;                                                            \
          return expr;                                                        \
        },                                                                    \
        [](const Tensor& t, const Tensor& o) { return native::name(t, o); }); \
  }

EMBER_UNARY_DERIVATIVE(exp, "ExpBackward0", Result, y)
EMBER_UNARY_DERIVATIVE(exp2, "Exp2Backward0", Result, times(y, num(kLn2)))
EMBER_UNARY_DERIVATIVE(expm1, "Expm1Backward0", Result, plus(y, 1))
EMBER_UNARY_DERIVATIVE(log, "LogBackward0", Input, ember::reciprocal(x))
EMBER_UNARY_DERIVATIVE(log2, "Log2Backward0", Input, ember::reciprocal(times(x, num(kLn2))))
EMBER_UNARY_DERIVATIVE(log10, "Log10Backward0", Input, ember::reciprocal(times(x, num(kLn10))))
EMBER_UNARY_DERIVATIVE(log1p, "Log1PBackward0", Input, ember::reciprocal(plus(x, 1)))
EMBER_UNARY_DERIVATIVE(sqrt, "SqrtBackward0", Result, over(num(0.5), y))
EMBER_UNARY_DERIVATIVE(rsqrt, "RsqrtBackward0", Result, times(num(-0.5), times(y, sq(y))))
EMBER_UNARY_DERIVATIVE(reciprocal, "ReciprocalBackward0", Result, ember::neg(sq(y)))
EMBER_UNARY_DERIVATIVE(sin, "SinBackward0", Input, ember::cos(x))
EMBER_UNARY_DERIVATIVE(cos, "CosBackward0", Input, ember::neg(ember::sin(x)))
EMBER_UNARY_DERIVATIVE(tan, "TanBackward0", Result, plus(sq(y), 1))
EMBER_UNARY_DERIVATIVE(asin, "AsinBackward0", Input, ember::rsqrt(ember::sub(num(1), sq(x))))
EMBER_UNARY_DERIVATIVE(acos, "AcosBackward0", Input,
                       ember::neg(ember::rsqrt(ember::sub(num(1), sq(x)))))
EMBER_UNARY_DERIVATIVE(atan, "AtanBackward0", Input, ember::reciprocal(plus(sq(x), 1)))
EMBER_UNARY_DERIVATIVE(sinh, "SinhBackward0", Input, ember::cosh(x))
EMBER_UNARY_DERIVATIVE(cosh, "CoshBackward0", Input, ember::sinh(x))
EMBER_UNARY_DERIVATIVE(tanh, "TanhBackward0", Result, ember::sub(num(1), sq(y)))
EMBER_UNARY_DERIVATIVE(asinh, "AsinhBackward0", Input, ember::rsqrt(plus(sq(x), 1)))
EMBER_UNARY_DERIVATIVE(acosh, "AcoshBackward0", Input,
                       ember::reciprocal(times(ember::sqrt(plus(x, -1)), ember::sqrt(plus(x, 1)))))
EMBER_UNARY_DERIVATIVE(atanh, "AtanhBackward0", Input, ember::reciprocal(ember::sub(num(1), sq(x))))
EMBER_UNARY_DERIVATIVE(sigmoid, "SigmoidBackward0", Result, times(y, ember::sub(num(1), y)))
EMBER_UNARY_DERIVATIVE(erf, "ErfBackward0", Input,
                       times(num(kTwoOverSqrtPi), ember::exp(ember::neg(sq(x)))))
EMBER_UNARY_DERIVATIVE(erfc, "ErfcBackward0", Input,
                       times(num(-kTwoOverSqrtPi), ember::exp(ember::neg(sq(x)))))
EMBER_UNARY_DERIVATIVE(erfinv, "ErfinvBackward0", Result,
                       times(num(kSqrtPiOverTwo), ember::exp(sq(y))))
EMBER_UNARY_DERIVATIVE(lgamma, "LgammaBackward0", Input, ember::digamma(x))
EMBER_UNARY_DERIVATIVE(digamma, "DigammaBackward0", Input, ember::polygamma(1, x))
#undef EMBER_UNARY_DERIVATIVE

Tensor neg(const Tensor& a, const Tensor& out) {
  auto node = autograd::new_node("NegBackward0", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::neg(g[0])};
  });
  return autograd::record(node, {a}, out, "neg", [&] { return native::neg(a, out); });
}

Tensor abs(const Tensor& a, const Tensor& out) {
  auto node = autograd::new_node("AbsBackward0", {a}, [](FunctionNode& n, const variable_list& g) {
    return variable_list{times(g[0], ember::sgn(n.saved(0)))};
  });
  node->save(out.defined() && out.is_same(a) ? ember::clone(a) : a);
  return autograd::record(node, {a}, out, "abs", [&] { return native::abs(a, out); });
}

}  // namespace derivatives
}  // namespace ember
