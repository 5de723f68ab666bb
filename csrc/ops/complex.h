// Complex-number views and ops: real / imag are views into the complex storage (a float tensor
// with doubled strides), conj copies (Ember has no lazy conjugate bit).
#pragma once
#include "core/tensor.h"

namespace ember {
namespace native {

Tensor real(const Tensor& a);  // complex: a view; real dtypes: a itself
Tensor imag(const Tensor& a);  // complex: a view; other dtypes raise TypeError
Tensor conj(const Tensor& a);  // complex: conj_physical(a); real dtypes: a itself

}  // namespace native
}  // namespace ember
