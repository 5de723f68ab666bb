// Complex-number views and ops: real / imag are views into the complex storage (a float tensor
// with doubled strides), conj copies (Ember has no lazy conjugate bit).
#pragma once
#include "core/tensor.h"

namespace ember {
namespace native {

Tensor real(const Tensor& a);  // complex: a view; real dtypes: a itself
Tensor imag(const Tensor& a);  // complex: a view; other dtypes raise TypeError
Tensor conj(const Tensor& a);  // complex: conj_physical(a); real dtypes: a itself

// view_as_real: complex (..., n) -> its real dtype (..., n, 2), sharing storage.
// view_as_complex: float32 / float64 (..., n, 2) with a unit last stride, even other strides and
// an even storage offset -> complex64 / complex128 (..., n), sharing storage.
Tensor view_as_real(const Tensor& a);
Tensor view_as_complex(const Tensor& a);

}  // namespace native
}  // namespace ember
