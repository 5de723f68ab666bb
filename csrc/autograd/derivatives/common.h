// Small helpers shared by the derivative files.
#pragma once
#include "api/creation.h"
#include "autograd/derivatives/formula.h"
#include "core/scalar.h"
#include "core/tensor.h"

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

using formula::num;  // a Python number as an operand (formula.h)

}  // namespace derivatives
}  // namespace ember
