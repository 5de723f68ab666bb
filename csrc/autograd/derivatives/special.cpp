// Derivatives of ember.special's ops: the Bessel functions, ndtr / ndtri / log_ndtr, erfcx, entr,
// xlog1py, igamma / igammac (the second argument only), zeta (the second argument only) and
// mvlgamma. Node names and formulas are PyTorch's (derivatives.yaml); where PyTorch refuses a
// gradient (igamma's and zeta's first argument) the backward raises its NotImplementedError.
#include "autograd/derivatives/special.h"

#include <string>

#include "api/binary.h"
#include "api/compare.h"
#include "api/special.h"
#include "api/unary.h"
#include "autograd/derivatives/elementwise_helpers.h"
#include "autograd/derivatives/formula.h"

namespace ember {
namespace derivatives {

using namespace detail;   // NOLINT(build/namespaces): original, saved_operand, is_number
using namespace formula;  // NOLINT(build/namespaces): the formulas' operators
using native::SpecialOp;

namespace {

constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2Pi = 2.50662827463100050242;

// The public (recording) op, so that formulas differentiate again under create_graph=True.
Tensor sp(SpecialOp op, const Tensor& x) {
  return ember::special_unary(op, "special", x);
}

// f'(x) from the input x and the result r.
using UnaryFormula = Tensor (*)(const Tensor& x, const Tensor& r);

struct UnaryRule {
  const char* node;
  UnaryFormula derivative;
};

UnaryRule unary_rule(SpecialOp op, const std::string& name) {
  switch (op) {
    case SpecialOp::i0:
      return {name == "i0" ? "I0Backward0" : "SpecialModifiedBesselI0Backward0",
              [](const Tensor& x, const Tensor&) { return sp(SpecialOp::i1, x); }};
    case SpecialOp::i1:
      // I1'(x) = I0(x) - I1(x) / x, and 1/2 at 0.
      return {name == "i1" ? "SpecialI1Backward0" : "SpecialModifiedBesselI1Backward0",
              [](const Tensor& x, const Tensor& r) {
                return ember::where(eq(x, num(0.0)), num(0.5), sp(SpecialOp::i0, x) - r / x);
              }};
    case SpecialOp::i0e:
      return {"SpecialI0EBackward0", [](const Tensor& x, const Tensor& r) {
                return sp(SpecialOp::i1e, x) - ember::sgn(x) * r;
              }};
    case SpecialOp::i1e:
      return {"SpecialI1EBackward0", [](const Tensor& x, const Tensor& r) {
                return ember::where(eq(x, num(0.0)), num(0.5),
                                    sp(SpecialOp::i0e, x) - r * (ember::sgn(x) + 1.0 / x));
              }};
    case SpecialOp::bessel_j0:
      return {"SpecialBesselJ0Backward0",
              [](const Tensor& x, const Tensor&) { return -sp(SpecialOp::bessel_j1, x); }};
    case SpecialOp::bessel_j1:
      return {"SpecialBesselJ1Backward0", [](const Tensor& x, const Tensor& r) {
                return ember::where(eq(x, num(0.0)), num(0.5), sp(SpecialOp::bessel_j0, x) - r / x);
              }};
    case SpecialOp::bessel_y0:
      return {"SpecialBesselY0Backward0",
              [](const Tensor& x, const Tensor&) { return -sp(SpecialOp::bessel_y1, x); }};
    case SpecialOp::bessel_y1:
      return {"SpecialBesselY1Backward0",
              [](const Tensor& x, const Tensor& r) { return sp(SpecialOp::bessel_y0, x) - r / x; }};
    case SpecialOp::modified_bessel_k0:
      return {"SpecialModifiedBesselK0Backward0",
              [](const Tensor& x, const Tensor&) { return -sp(SpecialOp::modified_bessel_k1, x); }};
    case SpecialOp::modified_bessel_k1:
      return {"SpecialModifiedBesselK1Backward0", [](const Tensor& x, const Tensor& r) {
                return -sp(SpecialOp::modified_bessel_k0, x) - r / x;
              }};
    case SpecialOp::ndtr:
      return {"SpecialNdtrBackward0", [](const Tensor& x, const Tensor&) {
                return ember::exp(-0.5 * squared(x)) * kInvSqrt2Pi;
              }};
    case SpecialOp::ndtri:
      return {"SpecialNdtriBackward0", [](const Tensor&, const Tensor& r) {
                return ember::exp(0.5 * squared(r)) * kSqrt2Pi;
              }};
    case SpecialOp::log_ndtr:
      return {"SpecialLogNdtrBackward0", [](const Tensor& x, const Tensor& r) {
                return ember::exp(-0.5 * squared(x) - r) * kInvSqrt2Pi;
              }};
    case SpecialOp::erfcx:
      return {"SpecialErfcxBackward0",
              [](const Tensor& x, const Tensor& r) { return 2.0 * x * r - kTwoOverSqrtPi; }};
    default:  // entr
      return {"SpecialEntrBackward0",
              [](const Tensor& x, const Tensor&) { return -(1.0 + ember::log(x)); }};
  }
}

}  // namespace

Tensor special_unary(SpecialOp op, const char* name, const Tensor& a, const Tensor& out) {
  const UnaryRule rule = unary_rule(op, name);
  auto node = autograd::new_node(
      rule.node, {a}, [derivative = rule.derivative](FunctionNode& n, const variable_list& g) {
        return variable_list{g[0] * derivative(n.saved(0), n.saved(1))};
      });
  node->save(original(a, out));
  Tensor result = autograd::record(node, {a}, out, name,
                                   [&] { return native::special_unary(op, name, a, out); });
  node->save(result, /*is_output=*/true);
  return result;
}

namespace {

// Node names: Backward0 for two tensors, 1 for a Python-number first argument, 2 for a
// Python-number second one (PyTorch's Scalar overloads).
std::string binary_node(const char* stem, const Tensor& a, const Tensor& b) {
  return std::string(stem) + (is_number(b)   ? "Backward2"
                              : is_number(a) ? "Backward1"
                                             : "Backward0");
}

[[noreturn]] void not_differentiable(const char* op, const char* what) {
  EMBER_THROW(NotImplementedError, "[", op, "] the derivative for '", what,
              "' is not implemented.");
}

}  // namespace

Tensor special_binary(SpecialOp op, const char* name, const Tensor& a, const Tensor& b,
                      const Tensor& out) {
  std::shared_ptr<FunctionNode> node;
  switch (op) {
    case SpecialOp::xlog1py:
      node = autograd::new_node(
          binary_node("SpecialXlog1Py", a, b), {a, b}, [](FunctionNode& n, const variable_list& g) {
            const Tensor x = n.saved(0), y = n.saved(1);
            variable_list r(2);
            if (n.should_compute_output(0)) {
              // xlog1py(0, y) is 0 for every y: no gradient where x == 0 and log1p(y) is not
              // finite.
              const Tensor flat = logical_and(eq(x, num(0.0)), le(y, num(-1.0)));
              r[0] =
                  zero_where(flat, ember::special_binary(SpecialOp::xlog1py, "xlog1py", g[0], y));
            }
            if (n.should_compute_output(1)) r[1] = g[0] * x / (y + 1.0);
            return r;
          });
      break;
    case SpecialOp::igamma:
    case SpecialOp::igammac: {
      const bool upper = op == SpecialOp::igammac;
      node = autograd::new_node(upper ? "IgammacBackward0" : "IgammaBackward0", {a, b},
                                [upper](FunctionNode& n, const variable_list& g) {
                                  if (n.should_compute_output(0)) {
                                    not_differentiable(upper ? "igammac" : "igamma",
                                                       upper ? "igammac: input" : "igamma: input");
                                  }
                                  const Tensor s = n.saved(0), x = n.saved(1);
                                  // d/dx P(s, x) = x^(s-1) e^-x / Gamma(s); Q = 1 - P.
                                  const Tensor d =
                                      ember::exp((s - 1.0) * ember::log(x) - x - ember::lgamma(s));
                                  return variable_list{Tensor(), upper ? -(g[0] * d) : g[0] * d};
                                });
      break;
    }
    case SpecialOp::zeta:
      node = autograd::new_node(
          binary_node("SpecialZeta", a, b), {a, b}, [](FunctionNode& n, const variable_list& g) {
            if (n.should_compute_output(0)) not_differentiable("zeta", "zeta");
            const Tensor s = n.saved(0), q = n.saved(1);
            const Tensor z = ember::special_binary(SpecialOp::zeta, "zeta", s + 1.0, q);
            return variable_list{Tensor(), g[0] * -s * z};
          });
      break;
    default:
      return native::special_binary(op, name, a, b, out);
  }
  node->save(saved_operand(a, b, out));
  node->save(saved_operand(b, a, out));
  return autograd::record(node, {a, b}, out, name,
                          [&] { return native::special_binary(op, name, a, b, out); });
}

Tensor mvlgamma(const Tensor& a, int64_t p, const Tensor& out) {
  auto node =
      autograd::new_node("MvlgammaBackward0", {a}, [p](FunctionNode& n, const variable_list& g) {
        // d/dx sum_j lgamma(x - j/2) = sum_j digamma(x - j/2).
        const Tensor x = n.saved(0);
        Tensor d = ember::digamma(x);
        for (int64_t j = 1; j < p; ++j) {
          d = d + ember::digamma(x - 0.5 * double(j));
        }
        return variable_list{g[0] * d};
      });
  node->save(original(a, out));
  return autograd::record(node, {a}, out, "mvlgamma", [&] { return native::mvlgamma(a, p, out); });
}

}  // namespace derivatives
}  // namespace ember
