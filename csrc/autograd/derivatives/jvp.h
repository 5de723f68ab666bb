// Helpers of the explicit forward-mode formulas (FunctionNode::set_jvp, Note [Forward AD through
// the nodes] in autograd/forward_ad.h). An undefined tangent is a zero one; every helper keeps it
// undefined rather than materialising zeros. Public ops only, so a JVP records under grad mode
// (reverse over forward).
#pragma once
#include <complex>
#include <initializer_list>

#include "api/creation.h"
#include "api/elementwise.h"
#include "api/unary.h"
#include "autograd/forward_ad.h"
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {
namespace jvp {

using autograd::variable_list;

// a + b, either of which may be a zero (undefined) tangent.
inline Tensor add(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return ember::add(a, b);
}

// a - b, either of which may be a zero (undefined) tangent.
inline Tensor sub(const Tensor& a, const Tensor& b) {
  if (!b.defined()) return a;
  if (!a.defined()) return ember::neg(b);
  return ember::sub(a, b);
}

// t * f (a JVP multiplies by the derivative itself, not by its conjugate); zero stays zero.
inline Tensor mul(const Tensor& t, const Tensor& f) {
  return t.defined() ? ember::mul(t, f) : Tensor();
}

inline bool is_one(const Scalar& s) {
  return s.to_complex() == std::complex<double>(1.0, 0.0);
}

// t * s for a Python-number s (promotes as a number, so t keeps its dtype for a real s).
inline Tensor scale(const Tensor& t, const Scalar& s) {
  if (!t.defined() || is_one(s)) return t;
  return ember::mul(t, wrap_scalar(s));
}

// Whether a formula over `ts` is itself being differentiated: grad mode is on (reverse over
// forward) or one of them carries a tangent at an outer level (forward over forward). Formulas
// with a fused, unrecorded kernel (activation_backward, softmax_backward_data) use it only when
// this is false.
inline bool differentiated(std::initializer_list<Tensor> ts) {
  if (autograd::GradMode::is_enabled()) return true;
  if (!autograd::forward_ad::any_level_active()) return false;
  for (const Tensor& t : ts) {
    if (t.defined() && autograd::forward_ad::has_tangent(t)) return true;
  }
  return false;
}

inline bool any_defined(const variable_list& ts) {
  for (const Tensor& t : ts) {
    if (t.defined()) return true;
  }
  return false;
}

}  // namespace jvp
}  // namespace derivatives
}  // namespace ember
