// Small helpers shared by the derivative files.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "api/creation.h"

namespace ember {
namespace derivatives {

// `out` is `self`: the op's in-place form.
inline bool is_inplace_form(const Tensor& self, const Tensor& out) {
  return out.defined() && out.is_same(self);
}

// Zeros of `sizes` with `like`'s dtype and device.
inline Tensor zeros_for(IntArrayRef sizes, const Tensor& like) {
  return zeros(sizes, TensorOptions(like.dtype(), like.device()));
}

// A Python-number-like 0-d operand (takes part in promotion by category only).
inline Tensor number(double v) {
  return wrap_scalar(Scalar(v));
}

}  // namespace derivatives
}  // namespace ember
