// Derivatives of the activations, glu and prelu.
//
// Note [Activation double backward]
// The first backward of an activation is one fused kernel (grad * f'(x), ops::activation_backward),
// as PyTorch's *_backward kernels. That kernel records nothing, so it may only run when the
// backward itself is not being differentiated. With create_graph=True (grad mode on inside the
// node) the formula is instead written with public ops, so that every higher order follows:
//   - piecewise-linear activations (relu, hardtanh, leaky_relu, ...): f' is piecewise constant, so
//     grad * f'(x) is linear in grad with no dependence on x: mul(grad, f'(x)) where f'(x) comes
//     from the same kernel (grad = 1) and carries no graph;
//   - smooth activations: f'(x) as an expression of public ops on the saved x (derivative_of).
// PyTorch reaches the same gradients with a differentiable *_backward op per activation; here the
// fused kernel serves the common case and the composite the rare double-backward one.
#include "autograd/derivatives/nn/activation.h"

#include "api/binary.h"
#include "api/compare.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/join.h"
#include "api/reduce.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/common.h"
#include "autograd/derivatives/formula.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/record.h"
#include "core/shape.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::GradMode;
using autograd::variable_list;

using formula::num;

namespace {

Tensor full_like_scalar(const Tensor& like, double v) {
  return ember::full(like.sizes(), Scalar(v), TensorOptions(like.dtype(), like.device()));
}

const char* node_name(Activation act, bool inplace) {
  switch (act) {
    case Activation::Relu:
      return "ReluBackward0";
    case Activation::Threshold:
      return inplace ? "ThresholdBackward1" : "ThresholdBackward0";
    case Activation::Hardtanh:
      return "HardtanhBackward0";
    case Activation::LeakyRelu:
      return inplace ? "LeakyReluBackward1" : "LeakyReluBackward0";
    case Activation::Elu:
      return inplace ? "EluBackward1" : "EluBackward0";
    case Activation::Celu:
      return inplace ? "CeluBackward1" : "CeluBackward0";
    case Activation::Gelu:
    case Activation::GeluTanh:
      return "GeluBackward0";
    case Activation::Silu:
      return "SiluBackward0";
    case Activation::Mish:
      return "MishBackward0";
    case Activation::Hardsigmoid:
      return "HardsigmoidBackward0";
    case Activation::Hardswish:
      return "HardswishBackward0";
    case Activation::Softplus:
      return "SoftplusBackward0";
    case Activation::LogSigmoid:
      return "LogSigmoidBackward0";
    case Activation::Softshrink:
      return "SoftshrinkBackward0";
    case Activation::Hardshrink:
      return "HardshrinkBackward0";
  }
  return "ActivationBackward0";
}

// f'(x) of a smooth activation, written with public ops (see the note above).
Tensor derivative_of(Activation act, const Tensor& x, const ActivationArgs& p) {
  constexpr double kSqrt1_2 = 0.70710678118654752440;
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  constexpr double kCoef = 0.044715;
  switch (act) {
    case Activation::Elu:
    case Activation::Celu:
      return ember::where(ember::gt(x, num(0)), full_like_scalar(x, p.b),
                          ember::mul(num(p.a * p.b * p.c), ember::exp(ember::mul(x, num(p.c)))));
    case Activation::Gelu: {
      Tensor cdf =
          ember::mul(num(0.5), ember::add(num(1), ember::erf(ember::mul(x, num(kSqrt1_2)))));
      Tensor pdf =
          ember::mul(num(kInvSqrt2Pi), ember::exp(ember::mul(num(-0.5), ember::mul(x, x))));
      return ember::add(cdf, ember::mul(x, pdf));
    }
    case Activation::GeluTanh: {
      Tensor x2 = ember::mul(x, x);
      Tensor t = ember::tanh(
          ember::mul(num(kSqrt2OverPi), ember::add(x, ember::mul(num(kCoef), ember::mul(x2, x)))));
      Tensor left = ember::mul(num(0.5), ember::add(num(1), t));
      Tensor dinner =
          ember::mul(num(kSqrt2OverPi), ember::add(num(1), ember::mul(num(3 * kCoef), x2)));
      Tensor right = ember::mul(
          ember::mul(ember::mul(num(0.5), x), ember::sub(num(1), ember::mul(t, t))), dinner);
      return ember::add(left, right);
    }
    case Activation::Silu: {
      Tensor s = ember::sigmoid(x);
      return ember::mul(s, ember::add(num(1), ember::mul(x, ember::sub(num(1), s))));
    }
    case Activation::Mish: {
      Tensor t = ember::tanh(ember::softplus(x, 1.0, 20.0));
      Tensor s = ember::sigmoid(x);
      return ember::add(t, ember::mul(ember::mul(x, s), ember::sub(num(1), ember::mul(t, t))));
    }
    case Activation::Hardswish: {
      Tensor mid = ember::add(ember::mul(x, num(1.0 / 3.0)), num(0.5));
      Tensor upper = ember::where(ember::lt(x, num(3)), mid, full_like_scalar(x, 1.0));
      return ember::where(ember::le(x, num(-3)), full_like_scalar(x, 0.0), upper);
    }
    case Activation::Softplus: {
      Tensor bx = ember::mul(x, num(p.a));
      return ember::where(ember::gt(bx, num(p.b)), full_like_scalar(x, 1.0), ember::sigmoid(bx));
    }
    case Activation::LogSigmoid:
      return ember::sigmoid(ember::neg(x));
    default:
      break;
  }
  EMBER_THROW(Error, "[", activation_name(act), "] no composite derivative");
}

// grad * f'(s), s the saved input (the result for relu). `recorded`: the result must itself be
// differentiable (public ops); otherwise the fused kernel.
Tensor activation_grad(Activation act, const Tensor& grad, const Tensor& s,
                       const ActivationArgs& args, bool recorded) {
  if (!recorded) return ember::activation_backward(act, grad, s, args);
  if (is_piecewise_linear(act)) {
    Tensor one = ember::ones(s.sizes(), TensorOptions(s.dtype(), s.device()));
    return ember::mul(grad, ember::activation_backward(act, one, s, args));
  }
  return ember::mul(grad, derivative_of(act, s, args));
}

}  // namespace

