// Derivatives of elementwise ops: elementwise.cpp (add, sub, mul, div), unary.cpp, binary.cpp,
// unary_piecewise.cpp (where, clamp, the step functions), complex.cpp.
// The derivative table is one wrapper per differentiable op (docs/design/autograd.md): the
// public op (api/*.cpp) calls its wrapper when recording is on (autograd::should_record); the
// wrapper runs the native op once with recording off and attaches the op's node, whose formula
// uses public ops only, so create_graph=True gives higher-order gradients.
#pragma once
#include <optional>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ember {
namespace derivatives {

// ---- elementwise (elementwise.cpp, unary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
Tensor mul(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor div(const Tensor& a, const Tensor& b, const Tensor& out);

// The float unary ops have no wrapper here: their rows in tables/unary.def hold their formulas,
// and api/unary.cpp records them.
Tensor neg(const Tensor& a, const Tensor& out);
Tensor abs(const Tensor& a, const Tensor& out);
Tensor polygamma(int64_t n, const Tensor& a, const Tensor& out);

// ---- binary ops (binary.cpp) ----
// pow: tensor ** tensor (a wrapped-number base is pow(Scalar, Tensor): PowBackward2) and
// tensor ** Python number (PowBackward0; square is pow(x, 2)).
Tensor pow(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor pow(const Tensor& a, const Scalar& exponent, const Tensor& out);
Tensor atan2(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor minimum(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor maximum(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor fmin(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor fmax(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor hypot(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor logaddexp(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor logaddexp2(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor xlogy(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor copysign(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor remainder(const Tensor& a, const Tensor& b, const Tensor& out);
Tensor fmod(const Tensor& a, const Tensor& b, const Tensor& out);
// div with rounding_mode "trunc" / "floor" (trunc: true; floor: false): zero gradients.
Tensor div_rounding(const Tensor& a, const Tensor& b, bool trunc, const Tensor& out);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, const Tensor& out);
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight, const Tensor& out);

// ---- where, clamp and the piecewise ops (unary_piecewise.cpp) ----
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, const Tensor& out);
// clamp / clip / clamp_min / clamp_max; `name` is the node (ClampBackward1, ClampMinBackward0,
// ClampMaxBackward0 for Python-number bounds; ClampBackward0, ClampMinBackward1,
// ClampMaxBackward1 for tensor bounds).
Tensor clamp(const char* name, const Tensor& a, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max, const Tensor& out);
Tensor clamp(const char* name, const Tensor& a, const Tensor& min, const Tensor& max,
             const Tensor& out);
// sign, floor, ceil, round, trunc (and round with decimals, sgn of real tensors): the gradient
// is zero. `forward` is the native op.
Tensor zero_gradient(const char* name, const char* op, const Tensor& a, const Tensor& out,
                     Tensor (*forward)(const Tensor&, const Tensor&));
Tensor round(const Tensor& a, int64_t decimals, const Tensor& out);
Tensor sgn(const Tensor& a, const Tensor& out);
Tensor frac(const Tensor& a, const Tensor& out);
Tensor logit(const Tensor& a, std::optional<double> eps, const Tensor& out);
Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out);

// ---- complex (elementwise_complex.cpp) ----
Tensor angle(const Tensor& a, const Tensor& out);
Tensor conj(const Tensor& a);                              // complex a only
Tensor conj_physical(const Tensor& a, const Tensor& out);  // complex a only
Tensor real(const Tensor& a);                              // complex a only (a view)
Tensor imag(const Tensor& a);                              // (a view)
Tensor view_as_real(const Tensor& a);                      // (a view)
Tensor view_as_complex(const Tensor& a);                   // (a view)
Tensor complex(const Tensor& real, const Tensor& imag, const Tensor& out);
Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out);

}  // namespace derivatives
}  // namespace ember
