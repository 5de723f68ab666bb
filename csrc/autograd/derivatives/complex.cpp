// Derivatives of the complex ops (ops/complex.cpp, ops/unary.cpp angle,
// ops/range_factories.cpp complex / polar). PyTorch's convention: the gradient of a complex
// input z is dL/dRe(z) + i dL/dIm(z).
#include "api/complex.h"
#include "api/elementwise.h"
#include "api/range_factories.h"
#include "api/unary.h"
#include "api/views.h"
#include "autograd/derivatives/elementwise.h"
#include "autograd/derivatives/elementwise_helpers.h"
#include "ops/complex.h"
#include "ops/unary.h"

namespace ember {
namespace derivatives {

using namespace detail;  // NOLINT(build/namespaces): num, original, imaginary_unit, ...

Tensor angle(const Tensor& a, const Tensor& out) {
  // Real inputs: 0 or pi, piecewise constant. Complex: d atan2(y, x) = (-y dx + x dy) / |z|^2,
  // i.e. g * i z / |z|^2, and 0 at z == 0.
  auto node =
      autograd::new_node("AngleBackward0", {a}, [](FunctionNode& n, const variable_list& g) {
        const Tensor z = n.saved(0);
        if (!z.is_complex()) return variable_list{zeros_like_grad(g[0])};
        const Tensor magnitude = ember::abs(z);
        const Tensor d = ember::div(ember::mul(ember::mul(g[0], z), imaginary_unit()),
                                    ember::mul(magnitude, magnitude));
        return variable_list{zero_where(ember::eq(z, num(0.0)), d)};
      });
  node->save(original(a, out));
  return autograd::record(node, {a}, out, "angle", [&] { return native::angle(a, out); });
}

Tensor conj(const Tensor& a) {
  auto node = autograd::new_node("ConjBackward0", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::conj(g[0])};
  });
  return autograd::record(node, {a}, Tensor(), "conj", [&] { return native::conj(a); });
}

Tensor conj_physical(const Tensor& a, const Tensor& out) {
  auto node =
      autograd::new_node("ConjPhysicalBackward0", {a}, [](FunctionNode&, const variable_list& g) {
        return variable_list{ember::conj_physical(g[0])};
      });
  return autograd::record(node, {a}, out, "conj_physical",
                          [&] { return native::conj_physical(a, out); });
}

// real / imag are views of the complex storage; PyTorch builds them from view_as_real and
// select, hence the node name.
Tensor real(const Tensor& a) {
  auto node = autograd::new_node("SelectBackward0", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{g[0]};  // the engine casts it to the complex input: g + 0i
  });
  return autograd::record(node, {a}, Tensor(), "real", [&] { return native::real(a); });
}

Tensor imag(const Tensor& a) {
  auto node = autograd::new_node("SelectBackward0", {a}, [](FunctionNode&, const variable_list& g) {
    return variable_list{ember::mul(g[0], imaginary_unit())};
  });
  return autograd::record(node, {a}, Tensor(), "imag", [&] { return native::imag(a); });
}

Tensor view_as_real(const Tensor& a) {
  auto node =
      autograd::new_node("ViewAsRealBackward0", {a}, [](FunctionNode&, const variable_list& g) {
        return variable_list{ember::view_as_complex(ember::contiguous(g[0]))};
      });
  return autograd::record(node, {a}, Tensor(), "view_as_real",
                          [&] { return native::view_as_real(a); });
}

Tensor view_as_complex(const Tensor& a) {
  auto node =
      autograd::new_node("ViewAsComplexBackward0", {a}, [](FunctionNode&, const variable_list& g) {
        return variable_list{ember::view_as_real(g[0])};
      });
  return autograd::record(node, {a}, Tensor(), "view_as_complex",
                          [&] { return native::view_as_complex(a); });
}

Tensor complex(const Tensor& real, const Tensor& imag, const Tensor& out) {
  auto node = autograd::new_node("ComplexBackward0", {real, imag},
                                 [](FunctionNode& n, const variable_list& g) {
                                   variable_list r(2);
                                   if (n.should_compute_output(0)) r[0] = ember::real(g[0]);
                                   if (n.should_compute_output(1)) r[1] = ember::imag(g[0]);
                                   return r;
                                 });
  return autograd::record(node, {real, imag}, out, "complex",
                          [&] { return native::complex(real, imag, out); });
}

Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out) {
  // result = abs * e^(i angle): d/d abs = e^(i angle) (taken as sgn(result), 0 where abs == 0,
  // as PyTorch), d/d angle = i * result.
  auto node = autograd::new_node(
      "PolarBackward0", {abs, angle}, [](FunctionNode& n, const variable_list& g) {
        const Tensor result = n.saved(0);
        const Tensor gc = ember::conj(g[0]);
        variable_list r(2);
        if (n.should_compute_output(0)) r[0] = ember::real(ember::mul(gc, ember::sgn(result)));
        if (n.should_compute_output(1)) {
          r[1] = ember::real(ember::mul(ember::mul(gc, result), imaginary_unit()));
        }
        return r;
      });
  Tensor result = autograd::record(node, {abs, angle}, out, "polar",
                                   [&] { return native::polar(abs, angle, out); });
  node->save(result, /*is_output=*/true);
  return result;
}

}  // namespace derivatives
}  // namespace ember