Tensor activation(Activation act, const Tensor& x, const ActivationArgs& args, const Tensor& out) {
  const bool inplace = is_inplace_form(x, out);
  // relu reads its result (positive exactly where x is), so relu_ keeps no copy of x.
  const bool uses_result = act == Activation::Relu;
  auto node = autograd::new_node(
      node_name(act, inplace), {x}, [act, args](FunctionNode& n, const variable_list& g) {
        return variable_list{activation_grad(act, g[0], n.saved(0), args, GradMode::is_enabled())};
      });
  if (!uses_result) node->save(inplace ? ember::clone(x) : x);
  if (node->has_forward()) {
    // f'(x) dx: the backward's own expression, which is linear in its first argument.
    node->set_jvp([act, args](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      const Tensor s = n.saved(0);
      return {activation_grad(act, t[0], s, args, jvp::differentiated({t[0], s}))};
    });
  }
  Tensor r = autograd::record(node, {x}, out, activation_name(act),
                              [&] { return native::activation(act, x, args, out); });
  if (uses_result) node->save(r, /*is_output=*/true);
  return r;
}

Tensor glu(const Tensor& x, int64_t dim, const Tensor& out) {
  auto node =
      autograd::new_node("GluBackward0", {x}, [dim](FunctionNode& n, const variable_list& g) {
        const Tensor s = n.saved(0);
        if (!GradMode::is_enabled()) return variable_list{ember::glu_backward(g[0], s, dim)};
        const int64_t half = s.size(dim) / 2;
        Tensor a = ember::narrow(s, dim, 0, half);
        Tensor sig = ember::sigmoid(ember::narrow(s, dim, half, half));
        Tensor ga = ember::mul(g[0], sig);
        Tensor gb = ember::mul(ember::mul(g[0], a), ember::mul(sig, ember::sub(num(1), sig)));
        return variable_list{ember::cat({ga, gb}, dim)};
      });
  node->save(x);
  if (node->has_forward()) {
    // glu(a, b) = a sigmoid(b): da sigmoid(b) + a sigmoid(b) (1 - sigmoid(b)) db.
    node->set_jvp([dim](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!t[0].defined()) return {Tensor()};
      const Tensor s = n.saved(0);
      const int64_t half = s.size(dim) / 2;
      const Tensor sig = ember::sigmoid(ember::narrow(s, dim, half, half));
      const Tensor da = ember::narrow(t[0], dim, 0, half),
                   db = ember::narrow(t[0], dim, half, half);
      const Tensor rest = ember::mul(ember::narrow(s, dim, 0, half), ember::sub(num(1), sig));
      return {ember::mul(sig, ember::add(da, ember::mul(rest, db)))};
    });
  }
  return autograd::record(node, {x}, out, "glu", [&] { return native::glu(x, dim, out); });
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  auto node = autograd::new_node(
      "PreluKernelBackward0", {x, weight}, [](FunctionNode& n, const variable_list& g) {
        const Tensor s = n.saved(0), w = n.saved(1);
        if (!GradMode::is_enabled()) {
          auto [gx, gw] = ember::prelu_backward(g[0], s, w);
          return variable_list{gx, gw};
        }
        const Tensor wv = ember::prelu_weight_view(s, w);
        const Tensor pos = ember::gt(s, num(0));
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = ember::where(pos, g[0], ember::mul(wv, g[0]));
        if (n.should_compute_output(1)) {
          Tensor elem = ember::where(pos, full_like_scalar(s, 0.0), ember::mul(s, g[0]));
          std::vector<int64_t> dims;
          for (int64_t d = 0; d < s.dim(); ++d) {
            if (d != 1 || w.numel() == 1) dims.push_back(d);
          }
          Tensor summed = dims.empty() ? elem : ember::sum(elem, dims);
          r[1] = ember::reshape(summed, w.sizes());
        }
        return r;
      });
  node->save(x);
  node->save(weight);
  return autograd::record(node, {x, weight}, Tensor(), "prelu",
                          [&] { return native::prelu(x, weight); });
}

}  // namespace derivatives
}  // namespace ember
