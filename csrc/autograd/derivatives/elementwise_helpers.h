// Small tensor helpers shared by the elementwise derivative formulas (elementwise_*.cpp). They
// use public ops only, so formulas built from them record under create_graph=True.
#pragma once
#include <complex>

#include "api/compare.h"
#include "api/creation.h"
#include "api/views.h"
#include "autograd/derivatives/formula.h"
#include "autograd/functions.h"
#include "autograd/record.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace derivatives {
namespace detail {

using autograd::FunctionNode;
using autograd::variable_list;

using formula::keep_where;  // formula.h: g where a mask holds, 0 elsewhere (and the reverse)
using formula::num;         // a Python number as an operand
using formula::zero_where;
inline Tensor imaginary_unit() {
  return wrap_scalar(Scalar(std::complex<double>(0.0, 1.0)));
}

// The value of input `t` before the op: for an in-place op (`out` is `t`) a copy, since the op
// overwrites it.
inline Tensor original(const Tensor& t, const Tensor& out) {
  return out.defined() && out.is_same(t) ? ember::clone(t) : t;
}

inline Tensor zeros_like_grad(const Tensor& g) {
  return ember::zeros(g.sizes(), TensorOptions(g.dtype()));
}

// Whether `t` is a Python number wrapped as a 0-d tensor (PyTorch's Scalar overloads: their
// nodes have other names, e.g. PowBackward0 for x ** 2).
inline bool is_number(const Tensor& t) {
  return t.defined() && t.impl()->is_wrapped_number();
}

// An operand as a formula uses it: the input before an in-place op overwrote it, and a Python
// number as an ordinary 0-d tensor of the op's dtype (a wrapped number computes in the default
// dtype when it meets only other numbers, e.g. log(2.0) or 2.0 * 2.0 would be float32).
inline Tensor saved_operand(const Tensor& t, const Tensor& other, const Tensor& out) {
  if (is_number(t)) return ember::to_dtype(t, result_type({t, other}), /*copy=*/true);
  return original(t, out);
}

}  // namespace detail
}  // namespace derivatives
}  // namespace ember
