// Derivatives of add, sub, mul, div. Broadcast gradients are summed back to each input's shape
// and cast to its dtype by the engine (validate_outputs).
#include <complex>

#include "api/complex.h"
#include "api/creation.h"
#include "api/elementwise.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/derivatives/jvp.h"
#include "autograd/record.h"
#include "ops/elementwise.h"

namespace ember {
namespace derivatives {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// alpha as a 0-d tensor that takes part in promotion like a Python number.
Tensor scalar_of(const Scalar& s) {
  return wrap_scalar(s);
}
bool is_one(const Scalar& s) {
  return s.to_complex() == std::complex<double>(1.0, 0.0);
}
Scalar negated(const Scalar& s) {
  if (s.is_complex()) return Scalar(-s.to_complex());
  if (s.is_floating()) return Scalar(-s.to_double());
  return Scalar(-s.to_int64());
}
// The gradient of `other` is grad * conj(alpha) (PyTorch's convention for complex alpha).
Scalar conjugated(const Scalar& s) {
  return s.is_complex() ? Scalar(std::conj(s.to_complex())) : s;
}

// For in-place forms, an input the formula needs is modified by the op: save a copy.
Tensor original(const Tensor& t, const Tensor& out) {
  return out.defined() && out.is_same(t) ? ember::clone(t) : t;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  auto node =
      autograd::new_node("AddBackward0", {a, b}, [alpha](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = g[0];
        if (n.should_compute_output(1)) {
          r[1] = is_one(alpha) ? g[0] : ember::mul(g[0], scalar_of(conjugated(alpha)));
        }
        return r;
      });
  if (node->has_forward()) {
    node->set_jvp([alpha](FunctionNode&, const variable_list& t) -> variable_list {
      return {jvp::add(t[0], jvp::scale(t[1], alpha))};
    });
  }
  return autograd::record(node, {a, b}, out, "add", [&] { return native::add(a, b, alpha, out); });
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  auto node =
      autograd::new_node("SubBackward0", {a, b}, [alpha](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = g[0];
        if (n.should_compute_output(1)) {
          r[1] = is_one(alpha) ? ember::neg(g[0])
                               : ember::mul(g[0], scalar_of(negated(conjugated(alpha))));
        }
        return r;
      });
  if (node->has_forward()) {
    node->set_jvp([alpha](FunctionNode&, const variable_list& t) -> variable_list {
      return {jvp::sub(t[0], jvp::scale(t[1], alpha))};
    });
  }
  return autograd::record(node, {a, b}, out, "sub", [&] { return native::sub(a, b, alpha, out); });
}

Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto node =
      autograd::new_node("MulBackward0", {a, b}, [](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = ember::mul(g[0], ember::conj(n.saved(1)));
        if (n.should_compute_output(1)) r[1] = ember::mul(g[0], ember::conj(n.saved(0)));
        return r;
      });
  node->save(node->should_compute_output(1) ? original(a, out) : Tensor());
  node->save(node->should_compute_output(0) ? original(b, out) : Tensor());
  if (node->has_forward()) {
    // d(a b) = da b + a db (holomorphic: no conjugates). Each operand is saved when the other's
    // tangent needs it (should_compute_output is true for an input carrying a tangent).
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      return {jvp::add(jvp::mul(t[0], t[0].defined() ? n.saved(1) : Tensor()),
                       jvp::mul(t[1], t[1].defined() ? n.saved(0) : Tensor()))};
    });
  }
  return autograd::record(node, {a, b}, out, "mul", [&] { return native::mul(a, b, out); });
}

Tensor div(const Tensor& a, const Tensor& b, const Tensor& out) {
  auto node =
      autograd::new_node("DivBackward0", {a, b}, [](FunctionNode& n, const variable_list& g) {
        variable_list r(2);
        const Tensor bc = ember::conj(n.saved(1));
        if (n.should_compute_output(0)) r[0] = ember::div(g[0], bc);
        if (n.should_compute_output(1)) {
          const Tensor ac = ember::conj(n.saved(0));
          r[1] = ember::neg(ember::div(ember::mul(g[0], ac), ember::mul(bc, bc)));
        }
        return r;
      });
  node->save(node->should_compute_output(1) ? original(a, out) : Tensor());
  node->save(original(b, out));
  if (node->has_forward()) {
    // d(a / b) = (da - (a / b) db) / b.
    node->set_jvp([](FunctionNode& n, const variable_list& t) -> variable_list {
      if (!jvp::any_defined(t)) return {Tensor()};
      const Tensor b = n.saved(1);
      Tensor numer = t[0];
      if (t[1].defined()) numer = jvp::sub(numer, ember::mul(t[1], ember::div(n.saved(0), b)));
      return {ember::div(numer, b)};
    });
  }
  return autograd::record(node, {a, b}, out, "div", [&] { return native::div(a, b, out); });
}

}  // namespace derivatives
}  // namespace ember
