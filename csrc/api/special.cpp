// Public ops of ember.special: the autograd node when recording, else the native op.
#include "api/special.h"

#include "autograd/derivatives/special.h"
#include "autograd/record.h"
#include "autograd/variable.h"

namespace ember {

bool special_is_differentiable(SpecialOp op) {
  switch (op) {
    case SpecialOp::scaled_modified_bessel_k0:
    case SpecialOp::scaled_modified_bessel_k1:
    case SpecialOp::spherical_bessel_j0:
    case SpecialOp::airy_ai:
      return false;
    default:
      return op <= SpecialOp::zeta;  // the polynomials follow zeta
  }
}

Tensor special_unary(SpecialOp op, const char* name, const Tensor& a, const Tensor& out) {
  if (special_is_differentiable(op) && autograd::should_record(a)) {
    return derivatives::special_unary(op, name, a, out);
  }
  return native::special_unary(op, name, a, out);
}

Tensor special_binary(SpecialOp op, const char* name, const Tensor& a, const Tensor& b,
                      const Tensor& out) {
  if (special_is_differentiable(op) && autograd::should_record(a, b)) {
    return derivatives::special_binary(op, name, a, b, out);
  }
  return native::special_binary(op, name, a, b, out);
}

Tensor mvlgamma(const Tensor& a, int64_t p, const Tensor& out) {
  if (autograd::should_record(a)) return derivatives::mvlgamma(a, p, out);
  return native::mvlgamma(a, p, out);
}

}  // namespace ember
